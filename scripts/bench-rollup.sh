#!/usr/bin/env bash
# bench-rollup: the cost of rollups (docs/rollups.md) on the conditions rows
# (BATCHES × 10,000 rows, 1,000 devices, 60 s of simulated time per batch,
# 2 workers): pgts load into a daily series table without rollups against
# the same load with two rollups by device, one of 1-minute buckets and one
# of 1-hour buckets built on it (the conditions rows cover BATCHES minutes:
# these play the hourly and daily rollups of a longer series), cases
# interleaved in each of REPEAT rounds, the timer the wall clock of the
# pgts load command; then, with the rollups, the first refresh, a refresh
# after one row per device in the last minute, and a refresh after a
# backfill of one device over the first 10 minutes, with the source rows each refresh read (pg_stat_user_tables:
# seq_tup_read + idx_tup_fetch over the table's partitions) beside the
# table's rows (read 1.5 s after the commands, once the backends of the
# commands before have flushed their statistics). Prints Markdown tables
# of medians.
set -euo pipefail
BIN=${BIN:-bin/pgts}
BATCHES=${BATCHES:-100}
REPEAT=${REPEAT:-3}
WORKERS=${WORKERS:-2}
START=2024-01-01
cols="time timestamptz not null, device int not null, data1 float8, data2 float8, data3 float8, data4 float8, data5 float8"
psqlv() { "$BIN" db psql -qAt -c "$1"; }

setup() { # setup none|rollups
	"$BIN" rollup drop rb_hour --yes >/dev/null 2>&1 || true
	"$BIN" rollup drop rb_minute --yes >/dev/null 2>&1 || true
	"$BIN" table drop rb --yes >/dev/null 2>&1 || true
	"$BIN" table create rb --columns "$cols" --interval "1 day" --premake 0 --index-on "device, time" >/dev/null 2>&1
	if [ "$1" = rollups ]; then
		"$BIN" rollup create rb_minute --on rb --bucket '1 minute' --group-by device --agg "avg(data1), max(data1), count(*)" >/dev/null 2>&1
		"$BIN" rollup create rb_hour --on rb_minute --bucket '1 hour' --group-by device --agg "avg(data1), max(data1), count(*)" >/dev/null 2>&1
	fi
	psqlv "CHECKPOINT" >/dev/null
}

secs() { # secs CMD...: wall seconds of CMD
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>/tmp/bench-rollup.err || { cat /tmp/bench-rollup.err >&2; exit 1; }
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'
}

readrows() { psqlv "SELECT pg_sleep(1.5)" >/dev/null; psqlv "SELECT coalesce(sum(seq_tup_read + coalesce(idx_tup_fetch, 0)), 0) FROM pg_stat_user_tables WHERE relname LIKE 'rb\_p%'"; }

refresh() { # refresh NAME: "seconds rows_read"
	local r0 s r1
	r0=$(readrows)
	s=$(secs "$BIN" rollup refresh)
	r1=$(readrows)
	echo "$s $((r1 - r0))"
}

declare -A v
add() { v[$1]="${v[$1]:-} $2"; }
for r in $(seq "$REPEAT"); do
	for c in none rollups; do
		setup "$c"
		s=$(secs "$BIN" load rb --generate conditions --batches "$BATCHES" --start "$START" --workers "$WORKERS")
		add "load_$c" "$s"
		echo "round $r: load, $c: ${s}s" >&2
	done
	read -r s n <<<"$(refresh)"
	add first_s "$s"; add first_rows "$n"
	last=$(psqlv "SELECT max(time) FROM rb")
	psqlv "INSERT INTO rb (time, device, data1) SELECT '$last'::timestamptz - interval '1 second', d, 1 FROM generate_series(1, 1000) d" >/dev/null
	read -r s n <<<"$(refresh)"
	add hour_s "$s"; add hour_rows "$n"
	psqlv "INSERT INTO rb (time, device, data1) SELECT '$START'::timestamptz + i * interval '1 second', 1, 2 FROM generate_series(0, 599) i" >/dev/null
	read -r s n <<<"$(refresh)"
	add backfill_s "$s"; add backfill_rows "$n"
	add table_rows "$(psqlv "SELECT count(*) FROM rb")"
	echo "round $r: refresh first ${v[first_s]##* }s, last hour ${v[hour_s]##* }s, backfill ${v[backfill_s]##* }s" >&2
done
"$BIN" rollup drop rb_hour --yes >/dev/null 2>&1 || true
"$BIN" rollup drop rb_minute --yes >/dev/null 2>&1 || true
"$BIN" table drop rb --yes >/dev/null 2>&1 || true

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
m() { echo "${v[$1]}" | median; }
rows=$((BATCHES * 10000))
echo "| load ($rows rows, $WORKERS workers, medians of $REPEAT) | seconds | rows/s | speed / none |"
echo "| --- | ---: | ---: | ---: |"
for c in none rollups; do
	awk -v c="$c" -v s="$(m "load_$c")" -v n="$(m load_none)" -v rows="$rows" \
		'BEGIN {printf "| %s | %.2f | %.0f | %.2f |\n", (c == "none" ? "no rollup" : "1-minute + 1-hour rollups"), s, rows / s, n / s}'
done
echo
echo "| refresh (1-minute then 1-hour rollup, medians of $REPEAT) | seconds | source rows read | table rows |"
echo "| --- | ---: | ---: | ---: |"
t=$(m table_rows)
for c in first hour backfill; do
	case $c in
	first) what="first, after the load" ;;
	hour) what="after 1 row per device (1,000) in the last minute" ;;
	backfill) what="after a backfill of 1 device (600 rows) over the first 10 minutes" ;;
	esac
	echo "| $what | $(m "${c}_s") | $(m "${c}_rows") | $t |"
done

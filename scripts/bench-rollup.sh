#!/usr/bin/env bash
# bench-rollup: the cost of rollups (docs/rollups.md).
# 1. Load: the conditions rows (BATCHES × 10,000 rows, 1,000 devices, 60 s
#    of simulated time per batch, 2 workers): pgts load into a daily series
#    table without rollups against the same load with two rollups by
#    device, one of 1-minute buckets and one of 1-hour buckets built on it
#    (the conditions rows cover BATCHES minutes: these play the hourly and
#    daily rollups of a longer series), cases interleaved in each of REPEAT
#    rounds, the timer the wall clock of the pgts load command; then, with
#    the rollups, the first refresh, a refresh after one row per device in
#    the last minute, and a refresh after a backfill of one device over the
#    first 10 minutes.
# 2. Backfill 3 months back: a table of DEVICES3 devices, one row each
#    every 15 minutes over 120 days, an index on (device, time), an hourly
#    rollup by device, refreshed; then 600 rows of one device (one a minute,
#    10 hours) 90 days back, by psql INSERT and by pgts load, each followed
#    by a refresh: the source rows it read against the rows of the range
#    from the backfill to the end (what re-aggregating the range reads).
# 3. Trigger path: 16 pgbench sessions of 1-row INSERT transactions into
#    a series table for EVENT_SECS seconds, without and with a 1-minute
#    rollup by device (the table's statement trigger with transition
#    tables), interleaved in each round.
# Runs on the embedded cluster (pgts db psql): PGTS_DATA_DIR chooses a
# private one (the script drops and makes tables rb, rq and ev).
# Source rows read: pg_stat_user_tables (seq_tup_read + idx_tup_fetch over
# the table's partitions), read 1.5 s after the commands, once the
# backends of the commands before have flushed their statistics. Prints
# Markdown tables of medians, and the load average before and after.
set -euo pipefail
BIN=${BIN:-bin/pgts}
BATCHES=${BATCHES:-100}
REPEAT=${REPEAT:-3}
WORKERS=${WORKERS:-2}
DEVICES3=${DEVICES3:-50}
EVENT_SECS=${EVENT_SECS:-10}
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

readrows() { # readrows [TABLE]
	psqlv "SELECT pg_sleep(1.5)" >/dev/null
	psqlv "SELECT coalesce(sum(seq_tup_read + coalesce(idx_tup_fetch, 0)), 0) FROM pg_stat_user_tables WHERE relname LIKE '${1:-rb}\_p%'"
}

refresh() { # refresh [TABLE [ROLLUP]]: "seconds rows_read"
	local r0 s r1
	r0=$(readrows "${1:-rb}")
	s=$(secs "$BIN" rollup refresh ${2:-})
	r1=$(readrows "${1:-rb}")
	echo "$s $((r1 - r0))"
}
load0=$(cut -d' ' -f1-3 /proc/loadavg)

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

# 2. a backfill of one device 3 months back
END3=2024-05-01
for r in $(seq "$REPEAT"); do
	"$BIN" rollup drop rq_hour --yes >/dev/null 2>&1 || true
	"$BIN" table drop rq --yes >/dev/null 2>&1 || true
	"$BIN" table create rq --columns "time timestamptz not null, device int not null, v float8" --interval "7 days" --premake 0 \
		--index-on "device, time" >/dev/null 2>&1
	psqlv "COPY (SELECT '$END3'::timestamptz - interval '120 days' + i * interval '15 minutes', d, (i % 97) + d
		FROM generate_series(0, 120 * 96 - 1) i, generate_series(1, $DEVICES3) d) TO STDOUT (FORMAT csv)" >/tmp/bench-rollup-rq.csv
	"$BIN" load rq --columns time,device,v --workers "$WORKERS" /tmp/bench-rollup-rq.csv >/dev/null 2>/tmp/bench-rollup.err || { cat /tmp/bench-rollup.err >&2; exit 1; }
	rm -f /tmp/bench-rollup-rq.csv
	psqlv "ANALYZE rq" >/dev/null
	"$BIN" rollup create rq_hour --on rq --bucket '1 hour' --group-by device --agg "avg(v), max(v), count(*)" >/dev/null 2>&1
	refresh rq rq_hour >/dev/null
	bf="'$END3'::timestamptz - interval '90 days'"
	add range_rows "$(psqlv "SELECT count(*) FROM rq WHERE time >= $bf")"
	add rq_rows "$(psqlv "SELECT count(*) FROM rq")"
	psqlv "INSERT INTO rq SELECT $bf + i * interval '1 minute' + interval '30 seconds', 1, -i FROM generate_series(0, 599) i" >/dev/null
	read -r s n <<<"$(refresh rq rq_hour)"
	add bf_psql_s "$s"; add bf_psql_rows "$n"
	psqlv "COPY (SELECT $bf + i * interval '1 minute' + interval '40 seconds', 2, -i FROM generate_series(0, 599) i) TO STDOUT (FORMAT csv)" >/tmp/bench-rollup-bf.csv
	"$BIN" load rq --columns time,device,v /tmp/bench-rollup-bf.csv >/dev/null 2>/tmp/bench-rollup.err || { cat /tmp/bench-rollup.err >&2; exit 1; }
	read -r s n <<<"$(refresh rq rq_hour)"
	add bf_load_s "$s"; add bf_load_rows "$n"
	echo "round $r: backfill 3 months back: psql ${v[bf_psql_rows]##* } rows read, pgts load ${v[bf_load_rows]##* }, range ${v[range_rows]##* }" >&2
done
"$BIN" rollup drop rq_hour --yes >/dev/null 2>&1 || true
"$BIN" table drop rq --yes >/dev/null 2>&1 || true
rm -f /tmp/bench-rollup-bf.csv

# 3. 16 sessions of 1-row INSERT transactions
url=$("$BIN" db url)
PGBENCH=${PGBENCH:-$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -n 1)}
cat >/tmp/bench-rollup-ev.sql <<'SQL'
\set d random(1, 1000)
INSERT INTO ev (time, device, v) VALUES (now(), :d, random());
SQL
for r in $(seq "$REPEAT"); do
	for c in none rollup; do
		"$BIN" rollup drop ev_minute --yes >/dev/null 2>&1 || true
		"$BIN" table drop ev --yes >/dev/null 2>&1 || true
		"$BIN" table create ev --columns "time timestamptz not null, device int not null, v float8" --interval "1 day" --premake 1 >/dev/null 2>&1
		if [ "$c" = rollup ]; then
			"$BIN" rollup create ev_minute --on ev --bucket '1 minute' --group-by device --agg "avg(v), count(*)" >/dev/null 2>&1
		fi
		tps=$("$PGBENCH" -n -c 16 -j 2 -T "$EVENT_SECS" -f /tmp/bench-rollup-ev.sql "$url" 2>/dev/null | awk '/^tps/ {print $3; exit}')
		add "ev_$c" "$tps"
		echo "round $r: 16 sessions of 1-row INSERTs, $c: $tps tx/s" >&2
	done
done
"$BIN" rollup drop ev_minute --yes >/dev/null 2>&1 || true
"$BIN" table drop ev --yes >/dev/null 2>&1 || true
rm -f /tmp/bench-rollup-ev.sql
load1=$(cut -d' ' -f1-3 /proc/loadavg)

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
echo
echo "| backfill of 1 device, 600 rows, 90 days back (hourly rollup by device, medians of $REPEAT) | seconds | source rows read | rows of the range (backfill to end) | range / read |"
echo "| --- | ---: | ---: | ---: | ---: |"
rr=$(m range_rows)
for c in psql load; do
	case $c in
	psql) what="by psql INSERT (pairs)" ;;
	load) what="by pgts load (a range record)" ;;
	esac
	n=$(m "bf_${c}_rows")
	awk -v w="$what" -v s="$(m "bf_${c}_s")" -v n="$n" -v rr="$rr" 'BEGIN {printf "| %s | %s | %d | %d | %.0f |\n", w, s, n, rr, (n > 0 ? rr / n : 0)}'
done
echo
echo "table rq: $(m rq_rows) rows ($DEVICES3 devices, one row every 15 minutes, 120 days)"
echo
echo "| 16 sessions, 1-row INSERT transactions, ${EVENT_SECS} s (medians of $REPEAT) | tx/s | speed / none |"
echo "| --- | ---: | ---: |"
for c in none rollup; do
	awk -v c="$c" -v t="$(m "ev_$c")" -v n="$(m ev_none)" \
		'BEGIN {printf "| %s | %.0f | %.2f |\n", (c == "none" ? "no rollup" : "1-minute rollup by device (statement trigger with transition tables)"), t, t / n}'
done
echo
echo "load average (1, 5, 15 min): $load0 before, $load1 after"

# ---------------------------------------------------------------------------
# Rollup queries (docs/benchmarks.md, "Rollup queries"): a week of hourly
# per-device averages (QDEVICES devices, one row every QSTEP seconds each)
# from a rollup's real-time view, from its materialized buckets only and
# by GROUP BY over the raw rows, timed in one session:
# scripts/bench-rollup-queries.sh (its table made again, dropped after).
SETUP=1 CLEANUP=1 BIN="$BIN" WORKERS="$WORKERS" "$(dirname "$0")/bench-rollup-queries.sh"

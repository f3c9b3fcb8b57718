#!/usr/bin/env bash
# bench-upsert: pgts load --on-conflict skip and update beside the plain
# path, on the conditions rows (BATCHES × 10,000) into a daily series table
# with primary key (time, device): plain = into an empty table; skip and
# update = the same rows with the first half already stored. REPEAT rounds,
# the cases interleaved within each; the timer is the wall clock of the
# pgts load command. Prints a Markdown table of medians.
set -euo pipefail
BIN=${BIN:-bin/pgts}
BATCHES=${BATCHES:-1000}
REPEAT=${REPEAT:-3}
WORKERS=${WORKERS:-$(nproc)}
START=2024-01-01
half=$((BATCHES / 2))
cols="time timestamptz not null, device int not null, data1 float8, data2 float8, data3 float8, data4 float8, data5 float8, primary key (time, device)"

setup() { # setup PRELOAD_BATCHES
	"$BIN" table drop upsert_bench --yes >/dev/null 2>&1 || true
	"$BIN" table create upsert_bench --columns "$cols" --interval "1 day" --premake 0 >/dev/null 2>&1
	if [ "$1" -gt 0 ]; then
		"$BIN" load upsert_bench --generate conditions --batches "$1" --start "$START" --workers "$WORKERS" >/dev/null 2>&1
	fi
	"$BIN" db psql -q -c "VACUUM ANALYZE upsert_bench" -c "CHECKPOINT" >/dev/null
}

timed() { # timed CASE ARGS...: wall seconds of the load
	local t0 t1
	t0=$(date +%s.%N)
	"$BIN" load upsert_bench --generate conditions --batches "$BATCHES" --start "$START" --workers "$WORKERS" "$@" >/dev/null 2>/tmp/bench-upsert.err ||
		{ cat /tmp/bench-upsert.err >&2; exit 1; }
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'
}

declare -A secs
for r in $(seq "$REPEAT"); do
	for c in plain skip update; do
		case $c in
		plain) setup 0; s=$(timed) ;;
		skip) setup "$half"; s=$(timed --on-conflict skip) ;;
		update) setup "$half"; s=$(timed --on-conflict update) ;;
		esac
		secs[$c]="${secs[$c]:-} $s"
		echo "round $r: $c ${s}s" >&2
	done
done
"$BIN" table drop upsert_bench --yes >/dev/null 2>&1 || true

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
rows=$((BATCHES * 10000))
plain=$(echo "${secs[plain]}" | median)
echo "| case ($rows rows, $WORKERS workers, medians of $REPEAT) | seconds | rows/s | time / plain |"
echo "| --- | ---: | ---: | ---: |"
for c in plain skip update; do
	m=$(echo "${secs[$c]}" | median)
	awk -v c="$c" -v m="$m" -v rows="$rows" -v p="$plain" 'BEGIN {printf "| %s | %.2f | %.0f | %.2f |\n", c, m, rows / m, m / p}'
done

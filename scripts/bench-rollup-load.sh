#!/usr/bin/env bash
# bench-rollup-load: part 1 of scripts/bench-rollup.sh alone, for a quiet
# moment: pgts load of BATCHES × 10,000 conditions rows into a daily
# series table without rollups and with a 1-minute and a 1-hour rollup by
# device (the order of the two cases alternating by round), then the
# first refresh and the refresh after one row per device in the last
# minute. Wall clock of each pgts command. Runs on the embedded cluster
# (PGTS_DATA_DIR chooses a private one; the table rb is dropped and made).
#
#   PGTS_DATA_DIR=/work/rollup-bench-data BIN=bin/pgts BATCHES=1000 REPEAT=2 scripts/bench-rollup-load.sh
set -euo pipefail
BIN=${BIN:-bin/pgts}; BATCHES=${BATCHES:-1000}; REPEAT=${REPEAT:-2}; WORKERS=2; START=2024-01-01
cols="time timestamptz not null, device int not null, data1 float8, data2 float8, data3 float8, data4 float8, data5 float8"
psqlv() { "$BIN" db psql -qAt -c "$1"; }
setup() {
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
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>/tmp/rl.err || { cat /tmp/rl.err >&2; exit 1; }; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'; }
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$REPEAT"); do
	order="none rollups"; [ $((r % 2)) = 0 ] && order="rollups none"
	for c in $order; do
		setup "$c"
		echo "round $r $c load $(secs "$BIN" load rb --generate conditions --batches "$BATCHES" --start "$START" --workers "$WORKERS") s"
	done
	if [ "$c" = none ]; then setup rollups; "$BIN" load rb --generate conditions --batches "$BATCHES" --start "$START" --workers "$WORKERS" >/dev/null 2>&1; fi
	echo "round $r first refresh $(secs "$BIN" rollup refresh) s"
	last=$(psqlv "SELECT max(time) FROM rb")
	psqlv "INSERT INTO rb (time, device, data1) SELECT '$last'::timestamptz - interval '1 second', d, 1 FROM generate_series(1, 1000) d" >/dev/null
	echo "round $r last-hour refresh $(secs "$BIN" rollup refresh) s"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"

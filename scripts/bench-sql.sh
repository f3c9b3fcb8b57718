#!/usr/bin/env bash
# bench-sql.sh: the SQL helpers (docs/sql.md) on BATCHES×10,000 conditions
# rows (default 1,000 batches: 10 M rows) in a series table of 1-hour
# partitions with an index on (device, time), against issue 28's goals:
#
#   time_bucket  GROUP BY pgts.time_bucket('1 hour', time), device over all
#                rows, against the same query with date_bin: ≤ 1.05× (the
#                median of the rounds' ratios)
#   latest       the latest row of each of 1,000 devices (LATERAL ...
#                ORDER BY time DESC LIMIT 1): ≤ 50 ms warm
#   gapfill      an hourly series of one device over 30 days with locf and
#                interpolate (pgts.buckets LEFT JOIN the grouped rows):
#                ≤ 20 ms warm
#   last         pgts.last(data1, time) per device over the last hour of
#                rows, for comparison with latest (no goal)
#   calibration  SELECT count(*) FROM generate_series(1, 1000000): a
#                CPU-bound yardstick of what the host gave the run
#
# Each query runs once to warm the cache, then ROUNDS times, the queries
# interleaved in each round; the figure is the median of the psql \timing
# of the rounds (client-side wall time, the rows read and discarded). The
# table (bench_sql_conditions) is loaded once and reused while it holds the
# expected rows. Prints a Markdown table.
#
#   BIN=bin/pgts BATCHES=1000 ROUNDS=7 scripts/bench-sql.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin/pgts}
BATCHES=${BATCHES:-1000}
ROUNDS=${ROUNDS:-7}
T=bench_sql_conditions
ROWS=$((BATCHES * 10000))
URL=$("$BIN" db url 2>/dev/null || true)
if [ -n "${DATABASE_URL:-}" ]; then URL=$DATABASE_URL; fi
if [ -z "$URL" ]; then "$BIN" db start >&2; URL=$("$BIN" db url); fi
psql_q() { psql "$URL" -X -v ON_ERROR_STOP=1 -qAt "$@"; }

have=-1
if [ "$(psql_q -c "SELECT to_regclass('$T') IS NOT NULL")" = t ]; then have=$(psql_q -c "SELECT count(*) FROM $T"); fi
if [ "$have" != "$ROWS" ]; then
	echo "bench-sql: loading $ROWS rows into $T" >&2
	if [ "$have" != "-1" ]; then "$BIN" table drop "$T" --yes >&2; fi
	# BATCHES minutes of data ending now: the last of it in the current hour.
	start=$(date -u -d "@$(( $(date +%s) - BATCHES * 60 ))" +%FT%H:%M:00Z)
	"$BIN" table create "$T" \
		--columns "time timestamptz not null, device int not null, data1 float8, data2 float8, data3 float8, data4 float8, data5 float8" \
		--interval "1 hour" --premake 2 --index-on "device, time" >&2
	"$BIN" load "$T" --generate conditions --batches "$BATCHES" --start "$start" >&2
	psql_q -c "VACUUM ANALYZE $T" >&2
fi
tmin=$(psql_q -c "SELECT min(time) FROM $T")
tmax=$(psql_q -c "SELECT max(time) FROM $T")

declare -A SQL
SQL[time_bucket]="SELECT pgts.time_bucket('1 hour', time) AS b, device, avg(data1) FROM $T GROUP BY 1, 2"
SQL[date_bin]="SELECT date_bin('1 hour', time, '2000-01-03') AS b, device, avg(data1) FROM $T GROUP BY 1, 2"
SQL[latest]="SELECT d.device, l.time, l.data1 FROM generate_series(1, 1000) AS d(device) CROSS JOIN LATERAL (SELECT time, data1 FROM $T c WHERE c.device = d.device ORDER BY time DESC LIMIT 1) AS l"
SQL[gapfill]="SELECT b.bucket, a.v, pgts.locf(a.v) OVER w, pgts.interpolate(a.v, b.bucket, pgts.known(a.v, b.bucket) OVER w, pgts.known(a.v, b.bucket) OVER (ORDER BY b.bucket DESC)) FROM pgts.buckets('1 hour', timestamptz '$tmax' - interval '30 days', timestamptz '$tmax') AS b(bucket) LEFT JOIN (SELECT pgts.time_bucket('1 hour', time) AS bucket, avg(data1) AS v FROM $T WHERE device = 7 AND time >= timestamptz '$tmax' - interval '30 days' AND time < timestamptz '$tmax' GROUP BY 1) AS a USING (bucket) WINDOW w AS (ORDER BY b.bucket) ORDER BY 1"
SQL[last]="SELECT device, pgts.last(data1, time) FROM $T WHERE time >= timestamptz '$tmax' - interval '1 hour' GROUP BY device"
SQL[calibration]="SELECT count(*) FROM generate_series(1, 1000000)"
ORDER=(time_bucket date_bin latest gapfill last calibration)

timeit() { # timeit NAME: one run's wall time in ms, as psql's \timing reports it
	printf '\\timing on\n\\o /dev/null\n%s;\n' "${SQL[$1]}" | psql "$URL" -X -v ON_ERROR_STOP=1 -q 2>&1 |
		awk '/^Time: / { print $2 }'
}
declare -A RUNS
for q in "${ORDER[@]}"; do timeit "$q" >/dev/null; done # warm
for r in $(seq "$ROUNDS"); do
	for q in "${ORDER[@]}"; do RUNS[$q]+="$(timeit "$q") "; done
	echo "bench-sql: round $r of $ROUNDS" >&2
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
declare -A MED
for q in "${ORDER[@]}"; do MED[$q]=$(echo "${RUNS[$q]}" | median); done

ver=$(psql_q -c "SHOW server_version")
echo "## bench-sql: $ROWS rows ($tmin .. $tmax), PostgreSQL $ver, $(nproc) cores, medians of $ROUNDS runs (ms)"
echo
echo "| query | median ms | runs (ms) | goal | met |"
echo "| --- | ---: | --- | --- | --- |"
# The ratio is the median of the rounds' ratios (each round ran both
# queries back to back), steadier on a noisy host than a ratio of medians.
ratio=$(paste <(echo "${RUNS[time_bucket]}" | tr ' ' '\n' | grep -v '^$') <(echo "${RUNS[date_bin]}" | tr ' ' '\n' | grep -v '^$') |
	awk '{ printf "%.4f ", $1 / $2 }' | median | awk '{ printf "%.3f", $1 }')
met() { awk -v v="$1" -v g="$2" 'BEGIN { print (v <= g) ? "yes" : "no" }'; }
echo "| time_bucket GROUP BY (1 hour, device) | ${MED[time_bucket]} | ${RUNS[time_bucket]}| ≤ 1.05 × date_bin: $ratio × | $(met "$ratio" 1.05) |"
echo "| date_bin GROUP BY (1 hour, device) | ${MED[date_bin]} | ${RUNS[date_bin]}| reference | |"
echo "| latest row of 1,000 devices | ${MED[latest]} | ${RUNS[latest]}| ≤ 50 ms | $(met "${MED[latest]}" 50) |"
echo "| gap-filled hourly series, 1 device, 30 days | ${MED[gapfill]} | ${RUNS[gapfill]}| ≤ 20 ms | $(met "${MED[gapfill]}" 20) |"
echo "| pgts.last per device, last hour | ${MED[last]} | ${RUNS[last]}| (no goal) | |"
echo "| calibration: count(*) of generate_series(1, 1000000) | ${MED[calibration]} | ${RUNS[calibration]}| (yardstick) | |"

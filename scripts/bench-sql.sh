#!/usr/bin/env bash
# bench-sql.sh: the SQL helpers (docs/sql.md) on BATCHES×10,000 conditions
# rows (default 1,000 batches: 10 M rows) in a series table of 1-hour
# partitions with an index on (device, time), against issue 28's goals:
#
#   time_bucket  GROUP BY pgts.time_bucket('1 hour', time), device over all
#                rows, against the same query with date_bin: ≤ 1.05× (the
#                median of the rounds' ratios)
#   latest       the latest row of each of 1,000 devices, goal ≤ 50 ms
#                warm: latest_fn is the recommended pgts.latest(NULL::tbl,
#                'device', keys); latest the LATERAL ... ORDER BY time DESC
#                LIMIT 1 documented before (with a DEFAULT partition,
#                PostgreSQL merges all partitions for it)
#   gapfill      an hourly series of one device over 30 days with locf and
#                interpolate (pgts.buckets LEFT JOIN the grouped rows, the
#                range's bounds as literals), goal
#                ≤ 20 ms warm: gapfill_cov reads the rows through the
#                covering index (device, time) INCLUDE (data1) on vacuumed
#                partitions (index-only scans), the recommended recipe;
#                gapfill is the same query without that index (dropped in a
#                transaction rolled back after the query: the old setup)
#   last         pgts.last(data1, time) per device over the last hour of
#                rows, for comparison with latest (no goal)
#   calibration  SELECT count(*) FROM generate_series(1, 1000000): a
#                CPU-bound yardstick of what the host gave the run
#
# Each query runs once to warm the cache, then ROUNDS times, the queries
# interleaved in each round; the figure is the median of the psql \timing
# of the rounds (client-side wall time, the rows read and discarded).
# Each round times each query twice: as the first statement of a new
# connection (psql started for it: the backend's catalog caches are
# empty, and planning a query over 20 partitions and their indexes first
# reads their descriptions from the catalog), and in a session (the same
# query run again on that connection, as a connection pool, Grafana or a
# psql user runs it: the catalog caches are warm; not for the two
# full-table GROUP BYs, whose seconds dwarf the difference). The
# table (bench_sql_conditions) is loaded once and reused while it holds the
# expected rows, and given the covering index once. QUERIES (default: all)
# names the queries to run, e.g. QUERIES="latest latest_fn gapfill
# gapfill_cov calibration" leaves out the two full-table GROUP BYs. Prints
# a Markdown table; its buffers column is the shared buffers (hit + read)
# of one EXPLAIN (ANALYZE, BUFFERS) of the query after the rounds, a
# measure the host's load does not change; after it, whether the
# time_bucket and date_bin queries have the same plan, expression for
# expression (EXPLAIN (VERBOSE)), which the load does not change either.
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
# The covering index of the recommended gap-filling recipe (docs/sql.md);
# VACUUM sets the visibility map its index-only scans need (pgts maintain
# vacuums closed partitions).
COV=${T}_device_time_cov
if [ "$(psql_q -c "SELECT to_regclass('$COV') IS NULL")" = t ]; then
	echo "bench-sql: creating the covering index $COV" >&2
	psql_q -c "CREATE INDEX $COV ON $T (device, time) INCLUDE (data1)" -c "VACUUM $T" >&2
fi
tmin=$(psql_q -c "SELECT min(time) FROM $T")
tmax=$(psql_q -c "SELECT max(time) FROM $T")
# The gap-filled series' range as literals, as docs/sql.md recommends (a
# bound computed in the query would keep the planner from pruning with it).
tlo=$(psql_q -c "SELECT timestamptz '$tmax' - interval '30 days'")

declare -A SQL
SQL[time_bucket]="SELECT pgts.time_bucket('1 hour', time) AS b, device, avg(data1) FROM $T GROUP BY 1, 2"
SQL[date_bin]="SELECT date_bin('1 hour', time, '2000-01-03') AS b, device, avg(data1) FROM $T GROUP BY 1, 2"
SQL[latest_fn]="SELECT device, time, data1 FROM pgts.latest(NULL::$T, 'device', (SELECT array_agg(g) FROM generate_series(1, 1000) AS g))"
SQL[latest]="SELECT d.device, l.time, l.data1 FROM generate_series(1, 1000) AS d(device) CROSS JOIN LATERAL (SELECT time, data1 FROM $T c WHERE c.device = d.device ORDER BY time DESC LIMIT 1) AS l"
SQL[gapfill]="SELECT b.bucket, a.v, pgts.locf(a.v) OVER w, pgts.interpolate(a.v, b.bucket, pgts.known(a.v, b.bucket) OVER w, pgts.known(a.v, b.bucket) OVER (ORDER BY b.bucket DESC)) FROM pgts.buckets('1 hour', '$tlo', '$tmax') AS b(bucket) LEFT JOIN (SELECT pgts.time_bucket('1 hour', time) AS bucket, avg(data1) AS v FROM $T WHERE device = 7 AND time >= '$tlo' AND time < '$tmax' GROUP BY 1) AS a USING (bucket) WINDOW w AS (ORDER BY b.bucket) ORDER BY 1"
SQL[gapfill_cov]=${SQL[gapfill]}
SQL[last]="SELECT device, pgts.last(data1, time) FROM $T WHERE time >= timestamptz '$tmax' - interval '1 hour' GROUP BY device"
SQL[calibration]="SELECT count(*) FROM generate_series(1, 1000000)"
ALL=(time_bucket date_bin latest latest_fn gapfill gapfill_cov last calibration)
read -r -a ORDER <<<"${QUERIES:-${ALL[*]}}"
# The old shapes run without the covering index: dropped in a transaction
# that is rolled back after the query (only this session sees it gone).
declare -A WITHOUT_COV=([latest]=1 [gapfill]=1)
declare -A NO_SESSION=([time_bucket]=1 [date_bin]=1)

timeit() { # timeit NAME [session]: one run's wall time in ms, as psql's \timing reports it,
	# in a new connection, or with "session" of a second run in the connection of the first
	local pre="" post="" again=""
	if [ -n "${WITHOUT_COV[$1]:-}" ]; then pre="BEGIN; DROP INDEX $COV;"; post="ROLLBACK;"; fi
	if [ "${2:-}" = session ]; then again="${SQL[$1]};"; fi
	printf '%s\n\\o /dev/null\n%s\n\\timing on\n%s;\n\\timing off\n%s\n' "$pre" "$again" "${SQL[$1]}" "$post" |
		psql "$URL" -X -v ON_ERROR_STOP=1 -q 2>&1 | awk '/^Time: / { print $2 }'
}
buffers() { # buffers NAME: shared buffers the query touched (hit + read), from EXPLAIN (ANALYZE, BUFFERS)
	local pre="" post=""
	if [ -n "${WITHOUT_COV[$1]:-}" ]; then pre="BEGIN; DROP INDEX $COV;"; post="ROLLBACK;"; fi
	printf '%s\nEXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) %s;\n%s\n' "$pre" "${SQL[$1]}" "$post" |
		psql "$URL" -X -v ON_ERROR_STOP=1 -qAt 2>&1 |
		awk '/Buffers: shared/ && !done { n = 0; for (i = 1; i <= NF; i++) if ($i ~ /^(hit|read)=/) { split($i, kv, "="); n += kv[2] } print n; done = 1 }'
}
declare -A RUNS SRUNS
for q in "${ORDER[@]}"; do timeit "$q" >/dev/null; done # warm
for r in $(seq "$ROUNDS"); do
	for q in "${ORDER[@]}"; do
		RUNS[$q]+="$(timeit "$q") "
		if [ -z "${NO_SESSION[$q]:-}" ]; then SRUNS[$q]+="$(timeit "$q" session) "; fi
	done
	echo "bench-sql: round $r of $ROUNDS" >&2
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
declare -A MED SMED BUF
for q in "${ORDER[@]}"; do
	MED[$q]=$(echo "${RUNS[$q]}" | median)
	SMED[$q]=–
	if [ -n "${SRUNS[$q]:-}" ]; then SMED[$q]=$(echo "${SRUNS[$q]}" | median); fi
	BUF[$q]=$(buffers "$q")
done

ver=$(psql_q -c "SHOW server_version")
echo "## bench-sql: $ROWS rows ($tmin .. $tmax), PostgreSQL $ver, $(nproc) cores, medians of $ROUNDS runs (ms)"
echo
echo "| query | new connection: median ms | runs (ms) | in a session: median ms | runs (ms) | buffers | goal | met (new connection / session) |"
echo "| --- | ---: | --- | ---: | --- | ---: | --- | --- |"
met() { awk -v v="$1" -v g="$2" 'BEGIN { print (v <= g) ? "yes" : "no" }'; }
row() { # row NAME LABEL GOAL [LIMIT]: one line of the table, when NAME ran
	[ -n "${MED[$1]:-}" ] || return 0
	local met=""
	if [ -n "${4:-}" ]; then met="$(met "${MED[$1]}" "$4") / $(met "${SMED[$1]}" "$4")"; fi
	echo "| $2 | ${MED[$1]} | ${RUNS[$1]}| ${SMED[$1]} | ${SRUNS[$1]:-}| ${BUF[$1]} | $3 | $met |"
}
if [ -n "${MED[time_bucket]:-}" ] && [ -n "${MED[date_bin]:-}" ]; then
	# The ratio is the median of the rounds' ratios (each round ran both
	# queries back to back), steadier on a noisy host than a ratio of medians.
	ratio=$(paste <(echo "${RUNS[time_bucket]}" | tr ' ' '\n' | grep -v '^$') <(echo "${RUNS[date_bin]}" | tr ' ' '\n' | grep -v '^$') |
		awk '{ printf "%.4f ", $1 / $2 }' | median | awk '{ printf "%.3f", $1 }')
	echo "| time_bucket GROUP BY (1 hour, device) | ${MED[time_bucket]} | ${RUNS[time_bucket]}| ${SMED[time_bucket]} | ${SRUNS[time_bucket]:-}| ${BUF[time_bucket]} | ≤ 1.05 × date_bin: $ratio × | $(met "$ratio" 1.05) |"
	# Whether the two plans are the same, expression for expression: a
	# measure the host's load does not change (the timed ratio does).
	plan() { psql_q -c "EXPLAIN (VERBOSE, COSTS OFF) ${SQL[$1]}"; }
	if [ "$(plan time_bucket)" = "$(plan date_bin)" ]; then SAMEPLAN="identical plans (pgts.time_bucket inlined to date_bin)"; else SAMEPLAN="different plans"; fi
fi
row date_bin "date_bin GROUP BY (1 hour, device)" reference
row latest_fn "latest row of 1,000 devices: pgts.latest (recommended)" "≤ 50 ms" 50
row latest "latest row of 1,000 devices: LATERAL ... LIMIT 1 (old shape)" "≤ 50 ms" 50
row gapfill_cov "gap-filled hourly series, 1 device, 30 days: covering index (recommended)" "≤ 20 ms" 20
row gapfill "gap-filled hourly series, 1 device, 30 days: (device, time) index only (old setup)" "≤ 20 ms" 20
row last "pgts.last per device, last hour" "(no goal)"
row calibration "calibration: count(*) of generate_series(1, 1000000)" "(yardstick)"
if [ -n "${SAMEPLAN:-}" ]; then
	echo
	echo "EXPLAIN (VERBOSE) of the time_bucket and date_bin queries: $SAMEPLAN."
fi

#!/usr/bin/env bash
# bench-rollup-queries: a week of hourly per-device averages read from a
# rollup's real-time view, from its materialized buckets only, and by
# GROUP BY over the raw rows (docs/benchmarks.md, "Rollup queries").
#
# The table rq (daily partitions, an index on (device, time)) holds
# QDEVICES devices, one row every QSTEP seconds each, the week ending now,
# loaded by pgts load (made once; SETUP=1 makes it again). Two rollups of
# it, 1-hour buckets by device, avg(data1), --real-time on (rq_rt) and off
# (rq_mat), are made again and refreshed; then QOLD rows (1; 0 for none)
# are written 3 days back (one invalidated (bucket, device) pair) and
# QNEW rows per device past the refresh by psql (the current hour's rows
# written since). EXTRA_VIEWS
# names more views of the same columns to time beside them (a view of an
# earlier definition, say).
#
# Timer: the server's clock around the query run by EXECUTE in PL/pgSQL
# (planning included; wrapped so that every column is computed), all the
# queries interleaved in each of QREPEAT rounds in one session after one
# warm-up run each; medians. Rows read: the rows the tables of schema
# public gave to the query's scans (the backend's counters: sequential
# scans' rows, index and bitmap fetches), those inside functions included,
# and the buffers (shared hit + read of EXPLAIN (ANALYZE, BUFFERS), not
# counting a function's own), planning and execution times (EXPLAIN's
# SUMMARY) of a run without parallel workers (theirs are not in the
# backend's counters; the timed runs may use them). EXPLAIN=1 prints the
# plans. Prints a Markdown table and the load average before and after.
# CLEANUP=1 drops the rollups and the table at the end.
set -euo pipefail
BIN=${BIN:-bin/pgts}
WORKERS=${WORKERS:-2}
devices=${QDEVICES:-20} step=${QSTEP:-10} repeat=${QREPEAT:-7} qnew=${QNEW:-0} qold=${QOLD:-1}
psqlv() { "$BIN" db psql -qAt -c "$1"; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)

if [ "${SETUP:-0}" = 1 ] || [ "$(psqlv "SELECT to_regclass('public.rq') IS NULL")" = t ]; then
	"$BIN" rollup drop rq_rt --yes >/dev/null 2>&1 || true
	"$BIN" rollup drop rq_mat --yes >/dev/null 2>&1 || true
	"$BIN" table drop rq --yes >/dev/null 2>&1 || true
	"$BIN" table create rq --columns "time timestamptz not null, device int not null, data1 float8" --interval "1 day" \
		--premake 1 --index-on "device, time" >/dev/null 2>&1
	psqlv "COPY (SELECT t, d, random() * 100 FROM generate_series(now() - interval '7 days', now(), interval '$step seconds') t,
		generate_series(1, $devices) d) TO STDOUT WITH (FORMAT csv)" | "$BIN" load rq - --workers "$WORKERS" >/dev/null 2>/tmp/bench-rollup.err ||
		{ cat /tmp/bench-rollup.err >&2; exit 1; }
fi
for rt in on off; do
	name=rq_rt
	[ "$rt" = off ] && name=rq_mat
	"$BIN" rollup drop "$name" --yes >/dev/null 2>&1 || true
	"$BIN" rollup create "$name" --on rq --bucket '1 hour' --group-by device --agg "avg(data1)" --real-time "$rt" >/dev/null
done
"$BIN" rollup refresh >/dev/null 2>&1
if [ "$qold" -gt 0 ]; then
	psqlv "INSERT INTO rq SELECT date_trunc('hour', now()) - interval '3 days' + interval '1 minute' + i * interval '1 millisecond', 1, 50 FROM generate_series(1, $qold) i" >/dev/null
fi
if [ "$qnew" -gt 0 ]; then
	psqlv "INSERT INTO rq SELECT now() + i * interval '1 millisecond', d, random() * 100 FROM generate_series(1, $qnew) i, generate_series(1, $devices) d" >/dev/null
fi
for t in rq rq_rt_data rq_mat_data pgts.rollup_invalidation pgts.rollup_invalidation_range; do psqlv "VACUUM ANALYZE $t" >/dev/null; done

w="bucket >= date_trunc('hour', now()) - interval '7 days'"
names=(raw mat rt)
declare -A q=(
	[raw]="SELECT pgts.time_bucket('1 hour', time) AS bucket, device, avg(data1) FROM rq WHERE time >= date_trunc('hour', now()) - interval '7 days' GROUP BY 1, 2"
	[mat]="SELECT bucket, device, avg_data1 FROM rq_mat WHERE $w"
	[rt]="SELECT bucket, device, avg_data1 FROM rq_rt WHERE $w"
)
for v in ${EXTRA_VIEWS:-}; do
	names+=("$v")
	q[$v]="SELECT bucket, device, avg_data1 FROM $v WHERE $w"
done
lit() { local s=${1//\'/\'\'}; echo "'$s'"; }
{
	cat <<'SQL'
CREATE OR REPLACE FUNCTION pg_temp.bench_tuples() RETURNS bigint LANGUAGE sql AS $f$
	SELECT coalesce(sum(CASE c.relkind WHEN 'i' THEN pg_stat_get_xact_tuples_fetched(c.oid)
		ELSE pg_stat_get_xact_tuples_returned(c.oid) + pg_stat_get_xact_tuples_fetched(c.oid) END), 0)::bigint
	FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i')
$f$;
CREATE OR REPLACE FUNCTION pg_temp.bench_read(q text, OUT rows_read bigint, OUT buffers bigint, OUT plan_ms float8, OUT exec_ms float8) LANGUAGE plpgsql AS $f$
DECLARE j jsonb; n0 bigint;
BEGIN
	-- parallel workers' reads are not in this backend's counters
	PERFORM set_config('max_parallel_workers_per_gather', '0', true);
	n0 := pg_temp.bench_tuples();
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, SUMMARY, FORMAT JSON) ' || q INTO j;
	rows_read := pg_temp.bench_tuples() - n0;
	buffers := (j -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint + (j -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
	plan_ms := (j -> 0 ->> 'Planning Time')::float8;
	exec_ms := (j -> 0 ->> 'Execution Time')::float8;
END $f$;
CREATE OR REPLACE FUNCTION pg_temp.bench_ms(q text) RETURNS float8 LANGUAGE plpgsql AS $f$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	EXECUTE 'SELECT count(*) FROM (' || q || ') x WHERE x IS NOT NULL';
	RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $f$;
CREATE TEMP TABLE bench_t (name text, round int, ms float8);
SQL
	for c in "${names[@]}"; do
		echo "SELECT pg_temp.bench_ms($(lit "${q[$c]}"));"
	done
	for r in $(seq "$repeat"); do
		for c in "${names[@]}"; do
			echo "INSERT INTO bench_t VALUES ('$c', $r, pg_temp.bench_ms($(lit "${q[$c]}")));"
		done
	done
	for c in "${names[@]}"; do
		echo "SELECT 'read', '$c', (SELECT count(*) FROM (${q[$c]}) x), b.* FROM pg_temp.bench_read($(lit "${q[$c]}")) b;"
		if [ "${EXPLAIN:-0}" = 1 ] && [ "$c" != raw ]; then
			echo "SELECT 'plan of $c'; EXPLAIN (ANALYZE, BUFFERS, SUMMARY) ${q[$c]};"
		fi
	done
	echo "SELECT 'ms', name, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), string_agg(round(ms::numeric, 2)::text, ' ' ORDER BY round) FROM bench_t GROUP BY name;"
} >/tmp/bench-rollup-queries.sql
out=$("$BIN" db psql -qAt -F'|' -f /tmp/bench-rollup-queries.sql)
rm -f /tmp/bench-rollup-queries.sql
load1=$(cut -d' ' -f1-3 /proc/loadavg)
if [ "${EXPLAIN:-0}" = 1 ]; then
	echo "$out" | grep -v '^read|\|^ms|'
fi
table=$(psqlv "SELECT count(*) FROM rq")
declare -A rows bufs pms ems med all groups
while IFS='|' read -r kind name a b c d e; do
	case $kind in
	read) groups[$name]=$a rows[$name]=$b bufs[$name]=$c pms[$name]=$d ems[$name]=$e ;;
	ms) med[$name]=$a all[$name]=$b ;;
	esac
done <<<"$(echo "$out" | grep '^read|\|^ms|')"
echo "| a week of hourly averages of $devices devices (table of $table rows; $qold rows 3 days back, $qnew new rows per device past the refresh; medians of $repeat) | rows | rows read | buffers | planning ms (EXPLAIN) | execution ms (EXPLAIN) | ms | ms / materialized only |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for c in "${names[@]}"; do
	case $c in
	raw) what="raw rows, GROUP BY" ;;
	mat) what="rollup, materialized only (--real-time off)" ;;
	rt) what="rollup, real-time view" ;;
	*) what="view $c" ;;
	esac
	awk -v w="$what" -v g="${groups[$c]}" -v r="${rows[$c]}" -v b="${bufs[$c]}" -v p="${pms[$c]}" -v e="${ems[$c]}" -v m="${med[$c]}" -v m0="${med[mat]}" \
		'BEGIN {printf "| %s | %d | %d | %d | %.2f | %.2f | %.2f | %.2f |\n", w, g, r, b, p, e, m, m / m0}'
done
echo
for c in "${names[@]}"; do echo "rounds, $c (ms): ${all[$c]}"; done
echo "load average (1, 5, 15 min): $load0 before, $load1 after"
if [ "${CLEANUP:-0}" = 1 ]; then
	"$BIN" rollup drop rq_rt --yes >/dev/null 2>&1 || true
	"$BIN" rollup drop rq_mat --yes >/dev/null 2>&1 || true
	"$BIN" table drop rq --yes >/dev/null 2>&1 || true
fi

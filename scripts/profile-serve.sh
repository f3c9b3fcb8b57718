#!/bin/bash
# Profiles pgts serve under pgts blast: CPU profiles of the cold start
# (the first COLD seconds, every series new) and of a later stretch, the
# CPU of the daemon and of its PostgreSQL server per point over the blast
# and a drain, its metrics every 5 s, and its RSS after QUIET seconds
# idle. Needs the embedded cluster of PGTS_DATA_DIR (pgts db start);
# empties its archive tables first.
#
#   PGTS_DATA_DIR=/work/serve-data scripts/profile-serve.sh bin/pgts out/ [series] [rate] [seconds]
#   go tool pprof -top bin/pgts out/cold.prof
#   go tool pprof -top -sample_index=alloc_space bin/pgts out/allocs.prof
set -eu
bin=$1 out=$2 series=${3:-1000000} rate=${4:-500000} secs=${5:-90}
cold=${COLD:-15} later=${LATER:-30} quiet=${QUIET:-30}
mkdir -p "$out"
url=$("$bin" db url)
psql "$url" -qc "DO \$\$ BEGIN IF to_regclass('pgts.metric') IS NOT NULL THEN
	TRUNCATE pgts.metric, pgts.rra_data, pgts.ds_state, pgts.rra_bundle; END IF; END \$\$" -c CHECKPOINT
gport=${GRAPHITE_PORT:-22003} hport=${HTTP_PORT:-28080}
cat >"$out/serve.toml" <<TOML
max-memory = "1GB"
max-series = 10000000
[graphite]
tcp = "127.0.0.1:$gport"
udp = ""
[pickle]
tcp = ""
[statsd]
udp = ""
tcp = ""
[http]
addr = "127.0.0.1:$hport"
[[ds]]
regexp = "."
step = "10s"
archives = ["10s:6h", "1m:7d", "1h:1y"]
TOML
# Another process on one of the ports (a daemon of an earlier run still
# quiet) would answer for this one: this run would profile that one.
for port in "$gport" "$hport"; do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "profile-serve: 127.0.0.1:$port is in use (an earlier run's daemon?); set GRAPHITE_PORT/HTTP_PORT or stop it" >&2
		exit 1
	fi
done
"$bin" serve --config "$out/serve.toml" --db "$url" --pprof >"$out/serve.log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null || true' EXIT
m=http://127.0.0.1:$hport
until curl -sf "$m/healthz" >/dev/null; do
	if ! kill -0 "$daemon" 2>/dev/null; then
		echo "profile-serve: pgts serve exited before it answered:" >&2
		cat "$out/serve.log" >&2
		exit 1
	fi
	sleep 0.2
done
pm=$(head -1 "$PGTS_DATA_DIR/postmaster.pid")
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
pgticks() { local t=0 p; for p in $pm $(pgrep -P "$pm"); do t=$((t + $(ticks "$p" 2>/dev/null || echo 0))); done; echo $t; }
d0=$(ticks $daemon) p0=$(pgticks)
"$bin" blast --rate "$rate" --series "$series" --duration "${secs}s" --addr "127.0.0.1:$gport" --json >"$out/blast.json" 2>"$out/blast.log" &
blaster=$!
(while kill -0 $blaster 2>/dev/null; do
	echo "$(date +%T) $(curl -s $m/metrics | grep -E '^(pgts_store_(cache_bytes|series_bytes|unflushed_series|flush_seconds_(sum|count))|go_gc_heap_live_bytes|process_resident_memory_bytes)' | tr '\n' ' ')"
	sleep 5
done) >"$out/metrics.txt" &
curl -s -o "$out/cold.prof" "$m/debug/pprof/profile?seconds=$cold"
sleep $(( secs / 2 - cold ))
curl -s -o "$out/later.prof" "$m/debug/pprof/profile?seconds=$later"
curl -s -o "$out/allocs.prof" "$m/debug/pprof/allocs" # since the start: go tool pprof -sample_index=alloc_space
wait $blaster
for _ in $(seq 600); do # the drain: until nothing is pending, at most 10 minutes
	[ "$(curl -s $m/metrics | awk '/^pgts_store_cache_bytes/ {print $2}')" = 0 ] && break
	sleep 1
done
d1=$(ticks $daemon) p1=$(pgticks)
acked=$(grep -o '"acked": [0-9]*' "$out/blast.json" | grep -o '[0-9]*$')
hz=$(getconf CLK_TCK)
awk -v d=$((d1 - d0)) -v p=$((p1 - p0)) -v hz="$hz" -v n="$acked" 'BEGIN {
	printf "acked %d points; CPU µs/point over the blast and the drain: daemon %.2f, PostgreSQL %.2f\n", n, d*1e6/hz/n, p*1e6/hz/n }'
curl -s $m/metrics | awk -v n="$acked" '/^go_gc_duration_seconds_count / {
	printf "GC cycles: %d, %.0f points a cycle\n", $2, n/$2 }'
sleep "$quiet"
curl -s $m/metrics | awk -v q="$quiet" -v n="$series" '/^process_resident_memory_bytes/ {
	printf "RSS after %s s quiet: %.0f MiB, %.0f bytes a series\n", q, $2/1048576, $2/n }'
curl -s $m/metrics | awk -v n="$series" '/^go_gc_heap_live_bytes/ { printf "live heap: %.0f bytes a series\n", $2/n }' 
grep "memory released" "$out/serve.log" || true

#!/bin/bash
# The bulk path's one-transaction units against the live path: BATCHES
# batches of conditions rows (10,000 rows, 60 s of simulated time each) into
# a series table with 1-hour partitions (600,000 rows each: one unit), on a
# fresh table after a CHECKPOINT, `pgts load --generate conditions
# --workers WORKERS` with and without --bulk, REPEAT interleaved repeats.
# Prints one line per run; the database is pgts' usual choice
# (DATABASE_URL, else the embedded cluster).
set -euo pipefail
BIN=${BIN:-bin/pgts}
BATCHES=${BATCHES:-1000}
REPEAT=${REPEAT:-2}
WORKERS=${WORKERS:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sql() {
  if [ -n "${DATABASE_URL:-}" ]; then psql "$DATABASE_URL" -XAtq -c "$1"; else "$BIN" db psql -XAtq -c "$1" 2>/dev/null; fi
}
echo "| repeat | loader | rows/s | seconds | WAL MiB | partitions | index builds (summed) |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | --- |"
for rep in $(seq 1 "$REPEAT"); do
  for mode in live bulk; do
    sql "DROP TABLE IF EXISTS bulk_units; DELETE FROM pgts.series_table WHERE table_name = 'bulk_units'" >/dev/null 2>&1 || true
    "$BIN" table create bulk_units --columns "time timestamptz not null, device integer not null, data1 float8, data2 float8, data3 float8, data4 float8, data5 float8" \
      --time-column time --interval "1 hour" --premake 0 2>/dev/null
    sql "CHECKPOINT" >/dev/null
    w0=$(sql "SELECT pg_current_wal_lsn()")
    flag=""
    [ "$mode" = bulk ] && flag="--bulk"
    "$BIN" load bulk_units --generate conditions --batches "$BATCHES" --workers "$WORKERS" $flag --json \
      2>"$out/err" >"$out/sum.json"
    wal=$(sql "SELECT (pg_current_wal_lsn() - '$w0'::pg_lsn) / 1048576")
    python3 - "$rep" "$mode" "$wal" "$out" <<'PY'
import json, re, sys
rep, mode, wal, out = sys.argv[1:]
d = json.load(open(out + "/sum.json"))
m = re.search(r"bulk path: \d+ partitions attached.*", open(out + "/err").read())
print("| %s | %s | %s | %.1f | %.0f | %d | %s |" % (rep, "pgts load --bulk" if mode == "bulk" else "pgts load (live)",
      format(int(d["rows_per_second"]), ","), d["seconds"], float(wal), d["partitions_written"], m.group(0) if m else ""))
PY
  done
done
sql "DROP TABLE IF EXISTS bulk_units; DELETE FROM pgts.series_table WHERE table_name = 'bulk_units'" >/dev/null 2>&1 || true

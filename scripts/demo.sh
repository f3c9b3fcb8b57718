#!/usr/bin/env bash
# The main job on the embedded database: a conditions series table with
# weekly partitions, 10 million generated rows loaded with parallel binary
# COPY, then a summary of the table.
set -euo pipefail
pgts=${1:-bin/pgts}
"$pgts" db start >/dev/null
# Rerunnable: start from a fresh table.
"$pgts" table drop conditions --yes -q 2>/dev/null || true
"$pgts" table create conditions \
	--columns "time timestamptz not null, device integer not null, data1 float8, data2 float8, data3 float8, data4 float8, data5 float8" \
	--interval "1 week" --premake 4
start=$(date -u -d '1 day ago' +%Y-%m-%dT%H:00:00Z)
"$pgts" load conditions --generate conditions --batches 1000 --start "$start"
"$pgts" db psql -q -c 'ANALYZE conditions'
"$pgts" table show conditions
# The cluster stays up for the user to explore the table: say so.
echo
echo "The embedded cluster is still running, at $("$pgts" db url)"
echo "  query it:  $pgts db psql -c 'SELECT count(*) FROM conditions'"
echo "  stop it:   $pgts db stop       (remove it and its data: $pgts db destroy)"

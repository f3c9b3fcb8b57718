#!/usr/bin/env bash
# The main job on the embedded database: start it and show it working.
set -euo pipefail
pgts=${1:-bin/pgts}
"$pgts" db start >/dev/null
"$pgts" db psql -c 'select version()'
"$pgts" db status

#!/usr/bin/env bash
# Whether a session log's 3D channels open in Foxglove-schema tools: reads
# the log with the Python `mcap` package and validates every `/scene` and
# `/tf` message against the published JSON schemas of `@foxglove/schemas`
# (npm, tools/foxglove/package-lock.json). Needs python3 and npm; installs
# into tools/foxglove/node_modules and a virtualenv under target/.
#   tools/foxglove_check.sh [LOG.mcap]   (default: a 4 s lockstep demo)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here=$root/tools/foxglove
(cd "$here" && npm ci --no-audit --no-fund --silent)
venv=$root/target/foxglove-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet mcap==1.6.0 jsonschema==4.25.1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
log=${1:-}
if [ -z "$log" ]; then
  log=$out/demo.mcap
  (cd "$root" && cargo run --release --quiet -- demo --lockstep --seconds 4 --no-ui --json --record "$log" > /dev/null)
fi
node "$here/dump_schemas.js" "$out"
"$venv/bin/python" "$here/check_log.py" "$log" "$out"

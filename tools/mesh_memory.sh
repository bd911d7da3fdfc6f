#!/usr/bin/env bash
# Measures the memory per mesh node and tet, and per body of a world, that
# the request estimates in src/mesh/generate.rs and src/config/scene.rs
# (MESH_BYTES_PER_TET, BYTES_PER_BODY) stand for: the peak resident set of
# `tessera mesh` on two box sizes, and of `tessera run` on two cube counts;
# the difference divided by the difference in tets (bodies) cancels the
# fixed cost of the process.
#
#   tools/mesh_memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=$PWD/target/release/tessera
export TESSERA_CACHE_DIR=$(mktemp -d)
trap 'rm -rf "$TESSERA_CACHE_DIR"' EXIT
peak_kb() {
  python3 - "$@" <<'PY'
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(p.pid, 0)
if status != 0:
    sys.exit(f"{sys.argv[1:]} failed")
print(usage.ru_maxrss)
PY
}
small=$(peak_kb "$bin" mesh --mesh box:1,1,1:40,40,40)
large=$(peak_kb "$bin" mesh --mesh box:1,1,1:80,80,80)
python3 - "$small" "$large" <<'PY'
import sys
small, large = (int(x) * 1024 for x in sys.argv[1:])
tets = lambda n: 6 * n**3
nodes = lambda n: (n + 1)**3
per_tet = (large - small) / (tets(80) - tets(40))
print(f"mesh: box 40³ {small/1e6:.0f} MB, 80³ {large/1e6:.0f} MB peak; "
      f"{per_tet:.0f} bytes per tet (nodes included: {nodes(80) / tets(80):.2f} per tet)")
PY
small=$(peak_kb "$bin" run --scene cube-basin --count 2000 --seconds 0.001)
large=$(peak_kb "$bin" run --scene cube-basin --count 20000 --seconds 0.001)
python3 - "$small" "$large" <<'PY'
import sys
small, large = (int(x) * 1024 for x in sys.argv[1:])
print(f"bodies: 2000 cubes {small/1e6:.0f} MB, 20000 cubes {large/1e6:.0f} MB peak; "
      f"{(large - small) / 18000:.0f} bytes per body")
PY

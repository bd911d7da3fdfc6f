#!/usr/bin/env bash
# Fracture pattern statistics (Glondu §5.1; `tessera fracture --pattern`)
# of the free 15 cm ceramic tile struck at its centre by the 110 g, 25 mm
# steel ball, against the strike speed and the mesh: pieces (gap slivers
# apart), cracks, junctions, the largest piece's share of the area and the
# longest crack over √area. Radial cracks of a plate struck at its centre
# grow with the speed roughly as √v (Vandenberghe, Vermorel & Villermaux,
# PRL 2013); the last column is cracks/√v. A pattern that converges gives
# the same rows on every mesh.
#   tools/fracture_patterns.sh [MESHES] [SPEEDS]
# MESHES: tile cells and layers (default "12,1 24,2 30,4"); SPEEDS in m/s
# (default "6 8 12 18"). The first run of a mesh analyses its modes
# (cached after). FLAGS in the environment are added to each run (e.g.
# FLAGS=--no-crack-shielding).
set -euo pipefail
cd "$(dirname "$0")/.."
meshes=${1:-"12,1 24,2 30,4"}
speeds=${2:-"6 8 12 18"}
cargo build --release --quiet
out=$(mktemp -d)
printf "%-8s %6s %7s %5s %7s %10s %8s %12s %9s\n" \
  mesh v_m_s pieces gaps cracks junctions largest longest_crack cracks/√v
for mesh in $meshes; do
  for v in $speeds; do
    target/release/tessera fracture --mesh "tile:0.15,0.006:$mesh" --material ceramic-tile \
      --impact "0,0,0.006:0,0,-1:1:$v" ${FLAGS:-} --pattern "$out/p.json" >/dev/null 2>&1
    python3 - "$mesh" "$v" "$out/p.json" <<'PY'
import json, math, sys
mesh, v, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
p = json.load(open(path))
cracks = len(p["crack_lengths"])
print("%-8s %6.1f %7d %5d %7d %10d %8.3f %12.3f %9.2f" % (
    mesh, v, p["fragments"], p["gap_fragments"], cracks, len(p["junction_degrees"]),
    p["fragment_areas"][0], max(p["crack_lengths"], default=0.0), cracks / math.sqrt(v)))
PY
  done
done

#!/usr/bin/env bash
# Fracture pattern statistics (Glondu §5.1; `tessera fracture --pattern`)
# of the free 15 cm ceramic tile struck at its centre by the 110 g, 25 mm
# steel ball, against the strike speed and the mesh: pieces (gap slivers
# apart), cracks, junctions, the largest piece's share of the area and the
# longest crack over √area. Radial cracks of a plate struck at its centre
# grow with the speed roughly as √v (Vandenberghe, Vermorel & Villermaux,
# PRL 2013): `arms` counts the cracks crossing circles of 20 and 40 mm
# radius round the impact on the tile's lower face (tools/crack_arms.py),
# and `arms/√v` is the arms at 40 mm over √v. `area` is the
# event's crack area and `flat` the part of it on cracks whose normal is
# within 45° of the tile's (cm²; the energy stop's known weakness,
# docs/fracture.md). A pattern that converges gives the same rows on
# every mesh.
#   tools/fracture_patterns.sh [MESHES] [SPEEDS]
# MESHES: tile cells and layers (default "12,1 24,2 30,4"); SPEEDS in m/s
# (default "6 8 12 18"). The first run of a mesh analyses its modes
# (cached after). FLAGS in the environment are added to each run (e.g.
# FLAGS=--no-crack-shielding or FLAGS=--crack-plane-energy).
set -euo pipefail
cd "$(dirname "$0")/.."
meshes=${1:-"12,1 24,2 30,4"}
speeds=${2:-"6 8 12 18"}
cargo build --release --quiet
out=$(mktemp -d)
printf "%-8s %6s %7s %5s %7s %10s %8s %12s %9s %9s %7s %6s\n" \
  mesh v_m_s pieces gaps cracks junctions largest longest_crack arms arms/√v area flat
for mesh in $meshes; do
  for v in $speeds; do
    target/release/tessera fracture --mesh "tile:0.15,0.006:$mesh" --material ceramic-tile \
      --impact "0,0,0.006:0,0,-1:1:$v" ${FLAGS:-} --pattern "$out/p.json" \
      --out "$out/pieces" --json >"$out/f.json" 2>/dev/null
    python3 - "$mesh" "$v" "$out/p.json" "$out/f.json" \
      "$(python3 tools/crack_arms.py "$out/pieces/fracture.vtu" 0.02 0.04)" <<'PY'
import json, math, sys
mesh, v, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
p = json.load(open(path))
cracks = json.load(open(sys.argv[4]))["cracks"]
area = sum(c["area_m2"] for c in cracks) * 1e4
flat = sum(c["area_m2"] for c in cracks if abs(c["normal"][2]) > math.sqrt(0.5)) * 1e4
near, far = (int(a) for a in sys.argv[5].split())
print("%-8s %6.1f %7d %5d %7d %10d %8.3f %12.3f %9s %9.2f %7.1f %6.1f" % (
    mesh, v, p["fragments"], p["gap_fragments"], len(p["crack_lengths"]),
    len(p["junction_degrees"]), p["fragment_areas"][0], max(p["crack_lengths"], default=0.0),
    "%d/%d" % (near, far), far / math.sqrt(v), area, flat))
PY
    rm -rf "$out/pieces"
  done
done

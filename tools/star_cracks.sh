#!/usr/bin/env bash
# Star cracks of a thin glass disc struck at its centre, against the
# strike speed and the mesh, in the regime of Vandenberghe, Vermorel &
# Villermaux (PRL 110, 174302, 2013): millimetre plates, a projectile of
# a few millimetres at 20-120 m/s, whose radial cracks grow in number
# roughly as √v. Here a float-glass disc of radius 50 mm and thickness
# 1 mm, struck by a 1 g steel impactor of 2 mm radius (their projectile is
# a 4 mm steel cylinder; its mass is ours). `cracks` are the event's
# cracks, `arms` the cracks crossing circles of 10 and 25 mm round the
# impact on the lower face (tools/crack_arms.py), `arms/√v` the arms at
# 10 mm over √v, `directions` how many directions in the disc's plane the
# cracks run in (within 10°; a star's arms run in many, cracks parallel
# to the first two in two). FLAGS in the environment are added to each
# run (e.g. FLAGS=--no-crack-shielding or FLAGS="--max-samples 128").
#   tools/star_cracks.sh [RINGS] [SPEEDS]
# RINGS: the disc's rings per mesh (default "20 30 45"); SPEEDS in m/s
# (default "20 40 80 120").
set -euo pipefail
cd "$(dirname "$0")/.."
rings=${1:-"20 30 45"}
speeds=${2:-"20 40 80 120"}
cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf "%-6s %6s %7s %7s %5s %9s %8s %8s %10s\n" rings v_m_s cracks pieces gaps arms arms/√v area_cm2 directions
for ring in $rings; do
  for v in $speeds; do
    impulse=$(python3 -c "print(0.001 * $v)")
    target/release/tessera fracture --mesh "plate:0.05,0.001:$ring,1" --material float-glass \
      --impact "0,0,0.001:0,0,-1:$impulse:$v" --impactor-mass 0.001 --impactor-radius 0.002 \
      ${FLAGS:-} --pattern "$out/p.json" --out "$out/pieces" --json >"$out/f.json" 2>/dev/null
    python3 - "$ring" "$v" "$out/p.json" "$out/f.json" \
      "$(python3 tools/crack_arms.py "$out/pieces/fracture.vtu" 0.01 0.025)" <<'PY'
import json, math, sys
ring, v, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
p = json.load(open(path))
f = json.load(open(sys.argv[4]))
near, far = (int(a) for a in sys.argv[5].split())
# The cracks' directions in the disc's plane (each normal turned a
# quarter, modulo 180°), grouped within 10°: a star's arms run in many,
# cracks parallel to the first ones in two.
directions = []
for crack in f["cracks"]:
    nx, ny, _ = crack["normal"]
    if crack["elements"] == 0 or math.hypot(nx, ny) < 0.5:
        continue
    angle = (math.degrees(math.atan2(ny, nx)) + 90.0) % 180.0
    if all(min(abs(angle - d), 180.0 - abs(angle - d)) > 10.0 for d in directions):
        directions.append(angle)
print("%-6s %6.0f %7d %7d %5d %9s %8.2f %8.2f %10d" % (
    ring, v, len(f["cracks"]), p["fragments"], p["gap_fragments"], "%d/%d" % (near, far),
    near / math.sqrt(v), f["crack_area_m2"] * 1e4, len(directions)))
PY
    rm -rf "$out/pieces"
  done
done

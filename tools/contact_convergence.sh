#!/usr/bin/env bash
# The computed contact (issue 26 §3) and the peak stress of one strike on
# the free 15 cm ceramic tile, against the number of modes and the mesh:
# the 110 g, 25 mm steel ball at SPEED m/s (default 4.43, a 1 m drop) on
# the tile's centre (`tessera fracture`). Hertz's rigid-half-space contact
# at the pair's reduced mass is printed for reference; each case runs with
# the static correction, without it (the modal sum alone, `modal only`) and
# with its second-order term (`second order`; 24×2 only),
# in ELEMENT (default quadratic; `linear` for the 4-node tets). With
# MAX_SAMPLES in the environment, the stresses are tested at up to that
# many time samples per contact instead of the default 64 (a contact of
# three phases wants 105 for 35 per pulse).
#   [MAX_SAMPLES=N] tools/contact_convergence.sh [SPEED] [ELEMENT]
set -euo pipefail
cd "$(dirname "$0")/.."
speed=${1:-4.43}
element=${2:-quadratic}
cargo build --release --quiet
strike() { # MESH MODES [FLAGS...]
  target/release/tessera fracture --mesh "$1" --material ceramic-tile --modes "$2" \
    --element "$element" --impact "0,0,0.006:0,0,-1:1:$speed" --json \
    ${MAX_SAMPLES:+--max-samples "$MAX_SAMPLES"} "${@:3}" 2>/dev/null
}
report() { # LABEL JSON
  python3 -c '
import json, sys
label, d = sys.argv[1], json.loads(sys.argv[2])
e = d["events"][0]; c = e["contact"]
print("%-24s %9.1f %10.1f %10.4f %8.3f %7d %9.2f %9d" % (label, c["duration_s"] * 1e6,
      c["peak_force_n"], c["striking_impulse_n_s"], c["restitution"], c["phases"],
      e["peak_stress_pa"] / 1e6, len(d["fragments"])))' "$1" "$2"
}
python3 - "$speed" <<'PY'
import math, sys
v = float(sys.argv[1])
# Steel ball on ceramic tile (configs/materials.toml): E* and the reduced mass.
E1, n1, E2, n2 = 200e9, 0.3, 13.35e9, 0.123
m_ball, m_tile, R = 0.110, 1738.0 * 0.15 * 0.15 * 0.006, 0.0125
e_star = 1 / ((1 - n1**2) / E1 + (1 - n2**2) / E2)
m = 1 / (1 / m_ball + 1 / m_tile)
k = 4 / 3 * e_star * math.sqrt(R)
d = (5 * m * v * v / (4 * k)) ** 0.4
print("Hertz, rigid tile of the reduced mass %.4f kg at %.2f m/s: %.1f µs, peak %.1f N, impulse %.4f N·s"
      % (m, v, 2.9432752 * d / v * 1e6, k * d ** 1.5, 2 * m * v))
PY
header="%-24s %9s %10s %10s %8s %7s %9s %9s\n"
printf "$header" case contact_us peak_N strike_N·s restit. phases σ1_MPa fragments
echo "$element elements"
for modes in 20 40 60 100 200; do
  report "tile 24×2, $modes modes" "$(strike tile:0.15,0.006:24,2 "$modes")"
  report "  modal only" "$(strike tile:0.15,0.006:24,2 "$modes" --no-static-correction)"
  report "  second order" "$(strike tile:0.15,0.006:24,2 "$modes" --second-order-correction)"
done
# A quadratic 40×6 tile has 0.3 M DOFs: its analysis needs minutes and GBs.
meshes=(12,1 30,4 40,3)
[ "$element" = linear ] && meshes=(12,1 30,4 40,6)
for mesh in "${meshes[@]}"; do
  report "tile ${mesh/,/×}, 60 modes" "$(strike tile:0.15,0.006:$mesh 60)"
  report "  modal only" "$(strike tile:0.15,0.006:$mesh 60 --no-static-correction)"
done

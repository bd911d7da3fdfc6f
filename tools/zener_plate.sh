#!/usr/bin/env bash
# Zener's ball on a large plate (issue 26 §3): steel balls at 1 m/s on the
# centre of a free 15 cm, 4 mm soda-lime glass plate (`tessera fracture`),
# against Zener's theory (1941: Hertz's contact against Kirchhoff's
# infinite plate, whose point velocity is F / 8√(Dρh)), which depends on
# λ = k^{2/5} m^{3/5} v^{1/5} / 8√(Dρh) alone. The contact ends before the
# plate's edges answer, so the finite plate is the infinite one. Each mesh
# and mode count runs with the static correction (the default) and
# without it (the modal sum alone). `e` is the ball's rebound over its
# approach speed, from the impulse it took.
#   tools/zener_plate.sh [MESHES] [MODES]   (defaults "16,2 32,2 48,2", "100 200")
set -euo pipefail
cd "$(dirname "$0")/.."
meshes=${1:-16,2 32,2 48,2}
modes_list=${2:-100 200}
cargo build --release --quiet
radii=(0.0025 0.005 0.007)
python3 - "${radii[@]}" <<'PY'
import sys
sys.path.insert(0, "tools/plots")
from zener import ball, zener
print("%-34s %7s %8s %9s %9s" % ("case", "λ", "e", "peak_N", "contact_us"))
for radius in map(float, sys.argv[1:]):
    mass, lam, force_unit, t0 = ball(radius)
    e, peak, t = zener(lam)
    print("%-34s %7.3f %8.4f %9.2f %9.2f" % ("Zener, ball R %.1f mm" % (radius * 1e3), lam, e,
          peak * force_unit, t * t0 * 1e6))
PY
for R in "${radii[@]}"; do
  mass=$(python3 -c "import sys; sys.path.insert(0, 'tools/plots'); from zener import ball; print(ball($R)[0])")
  for mesh in $meshes; do
    for modes in $modes_list; do
      for flags in "" --no-static-correction; do
        label="R ${R} m, ${mesh/,/×}, $modes${flags:+, modal only}"
        target/release/tessera fracture --mesh "tile:0.15,0.004:$mesh" --material soda-lime-glass \
          --impact "0,0,0.004:0,0,-1:$mass:1" --impactor-mass "$mass" --impactor-radius "$R" \
          --modes "$modes" $flags --json 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin)["events"][0]["contact"]
print("%-34s %7s %8.4f %9.2f %9.2f" % (sys.argv[1], "", c["striking_impulse_n_s"] / float(sys.argv[2]) - 1,
      c["peak_force_n"], c["duration_s"] * 1e6))' "$label" "$mass"
      done
    done
  done
done

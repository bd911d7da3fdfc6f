#!/usr/bin/env bash
# Strength as its tests measure it (issue 27 §1).
#  1. `tessera strength` for float-glass on a coarse and the default mesh:
#     the ring-on-ring (ASTM C1499) and three-point (ASTM C1161) tests
#     simulated against their closed forms, their effective areas, the
#     strengths they report and the rate scaling; then the disc's
#     effective area on the default mesh under each Weibull criterion
#     (maximum-principal, independent-action, batdorf-normal-stress) for m = 5, 10 and 20,
#     against thin-plate theory's (corrected by its peak's ratio to the
#     closed form, S_eff (σ_peak/σ_C1499)^m).
#  2. The ball's strike on the 15 cm tile, its threshold scaled by the
#     effective area (ceramic-tile with m = 10 and a 4 cm² reference test):
#     the point-wise peak σ_max against the Weibull stress
#     σ_W = σ_max (A_eff / A_ref)^(1/m) the scaled test compares with R_c,
#     on MESHES (default 20 40 58 cells across, 2 through), for impulses of
#     0.2, 0.5 and 2 N·s.
#  3. What the scaling costs an event: tools/fracture_phases.sh on the
#     benchmark slabs (3 runs each, 12×12×2, 26×26×2 and 41×41×4 cells) with
#     glondu-slab as shipped and with m = 10, A_ref = 4 cm², n = 20 at
#     2 MPa/s added.
#   tools/strength_scaling.sh [MESHES...]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
tessera=${TESSERA:-target/release/tessera}
if [ $# -eq 0 ]; then set -- 20 40 58; fi
meshes=("$@")
echo "== float-glass, disc 4 rings in the load radius, 2 layers; bar 16 cells, 4 across"
"$tessera" strength --disc-mesh 4,2 --bar-mesh 16,4 2>/dev/null
echo
echo "== float-glass, the default meshes (disc 8,4; bar 32,6)"
"$tessera" strength 2>/dev/null
echo
echo "== ring-on-ring effective area (m²) by criterion, default meshes"
printf '%-20s %4s %12s %12s %8s\n' criterion m simulated "plate theory" "diff %"
for criterion in maximum-principal independent-action batdorf-normal-stress; do
  for m in 5 10 20; do
    "$tessera" strength --weibull-criterion "$criterion" --weibull-modulus "$m" --json \
      2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
e, r = d["effective_sizes"], d["ring_on_ring"]
m = e["modulus"]
simulated = e["ring_on_ring"]["simulated"] * (r["simulated_peak_stress_pa"] / r["astm_c1499_stress_pa"]) ** m
theory = e["ring_on_ring"]["thin_plate_theory"]
print("%-20s %4g %12.4e %12.4e %+8.2f" % (e["criterion"], m, simulated, theory, 100 * (simulated - theory) / theory))'
  done
done
echo
library=$(mktemp --suffix=.toml)
trap 'rm -f "$library"' EXIT
{
  cat configs/materials.toml
  printf '\n[weibull-tile]\n'
  sed -n '/^\[ceramic-tile\]/,/^$/p' configs/materials.toml | sed '1d;/^$/d;/^description/d'
  printf 'weibull_modulus = 10.0\nweibull_reference_area_m2 = 4.0e-4\n'
} > "$library"
echo "== tile 0.15 × 0.006 m, ball at the centre, 40 modes; weibull-tile (m = 10, A_ref = 4 cm²)"
printf '%6s %8s %12s %12s %12s %12s %7s\n' cells "J N·s" "σ_max MPa" "A_eff m²" "σ_W MPa" "R MPa" cracks
for cells in "${meshes[@]}"; do
  for impulse in 0.2 0.5 2.0; do
    "$tessera" --materials "$library" fracture --mesh "tile:0.15,0.006:$cells,2" \
      --material weibull-tile --modes 40 --impact "0,0,0.006:0,0,-1:$impulse" \
      --json 2>/dev/null | python3 -c '
import json, sys
cells, impulse, d = sys.argv[1], sys.argv[2], json.load(sys.stdin)
e = d["events"][0]; s = e["strength"]
peak = e["peak_stress_pa"]
weibull = peak * (s["effective_size"] / 4e-4) ** 0.1
print("%6s %8s %12.2f %12.4e %12.2f %12.2f %7d" % (cells, impulse, peak / 1e6,
      s["effective_size"], weibull / 1e6, s["threshold_pa"] / 1e6, len(d["cracks"])))' \
      "$cells" "$impulse"
  done
done
echo
scaled=$(mktemp --suffix=.toml)
trap 'rm -f "$library" "$scaled"' EXIT
sed '/^\[glondu-slab\]/a weibull_modulus = 10.0\nweibull_reference_area_m2 = 4.0e-4\nslow_crack_growth_exponent = 20.0\nreference_stress_rate_pa_s = 2.0e6' \
  configs/materials.toml > "$scaled"
echo "== event cost (ms), glondu-slab with one threshold"
TESSERA="$tessera" tools/fracture_phases.sh 30 3 1 quadratic 12,12,2 26,26,2 41,41,4
echo "== event cost (ms), glondu-slab with its threshold scaled (m = 10, n = 20)"
FLAGS="--materials $scaled" TESSERA="$tessera" \
  tools/fracture_phases.sh 30 3 1 quadratic 12,12,2 26,26,2 41,41,4

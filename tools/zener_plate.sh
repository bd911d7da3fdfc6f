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
import math, sys
E2, n2, rho, h = 72e9, 0.22, 2500.0, 0.004   # soda-lime-glass, configs/materials.toml
E1, n1 = 200e9, 0.3                          # the steel ball
e_star = 1 / ((1 - n1**2) / E1 + (1 - n2**2) / E2)
Z = 8 * math.sqrt(E2 * h**3 / (12 * (1 - n2**2)) * rho * h)
def zener(lam, dt=1e-4):
    # s'' + λ (s^{3/2})' + s^{3/2} = 0 in the ball's velocity u = s' + λ s^{3/2}.
    f = lambda s, u: (u - lam * max(s, 0) ** 1.5, -max(s, 0) ** 1.5)
    s, u, peak, t = 0.0, 1.0, 0.0, 0.0
    while True:
        k1 = f(s, u); k2 = f(s + dt / 2 * k1[0], u + dt / 2 * k1[1])
        k3 = f(s + dt / 2 * k2[0], u + dt / 2 * k2[1]); k4 = f(s + dt * k3[0], u + dt * k3[1])
        s += dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        u += dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]); t += dt
        if s <= 0: return -u, peak, t
        peak = max(peak, s ** 1.5)
print("%-28s %7s %8s %9s %9s" % ("case", "λ", "e", "peak_N", "contact_us"))
for R in map(float, sys.argv[1:]):
    m, v = 7850 * 4 / 3 * math.pi * R**3, 1.0
    k = 4 / 3 * e_star * math.sqrt(R)
    lam = k**0.4 * m**0.6 * v**0.2 / Z
    t0 = (m / (k * math.sqrt(v))) ** 0.4
    e, peak, t = zener(lam)
    print("%-28s %7.3f %8.4f %9.2f %9.2f" % ("Zener, ball R %.1f mm" % (R * 1e3), lam, e,
          peak * k * (v * t0) ** 1.5, t * t0 * 1e6))
PY
for R in "${radii[@]}"; do
  mass=$(python3 -c "import math; print(7850 * 4 / 3 * math.pi * $R**3)")
  for mesh in $meshes; do
    for modes in $modes_list; do
      for flags in "" --no-static-correction; do
        label="R ${R} m, ${mesh/,/×}, $modes${flags:+, modal only}"
        target/release/tessera fracture --mesh "tile:0.15,0.004:$mesh" --material soda-lime-glass \
          --impact "0,0,0.004:0,0,-1:$mass:1" --impactor-mass "$mass" --impactor-radius "$R" \
          --modes "$modes" $flags --json 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin)["events"][0]["contact"]
print("%-28s %7s %8.4f %9.2f %9.2f" % (sys.argv[1], "", c["striking_impulse_n_s"] / float(sys.argv[2]) - 1,
      c["peak_force_n"], c["duration_s"] * 1e6))' "$label" "$mass"
      done
    done
  done
done

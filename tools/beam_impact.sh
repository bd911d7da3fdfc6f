#!/usr/bin/env bash
# A ball on the centre of a free-free beam (issue 26 §3): the 110 g,
# 25 mm steel ball at SPEED m/s (default 0.5) on the glass beam
# 60 × 3 × 2 cm (`tessera fracture`), against Timoshenko's solution
# (1913): Hertz's contact against the Euler–Bernoulli beam's free-free
# modes up to 80 kHz and its rigid translation, integrated here by exact
# modal steps of 0.2 µs. Each mesh runs with the static correction (the
# default) and without it (the modal sum alone), 100 modes.
#   tools/beam_impact.sh [SPEED]
set -euo pipefail
cd "$(dirname "$0")/.."
speed=${1:-0.5}
cargo build --release --quiet
printf "%-34s %9s %9s %10s\n" case contact_us peak_N impulse_N·s
python3 - "$speed" <<'PY'
import math, sys
E, nu, rho, damping_k, damping_m = 72e9, 0.22, 2500.0, 1e-9, 5.0  # soda-lime-glass
L, b, h = 0.6, 0.03, 0.02
m, R, v0 = 0.110, 0.0125, float(sys.argv[1])
A, I = b * h, b * h**3 / 12
k = 4 / 3 * math.sqrt(R) / ((1 - nu**2) / E + (1 - 0.3**2) / 200e9)
def root(n):
    f = lambda x: math.cos(x) * math.cosh(x) - 1
    lo, hi = (n + 0.5) * math.pi - 0.3, (n + 0.5) * math.pi + 0.3
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if (f(lo) > 0) == (f(mid) > 0) else (lo, mid)
    return 0.5 * (lo + hi)
modes = [(0.0, 0.0, 1 / math.sqrt(rho * A * L))]  # (ω, c, centre gain)
for n in range(1, 200, 2):  # symmetric modes; ∫φ² = L, cosh − σ sinh = e^{−u} + (1 − σ) sinh u
    r = root(n)
    w = (r / L) ** 2 * math.sqrt(E * I / (rho * A))
    if w > 2 * math.pi * 80e3:
        break
    oms = (-math.exp(-r) - math.sin(r) + math.cos(r)) / (math.sinh(r) - math.sin(r))
    u = r / 2
    centre = math.cos(u) + math.exp(-u) + oms * math.sinh(u) - (1 - oms) * math.sin(u)
    modes.append((w, damping_k * w * w + damping_m, centre / math.sqrt(rho * A * L)))
dt = 2e-7
def step(q, qd, F):
    # Each mode under the constant force g F over dt (velocity Verlet is
    # enough at ω dt ≤ 0.1).
    out = []
    for (w, c, g), a, ad in zip(modes, q, qd):
        acc = g * F - w * w * a - c * ad
        a2 = a + ad * dt + 0.5 * acc * dt * dt
        ad_half = ad + 0.5 * acc * dt
        acc2 = g * F - w * w * a2 - c * ad_half
        out.append((a2, ad + 0.5 * (acc + acc2) * dt))
    return [o[0] for o in out], [o[1] for o in out]
q, qd, x, xd = [0.0] * len(modes), [0.0] * len(modes), 0.0, v0
J = peak = 0.0
t = last = 0.0
touching = False
F = 0.0
while t < 0.01:
    w_c = sum(g * a for (_, _, g), a in zip(modes, q))
    F = k * max(0.0, x - w_c) ** 1.5
    q, qd = step(q, qd, F)
    x += xd * dt - 0.5 * F / m * dt * dt
    xd -= F / m * dt
    J += F * dt; peak = max(peak, F); t += dt
    if touching and F == 0.0:
        last = t
    touching = F > 0.0
print("%-34s %9.1f %9.1f %10.6f" % ("Timoshenko (%d modes)" % len(modes), last * 1e6, peak, J))
PY
for mesh in 60,3,2 120,6,2 120,6,4; do
  for flags in "" --no-static-correction; do
    target/release/tessera fracture --mesh "box:0.6,0.03,0.02:$mesh" --material soda-lime-glass \
      --impact "0.3,0.015,0.02:0,0,-1:0.055:$speed" --modes 100 $flags --json 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin)["events"][0]["contact"]
print("%-34s %9.1f %9.1f %10.6f" % (sys.argv[1], c["duration_s"] * 1e6, c["peak_force_n"], c["impulse_n_s"]))' \
      "${mesh//,/×}${flags:+, modal only}"
  done
done

#!/usr/bin/env bash
# Star cracks of a thin glass disc struck at its centre, against the
# strike speed and the mesh, in the regime of Vandenberghe, Vermorel &
# Villermaux (PRL 110, 174302, 2013): millimetre plates, a projectile of
# a few millimetres at 20-120 m/s, whose radial cracks grow in number
# roughly as √v. Here a float-glass disc of radius 50 mm and thickness
# 1 mm, struck by a 1 g steel impactor of 2 mm radius (their projectile is
# a 4 mm steel cylinder; its mass is ours). `cracks` are the event's
# cracks, `arms` the cracks crossing circles of 10 and 25 mm round the
# impact on the lower face (changes of fragment along the circle, each
# point taking its nearest node's fragment from `--out`'s fracture.vtu),
# `arms/√v` the arms at 10 mm over √v. FLAGS in the environment are added
# to each run (e.g. FLAGS=--no-crack-shielding or FLAGS="--max-samples 128").
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
printf "%-6s %6s %7s %7s %5s %9s %8s %8s\n" rings v_m_s cracks pieces gaps arms arms/√v area_cm2
for ring in $rings; do
  for v in $speeds; do
    impulse=$(python3 -c "print(0.001 * $v)")
    target/release/tessera fracture --mesh "plate:0.05,0.001:$ring,1" --material float-glass \
      --impact "0,0,0.001:0,0,-1:$impulse:$v" --impactor-mass 0.001 --impactor-radius 0.002 \
      ${FLAGS:-} --pattern "$out/p.json" --out "$out/pieces" --json >"$out/f.json" 2>/dev/null
    python3 - "$ring" "$v" "$out/p.json" "$out/pieces/fracture.vtu" "$out/f.json" <<'PY'
import json, math, re, sys
ring, v, path, vtu = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
p = json.load(open(path))
f = json.load(open(sys.argv[5]))
arrays = {m.group(1): m.group(2).split() for m in re.finditer(
    r'<DataArray[^>]*Name="(\w+)"[^>]*>(.*?)</DataArray>', open(vtu).read(), re.S)}
xyz = [float(c) for c in arrays["Points"]]
nodes = [(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2], int(float(g)))
         for i, g in enumerate(arrays["fragment"])]
bottom = min(n[2] for n in nodes)
face = [n for n in nodes if abs(n[2] - bottom) < 1e-9]
def arms(radius, samples=720):
    labels = []
    for k in range(samples):
        x, y = radius * math.cos(2 * math.pi * k / samples), radius * math.sin(2 * math.pi * k / samples)
        labels.append(min(face, key=lambda n: (n[0] - x) ** 2 + (n[1] - y) ** 2)[3])
    return sum(labels[k] != labels[k - 1] for k in range(samples))
near, far = arms(0.01), arms(0.025)
print("%-6s %6.0f %7d %7d %5d %9s %8.2f %8.2f" % (
    ring, v, len(f["cracks"]), p["fragments"], p["gap_fragments"], "%d/%d" % (near, far),
    near / math.sqrt(v), f["crack_area_m2"] * 1e4))
PY
    rm -rf "$out/pieces"
  done
done

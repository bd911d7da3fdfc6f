#!/usr/bin/env bash
# Per-phase wall time of one fracture event on the benchmark slabs (the
# events of benches/fracture.rs: the 20 kg, 10 cm-radius steel impactor at
# SPEED m/s, default 30, on the centre), median of N runs of `tessera
# fracture`, in ELEMENT (default quadratic; `linear` for the 4-node tets),
# on the slabs of SLABS cells (default all four; the quadratic 175k-tet
# slab needs a 0.75 M-DOF analysis the first time). FLAGS in the
# environment are added to each run (e.g. FLAGS=--no-static-correction).
# `threshold` is the part of `initiation` that scales a material's
# threshold to the event (0 for a material with one threshold).
#   tools/fracture_phases.sh [SPEED] [RUNS] [CRACKS_PER_SAMPLE] [ELEMENT] [SLABS...]
# Needs a release build (TESSERA names another binary); modal bases come
# from the cache.
set -euo pipefail
speed=${1:-30}
runs=${2:-5}
cracks_per_sample=${3:-1}
element=${4:-quadratic}
slabs=("${@:5}")
[ ${#slabs[@]} -gt 0 ] || slabs=(12,12,2 26,26,2 41,41,4 54,54,10)
root=$(cd "$(dirname "$0")/.." && pwd)
tessera=${TESSERA:-$root/target/release/tessera}
[ -x "$tessera" ] || cargo build --release --manifest-path "$root/Cargo.toml"
printf "%8s %9s %6s %7s %10s %10s %11s %8s %8s %10s\n" tets fragments cracks steps initiation threshold propagation meshing total evaluated
for cells in "${slabs[@]}"; do
  for _ in $(seq "$runs"); do
    "$tessera" fracture --mesh "box:0.3,0.3,0.03:$cells" --material glondu-slab \
      --impact "0.15,0.15,0.03:0,0,-1:$(python3 -c "print(20 * $speed)"):$speed" \
      --impactor-mass 20 --impactor-radius 0.1 --cracks-per-sample "$cracks_per_sample" \
      --element "$element" ${FLAGS:-} --json
  done | python3 -c '
import json, sys, statistics
runs = [json.loads(chunk) for chunk in sys.stdin.read().replace("}\n{", "}\x00{").split("\x00")]
d = runs[0]
ms = {k: statistics.median(r["milliseconds"][k] for r in runs) for k in d["milliseconds"]}
ms.setdefault("strength", 0.0)  # builds before the scaled threshold
e = d["events"][0]
row = (d["tets"], len(d["fragments"]), len(d["cracks"]), e["steps"], ms["initiation"],
       ms["strength"], ms["propagation"], ms["meshing"], ms["total"], e["points_evaluated"])
print("%8d %9d %6d %7d %10.2f %10.2f %11.2f %8.2f %10.2f %10d" % row)'
done

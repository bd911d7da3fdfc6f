#!/usr/bin/env bash
# Frequencies against the mesh, for both elements (issue 26 §1): the
# free-free glass beam 60 × 3 × 2 cm (f₁, bending about its width, against
# Euler–Bernoulli's 306.46 Hz) and the free 15 × 15 × 0.6 cm ceramic tile
# (its first four modes), from `tessera modes`. Prints each case's DOFs and
# the analysis time (cache bypassed).
#   tools/frequency_convergence.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
row() { # LABEL MESH MATERIAL ELEMENT COUNT
  target/release/tessera modes --mesh "$2" --material "$3" --element "$4" --modes 8 \
    --no-cache --json 2>/dev/null | python3 -c '
import json, sys
label, count = sys.argv[1], int(sys.argv[2])
d = json.load(sys.stdin)
f = " ".join("%8.1f" % x for x in d["frequencies_hz"][:count])
print("%-34s %7d %7.2f s  %s" % (label, d["dofs"], d["seconds"]["total"], f))' "$1" "$5"
}
echo "beam box:0.6,0.03,0.02 (Euler–Bernoulli f1 = 306.46 Hz)      DOFs    time   f1 (Hz)"
for element in linear quadratic; do
  for cells in 60,3,1 60,3,2 120,6,4 120,6,8; do
    [ "$element" = quadratic ] && [ "$cells" = 120,6,8 ] && continue
    row "  $element ${cells//,/×}" "box:0.6,0.03,0.02:$cells" soda-lime-glass "$element" 1
  done
done
echo "tile tile:0.15,0.006                                           DOFs    time   f1..f4 (Hz)"
for element in linear quadratic; do
  for cells in 12,1 24,2 30,4 40,6; do
    [ "$element" = quadratic ] && [ "$cells" = 40,6 ] && continue
    row "  $element ${cells/,/×}" "tile:0.15,0.006:$cells" ceramic-tile "$element" 4
  done
done

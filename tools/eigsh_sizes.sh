#!/usr/bin/env bash
# tessera's modal analysis against scipy's eigsh (ARPACK shift-invert, the
# same exported K, M, σ and mode count; tools/compare_eigsh.py) per body
# size, one table: DOFs, each eigensolve's wall time (tessera's
# factorization + Lanczos + polish, eigsh's call), the speed-up, the
# largest relative eigenvalue difference and the largest relative
# residual ‖Kx − λMx‖/‖Kx‖ of eigsh's modes. TOL is eigsh's tolerance
# (default tessera's 1e-8). Bodies: the Glondu slabs of 1 728, 8 112 and
# 40 344 tets (glondu-slab) and the 15 cm ceramic tile 24×2, in the
# default (quadratic) element; the 40k slab's eigsh takes about ten
# minutes and 7 GB here.
#   tools/eigsh_sizes.sh [MODES] [TOL] [SPEC:MATERIAL ...]
# Needs tools/.venv with scipy (docs/modal.md).
set -euo pipefail
modes=${1:-100}
tolerance=${2:-1e-8}
bodies=("${@:3}")
[ ${#bodies[@]} -gt 0 ] || bodies=(box:0.3,0.3,0.03:12,12,2:glondu-slab
  box:0.3,0.3,0.03:26,26,2:glondu-slab box:0.3,0.3,0.03:41,41,4:glondu-slab
  tile:0.15,0.006:24,2:ceramic-tile)
root=$(cd "$(dirname "$0")/.." && pwd)
tessera="$root/target/release/tessera"
[ -x "$tessera" ] || cargo build --release --manifest-path "$root/Cargo.toml"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf "%-34s %8s %11s %9s %8s %10s %13s\n" body dofs tessera_s eigsh_s speedup max_rel_λ eigsh_residual
for body in "${bodies[@]}"; do
  spec=${body%:*}
  material=${body##*:}
  "$tessera" modes --mesh "$spec" --material "$material" --modes "$modes" --no-cache \
    --export-mtx "$out" --json > /dev/null
  "$root/tools/.venv/bin/python" "$root/tools/compare_eigsh.py" "$out" --tol "$tolerance" \
    > "$out/compare.txt"
  python3 - "$spec" "$out/compare.txt" <<'PY'
import json, sys
text = open(sys.argv[2]).read()
s = json.loads(text[text.index("{"):])
print("%-34s %8d %11.2f %9.2f %8.2f %10.1e %13.1e" % (sys.argv[1], s["dofs"],
      s["tessera_eigensolve_seconds"], s["scipy_eigsh_seconds"], s["speedup"],
      s["max_relative_difference"], s["scipy_max_relative_residual"]))
PY
done

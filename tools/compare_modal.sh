#!/usr/bin/env bash
# tessera's modal analysis against scipy's eigsh (ARPACK shift-invert, the
# same exported K, M, σ and mode count; tools/compare_eigsh.py), one table
# row per body: DOFs, each eigensolve's wall time (tessera's factorization
# + Lanczos + polish, eigsh's call), the speed-up, the largest relative
# eigenvalue difference, the largest relative residual ‖Kx − λMx‖/‖Kx‖ of
# eigsh's modes, and each process's peak memory (GNU time; tessera's from
# a run without the export, modal stresses included). TOL is eigsh's
# tolerance (default tessera's 1e-8; 0 for machine precision). Bodies:
# the Glondu slabs of 1 728, 8 112 and 40 344 tets (glondu-slab) and the
# 15 cm ceramic tile 24×2, in the default (quadratic) element; the 40k
# slab's eigsh takes about ten minutes and 7 GB here. Every eigenvalue
# pair is printed with VERBOSE=1.
#   tools/compare_modal.sh [MODES] [TOL] [SPEC:MATERIAL ...]
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
timer() { if [ -x /usr/bin/time ]; then /usr/bin/time -f "%M" -o "$1" "${@:2}"; else "${@:2}"; echo 0 > "$1"; fi; }
printf "%-34s %8s %10s %8s %8s %10s %13s %11s %9s\n" body dofs tessera_s eigsh_s speedup \
  max_rel_λ eigsh_residual tessera_MiB eigsh_MiB
for body in "${bodies[@]}"; do
  spec=${body%:*}
  material=${body##*:}
  timer "$out/tessera.rss" "$tessera" modes --mesh "$spec" --material "$material" \
    --modes "$modes" --no-cache --json > /dev/null
  "$tessera" modes --mesh "$spec" --material "$material" --modes "$modes" --no-cache \
    --export-mtx "$out" --json > /dev/null
  timer "$out/eigsh.rss" "$root/tools/.venv/bin/python" "$root/tools/compare_eigsh.py" "$out" \
    --tol "$tolerance" > "$out/compare.txt"
  [ -z "${VERBOSE:-}" ] || sed -n '/^{/q;p' "$out/compare.txt"
  python3 - "$spec" "$out" <<'PY'
import json, sys
spec, out = sys.argv[1], sys.argv[2]
text = open(f"{out}/compare.txt").read()
s = json.loads(text[text.index("{"):])
mib = lambda name: int(open(f"{out}/{name}.rss").read().split()[-1]) / 1024
print("%-34s %8d %10.2f %8.2f %8.2f %10.1e %13.1e %11.0f %9.0f" % (spec, s["dofs"],
      s["tessera_eigensolve_seconds"], s["scipy_eigsh_seconds"], s["speedup"],
      s["max_relative_difference"], s["scipy_max_relative_residual"],
      mib("tessera"), mib("eigsh")))
PY
done

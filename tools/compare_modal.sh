#!/usr/bin/env bash
# Side-by-side: tessera's modal analysis against scipy's eigsh on the same
# exported matrices, with wall time and peak memory (GNU time) of each.
# TOL is eigsh's tolerance (default tessera's 1e-8; 0 for machine
# precision; see compare_eigsh.py).
#   tools/compare_modal.sh SPEC MATERIAL MODES [TOL]
# Needs the venv of the README (tools/.venv with scipy) and a release build.
set -euo pipefail
spec=${1:?mesh spec}
material=${2:?material}
modes=${3:-100}
tolerance=${4:-1e-8}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$(mktemp -d)
tessera="$root/target/release/tessera"
[ -x "$tessera" ] || cargo build --release --manifest-path "$root/Cargo.toml"
timer() { if [ -x /usr/bin/time ]; then /usr/bin/time -f "%M" -o "$1" "${@:2}"; else "${@:2}"; echo 0 > "$1"; fi; }
# Peak memory of the eigensolve alone: a run without export.
timer "$out/tessera.rss" "$tessera" modes --mesh "$spec" --material "$material" --modes "$modes" --no-cache --json > "$out/tessera.json"
"$tessera" modes --mesh "$spec" --material "$material" --modes "$modes" --no-cache --export-mtx "$out" --json > /dev/null
timer "$out/scipy.rss" "$here/.venv/bin/python" "$here/compare_eigsh.py" "$out" --tol "$tolerance" | tee "$out/compare.txt" | tail -15
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
t = json.load(open(f"{d}/tessera.json"))
print(f"tessera peak RSS {int(open(f'{d}/tessera.rss').read().split()[-1]) / 1024:.0f} MiB, "
      f"scipy process peak RSS {int(open(f'{d}/scipy.rss').read().split()[-1]) / 1024:.0f} MiB "
      f"(tessera: {t['tets']} tets, {t['dofs']} DOFs, total {t['seconds']['total']:.2f} s)")
PY
rm -rf "$out"

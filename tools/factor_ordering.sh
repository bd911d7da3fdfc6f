#!/usr/bin/env bash
# The factor of K − σM in each ordering (`tessera modes --ordering`): its
# nonzeros, the factorisation's and the whole analysis's seconds and the
# process's peak memory, for thin tiles and slabs of the default quadratic
# elements (20 modes, cache bypassed). MESHES overrides the list
# (generator specs, space-separated; each in the glondu-slab material if
# it starts with `box:`, else ceramic-tile).
#   tools/factor_ordering.sh [MESHES]
set -euo pipefail
cd "$(dirname "$0")/.."
meshes=${1:-"tile:0.15,0.006:24,2 tile:0.15,0.006:58,2 box:0.3,0.3,0.03:26,26,2 box:0.3,0.3,0.03:41,41,4"}
cargo build --release --quiet
printf "%-28s %-18s %8s %12s %9s %9s %9s %9s\n" mesh ordering dofs factor_nnz factor_s lanczos_s total_s peak_MB
for mesh in $meshes; do
  material=ceramic-tile
  case "$mesh" in box:*) material=glondu-slab ;; esac
  for ordering in minimum-degree nested-dissection; do
    out=$(mktemp)
    /usr/bin/time -f "%M" -o "$out.time" target/release/tessera modes --mesh "$mesh" \
      --material "$material" --modes 20 --no-cache --ordering "$ordering" --json > "$out" 2>/dev/null
    python3 - "$mesh" "$ordering" "$out" "$(cat "$out.time")" <<'PY'
import json, sys
mesh, ordering, path, peak_kb = sys.argv[1:5]
d = json.load(open(path))
s = d["solver"]
print("%-28s %-18s %8d %12d %9.2f %9.2f %9.2f %9.0f" % (mesh, ordering, d["dofs"], s["factor_nnz"],
      s["factorization_s"], s["lanczos_s"], d["seconds"]["total"], int(peak_kb) / 1024))
PY
    rm -f "$out" "$out.time"
  done
done

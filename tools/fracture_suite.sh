#!/usr/bin/env bash
# The fracture suite of issue 28: the fractures users make, from ~2k to
# ~40k tets (and ~175k on request), each the first event in a fresh
# process (`tessera fracture … --json`, the modal basis from the disk
# cache, filled by one unmeasured run per case), in `fracture`'s
# exact-peak mode and in the world's (`--no-exact-peak`: only elements
# that can crack are evaluated). Prints one table: per case and mode the
# event's total and initiation milliseconds, median (min–max) of RUNS,
# its cracks and fragments, and the body's precomputed bytes (modal
# tables, of which the static correction's factor). Warm and cache-cold
# repeated events of the slabs: `cargo bench --bench fracture`.
#
#   tools/fracture_suite.sh [RUNS] [CASE...]
#
# RUNS default 3; CASE a name of the list below (default all but
# slab-175k, whose first analysis takes about 10 min and 15 GB). The bowl
# is meshed by Gmsh (`tools/mesh_bowl.py`), installed from PyPI into
# tools/.venv on first use; meshes go to target/suite.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
shift || true
cargo build --release --quiet
bin=target/release/tessera
dir=target/suite
mkdir -p "$dir"

slab_strike="0.15,0.15,0.03:0,0,-1:600:30 --impactor-mass 20 --impactor-radius 0.1"
# name | mesh | material | impact arguments (after the first --impact)
cases=(
  "pane-2mm-soft|box:0.2,0.2,0.002:18,18,1|float-glass|0.1,0.1,0.002:0,0,-1:1:6"
  "pane-2mm-hard|box:0.2,0.2,0.002:18,18,1|float-glass|0.1,0.1,0.002:0,0,-1:1:12"
  "pane-4mm-40k|box:0.5,0.5,0.004:80,80,1|float-glass|0.25,0.25,0.004:0,0,-1:1:10"
  "tile-soft|tile:0.15,0.006:24,2|ceramic-tile|0,0,0.006:0,0,-1:1:3"
  "tile-hard|tile:0.15,0.006:24,2|ceramic-tile|0,0,0.006:0,0,-1:2:18"
  "tile-two-strikes|tile:0.15,0.006:24,2|ceramic-tile|0.03,0,0.006:0,0,-1:1:5 --impact -0.03,0.02,0.006:0,0,-1:1:5"
  "tile-40k-soft|tile:0.15,0.006:58,2|ceramic-tile|0,0,0.006:0,0,-1:1:3"
  "tile-40k-hard|tile:0.15,0.006:58,2|ceramic-tile|0,0,0.006:0,0,-1:2:18"
  "slab-1.7k|box:0.3,0.3,0.03:12,12,2|glondu-slab|$slab_strike"
  "slab-8k|box:0.3,0.3,0.03:26,26,2|glondu-slab|$slab_strike"
  "slab-40k|box:0.3,0.3,0.03:41,41,4|glondu-slab|$slab_strike"
  "slab-175k|box:0.3,0.3,0.03:54,54,10|glondu-slab|$slab_strike"
  "bowl-3k-soft|$dir/bowl-3k.msh|porcelain|0,0,-0.096:0,0,-1:1:0.8"
  "bowl-3k-hard|$dir/bowl-3k.msh|porcelain|0,0,-0.096:0,0,-1:1:4"
  "bowl-40k-hard|$dir/bowl-40k.msh|porcelain|0,0,-0.096:0,0,-1:1:4"
)
chosen=("$@")
if [ ${#chosen[@]} -eq 0 ]; then
  for case in "${cases[@]}"; do
    name=${case%%|*}
    [ "$name" = slab-175k ] || chosen+=("$name")
  done
fi

bowl() { # SIZE_M OUT
  [ -s "$2" ] && return
  if [ ! -x tools/.venv/bin/python ] || ! tools/.venv/bin/python -c 'import gmsh' 2>/dev/null; then
    python3 -m venv tools/.venv
    tools/.venv/bin/pip install --quiet gmsh
  fi
  echo "meshing $2 with Gmsh" >&2
  tools/.venv/bin/python tools/mesh_bowl.py "$1" "$2" > /dev/null
}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-17s %7s %-6s %-23s %-23s %6s %9s %9s %9s\n' case tets mode \
  "total ms" "initiation ms" cracks fragments modal_MB factor_MB
for name in "${chosen[@]}"; do
  found=""
  for case in "${cases[@]}"; do
    [ "${case%%|*}" = "$name" ] && found=$case
  done
  [ -n "$found" ] || { echo "unknown case $name" >&2; exit 2; }
  IFS='|' read -r _ mesh material impact <<< "$found"
  case $mesh in
    */bowl-3k.msh) bowl 0.012 "$mesh" ;;
    */bowl-40k.msh) bowl 0.0033 "$mesh" ;;
  esac
  # shellcheck disable=SC2086 # the impact arguments split on purpose
  strike() { "$bin" fracture --mesh "$mesh" --material "$material" --impact $impact --json "$@" 2> /dev/null; }
  strike > /dev/null
  : > "$out/exact.jsonl"
  : > "$out/world.jsonl"
  for _ in $(seq "$runs"); do
    strike | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))' >> "$out/exact.jsonl"
    strike --no-exact-peak | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))' >> "$out/world.jsonl"
  done
  python3 - "$name" "$out" <<'PY'
import json, statistics, sys
name, out = sys.argv[1:]
for mode in ("exact", "world"):
    runs = [json.loads(line) for line in open(f"{out}/{mode}.jsonl")]
    def spread(key):
        v = [r["milliseconds"][key] for r in runs]
        return "%.1f (%.1f–%.1f)" % (statistics.median(v), min(v), max(v))
    r = runs[0]
    modal = r["bytes"]["modal"]
    print("%-17s %7d %-6s %-23s %-23s %6d %9d %9.1f %9.1f" % (
        name, r["tets"], mode, spread("total"), spread("initiation"),
        len(r["cracks"]), len(r["fragments"]),
        sum(modal.values()) / 1e6, modal.get("static_correction", 0) / 1e6))
PY
done

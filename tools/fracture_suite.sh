#!/usr/bin/env bash
# The fracture suite of issue 28: the fractures users make, from ~2k to
# ~40k tets (and ~175k on request), in `fracture`'s exact-peak mode and in
# the world's (`--no-exact-peak`: only elements that can crack are
# evaluated). Each case runs as the first event in a fresh process (the
# modal basis from the disk cache, filled by one unmeasured run per
# case), then WARM more times in that process (`--repeat`), and in a
# second process the same with the CPU caches evicted before each repeat
# (`--cache-cold`). The `*-fragment` cases break a body, then strike its
# largest piece in the piece's own basis (`--strike-fragment`, as the
# world's background analysis gives it) and time that second event.
#
# Prints one table: per case and mode the event's total milliseconds
# (first event: median (min–max) of the RUNS × 2 processes; warm and
# cache-cold: of their RUNS × WARM repeats), the first event's
# initiation, its cracks and fragments, and the struck body's
# precomputed bytes (modal tables, of which the static correction's
# factor).
#
#   tools/fracture_suite.sh [RUNS] [CASE...]      (WARM=3 by default)
#
# RUNS default 3; CASE a name of the list below (default all but
# slab-175k, whose first analysis takes about 10 min and 15 GB). The bowl
# is meshed by Gmsh (`tools/mesh_bowl.py`), installed from PyPI into
# tools/.venv on first use; meshes go to target/suite.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
warm=${WARM:-3}
shift || true
cargo build --release --quiet
bin=target/release/tessera
dir=target/suite
mkdir -p "$dir"

slab_strike="0.15,0.15,0.03:0,0,-1:600:30 --impactor-mass 20 --impactor-radius 0.1"
# name | mesh | material | impact arguments (after the first --impact)
# [| the fragment's strike, NX,NY,NZ:IMPULSE[:SPEED]]
cases=(
  "pane-2mm-soft|box:0.2,0.2,0.002:18,18,1|float-glass|0.1,0.1,0.002:0,0,-1:1:6"
  "pane-2mm-hard|box:0.2,0.2,0.002:18,18,1|float-glass|0.1,0.1,0.002:0,0,-1:1:12"
  "pane-4mm-40k|box:0.5,0.5,0.004:80,80,1|float-glass|0.25,0.25,0.004:0,0,-1:1:10"
  "tile-soft|tile:0.15,0.006:24,2|ceramic-tile|0,0,0.006:0,0,-1:1:3"
  "tile-hard|tile:0.15,0.006:24,2|ceramic-tile|0,0,0.006:0,0,-1:2:18"
  "tile-two-strikes|tile:0.15,0.006:24,2|ceramic-tile|0.03,0,0.006:0,0,-1:1:5 --impact -0.03,0.02,0.006:0,0,-1:1:5"
  "tile-40k-soft|tile:0.15,0.006:58,2|ceramic-tile|0,0,0.006:0,0,-1:1:3"
  "tile-40k-hard|tile:0.15,0.006:58,2|ceramic-tile|0,0,0.006:0,0,-1:2:18"
  "tile-fragment|tile:0.15,0.006:24,2|ceramic-tile|0,0,0.006:0,0,-1:1:6|0,0,-1:2:18"
  "tile-40k-fragment|tile:0.15,0.006:58,2|ceramic-tile|0,0,0.006:0,0,-1:1:6|0,0,-1:2:18"
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
printf '%-17s %7s %-6s %-23s %-23s %-23s %-23s %6s %9s %9s %9s\n' case tets mode \
  "first ms" "warm ms" "cache-cold ms" "first initiation ms" cracks fragments modal_MB factor_MB
# One run of the case the loop below has set (mesh, material, impact,
# extra), with more flags.
# shellcheck disable=SC2086 # the impact arguments split on purpose
strike() { "$bin" fracture --mesh "$mesh" --material "$material" --impact $impact "${extra[@]}" --json "$@" 2> /dev/null; }
for name in "${chosen[@]}"; do
  found=""
  for case in "${cases[@]}"; do
    [ "${case%%|*}" = "$name" ] && found=$case
  done
  [ -n "$found" ] || { echo "unknown case $name" >&2; exit 2; }
  IFS='|' read -r _ mesh material impact again <<< "$found"
  case $mesh in
    */bowl-3k.msh) bowl 0.012 "$mesh" ;;
    */bowl-40k.msh) bowl 0.0033 "$mesh" ;;
  esac
  extra=()
  [ -n "$again" ] && extra=(--strike-fragment "$again")
  strike > /dev/null
  for mode in exact world; do
    flag=()
    [ "$mode" = world ] && flag=(--no-exact-peak)
    : > "$out/$mode-warm.json"
    : > "$out/$mode-cold.json"
    for _ in $(seq "$runs"); do
      strike "${flag[@]}" --repeat "$warm" >> "$out/$mode-warm.json"
      strike "${flag[@]}" --repeat "$warm" --cache-cold >> "$out/$mode-cold.json"
    done
  done
  python3 - "$name" "$out" <<'PY'
import json, statistics, sys
name, out = sys.argv[1:]

def objects(path):
    """The JSON objects `tessera fracture --json` printed, one after another."""
    text, decoder, found, at = open(path).read(), json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return found
        obj, at = decoder.raw_decode(text, at)
        found.append(obj)

def spread(values):
    return "%.1f (%.1f–%.1f)" % (statistics.median(values), min(values), max(values))

for mode in ("exact", "world"):
    warm, cold = objects(f"{out}/{mode}-warm.json"), objects(f"{out}/{mode}-cold.json")
    # A fragment case times the piece's event; its body is the piece.
    event = lambda run: run["fragment_event"] or run
    first = [event(r) for r in warm + cold]
    total = lambda runs: [r["milliseconds"]["total"] for r in runs]
    again = lambda runs: [x["milliseconds"]["total"] for r in runs for x in event(r)["repeats"]]
    r = first[0]
    tets = r["tets"]
    cracks = len(r["cracks"])
    pieces = r["fragments"] if isinstance(r["fragments"], int) else len(r["fragments"])
    modal = r["bytes"]["modal"]
    print("%-17s %7d %-6s %-23s %-23s %-23s %-23s %6d %9d %9.1f %9.1f" % (
        name, tets, mode, spread(total(first)), spread(again(warm)), spread(again(cold)),
        spread([x["milliseconds"]["initiation"] for x in first]),
        cracks, pieces, sum(modal.values()) / 1e6, modal.get("static_correction", 0) / 1e6))
PY
done

#!/usr/bin/env bash
# Fracture event times of two `tessera` binaries on the event-timing cases
# of benches/README.md: `tessera fracture … --json`'s `milliseconds`
# (initiation and total), the two binaries run in alternation RUNS times
# per case, so that drift of the machine (its memory bandwidth varies over
# minutes) falls on both alike; the basis comes from the cache (one
# unmeasured run per case first). Prints per case each binary's median
# (min–max) and whether every run of both gave as many cracks and the same
# pieces (their tets).
#   tools/fracture_compare.sh TESSERA_A TESSERA_B [RUNS] [CASE...]
# RUNS default 5; CASE a number of the list below (default all; the
# 40k-tet tile and slab take up to half a second per run, and tens of
# seconds for their first analysis when the cache has no basis).
# E.g. against main's head:
#   git worktree add /tmp/base main && CARGO_TARGET_DIR=target/base cargo build \
#     --release --manifest-path /tmp/base/Cargo.toml
#   tools/fracture_compare.sh target/base/release/tessera target/release/tessera
set -euo pipefail
[ $# -ge 2 ] || { sed -n "2,17p" "$0"; exit 2; }
a=$1 b=$2
runs=${3:-5}
shift $(($# < 3 ? $# : 3))
cases=(
  "tile:0.15,0.006:24,2 ceramic-tile 0,0,0.006:0,0,-1:1:3"
  "tile:0.15,0.006:24,2 ceramic-tile 0,0,0.006:0,0,-1:2:18"
  "tile:0.15,0.006:58,2 ceramic-tile 0,0,0.006:0,0,-1:2:18"
  "box:0.3,0.3,0.03:12,12,2 glondu-slab 0.15,0.15,0.03:0,0,-1:200:10"
  "box:0.3,0.3,0.03:41,41,4 glondu-slab 0.15,0.15,0.03:0,0,-1:200:10"
  "box:0.2,0.2,0.002:18,18,1 float-glass 0.1,0.1,0.002:0,0,-1:1:6"
  "box:0.2,0.2,0.002:18,18,1 float-glass 0.1,0.1,0.002:0,0,-1:1:12"
)
chosen=("$@")
[ ${#chosen[@]} -gt 0 ] || mapfile -t chosen < <(seq "${#cases[@]}")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf "%-30s %-13s %-30s %4s %-22s %-22s %s\n" body material impact runs \
  "initiation ms, A" "initiation ms, B" "total ms A / B, same events"
for number in "${chosen[@]}"; do
  [[ $number =~ ^[0-9]+$ ]] && ((number >= 1 && number <= ${#cases[@]})) ||
    { echo "unknown case $number (1 to ${#cases[@]})" >&2; exit 2; }
  read -r mesh material impact <<< "${cases[number - 1]}"
  for bin in "$a" "$b"; do
    "$bin" fracture --mesh "$mesh" --material "$material" --impact "$impact" --json \
      > /dev/null 2>&1
  done
  : > "$out/a.jsonl"
  : > "$out/b.jsonl"
  for _ in $(seq "$runs"); do
    for side in a b; do
      bin=$a
      [ $side = a ] || bin=$b
      "$bin" fracture --mesh "$mesh" --material "$material" --impact "$impact" --json \
        2> /dev/null | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))' \
        >> "$out/$side.jsonl"
    done
  done
  python3 - "$mesh" "$material" "$impact" "$out" <<'PY'
import json, statistics, sys
mesh, material, impact, out = sys.argv[1:]
def load(side):
    return [json.loads(line) for line in open(f"{out}/{side}.jsonl")]
a, b = load("a"), load("b")
def times(runs, key):
    values = [r["milliseconds"][key] for r in runs]
    return statistics.median(values), min(values), max(values)
def cell(runs):
    m, lo, hi = times(runs, "initiation")
    return f"{m:.1f} ({lo:.1f}–{hi:.1f})"
# The same cracks and pieces: their count, and each piece's tets.
def events(r):
    return (len(r["cracks"]), sorted(f["tets"] for f in r["fragments"]))
same = all(events(r) == events(a[0]) for r in a + b)
print("%-30s %-13s %-30s %4d %-22s %-22s %.1f / %.1f, %s" % (
    mesh, material, impact, len(a), cell(a), cell(b),
    times(a, "total")[0], times(b, "total")[0], "same" if same else "DIFFERENT"))
PY
done

#!/usr/bin/env bash
# Whether two `tessera` binaries give the same fracture events: the JSON of
# `tessera fracture` (timings and the timing-dependent `points_evaluated`
# removed) on the four benchmark slabs × four strikes, compared byte for
# byte. Extra arguments go to both (e.g. --cracks-per-sample 4).
#   tools/fracture_same.sh TESSERA_A TESSERA_B [ARGS...]
# E.g. against a baseline build:
#   RUSTFLAGS="-C target-cpu=x86-64" CARGO_TARGET_DIR=target/baseline cargo build --release
#   tools/fracture_same.sh target/baseline/release/tessera target/release/tessera
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0"; exit 2; }
a=$1 b=$2
shift 2
strip='import json, sys
d = json.load(sys.stdin)
d.pop("milliseconds")
for e in d.get("events", []):
    e.pop("milliseconds", None)
    e.pop("points_evaluated", None)
print(json.dumps(d, sort_keys=True))'
different=0
for cells in 12,12,2 26,26,2 41,41,4 54,54,10; do
  for strike in "0.15,0.15,0.03:0,0,-1:200:10" "0.1,0.12,0.03:0,0,-1:60:5" \
      "0.15,0.15,0.03:0,0,-1:200:10 --energy-length 2e-5" \
      "0.15,0.15,0.03:0,0,-1:200:10 --energy-length 2e-4"; do
    # shellcheck disable=SC2086 # the strike's options split on purpose
    sums=$(for bin in "$a" "$b"; do
      "$bin" fracture --mesh "box:0.3,0.3,0.03:$cells" --material glondu-slab \
        --impact $strike "$@" --json | python3 -c "$strip" | md5sum
    done | uniq | wc -l)
    if [ "$sums" = 1 ]; then verdict=same; else verdict=DIFFERENT; different=1; fi
    printf "%-10s %-58s %s\n" "$cells" "$strike" "$verdict"
  done
done
exit "$different"

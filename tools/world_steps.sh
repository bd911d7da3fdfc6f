#!/bin/sh
# Per-step time (mean, p99, max) of the world benchmarks' scenes, through
# `tessera run --json`: cube-basin with 500/1000/2000 cubes over 3 s and
# bricks over 2 s (10 ms steps), bricks RUNS times (its worst step is a
# handful of milliseconds at one instant, so it is worth several looks).
# Extra arguments go to every `tessera run`, e.g. `--realtime`.
#   tools/world_steps.sh [RUNS] [RUN ARGS...]
set -eu
cd "$(dirname "$0")/.."
runs=${1:-5}
[ $# -gt 0 ] && shift
cargo build --release --quiet
bin=target/release/tessera
# The report is read once the run is over: a reader started alongside it
# would compete with the run for the CPUs.
row() {
    printf '%s\n' "$2" | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["step_ms"]
events = d["fracture_events"]
frags = sum(len(e["fragments"]) for e in events)
cells = (sys.argv[1], d["bodies_start"], d["bodies_end"], s["mean"], s["p99"], s["max"], len(events), frags)
print("%-18s %6d %6d %9.3f %9.3f %9.3f %7d %9d" % cells)
' "$1"
}
echo "scene              bodies   end   mean_ms    p99_ms    max_ms  events fragments"
for n in 500 1000 2000; do
    report=$("$bin" run --scene cube-basin --count "$n" --seconds 3 --json "$@")
    row "cube-basin $n" "$report"
done
for _ in $(seq "$runs"); do
    report=$("$bin" run --scene bricks --seconds 2 --json "$@")
    row "bricks" "$report"
done

#!/usr/bin/env bash
# The largest cube pile for which the haptic loop holds 1 kHz, with the
# sub-world (r_sim = 10) and with direct coupling (the whole world stepped
# in the haptic thread), on this machine, in real-time mode.
#
#   tools/haptic_capacity.sh [SECONDS] [COUNTS...]
#
# Prints, per pile size and mode, the haptic loop's period error (p50, p99,
# max, µs), ticks late by more than 1 ms, tick compute p99 and late syncs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-5}
shift || true
counts=${*:-50 200 500 1000 2000}
cargo build --release --quiet
bin=target/release/tessera
printf '%-6s %-9s %8s %8s %9s %9s %11s %10s\n' cubes mode p50_us p99_us max_us late_1ms compute_p99 late_syncs
for n in $counts; do
  for mode in sub-world direct; do
    flag=""
    [ "$mode" = direct ] && flag="--direct"
    "$bin" serve --scene cube-push --count "$n" --seconds "$seconds" $flag --json 2>/dev/null |
      python3 -c '
import json, sys
s = json.load(sys.stdin)
h = s["haptic"]
e = h["period_error_us"]
print("%-6s %-9s %8.0f %8.0f %9.0f %9d %11.0f %10d" % (sys.argv[1], sys.argv[2], e["p50"], e["p99"], e["max"], h["late_over_1ms"], h["compute_us"]["p99"], s["syncs"]["late"]))
' "$n" "$mode"
  done
done

#!/usr/bin/env bash
# The haptic loop with and without a connected viewer client: RUNS real-time
# demos with --no-ui and RUNS with examples/view_client.rs reading
# everything the viewer sends. One line per run: p99 period error (µs),
# ticks late > 1 ms, tick compute max (µs), and for viewed runs the frames
# sent and the hand-over-to-send latency p50/p99 (µs).
#   tools/viewer_load.sh [RUNS]
set -euo pipefail
runs=${1:-5}
cd "$(dirname "$0")/.."
cargo build --release --quiet
cargo build --release --quiet --example view_client
bin=target/release/tessera
client=target/release/examples/view_client
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fields='import json, sys
d = json.load(sys.stdin)
h = d["haptic"]
ui = d.get("ui") or {}
line = "p99 %6.0f µs  late>1ms %3d  compute max %6.0f µs" % (
    h["period_error_us"]["p99"], h["late_over_1ms"], h["compute_us"]["max"])
if ui:
    line += "  frames %4d  latency p50 %6.0f µs p99 %6.0f µs" % (
        ui["frames_sent"], ui["frame_latency_us_p50"], ui["frame_latency_us_p99"])
print(line)'
for i in $(seq "$runs"); do
  printf 'no viewer   %d: ' "$i"
  "$bin" demo --no-ui --json --record "$out/a.mcap" | python3 -c "$fields"
done
for i in $(seq "$runs"); do
  printf 'with client %d: ' "$i"
  "$client" ws://127.0.0.1:7979/ws > "$out/client.json" &
  "$bin" demo --ui 127.0.0.1:7979 --json --record "$out/b.mcap" 2>/dev/null | python3 -c "$fields"
  wait
  printf '               client: %s\n' "$(cat "$out/client.json")"
done

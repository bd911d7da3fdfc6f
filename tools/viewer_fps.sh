#!/usr/bin/env bash
# The viewer page's frame rate in headless Chromium (SwiftShader, this
# machine's CPU), with the tile scene and with 200 bodies, each while the
# session runs paced at real time ("live") and once it is held at its end
# ("held"). Needs /usr/bin/chromium; builds the release binary.
#   tools/viewer_fps.sh [WIDTH HEIGHT]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
width=${1:-1280}
height=${2:-720}
cd "$root"
cargo build --release --quiet
tessera=$root/target/release/tessera
node_modules=$(ls -td target/release/build/tessera-*/out/web/node_modules | head -1)
port=7990
measure() { # NAME ARGS...
  local name=$1
  shift
  "$tessera" "$@" --hold --speed 1 --ui 127.0.0.1:$port >/dev/null 2>&1 &
  local pid=$!
  sleep 1
  printf '%-14s live %s\n' "$name" "$(NODE_PATH=$node_modules node web/e2e/fps.cjs "http://127.0.0.1:$port/" "$width" "$height" 4)"
  sleep 4
  printf '%-14s held %s\n' "$name" "$(NODE_PATH=$node_modules node web/e2e/fps.cjs "http://127.0.0.1:$port/" "$width" "$height" 6)"
  kill -INT $pid
  wait $pid || true
}
measure tile demo --seconds 8 --record "$(mktemp -d)/demo.mcap"
measure 200-bodies serve --scene cube-push --count 200 --seconds 8

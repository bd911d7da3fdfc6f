#!/usr/bin/env bash
# The haptic demo with many large breakable tiles in its scene (issue 28):
# `tile-strike` with its tile meshed as MESH (default 58,2: 40 368 tets)
# and arrayed COUNT times (default 8; the first on its supports, where the
# demo's hand strikes it, the others 20 cm apart on the ground, which they
# fall 2 cm onto), then `tools/demo_runs.sh` on it: the haptic loop's
# figures, to hold against the demo's own (`tools/demo_runs.sh`). The
# tiles share one mesh and material, hence one modal basis (analysed on
# the first run, cached after).
#   tools/many_tiles.sh [COUNT] [MESH] [RUNS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-8}
mesh=${2:-58,2}
runs=${3:-3}
seconds=${4:-30}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
scene="$out/many-tiles.toml"
sed -e "s/tile:0.15,0.006:24,2/tile:0.15,0.006:$mesh/" \
    -e "s|hand = \"../hands/tile-strikes.toml\"|hand = \"$PWD/configs/hands/tile-strikes.toml\"|" \
    -e 's/size_m = \[1.0, 1.0, 0.1\]/size_m = [2.0, 2.0, 0.1]/' \
    -e "s/^restitution = 0.5$/restitution = 0.5\narray = { count = $count, columns = [4, 2], spacing_m = [0.2, 0.2, 0.0] }/" \
    configs/scenes/tile-strike.toml > "$scene"
grep -q "count = $count" "$scene" || { echo "tile-strike.toml changed: cannot array its tile" >&2; exit 1; }
cargo build --release --quiet
# The first load analyses the tile (minutes for 40k quadratic tets).
target/release/tessera run --scene "$scene" --seconds 0.01 > /dev/null
echo "tile-strike with $count tiles of tile:0.15,0.006:$mesh"
SUBCOMMAND=serve tools/demo_runs.sh "$runs" "$seconds" --scene "$scene" --no-ui

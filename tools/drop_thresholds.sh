#!/usr/bin/env bash
# The drop thresholds of `tile-on-supports` per tile mesh: the ball dropped
# from 0.05 m to 3 m in 0.05 m steps (`tessera drop`); the first height
# that cracks the tile and the first that splits it, the pieces there and
# at the three heights above (at the end, and the landing split's pattern:
# `drop --pattern`), and the landing's
# computed contact at a few heights: the elastic contact's impulse, the
# impulse the bodies exchanged (its unloading scaled by the pair's
# restitution) over m·v, which should be smooth in the height.
#   tools/drop_thresholds.sh [MESH...]   (default: 24,2 40,6; tile:0.15,0.006:MESH)
# FLAGS in the environment are added to each sweep (e.g.
# FLAGS=--crack-plane-energy, FLAGS="--energy-length 0.002").
set -euo pipefail
cd "$(dirname "$0")/.."
meshes=("$@")
[ ${#meshes[@]} -gt 0 ] || meshes=(24,2 40,6)
cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for mesh in "${meshes[@]}"; do
  sed "s/tile:0.15,0.006:24,2/tile:0.15,0.006:$mesh/" configs/scenes/tile-on-supports.toml \
    > "$out/tile-on-supports.toml"
  target/release/tessera drop --scene "$out/tile-on-supports.toml" --heights 0.05:3.0:0.05 \
    ${FLAGS:-} --json 2>/dev/null | python3 -c '
import json, sys
mesh = sys.argv[1]
runs = json.load(sys.stdin)["runs"]
def first(key):
    hit = [r["height_m"] for r in runs if key(r)]
    return "%.2f m" % hit[0] if hit else "none up to 3 m"
print("tile %s: first crack %s, first split %s" % (mesh.replace(",", "×"),
      first(lambda r: r["fracture_events"] > 0), first(lambda r: r["fragments"] >= 2)))
split = [i for i, r in enumerate(runs) if r["fragments"] >= 2]
if split:
    print("  pieces just above it: " + ", ".join("%.2f m: %d" % (r["height_m"], r["fragments"])
          for r in runs[split[0]:split[0] + 4]))
    print("  the landing split there (pieces + gap slivers, cracks, junctions): " + ", ".join(
          "%.2f m: %d + %d, %d, %d" % (r["height_m"], p["fragments"], p["gap_fragments"],
          len(p["crack_lengths"]), len(p["junction_degrees"]))
          for r in runs[split[0]:split[0] + 4] for p in [r["pattern"]] if p))
print("  height_m  landing_m/s  elastic_N·s  exchanged_N·s  J/mv  peak_N  contact_us  restitution")
for r in runs:
    i = r.get("first_impact")
    if i and round(r["height_m"] / 0.05) % 5 == 0:
        c = i["contact"]
        v, j = i["approach_speed_m_s"], i["exchanged_impulse_n_s"]
        print("  %8.2f  %11.3f  %11.4f  %13.4f  %4.2f  %6.0f  %10.1f  %11.3f" % (r["height_m"],
              v, c["striking_impulse_n_s"], j, j / (0.110 * v),
              c["peak_force_n"], c["duration_s"] * 1e6, c["restitution"]))
' "$mesh"
done

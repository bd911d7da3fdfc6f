#!/usr/bin/env bash
# The speed at which the study's plates break, per stimulus level: the
# ball of `plates-study` dropped on the left plate from growing heights
# (`tessera drop`), the plate's porcelain with R_c times each level; the
# lowest height that splits the plate, and the impact speed √(2 g h).
#   tools/plate_break_speeds.sh [LEVELS...]   (default: 0.6 0.8 1.0)
# FLAGS in the environment are added to each sweep (e.g.
# FLAGS=--crack-plane-energy).
set -euo pipefail
cd "$(dirname "$0")/.."
levels=("$@")
[ ${#levels[@]} -gt 0 ] || levels=(0.6 0.8 1.0)
cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for level in "${levels[@]}"; do
  python3 - "$level" configs/materials.toml "$out/materials.toml" <<'PY'
import re, sys
level, src, dst = float(sys.argv[1]), sys.argv[2], sys.argv[3]
text = open(src).read()
head, rest = text.split("[porcelain]", 1)
body, tail = (rest.split("\n[", 1) + [""])[:2]
value = float(re.search(r"rankine_threshold_pa\s*=\s*([0-9.eE+_-]+)", body).group(1).replace("_", ""))
body = re.sub(r"rankine_threshold_pa\s*=\s*[0-9.eE+_-]+", f"rankine_threshold_pa = {value * level!r}", body)
open(dst, "w").write(head + "[porcelain]" + body + ("\n[" + tail if tail else ""))
PY
  target/release/tessera drop --scene plates-study --materials "$out/materials.toml" \
    --heights 0.005:0.6:0.005 ${FLAGS:-} --json 2>/dev/null | python3 -c '
import json, math, sys
level = sys.argv[1]
runs = json.load(sys.stdin)["runs"]
split = [r for r in runs if r["fragments"] >= 2]
cracked = [r for r in runs if r["fracture_events"] > 0]
def speed(r): return math.sqrt(2 * 9.81 * r["height_m"])
first = lambda rs: "%.3f m (%.2f m/s)" % (rs[0]["height_m"], speed(rs[0])) if rs else "none up to 0.6 m"
print("level %s: first crack %s, first split %s" % (level, first(cracked), first(split)))
' "$level"
done

#!/usr/bin/env bash
# The shipped plate-weakness study run by the model participant, with the
# study's repetitions and the plates' weak points chosen here, and a table
# of its trials: levels, strikes and remembered effort per plate, answer.
#   tools/model_study.sh [REPETITIONS] [MODEL] [WEAK_POINTS_PER_M3]
# Defaults: 3 repetitions (18 trials a session), the noiseless model
# `scripted:weber=0,lapse=0`, no weak points (0), so that only the levels
# tell the plates apart. The files and results stay in a temporary
# directory that is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
repetitions=${1:-3}
model=${2:-scripted:weber=0,lapse=0}
weak=${3:-0}
cargo build --release --quiet
out=$(mktemp -d)
echo "files and results in $out" >&2
sed "s/^repetitions = .*/repetitions = $repetitions/" configs/studies/plate-weakness.toml > "$out/study.toml"
python3 - "$weak" configs/materials.toml "$out/materials.toml" <<'PY'
import re, sys
weak, src, dst = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(src).read()
head, rest = text.split("[porcelain]", 1)
rest = re.sub(r"weak_point_density_per_m3\s*=\s*[0-9.eE+_-]+", f"weak_point_density_per_m3 = {weak}", rest, count=1)
open(dst, "w").write(head + "[porcelain]" + rest)
PY
sed -i "s|^scene = .*|scene = \"$PWD/configs/scenes/plates-study.toml\"|" "$out/study.toml"
start=$(date +%s.%N)
target/release/tessera --materials "$out/materials.toml" study run "$out/study.toml" \
  --participant model --model "$model" --out "$out/results" --json > "$out/summary.json"
end=$(date +%s.%N)
python3 - "$out/results/model/trials.csv" "$start" "$end" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| condition | levels (L, R) | strikes (L, R) | effort (L, R) | chose | correct |")
print("|---|---|---|---|---|---|")
for r in rows:
    print("| %s | %s, %s | %s, %s | %s, %s | %s | %s |" % (
        r["condition"], r["left_level"], r["right_level"], r["strikes_left"], r["strikes_right"],
        r["model_effort_left"] or "-", r["model_effort_right"] or "-", r["chosen_side"], r["correct"]))
by = {}
for r in rows:
    pair = tuple(sorted((r["left_level"], r["right_level"])))
    c = by.setdefault((r["condition"], pair), [0, 0])
    c[0] += int(r["correct"]); c[1] += 1
for (cond, pair), (k, n) in sorted(by.items()):
    print("%s w%s vs w%s: %d/%d" % (cond, pair[0], pair[1], k, n))
print("wall %.1f s" % (float(sys.argv[3]) - float(sys.argv[2])))
PY

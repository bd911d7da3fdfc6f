#!/usr/bin/env bash
# Fits the model participant's memory noise (`weber`, `lapse`) to the
# answers of Glondu 2012 §5.2, Table 5.3 (120 comparisons per pair and
# condition), by maximum likelihood.
#   tools/fit_model_noise.sh [PARTICIPANTS] [REPETITIONS]
# Defaults: 4 participants, the study's 5 repetitions.
#
# The shipped plate-weakness study (its plates' weak points included) is
# run by the noiseless model (`scripted:weber=0,lapse=0`) once per
# participant, each with its own seed: its rows' `model_effort_*` are the
# true efforts e of the breaking strikes. With noise, a remembered cue is
# c·(1 + σ·N(0,1)), σ = weber / (√2 · z₀.₇₅) (src/study/participant.rs);
# the weaker plate w is chosen over the stronger s when its remembered
# effort is lower, and a lapse is a coin toss, so to first order in σ
#   P(correct) = (1 − lapse) · Φ(ln(e_s / e_w) / (σ_log · √2)) + lapse / 2,
# σ_log = σ without force feedback (one cue, the speed) and σ / √2 with it
# (√(speed · force) of two cues). A plate that did not break is the
# stronger; two that did not break are a coin toss. The predicted share
# of a pair is the mean of its trials' P; the fit maximises the binomial
# likelihood of Table 5.3's counts over a grid of (weber, lapse).
set -euo pipefail
cd "$(dirname "$0")/.."
participants=${1:-4}
repetitions=${2:-5}
cargo build --release --quiet
out=$(mktemp -d)
echo "files and results in $out" >&2
sed -e "s/^repetitions = .*/repetitions = $repetitions/" \
  -e "s|^scene = .*|scene = \"$PWD/configs/scenes/plates-study.toml\"|" \
  configs/studies/plate-weakness.toml > "$out/study.toml"
for p in $(seq 1 "$participants"); do
  echo "participant $p of $participants" >&2
  target/release/tessera study run "$out/study.toml" --participant "p$p" \
    --model scripted:weber=0,lapse=0 --seed "$p" --out "$out/results" --json > /dev/null
done
python3 - "$out/results" <<'PY'
import csv, math, pathlib, sys

# Glondu 2012 Table 5.3: times w_i was judged weaker than w_j, of 120.
PAPER = {
    ("force-feedback", (1, 2)): 85, ("force-feedback", (2, 3)): 89,
    ("force-feedback", (1, 3)): 106,
    ("no-force-feedback", (1, 2)): 95, ("no-force-feedback", (2, 3)): 81,
    ("no-force-feedback", (1, 3)): 111,
}
Z75 = 0.6744897501960817

def phi(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))

trials = {}
for path in sorted(pathlib.Path(sys.argv[1]).glob("*/trials.csv")):
    for r in csv.DictReader(open(path)):
        levels = (int(r["left_level"]), int(r["right_level"]))
        efforts = [float(r[k]) if r[k] else None
                   for k in ("model_effort_left", "model_effort_right")]
        weak = 0 if levels[0] < levels[1] else 1
        key = (r["condition"], tuple(sorted(levels)))
        trials.setdefault(key, []).append((efforts[weak], efforts[1 - weak]))

def p_correct(condition, weak, strong, sigma, lapse):
    if weak is None and strong is None:
        p = 0.5
    elif strong is None:
        p = 1.0
    elif weak is None:
        p = 0.0
    elif sigma == 0.0:
        p = 1.0 if weak < strong else (0.5 if weak == strong else 0.0)
    else:
        s_log = sigma / math.sqrt(2.0) if condition == "force-feedback" else sigma
        p = phi(math.log(strong / weak) / (s_log * math.sqrt(2.0)))
    return (1.0 - lapse) * p + lapse / 2.0

def predicted(weber, lapse):
    sigma = weber / (math.sqrt(2.0) * Z75)
    return {key: sum(p_correct(key[0], w, s, sigma, lapse) for w, s in rows) / len(rows)
            for key, rows in trials.items()}

def log_likelihood(weber, lapse):
    total = 0.0
    for key, p in predicted(weber, lapse).items():
        k = PAPER[key]
        p = min(max(p, 1e-12), 1.0 - 1e-12)
        total += k * math.log(p) + (120 - k) * math.log(1.0 - p)
    return total

grid = [(w / 200.0, l / 200.0) for w in range(0, 201) for l in range(0, 41)]
best = max(grid, key=lambda g: log_likelihood(*g))
print("trials per pair and condition:",
      {f"{c} w{a}-w{b}": len(v) for (c, (a, b)), v in sorted(trials.items())})
print(f"fit: weber = {best[0]:.3f}, lapse = {best[1]:.3f} "
      f"(log-likelihood {log_likelihood(*best):.2f}; "
      f"at the literature's weber = 0.07, lapse = 0.02: {log_likelihood(0.07, 0.02):.2f})")
fitted = predicted(*best)
print("| condition | pair | paper (Table 5.3) | model, fitted | noiseless efforts (weak / strong, median) |")
print("|---|---|---|---|---|")
for key in sorted(PAPER):
    rows = trials.get(key, [])
    ratios = sorted(w / s for w, s in rows if w and s)
    median = ratios[len(ratios) // 2] if ratios else float("nan")
    print(f"| {key[0]} | w{key[1][0]} vs w{key[1][1]} | {100 * PAPER[key] / 120:.1f} % "
          f"| {100 * fitted.get(key, float('nan')):.1f} % | {median:.3f} |")
PY

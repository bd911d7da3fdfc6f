#!/usr/bin/env bash
# The haptic loop during a real-time study: a person's run of a small
# plate-weakness study (w1 and w3, both orders, both conditions: 4 trials)
# with the simulated arm following configs/hands/plates-strikes.toml, the
# answers typed after SECONDS of striking (default 12) by a script in place
# of the participant. Prints the run's per-session haptic figures (worst
# trial's p99 period error, ticks over 1 ms late, trial set-up time), as
# `study run` reports them in summary.json.
#   tools/study_realtime.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-12}
cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sed -e 's/repetitions = 5/repetitions = 1/' -e 's/levels = \[0.6, 0.8, 1.0\]/levels = [0.6, 1.0]/' \
  -e 's/^scene = "plates-study"/scene = "'"$(pwd | sed 's/[\/&]/\\&/g')"'\/configs\/scenes\/plates-study.toml"/' \
  configs/studies/plate-weakness.toml > "$out/study.toml"
python3 - "$out" "$seconds" <<'PY'
import json, subprocess, sys, time
out, seconds = sys.argv[1], float(sys.argv[2])
run = subprocess.Popen(
    ["target/release/tessera", "study", "run", f"{out}/study.toml", "--participant", "rt",
     "--out", f"{out}/results", "--no-ui", "--hand", "configs/hands/plates-strikes.toml"],
    stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
seen, answers, questions = "", iter("fjfjfjfj"), False
while (ch := run.stderr.read(1)):
    seen += ch
    if seen.endswith("to begin.\n") or seen.endswith("to go on.\n"):
        run.stdin.write("\n"); run.stdin.flush()
    elif seen.endswith("abort the trial.\n"):
        time.sleep(seconds); run.stdin.write(next(answers) + "\n"); run.stdin.flush()
    elif seen.endswith("Enter skips a question.\n"):
        questions = True
    elif questions and seen.endswith("? "):
        run.stdin.write("\n"); run.stdin.flush()
    if seen.endswith("\n") and seen.rstrip("\n").rsplit("\n", 1)[-1].startswith("session"):
        print(seen.rstrip("\n").rsplit("\n", 1)[-1], flush=True)
if run.wait() != 0:
    sys.exit(seen)
summary = json.load(open(f"{out}/results/rt/summary.json"))
for s in summary["sessions"]:
    print(s["condition"], json.dumps(s["haptic"]))
PY

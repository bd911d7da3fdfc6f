#!/usr/bin/env bash
# Soak test of a haptic session: the demo scene run for a long time in
# lockstep (simulated seconds) and in real time (wall seconds), recording
# its log. Checks what a long session must keep: memory flat (the process's
# resident set sampled every second), every tick in the log (none dropped),
# and a complete log (summary and footer).
#
#   tools/soak.sh [LOCKSTEP_SECONDS=600] [REALTIME_SECONDS=600]
#
# Per run: ticks (summary and log), dropped ticks, log complete, resident
# set after the first 10 % of the run, at the end, and its largest value
# after that 10 % (MB), haptic p99 period error and ticks late by more than
# 1 ms (real time). Logs are written to a temporary folder and removed.
set -euo pipefail
cd "$(dirname "$0")/.."
lockstep_s=${1:-600}
realtime_s=${2:-600}
cargo build --release --quiet
bin=$PWD/target/release/tessera
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-$out/cache}

soak() {
  local name=$1 seconds=$2
  shift 2
  "$bin" demo --seconds "$seconds" --json --record "$out/$name.mcap" "$@" >"$out/$name.json" 2>"$out/$name.err" &
  local pid=$!
  : >"$out/$name.rss"
  while kill -0 "$pid" 2>/dev/null; do
    awk '/^VmRSS/ {print $2}' "/proc/$pid/status" >>"$out/$name.rss" 2>/dev/null || true
    sleep 1
  done
  if ! wait "$pid"; then
    cat "$out/$name.err" >&2
    exit 1
  fi
  "$bin" log info --json "$out/$name.mcap" >"$out/$name.log.json"
  python3 - "$name" "$out/$name.json" "$out/$name.log.json" "$out/$name.rss" <<'PY'
import json, sys
name, summary, log, rss = sys.argv[1:]
s = json.load(open(summary))
l = json.load(open(log))
kb = [int(x) for x in open(rss).read().split() if x.strip()]
warm = kb[len(kb) // 10:] or kb or [0]
h = s["haptic"]
print(f"{name:9} {h['ticks']:>9} {l['ticks']:>9} {l['dropped_ticks']:>8} {str(l['complete']):>8} "
      f"{warm[0] / 1024:>9.1f} {warm[-1] / 1024:>9.1f} {max(warm) / 1024:>9.1f} "
      f"{h['period_error_us']['p99']:>8.0f} {h['late_over_1ms']:>8} {len(kb):>7}")
PY
}

printf '%-9s %9s %9s %8s %8s %9s %9s %9s %8s %8s %7s\n' run ticks log_ticks dropped complete rss10_mb rssend_mb rssmax_mb p99_us late1ms samples
soak lockstep "$lockstep_s" --lockstep
soak realtime "$realtime_s"

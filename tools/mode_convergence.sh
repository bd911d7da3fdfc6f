#!/usr/bin/env bash
# Issue 26 §2's check over strike speeds and meshes: the peak stress of
# the 110 g steel ball's strike on the free 15 cm ceramic tile's centre
# (`tessera fracture`) at 20, 60, 100 and 200 modes, each as a deviation
# from 200 modes' (%), with the static correction alone (`default`), with
# its second-order term (`second order`) and with the modes left out as a
# continuum (`tail`, --residual-tail); the first contact phase's peak force
# (the strike itself, before the tile swings back into the ball) at 20,
# 60 and 100 modes as a deviation from 200 modes' (%), and 200 modes'
# first-phase and whole-event peak forces; and when the peak stress was
# read at 20 and 200 modes (µs from first touch).
#   tools/mode_convergence.sh [MESHES] [SPEEDS] [CORRECTIONS]
# e.g. tools/mode_convergence.sh "12,1 24,2 30,4" "1 2 3.5 10" "default tail"
set -euo pipefail
cd "$(dirname "$0")/.."
meshes=${1:-12,1 24,2 30,4}
speeds=${2:-1 2 3.5 10}
corrections=${3:-default second-order tail}
cargo build --release --quiet
strike() { # MESH MODES SPEED [FLAGS...]
  target/release/tessera fracture --mesh "tile:0.15,0.006:$1" --material ceramic-tile \
    --modes "$2" --impact "0,0,0.006:0,0,-1:1:$3" --json "${@:4}" 2>/dev/null |
    python3 -c '
import json, sys
e = json.load(sys.stdin)["events"][0]
c = e["contact"]
print(e["peak_stress_pa"] / 1e6, c["peak_force_n"], c["first_phase_peak_force_n"],
      e["peak_stress_time_s"] * 1e6)'
}
printf '%-6s %5s %-12s %8s %7s %7s %7s %7s %7s %7s %7s %8s %8s %7s %7s\n' mesh v_m_s correction \
  σ200_MPa dσ20_% dσ60_% dσ100_% dσ200_% dF1_20_% dF1_60_% dF1_100_% F1_200_N F200_N tσ20_µs tσ200_µs
for mesh in $meshes; do
  for speed in $speeds; do
    for correction in $corrections; do
      flags=()
      [ "$correction" = second-order ] && flags=(--second-order-correction)
      [ "$correction" = tail ] && flags=(--residual-tail)
      rows=""
      for modes in 20 60 100 200; do
        rows+="$(strike "$mesh" "$modes" "$speed" "${flags[@]}") "
      done
      python3 -c '
import sys
mesh, speed, correction, *v = sys.argv[1:]
v = [float(x) for x in v]
stress, force, first, time = v[0::4], v[1::4], v[2::4], v[3::4]
ds = " ".join("%+7.2f" % (100 * (s / stress[-1] - 1)) for s in stress)
df = " ".join("%+7.2f" % (100 * (f / first[-1] - 1)) for f in first[:-1])
print("%-6s %5s %-12s %8.2f %s %s %8.0f %8.0f %7.0f %7.0f" % (mesh, speed, correction,
      stress[-1], ds, df, first[-1], force[-1], time[0], time[-1]))
' "${mesh/,/×}" "$speed" "$correction" $rows
    done
  done
done

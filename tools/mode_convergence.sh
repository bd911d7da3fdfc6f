#!/usr/bin/env bash
# Issue 26 §2's check over strike speeds and meshes: the peak stress of
# the 110 g steel ball's strike on the free 15 cm ceramic tile's centre
# (`tessera fracture`) at 20, 60, 100 and 200 modes, each as a deviation
# from 200 modes' (%), with the static correction alone (`default`) and
# with its second-order term (`second order`); and the contact's peak
# force at 20 and 200 modes, which the stresses follow.
#   tools/mode_convergence.sh [MESHES] [SPEEDS]
# e.g. tools/mode_convergence.sh "12,1 24,2 30,4" "1 2 3.5 10"
set -euo pipefail
cd "$(dirname "$0")/.."
meshes=${1:-12,1 24,2 30,4}
speeds=${2:-1 2 3.5 10}
cargo build --release --quiet
strike() { # MESH MODES SPEED [FLAGS...]
  target/release/tessera fracture --mesh "tile:0.15,0.006:$1" --material ceramic-tile \
    --modes "$2" --impact "0,0,0.006:0,0,-1:1:$3" --json "${@:4}" 2>/dev/null |
    python3 -c '
import json, sys
e = json.load(sys.stdin)["events"][0]
print(e["peak_stress_pa"] / 1e6, e["contact"]["peak_force_n"])'
}
printf '%-6s %5s %-13s %9s %7s %7s %7s %7s %9s %9s\n' mesh v_m_s correction \
  σ200_MPa d20_% d60_% d100_% d200_% F20_N F200_N
for mesh in $meshes; do
  for speed in $speeds; do
    for correction in default "second order"; do
      flags=()
      [ "$correction" = "second order" ] && flags=(--second-order-correction)
      rows=""
      for modes in 20 60 100 200; do
        rows+="$(strike "$mesh" "$modes" "$speed" "${flags[@]}") "
      done
      python3 -c '
import sys
mesh, speed, correction, *v = sys.argv[1:]
v = [float(x) for x in v]
stress, force = v[0::2], v[1::2]
d = ["%+7.2f" % (100 * (s / stress[-1] - 1)) for s in stress]
print("%-6s %5s %-13s %9.2f %s %9.0f %9.0f" % (mesh, speed, correction, stress[-1], " ".join(d), force[0], force[-1]))
' "${mesh/,/×}" "$speed" "$correction" $rows
    done
  done
done

#!/usr/bin/env bash
# The convergence figures of docs/fracture.md (issue 26), drawn from the
# release binary's JSON into docs/figures/*.svg by
# tools/plots/convergence.py, in a Python environment of its own under
# target/plot-venv (matplotlib from PyPI, tools/plots/requirements.txt).
# Takes ~15 minutes here, most of it the meshes' first modal analyses.
#   tools/convergence_plots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
venv=target/plot-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet -r tools/plots/requirements.txt
mkdir -p docs/figures
"$venv/bin/python" tools/plots/convergence.py target/release/tessera docs/figures

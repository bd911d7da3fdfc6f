#!/usr/bin/env python3
"""Compare tessera's modal analysis with scipy's eigsh on the same matrices.

Usage:
    tessera modes --mesh SPEC --material NAME --modes M --no-cache --export-mtx DIR
    tools/.venv/bin/python tools/compare_eigsh.py DIR [--tol TOL]

DIR holds K.mtx and M.mtx (the exact matrices of tessera's eigenproblem) and
eigenproblem.json (tessera's shift, mode count, eigenvalues and timings).
eigsh runs ARPACK in shift-invert mode 3 with the same σ and k = M + 6 (the
six rigid modes of a free body, then dropped) and tol = --tol, by default
tessera's residual tolerance 1e-8 (ARPACK stops on its Ritz estimate of the
shift-inverted problem, tessera on ‖Kx − λMx‖ / ‖Kx‖; both relative
residuals, so the largest such residual of eigsh's modes is printed to
show what it reached); 0 is machine precision.
Prints both eigenvalue lists, the largest relative difference, both wall
times and scipy's peak memory (ru_maxrss of this process after the solve,
including the loaded matrices).
"""
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse.linalg


def main() -> int:
    args = sys.argv[1:]
    tolerance = 1e-8
    if len(args) == 3 and args[1] == "--tol":
        tolerance = float(args[2])
    elif len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(args[0])
    problem = json.loads((folder / "eigenproblem.json").read_text())
    k = scipy.io.mmread(str(folder / "K.mtx")).tocsc()
    m = scipy.io.mmread(str(folder / "M.mtx")).tocsc()
    modes = int(problem["modes"])
    rigid = int(problem.get("rigid_modes", 6))
    sigma = float(problem["shift"])

    start = time.perf_counter()
    values, vectors = scipy.sparse.linalg.eigsh(
        k, k=modes + rigid, M=m, sigma=sigma, which="LM", tol=tolerance
    )
    scipy_seconds = time.perf_counter() - start
    order = np.argsort(values)[rigid:]
    values, vectors = values[order], vectors[:, order]
    stiff = k @ vectors
    residual = np.linalg.norm(stiff - (m @ vectors) * values, axis=0) / np.linalg.norm(stiff, axis=0)
    ours = np.array(problem["eigenvalues"])
    relative = np.abs(values - ours) / np.abs(values)

    print(f"{'mode':>4} {'scipy eigsh λ':>22} {'tessera λ':>22} {'rel. diff':>10}")
    for i, (a, b, r) in enumerate(zip(values, ours, relative)):
        print(f"{i + 1:>4} {a:>22.12e} {b:>22.12e} {r:>10.2e}")
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ours_seconds = problem["seconds"]
    eigensolve = ours_seconds["factorization"] + ours_seconds["lanczos"] + ours_seconds["polish"]
    summary = {
        "dofs": int(k.shape[0]),
        "modes": modes,
        "shift": sigma,
        "max_relative_difference": float(relative.max()),
        "scipy_tolerance": tolerance,
        "scipy_max_relative_residual": float(residual.max()),
        "scipy_eigsh_seconds": scipy_seconds,
        "tessera_eigensolve_seconds": eigensolve,
        "speedup": scipy_seconds / eigensolve if eigensolve > 0 else None,
        "scipy_peak_rss_mib": peak_mib,
    }
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

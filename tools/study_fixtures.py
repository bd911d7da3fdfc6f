#!/usr/bin/env python3
"""Reference values for the study statistics (src/study/stats.rs,
src/study/psychometric.rs), computed with scipy; written to
tests/fixtures/study_stats.json, which tests/study.rs compares against.

    pip install scipy==1.14.1 numpy
    python3 tools/study_fixtures.py
"""
import json
import pathlib

import numpy as np
import scipy
from scipy import optimize, stats

out = {"scipy": scipy.__version__, "binomtest": [], "wilcoxon": [], "friedman": [], "fits": []}

# Exact two-sided binomial tests: Glondu's Table 5.3 counts (120 trials a
# pair), small samples, and p other than 1/2.
for k, n, p in [(85, 120, 0.5), (106, 120, 0.5), (89, 120, 0.5), (95, 120, 0.5),
                (111, 120, 0.5), (81, 120, 0.5), (60, 120, 0.5), (0, 1, 0.5),
                (3, 10, 0.5), (7, 7, 0.5), (3, 20, 0.3), (17, 20, 0.3),
                (1, 30, 0.05), (12, 25, 0.7), (499, 1000, 0.5)]:
    out["binomtest"].append({"k": k, "n": n, "p": p,
                             "p_value": float(stats.binomtest(k, n, p).pvalue)})

rng = np.random.default_rng(20261124)
cases = {
    # exact: distinct non-zero differences
    "exact": (rng.normal(70, 10, 12), rng.normal(75, 10, 12)),
    # exact with tied differences (per-participant percentages)
    "exact_ties": (np.array([80, 60, 100, 60, 80, 80, 100, 40, 60, 80, 100, 80.0]),
                   np.array([60, 80, 80, 40, 60, 100, 60, 60, 40, 60, 80, 40.0])),
    # zeros: normal approximation
    "zeros": (np.array([80, 60, 100, 60, 80, 80, 100, 40, 60, 80, 100, 80.0]),
              np.array([80, 80, 80, 40, 60, 80, 60, 60, 40, 60, 80, 40.0])),
    # more than 50 pairs: normal approximation
    "large": (rng.normal(0, 1, 60), rng.normal(0.3, 1, 60)),
}
for name, (x, y) in cases.items():
    r = stats.wilcoxon(x, y)
    out["wilcoxon"].append({"name": name, "x": x.tolist(), "y": y.tolist(),
                            "statistic": float(r.statistic), "p_value": float(r.pvalue)})

for name, samples in {
    "three_likert": [[4, 5, 6, 3, 5, 7, 4, 5], [5, 5, 7, 4, 6, 7, 5, 4], [3, 4, 5, 3, 4, 6, 4, 4]],
    "four_continuous": [rng.normal(m, 1, 10).tolist() for m in (0, 0.2, 0.5, 1.0)],
}.items():
    r = stats.friedmanchisquare(*samples)
    out["friedman"].append({"name": name, "samples": samples,
                            "statistic": float(r.statistic), "p_value": float(r.pvalue)})


# Maximum-likelihood psychometric fits: psi = g + (1 - g - l) F(x; a, b),
# g = 0.5, l in [0, 0.06]; the best of many bounded L-BFGS-B starts.
def psi(shape, x, a, b, l, g=0.5):
    if shape == "logistic":
        f = 1 / (1 + np.exp(-b * (x - a)))
    else:
        f = 1 - np.exp(-(x / a) ** b)
    return g + (1 - g - l) * f


def nll(theta, shape, x, k, n):
    a, logb, l = theta
    p = np.clip(psi(shape, x, a, np.exp(logb), l), 1e-12, 1 - 1e-12)
    return -np.sum(k * np.log(p) + (n - k) * np.log(1 - p))


for name, shape, x, k, n in [
    ("logistic", "logistic", [0.05, 0.1, 0.15, 0.2, 0.3, 0.4], [22, 24, 29, 33, 38, 39], [40] * 6),
    ("weibull", "weibull", [0.05, 0.1, 0.15, 0.2, 0.3, 0.4], [21, 26, 28, 34, 37, 40], [40] * 6),
    ("unequal_counts", "logistic", [0.2, 0.4, 0.6], [25, 41, 29], [40, 50, 30]),
]:
    x, k, n = map(np.asarray, (x, k, n))
    best = None
    for a0 in np.linspace(x.min(), x.max(), 9):
        for logb0 in np.log([1, 3, 10, 30, 100]):
            for l0 in (0.0, 0.03):
                r = optimize.minimize(nll, [a0, logb0, l0], args=(shape, x, k, n),
                                      method="L-BFGS-B",
                                      bounds=[(1e-6, 10), (-5, 8), (0, 0.06)],
                                      options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000})
                if best is None or r.fun < best.fun:
                    best = r
    a, logb, l = best.x
    out["fits"].append({"name": name, "shape": shape, "stimulus": x.tolist(),
                        "correct": k.tolist(), "total": n.tolist(),
                        "threshold": float(a), "slope": float(np.exp(logb)),
                        "lapse_rate": float(l), "log_likelihood": float(-best.fun)})

path = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "study_stats.json"
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"wrote {path}")

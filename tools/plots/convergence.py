"""The convergence figures of docs/fracture.md (issue 26), from the JSON of
`tessera modes` and `tessera fracture`. Usage: convergence.py TESSERA OUTDIR
(run by tools/convergence_plots.sh)."""

import json
import subprocess
import sys

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402
from zener import PLATE_H as H, ball, zener  # noqa: E402

TESSERA, OUT = sys.argv[1], sys.argv[2]
plt.rcParams.update({"font.size": 9, "svg.hashsalt": "tessera", "svg.fonttype": "none"})


def tessera(*args):
    print("tessera", " ".join(args), file=sys.stderr, flush=True)
    done = subprocess.run([TESSERA, *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def save(fig, name):
    fig.tight_layout()
    fig.savefig(f"{OUT}/{name}", metadata={"Date": None})
    print(f"{OUT}/{name}", file=sys.stderr)


# 1. Frequencies against the mesh (§1): the free-free glass beam against
# Euler–Bernoulli, and the free ceramic tile's first mode.
EULER_BERNOULLI_HZ = 306.46  # box 0.6 × 0.03 × 0.02 m, soda-lime-glass (tools/frequency_convergence.sh)
fig, (beam, tile) = plt.subplots(1, 2, figsize=(8, 3.2))
for element, marker in (("linear", "s"), ("quadratic", "o")):
    cells = {"linear": ["60,3,1", "60,3,2", "120,6,4", "120,6,8"],
             "quadratic": ["60,3,1", "60,3,2", "120,6,4"]}[element]
    layers, error = [], []
    for c in cells:
        d = tessera("modes", "--mesh", f"box:0.6,0.03,0.02:{c}", "--material", "soda-lime-glass",
                    "--element", element, "--modes", "4")
        layers.append(int(c.split(",")[2]))
        error.append(abs(d["frequencies_hz"][0] / EULER_BERNOULLI_HZ - 1) * 100)
    beam.loglog(layers, error, marker=marker, label=element)
    cells = {"linear": ["12,1", "24,2", "30,4", "40,6"], "quadratic": ["12,1", "24,2", "30,4"]}[element]
    dofs, f1 = [], []
    for c in cells:
        d = tessera("modes", "--mesh", f"tile:0.15,0.006:{c}", "--material", "ceramic-tile",
                    "--element", element, "--modes", "4")
        dofs.append(d["dofs"])
        f1.append(d["frequencies_hz"][0])
    tile.semilogx(dofs, f1, marker=marker, label=element)
beam.set(xlabel="layers through the 2 cm height", ylabel="|f₁ / f₁(Euler–Bernoulli) − 1| (%)",
         title="free-free beam 60 × 3 × 2 cm")
beam.axhline(1, color="grey", lw=0.6, ls=":")
beam.set_xticks([1, 2, 4, 8], labels=["1", "2", "4", "8"], minor=False)
beam.set_xticks([], minor=True)
tile.set(xlabel="degrees of freedom", ylabel="f₁ (Hz)", title="free tile 15 × 15 × 0.6 cm")
for a in (beam, tile):
    a.legend()
save(fig, "frequency-convergence.svg")

# 2. The static correction (§2): the peak stress and contact force of the
# steel ball at 4.43 m/s (a 1 m drop) on the free 24×2 tile against the
# number of modes.
modes = [20, 60, 100, 200]
fig, (stress, force) = plt.subplots(1, 2, figsize=(8, 3.2))
for flags, label, marker in (([], "with the static correction", "o"),
                             (["--no-static-correction"], "modal sum alone", "s")):
    runs = [tessera("fracture", "--mesh", "tile:0.15,0.006:24,2", "--material", "ceramic-tile",
                    "--modes", str(m), "--impact", "0,0,0.006:0,0,-1:1:4.43", *flags) for m in modes]
    stress.plot(modes, [r["events"][0]["peak_stress_pa"] / 1e6 for r in runs], marker=marker, label=label)
    force.plot(modes, [r["events"][0]["contact"]["peak_force_n"] for r in runs], marker=marker, label=label)
stress.set(xlabel="modes", ylabel="peak principal stress (MPa)", title="tile 24×2, ball at 4.43 m/s")
force.set(xlabel="modes", ylabel="peak contact force (N)", title="the same strike")
for a in (stress, force):
    a.set_ylim(bottom=0)
    a.legend()
save(fig, "static-correction.svg")

# 3. Zener's ball on a large plate (§3): steel balls at 1 m/s on a free
# 15 cm, 4 mm soda-lime glass plate (tools/zener_plate.sh).
fig, (rebound, peak) = plt.subplots(1, 2, figsize=(8, 3.2))
lams = [i * 0.05 for i in range(31)]
theory = [zener(lam, dt=1e-3) for lam in lams]
for a, i in ((rebound, 0), (peak, 1)):
    a.plot(lams, [t[i] for t in theory], color="black", lw=1, label="Zener")
for mesh, color in (("16,2", "C0"), ("32,2", "C1"), ("48,2", "C2")):
    for flags, fill in (([], None), (["--no-static-correction"], "none")):
        points = []
        for radius in (0.0025, 0.005, 0.007):
            speed = 1.0
            mass, lam, force_unit, _ = ball(radius, speed)
            c = tessera("fracture", "--mesh", f"tile:0.15,{H}:{mesh}", "--material", "soda-lime-glass",
                        "--impact", f"0,0,{H}:0,0,-1:{mass}:{speed}", "--impactor-mass", str(mass),
                        "--impactor-radius", str(radius), "--modes", "200", *flags)["events"][0]["contact"]
            points.append((lam, c["striking_impulse_n_s"] / (mass * speed) - 1,
                           c["peak_force_n"] / force_unit))
        label = f"{mesh.replace(',', '×')}" + (", modal sum" if flags else ", default")
        for a, i in ((rebound, 1), (peak, 2)):
            a.plot([p[0] for p in points], [p[i] for p in points], ls="", marker="o", color=color,
                   markerfacecolor=fill, label=label)
rebound.set(xlabel="λ", ylabel="rebound / approach speed", title="ball on a 4 mm glass plate, 200 modes")
peak.set(xlabel="λ", ylabel="peak force / k α₀^{3/2}", title="Zener's λ: 2.5, 5, 7 mm steel balls")
rebound.legend(fontsize=7)
save(fig, "zener.svg")

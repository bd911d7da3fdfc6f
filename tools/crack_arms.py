"""Cracks crossing circles round an impact on a plate's lower face.

`python3 tools/crack_arms.py FRACTURE_VTU RADIUS_M...` prints, per radius,
the changes of fragment along a circle of that radius round the origin on
the mesh's lowest face: each of 720 points takes its nearest node's
fragment from the `fragment` array of `tessera fracture --out`'s
fracture.vtu. A crack between two nodes of a coarse mesh can be missed.
Used by tools/fracture_patterns.sh and tools/star_cracks.sh.
"""
import math
import re
import sys


def lower_face_fragments(vtu_path):
    """(x, y, fragment) of the nodes on the mesh's lowest face."""
    text = open(vtu_path).read()
    arrays = {m.group(1): m.group(2).split() for m in re.finditer(
        r'<DataArray[^>]*Name="(\w+)"[^>]*>(.*?)</DataArray>', text, re.S)}
    xyz = [float(c) for c in arrays["Points"]]
    nodes = [(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2], int(float(f)))
             for i, f in enumerate(arrays["fragment"])]
    bottom = min(n[2] for n in nodes)
    return [(x, y, f) for x, y, z, f in nodes if abs(z - bottom) < 1e-9]


def arms(face, radius_m, samples=720):
    """Changes of fragment along the circle of `radius_m`."""
    labels = []
    for k in range(samples):
        angle = 2 * math.pi * k / samples
        x, y = radius_m * math.cos(angle), radius_m * math.sin(angle)
        labels.append(min(face, key=lambda n: (n[0] - x) ** 2 + (n[1] - y) ** 2)[2])
    return sum(labels[k] != labels[k - 1] for k in range(samples))


if __name__ == "__main__":
    face = lower_face_fragments(sys.argv[1])
    print(" ".join(str(arms(face, float(r))) for r in sys.argv[2:]))

"""A porcelain-like bowl meshed with Gmsh: the irregular body of the
fracture suite (issue 28, `tools/fracture_suite.sh`).

A hemispherical shell of outer radius 10 cm and wall 4 mm, open at the
rim, meshed with linear tets of about SIZE metres (Gmsh's OpenCASCADE
kernel, Delaunay 3D), written as MSH 4.1 ASCII, which `tessera` reads.

    tools/.venv/bin/python tools/mesh_bowl.py SIZE_M OUT.msh

Gmsh comes from PyPI (`tools/.venv/bin/pip install gmsh`); the suite
script installs it. Prints the tet count.
"""

import sys

import gmsh

OUTER_RADIUS_M = 0.10
WALL_M = 0.004


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    size_m, out = float(sys.argv[1]), sys.argv[2]
    if not 1e-4 <= size_m <= 0.05:
        sys.exit(f"mesh_bowl.py: SIZE_M {size_m} is outside [1e-4, 0.05] m")
    gmsh.initialize()
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        occ = gmsh.model.occ
        outer = occ.addSphere(0, 0, 0, OUTER_RADIUS_M)
        inner = occ.addSphere(0, 0, 0, OUTER_RADIUS_M - WALL_M)
        shell, _ = occ.cut([(3, outer)], [(3, inner)])
        # Keep the lower half: the bowl, open at z = 0.
        r = 2 * OUTER_RADIUS_M
        below = occ.addBox(-r, -r, -r, 2 * r, 2 * r, r)
        bowl, _ = occ.intersect(shell, [(3, below)])
        occ.synchronize()
        gmsh.option.setNumber("Mesh.MeshSizeMin", size_m)
        gmsh.option.setNumber("Mesh.MeshSizeMax", size_m)
        gmsh.option.setNumber("Mesh.Algorithm3D", 1)
        gmsh.model.addPhysicalGroup(3, [tag for _, tag in bowl])
        gmsh.model.mesh.generate(3)
        gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
        gmsh.option.setNumber("Mesh.Binary", 0)
        gmsh.write(out)
        types, tags, _ = gmsh.model.mesh.getElements(3)
        tets = sum(len(t) for kind, t in zip(types, tags) if kind == 4)
        print(tets)
    finally:
        gmsh.finalize()


if __name__ == "__main__":
    main()

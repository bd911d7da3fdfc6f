#!/usr/bin/env python3
"""Regenerates tests/fixtures/cube.msh: a 1 cm cube meshed by Gmsh (MSH 4.1,
ASCII, tets only), using the `gmsh` wheel from PyPI (headless).
    tools/.venv/bin/python tools/make_fixtures.py
"""
from pathlib import Path

import gmsh

out = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "cube.msh"
gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("cube")
gmsh.model.occ.addBox(0, 0, 0, 0.01, 0.01, 0.01)
gmsh.model.occ.synchronize()
gmsh.option.setNumber("Mesh.MeshSizeMax", 0.004)
gmsh.model.mesh.generate(3)
gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
gmsh.option.setNumber("Mesh.Binary", 0)
gmsh.write(str(out))
gmsh.finalize()
print(f"wrote {out}")

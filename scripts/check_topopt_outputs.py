#!/usr/bin/env python3
"""Reads a `cuth topopt` output folder with independent tools: VTK's own
XML reader (the one ParaView uses) for density.vti, trimesh for design.stl.
Not part of CI (it needs `pip install vtk trimesh numpy`); run it by hand
after a change to the writers:  scripts/check_topopt_outputs.py OUT_DIR
Exits non-zero when a check fails."""
import csv
import json
import sys

import trimesh
import vtk
from vtk.util.numpy_support import vtk_to_numpy

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)


def main(out):
    ok = True
    r = vtk.vtkXMLImageDataReader()
    r.SetFileName(f"{out}/density.vti")
    r.Update()
    img = r.GetOutput()
    arr = img.GetCellData().GetArray("density")
    dims = [d - 1 for d in img.GetDimensions()]
    n = dims[0] * dims[1] * dims[2]
    print(f"density.vti: {dims[0]} x {dims[1]} x {dims[2]} cells, spacing {img.GetSpacing()}, "
          f"reader error {r.GetErrorCode()}")
    if r.GetErrorCode() != 0 or arr is None or len(vtk_to_numpy(arr)) != n:
        print("  FAIL: VTK could not read one density per cell")
        ok = False
    else:
        print(f"  density: {arr.GetDataTypeAsString()}, {n} values, range {arr.GetRange()}")

    mesh = trimesh.load(f"{out}/design.stl")
    print(f"design.stl: {len(mesh.faces)} triangles, watertight {mesh.is_watertight}, "
          f"winding consistent {mesh.is_winding_consistent}, volume {mesh.volume:.6g}")
    if len(mesh.faces) and not (mesh.is_watertight and mesh.is_winding_consistent and mesh.volume > 0):
        print("  FAIL: the isosurface is not a closed, outward-oriented surface")
        ok = False

    with open(f"{out}/history.csv", newline="") as f:
        rows = list(csv.reader(f))
    print(f"history.csv: {rows[0]}, {len(rows) - 1} rows")
    with open(f"{out}/summary.json") as f:
        json.load(f)
    print("summary.json: parses")
    return ok


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(0 if main(sys.argv[1]) else 1)

# SPDX-License-Identifier: Apache-2.0
# `run --vtk` read back by VTK's own XML readers (Debian's python3-vtk9; skips with 77
# without it): heavy_stack's bodies_*.vtp (6 bodies' surfaces: 5 boxes of 12 triangles and the
# ground's 2, cell data body_id, point data velocity), contacts_*.vtp (one vertex per contact,
# normal, impulse, phi, slip), elastic_cube's .vtu (cell von_mises and strain, with von_mises = 3 G strain; point displacement), and every .pvd series naming files that
# exist. The readers must report no error and the data must match the run's steps.csv.
source "$(dirname "$0")/common.bash"

py=/usr/bin/python3
[[ -x $py ]] && $py -c 'import vtk' 2>/dev/null || { echo "SKIP: no VTK Python module (python3-vtk9; scripts/setup --tests)"; exit 77; }

"$bin" run heavy_stack --solver pgs --steps 4 --vtk 2 --record 0 --out "$tmp/stack" >/dev/null 2>"$tmp/stderr" ||
  { echo "FAIL: run heavy_stack: $(head -c 400 "$tmp/stderr")"; exit 1; }
"$bin" run elastic_cube --solver sap --steps 2 --vtk 1 --set cells=2 --record 0 --out "$tmp/cube" >/dev/null 2>"$tmp/stderr" ||
  { echo "FAIL: run elastic_cube: $(head -c 400 "$tmp/stderr")"; exit 1; }

if $py - "$tmp/stack" "$tmp/cube" <<'PY'
import csv, glob, os, sys
import xml.etree.ElementTree as ET
import vtk
from vtk.util.numpy_support import vtk_to_numpy

errors = []
class Catch:  # VTK reports errors through its output window, not exceptions
    def __init__(self):
        self.msgs = []
    def __call__(self, obj, event):
        self.msgs.append(event)

def read(path):
    r = vtk.vtkXMLPolyDataReader() if path.endswith(".vtp") else vtk.vtkXMLUnstructuredGridReader()
    c = Catch()
    r.AddObserver("ErrorEvent", c)
    r.AddObserver("WarningEvent", c)
    r.SetFileName(path)
    r.Update()
    if c.msgs or r.GetErrorCode() != 0:
        errors.append(f"{path}: reader reported {c.msgs} (error code {r.GetErrorCode()})")
    return r.GetOutput()

stack, cube = sys.argv[1:3]
steps = list(csv.DictReader(open(os.path.join(stack, "steps.csv"))))
d = os.path.join(stack, "vtk", "pgs")
for name in ("bodies_000000.vtp", "bodies_000002.vtp", "bodies_000004.vtp"):
    o = read(os.path.join(d, name))
    ids = vtk_to_numpy(o.GetCellData().GetArray("body_id"))
    if o.GetNumberOfPolys() != 5 * 12 + 2 or sorted(set(ids.astype(int))) != list(range(6)):
        errors.append(f"{name}: {o.GetNumberOfPolys()} triangles, bodies {sorted(set(ids))}")
    if o.GetPointData().GetArray("velocity") is None:
        errors.append(f"{name}: no velocity")
for k in (2, 4):
    o = read(os.path.join(d, f"contacts_{k:06d}.vtp"))
    nc = int(steps[k - 1]["nc"])
    if o.GetNumberOfPoints() != nc or o.GetNumberOfVerts() != nc:
        errors.append(f"contacts_{k}: {o.GetNumberOfPoints()} points, steps.csv says {nc} contacts")
    for a in ("normal", "impulse", "phi", "slip"):
        if o.GetPointData().GetArray(a) is None:
            errors.append(f"contacts_{k}: no {a}")
    n = vtk_to_numpy(o.GetPointData().GetArray("normal"))
    if nc and abs((n * n).sum(axis=1) - 1).max() > 1e-8:
        errors.append(f"contacts_{k}: normals are not unit vectors (9 digits written)")
for sub in (d, os.path.join(cube, "vtk", "sap")):
    for pvd in glob.glob(os.path.join(sub, "*.pvd")):
        sets = ET.parse(pvd).getroot().findall("./Collection/DataSet")
        if not sets:
            errors.append(f"{pvd}: empty collection")
        for s in sets:
            f = os.path.join(sub, s.get("file"))
            if not os.path.exists(f):
                errors.append(f"{pvd}: names missing {s.get('file')}")
            else:
                read(f)
o = read(os.path.join(cube, "vtk", "sap", "cube_000002.vtu"))
if (o.GetNumberOfCells() != 48 or o.GetCellData().GetArray("von_mises") is None or
        o.GetCellData().GetArray("strain") is None or o.GetPointData().GetArray("displacement") is None):
    errors.append(f"cube_000002.vtu: {o.GetNumberOfCells()} cells")
else:
    # displacement = points - rest points, and linear elasticity's von Mises = 3 G strain
    # (E 1e5 Pa, nu 0.4; the cube's corotated model is linear at these small strains)
    vm, eps = o.GetCellData().GetArray("von_mises"), o.GetCellData().GetArray("strain")
    G3 = 3 * 1e5 / (2 * 1.4)
    off = [abs(vm.GetValue(c) / (G3 * eps.GetValue(c)) - 1) for c in range(48) if eps.GetValue(c) > 1e-6]
    if not off or max(off) > 0.03:
        errors.append(f"cube_000002.vtu: von_mises / (3 G strain) off by {max(off or [1]):.3f}")
    u = o.GetPointData().GetArray("displacement")
    umax = max(abs(u.GetComponent(i, c)) for i in range(o.GetNumberOfPoints()) for c in range(3))
    if not 0 < umax < 0.01:
        errors.append(f"cube_000002.vtu: largest displacement component {umax} m")
print("\n".join(errors))
sys.exit(1 if errors else 0)
PY
then
  pass "VTK's XML readers read every file of both runs without error; counts match steps.csv"
else
  fail "VTK reader check"
fi
finish

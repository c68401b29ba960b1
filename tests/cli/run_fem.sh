# SPDX-License-Identifier: Apache-2.0
# Deformable bodies through `frictionlab run`: every registered solver on the mixed scene
# elastic_cube (a FEM cube between two rigid panels on prismatic joints), VTK frames and the
# ParaView series, a scene file written by export that runs back to the same observables (full
# and Schur presentations), and bad deformable input that fails cleanly.
source "$(dirname "$0")/common.bash"

for s in $(solver_names); do
  out=$tmp/run-$s
  if ! "$bin" run elastic_cube --solver "$s" --steps 3 --set cells=2 --out "$out" >"$tmp/stdout" 2>"$tmp/stderr"; then
    # an unsupported combination must say so, not crash
    if grep -qi 'unsupported' "$out/manifest.json" 2>/dev/null || grep -qi 'unsupported' "$tmp/stdout"; then
      pass "run elastic_cube --solver $s: reported unsupported"
    else
      fail "run elastic_cube --solver $s: exit status $?; $(head -c 400 "$tmp/stderr") $(tail -n 2 "$tmp/stdout")"
    fi
    continue
  fi
  head -n 1 "$out/observables.csv" | grep -q ',elastic_cube,mindetF_cube,left_fx,' ||
    fail "run $s: observables.csv lacks the panel forces or the cube's elastic energy"
  rows=$(($(wc -l <"$out/observables.csv") - 1))
  [[ $rows -eq 3 ]] || fail "run $s: $rows observable rows, expected 3"
  pass "run elastic_cube --solver $s"
done

# VTK: frames 0, 2, 4 and the series
out=$tmp/vtk
if "$bin" run elastic_cube --solver sap --steps 4 --vtk 2 --set cells=2 --out "$out" >/dev/null 2>"$tmp/stderr"; then
  for f in cube_000000.vtu cube_000002.vtu cube_000004.vtu cube.pvd; do
    [[ -s "$out/vtk/sap/$f" ]] || fail "--vtk: $f missing"
  done
  n=$(grep -c '<DataSet' "$out/vtk/sap/cube.pvd")
  [[ $n -eq 3 ]] || fail "--vtk: cube.pvd lists $n frames, expected 3"
  grep -q 'von_mises' "$out/vtk/sap/cube_000004.vtu" || fail "--vtk: no von_mises cell field"
  grep -q 'NumberOfCells="48"' "$out/vtk/sap/cube_000004.vtu" || fail "--vtk: expected 48 tets"
  pass "run --vtk writes frames and a .pvd series"
else
  fail "run --vtk: $(head -c 400 "$tmp/stderr")"
fi

# a scene file from export runs back to the same observables, in both presentations
"$bin" export elastic_cube --scene-json "$tmp/cube.json" --set cells=2 >/dev/null 2>"$tmp/stderr" ||
  fail "export elastic_cube --scene-json: $(cat "$tmp/stderr")"
grep -Eq '"kind":[[:space:]]*"deformable"' "$tmp/cube.json" || fail "export: no deformable body in the scene file"
"$bin" run elastic_cube --set cells=2 --solver sap --steps 20 --out "$tmp/a" >/dev/null 2>&1 || fail "run elastic_cube"
"$bin" run "$tmp/cube.json" --solver sap --steps 20 --out "$tmp/b" >/dev/null 2>"$tmp/stderr" ||
  fail "run cube.json: $(head -c 400 "$tmp/stderr")"
if cmp -s "$tmp/a/observables.csv" "$tmp/b/observables.csv"; then
  pass "exported elastic_cube runs back to the same observables"
else
  fail "exported elastic_cube: observables differ"
fi
"$bin" run "$tmp/cube.json" --solver sap --steps 20 --set scene.fem_solve=full --out "$tmp/c" >/dev/null 2>"$tmp/stderr" ||
  fail "run cube.json with fem_solve=full: $(head -c 400 "$tmp/stderr")"
python3 - "$tmp/b/observables.csv" "$tmp/c/observables.csv" <<'PY' || fail "full and Schur runs differ"
import csv, sys
a = list(csv.DictReader(open(sys.argv[1]))); b = list(csv.DictReader(open(sys.argv[2])))
assert len(a) == len(b) == 20
for ra, rb in zip(a, b):
    for k in ("left_fx", "right_fz", "elastic_cube"):
        x, y = float(ra[k]), float(rb[k])
        assert abs(x - y) <= 1e-6 * max(1.0, abs(x)), (k, x, y)
PY
pass "scene.fem_solve=full gives the Schur run's forces"

# bad input: the file, the JSON path and what was expected; nothing written
sed -E 's/"nu":[[:space:]]*[0-9.e+-]+/"nu": 0.5/' "$tmp/cube.json" >"$tmp/bad_nu.json"
expect_fail "nu = 0.5" 1 "bad_nu.json: bodies[2].model" "$tmp/out-nu" -- run "$tmp/bad_nu.json" --steps 1 --out "$tmp/out-nu"
python3 - "$tmp/cube.json" "$tmp/bad_mesh.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["bodies"][2]["mesh"] = {"type": "file", "path": "no_such_mesh.msh"}
json.dump(s, open(sys.argv[2], "w"))
PY
expect_fail "missing mesh file" 1 "no_such_mesh.msh" "$tmp/out-mesh" -- run "$tmp/bad_mesh.json" --steps 1 --out "$tmp/out-mesh"

# cylinder_press: every scene parameter range-checked, named, nothing written
expect_fail "press mesh level" 2 "mesh=5 is out of range" "$tmp/out-p1" -- run cylinder_press --set mesh=5 --steps 1 --out "$tmp/out-p1"
expect_fail "press ramp" 2 "ramp=-1 is out of range" "$tmp/out-p2" -- run cylinder_press --set ramp=-1 --steps 1 --out "$tmp/out-p2"
expect_fail "press force" 2 "force=nan" "$tmp/out-p3" -- run cylinder_press --set force=nan --steps 1 --out "$tmp/out-p3"
# a push no cylinder can hold (soft rubber, 1e4 MN/m at once): the plate goes through and
# the run stops, naming it
"$bin" run cylinder_press --solver sap --set c1=1 --set c2=1 --set kappa=10 --set force=1e10 --set ramp=0 --steps 200 --out "$tmp/out-p4" >"$tmp/stdout" 2>"$tmp/stderr"
if grep -q "passed through\|inverted" "$tmp/stdout" "$tmp/stderr"; then pass "press: plate through the cylinder or an inverted tet is reported"
else fail "press: not reported: $(tail -n 3 "$tmp/stdout") $(head -c 300 "$tmp/stderr")"; fi
finish

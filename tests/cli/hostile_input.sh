# SPDX-License-Identifier: Apache-2.0
# Inputs that crashed, misread or asked for huge memory before: each run of the real program
# ends with a message naming the file and what was expected, a non-zero exit and no results
# folder. The binary files are in tests/data/fuzz (docs/robustness.md).
source "$(dirname "$0")/common.bash"
# under the sanitizers a report is a failure even when the exit status is the expected one
eval "plain_$(declare -f expect_fail)"
expect_fail() {
  plain_expect_fail "$@"
  if grep -qE "Sanitizer|runtime error:" "$tmp/stderr"; then fail "$1: a sanitizer report"; fi
}
src=${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
data=$src/tests/data/fuzz
out=$tmp/out

# FCLIB files
expect_fail "FCLIB duplicates summing to inf" 1 "entry (0, 0) is inf after summing" "$out" -- solve "$data/fclib-duplicates-sum-to-inf.hdf5" --out "$out"
expect_fail "FCLIB empty local problem" 1 "0 x 0, an empty problem" "$out" -- solve "$data/fclib-empty-local.hdf5" --out "$out"
expect_fail "FCLIB spacedim of 2^31 entries" 1 "2147483648 entries, expected one integer" "$out" -- solve "$data/fclib-spacedim-2e31-entries.hdf5" --out "$out"
# a file that reads cleanly but is no friction problem (W diagonal -2.7e79; fuzz_fclib, issue 56):
# refused like fl_problem_validate refuses it, where solve ran it and nsn "converged"
expect_fail "FCLIB negative W diagonal" 1 "fclib-negative-diagonal.hdf5: /fclib_local: W(0, 0) = -2.67912e+79, expected a diagonal >= 0" "$out" -- solve "$data/fclib-negative-diagonal.hdf5" --out "$out"
# a libhdf5 crash while reading (the child that reads first is made to fault): exit 1 and a
# message, where it was a segfault (exit 139)
FL_FCLIB_CHILD_FAULT=1 expect_fail "FCLIB file that crashes the HDF5 reader" 1 "the HDF5 library crashed reading it (signal 11" "$out" -- solve "$data/fclib-local-ok.hdf5" --out "$out"
"$bin" solve "$data/fclib-local-ok.hdf5" --out "$tmp/ok-solve" >/dev/null 2>"$tmp/stderr" &&
  pass "the same file reads cleanly without the fault" || fail "fclib-local-ok.hdf5: $(cat "$tmp/stderr")"
for f in "$data"/fclib-crash-*.hdf5; do
  [[ -e "$f" ]] || continue
  expect_fail "FCLIB file that crashes libhdf5 ($(basename "$f"))" 1 "$(basename "$f")" "$out" -- solve "$f" --out "$out"
done

# meshes through a scene file: one deformable body whose mesh is a file
scene() { # scene FILE.json MESH-JSON
  cat >"$1" <<JSON
{"format": "frictionlab-scene", "version": 1, "name": "m", "dt": 0.01, "duration": 0.02,
 "materials": [{"name": "rubber", "mu": 0.5}],
 "bodies": [{"name": "ground", "kind": "fixed", "material": "rubber", "shape": {"type": "plane"}},
  {"name": "cube", "kind": "deformable", "material": "rubber", "mesh": $2,
   "model": {"type": "corotated_lagged", "E": 1e5, "nu": 0.4}, "density": 400,
   "position": [0, 0, 1]}]}
JSON
}
msh() { # msh FILE NODES-SECTION ELEMENTS-SECTION
  printf '$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n%b$EndNodes\n$Elements\n%b$EndElements\n' "$2" "$3" >"$1"
}
nodes='1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n'
tet='1 1 1 1\n3 1 4 1\n1 1 2 3 4\n'
msh "$tmp/ok.msh" "$nodes" "$tet"
scene "$tmp/ok.json" '{"type": "file", "path": "ok.msh"}'
"$bin" run "$tmp/ok.json" --steps 1 --out "$tmp/ok-out" >/dev/null 2>"$tmp/stderr" &&
  pass "a one-tet .msh runs" || fail "a one-tet .msh: $(cat "$tmp/stderr")"
msh "$tmp/neg.msh" '1 4 1 4\n3 1 0 -4\n' "$tet"
scene "$tmp/neg.json" '{"type": "file", "path": "neg.msh"}'
expect_fail ".msh negative node block" 1 "negative numNodesInBlock" "$out" -- run "$tmp/neg.json" --out "$out"
msh "$tmp/nan.msh" '1 4 1 nan\n' "$tet"
scene "$tmp/nan.json" '{"type": "file", "path": "nan.msh"}'
expect_fail ".msh NaN max tag" 1 "maxNodeTag" "$out" -- run "$tmp/nan.json" --out "$out"
msh "$tmp/two.msh" "$nodes\$EndNodes\n\$Nodes\n$nodes" "$tet"
scene "$tmp/two.json" '{"type": "file", "path": "two.msh"}'
expect_fail ".msh second \$Nodes" 1 'a second $Nodes section' "$out" -- run "$tmp/two.json" --out "$out"
cp "$data/msh-repeated-tet.msh" "$tmp/twice.msh" # found by fuzz_msh
scene "$tmp/twice.json" '{"type": "file", "path": "twice.msh"}'
expect_fail ".msh with one tet twice" 1 "overlap (a repeated tet?)" "$out" -- run "$tmp/twice.json" --out "$out"
mkdir "$tmp/dir.vtu"
scene "$tmp/dir.json" '{"type": "file", "path": "dir.vtu"}'
expect_fail ".vtu that is a folder" 1 "is a folder, not a VTK .vtu file" "$out" -- run "$tmp/dir.json" --out "$out"

# generated meshes whose sizes overflowed a 32-bit int
scene "$tmp/cells.json" '{"type": "box", "size": [1, 1, 1], "cells": [1000, 1000, 1000]}'
expect_fail "box of 1000^3 cells" 1 "6000000000 tets" "$out" -- run "$tmp/cells.json" --out "$out"
scene "$tmp/cyl.json" '{"type": "cylinder", "radius": 1, "length": 1, "rings": 1000, "layers": 1000}'
expect_fail "cylinder of 1000 rings and layers" 1 "cylinder mesh" "$out" -- run "$tmp/cyl.json" --out "$out"

# counts: --steps past a long, duration / dt past the step limit
"$bin" export heavy_stack --set n=2 --scene-json "$tmp/stack.json" >/dev/null 2>&1 || fail "export heavy_stack"
expect_fail "--steps overflowing a long" 2 "--steps '99999999999999999999'" "$out" -- run "$tmp/stack.json" --steps 99999999999999999999 --out "$out"
sed -E 's/"duration":[^,]*/"duration": 1e9/; s/"dt":[^,]*/"dt": 1e-12/' "$tmp/stack.json" >"$tmp/long.json"
expect_fail "duration / dt of 1e21 steps" 2 "steps, expected at most 1000000000" "$out" -- run "$tmp/long.json" --out "$out"

# a huge but finite quaternion normalizes to a rotation (it became all zeros), and the exported
# scene runs back
python3 - "$tmp/stack.json" "$tmp/quat.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["bodies"][1]["orientation"] = [1e200, 0, 0, 1e200]
json.dump(s, open(sys.argv[2], "w"))
PY
if "$bin" export "$tmp/quat.json" --scene-json "$tmp/quat2.json" >/dev/null 2>"$tmp/stderr" &&
   python3 - "$tmp/quat2.json" <<'PY'
import json, math, sys
q = json.load(open(sys.argv[1]))["bodies"][1]["orientation"]
assert abs(q[0] - math.sqrt(0.5)) < 1e-15 and abs(q[3] - math.sqrt(0.5)) < 1e-15, q
PY
then
  "$bin" run "$tmp/quat2.json" --steps 2 --out "$tmp/quat-out" >/dev/null 2>"$tmp/stderr" &&
    pass "quaternion [1e200, 0, 0, 1e200] is a 90-degree turn about z, and its export runs" ||
    fail "exported scene of a huge quaternion does not run: $(cat "$tmp/stderr")"
else
  fail "huge quaternion: $(cat "$tmp/stderr")"
fi

# profile --from: an iters.csv naming a pair steps.csv lacks (read past the cost table, and the
# summary invented rows), and a short row (an uninitialised column, a segfault)
mkdir -p "$tmp/sv"
printf 'problem,solver,status\np1,pgs,returned\n' >"$tmp/sv/steps.csv"
printf 'problem,solver,iter,time,error,merit\np1,pgs,0,0.1,1,1\np2,nsn,0,0.1,0,0\n' >"$tmp/sv/iters.csv"
expect_fail "profile --from: a problem steps.csv lacks" 1 "row 3: problem 'p2' does not appear in steps.csv" "$out" -- profile --from "$tmp/sv" --out "$out"
printf 'problem,solver,iter,time,error,merit\np1,pgs,0,0.1,1,1\np1\n' >"$tmp/sv/iters.csv"
expect_fail "profile --from: a short row" 1 "row 3: 1 fields, expected at least 6" "$out" -- profile --from "$tmp/sv" --out "$out"
printf 'problem,solver,iter,time,error,merit\np1,pgs,0,0.1,1,oops\n' >"$tmp/sv/iters.csv"
expect_fail "profile --from: a merit that is no number" 1 "must be numbers" "$out" -- profile --from "$tmp/sv" --out "$out"

# bodies that overlap at t = 0: a warning naming both and the depth; an error where the scene
# declares "start_separated": true (heavy_stack's boxes have half-sizes 0.25 m: box2 at 0.7 m
# sits 0.05 m into box1)
python3 - "$tmp/stack.json" "$tmp/ov.json" "$tmp/ov_strict.json" "$tmp/sep.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["bodies"][2]["position"][2] = 0.7
json.dump(s, open(sys.argv[2], "w"))
s["start_separated"] = True
json.dump(s, open(sys.argv[3], "w"))
s["bodies"][2]["position"][2] = 0.75
json.dump(s, open(sys.argv[4], "w"))
PY
"$bin" run "$tmp/ov.json" --steps 1 --out "$tmp/ov-out" >/dev/null 2>"$tmp/stderr"
rc=$?
[[ $rc -eq 0 ]] && grep -q "warning: .*bodies 'box1' and 'box2' overlap by 0.05 m at t = 0" "$tmp/stderr" &&
  pass "overlap at t = 0: a warning with both bodies and the depth" ||
  fail "overlap warning: exit $rc, stderr: $(cat "$tmp/stderr")"
expect_fail "start_separated with an overlap" 1 "start_separated: bodies 'box1' and 'box2' overlap by 0.05 m" "$out" -- run "$tmp/ov_strict.json" --out "$out"
if "$bin" run "$tmp/sep.json" --steps 1 --out "$tmp/sep-out" >/dev/null 2>"$tmp/stderr" &&
   ! grep -q warning "$tmp/stderr" &&
   "$bin" export "$tmp/sep.json" --scene-json "$tmp/sep2.json" >/dev/null 2>>"$tmp/stderr" &&
   grep -q '"start_separated":[[:space:]]*true' "$tmp/sep2.json"; then
  pass "touching boxes with start_separated run without a warning, and the key survives export"
else
  fail "start_separated on touching boxes: $(cat "$tmp/stderr")"
fi

finish

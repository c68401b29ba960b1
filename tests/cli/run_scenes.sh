# SPDX-License-Identifier: Apache-2.0
# `frictionlab run`: every rigid scene runs a few steps with PGS and writes steps.csv,
# iters.csv, observables.csv and manifest.json with its observables; a scene written as a scene
# file runs back to the same observables; export writes FCLIB files; bad input fails cleanly.
source "$(dirname "$0")/common.bash"

scenes="ball_slope heavy_stack arch_parabolic arch_masonry pendulum_mass_ratio
        pendulum_stiffness_ratio chain cylinder_stack capsule_lean table_pile granular"
for s in $scenes; do
  out=$tmp/run-$s
  extra=()
  [[ $s == granular ]] && extra=(--set n=200)
  if ! "$bin" run "$s" --solver pgs --steps 3 --out "$out" "${extra[@]}" >"$tmp/stdout" 2>"$tmp/stderr"; then
    fail "run $s: exit status $?; $(head -c 400 "$tmp/stderr")"
    continue
  fi
  for f in steps.csv iters.csv observables.csv manifest.json; do
    [[ -s "$out/$f" ]] || fail "run $s: $f missing or empty"
  done
  # header + one row per step, with the common observables and the scene's group
  rows=$(($(wc -l <"$out/observables.csv") - 1))
  [[ $rows -eq 3 ]] || fail "run $s: observables.csv has $rows rows, expected 3"
  head -n 1 "$out/observables.csv" | grep -q ',pen_max,' || fail "run $s: no pen_max column"
  head -n 1 "$out/steps.csv" | grep -q '^step,solver,pairs,nc,nh,.*,natmap,.*,flags$' || fail "run $s: steps.csv header"
  case $s in
    heavy_stack|cylinder_stack) want=stack_pen_1 ;;
    arch_*) want=arch_disp_max ;;
    ball_slope) want=slope_ux ;;
    pendulum_*|chain) want=chain_stretch ;;
    *) want=energy ;;
  esac
  head -n 1 "$out/observables.csv" | grep -q "$want" || fail "run $s: no $want column"
  grep -q '"final_observables"' "$out/manifest.json" || fail "run $s: manifest has no final observables"
  pass "run $s"
done

# a canonical scene as a scene file runs to the same observables (bit for bit for boxes)
"$bin" export heavy_stack --scene-json "$tmp/stack.json" --set n=3 >/dev/null 2>"$tmp/stderr" ||
  fail "export --scene-json: $(cat "$tmp/stderr")"
"$bin" run heavy_stack --set n=3 --steps 40 --out "$tmp/a" >/dev/null 2>&1 || fail "run heavy_stack n=3"
"$bin" run "$tmp/stack.json" --steps 40 --out "$tmp/b" >/dev/null 2>"$tmp/stderr" ||
  fail "run stack.json: $(cat "$tmp/stderr")"
if cmp -s "$tmp/a/observables.csv" "$tmp/b/observables.csv"; then
  pass "scene file runs back to the same observables"
else
  fail "scene file observables differ: $(diff "$tmp/a/observables.csv" "$tmp/b/observables.csv" | head -n 4)"
fi

# export --steps N --scene-json writes the state after N steps: running 20 steps from it
# continues the 40-step run exactly (PGS without warm start depends on the state alone)
"$bin" export heavy_stack --set n=3 --steps 20 --scene-json "$tmp/s20.json" >/dev/null 2>"$tmp/stderr" ||
  fail "export --steps 20 --scene-json: $(cat "$tmp/stderr")"
"$bin" run "$tmp/s20.json" --steps 20 --out "$tmp/c" >/dev/null 2>&1 || fail "run s20.json"
python3 - "$tmp/a/steps.csv" "$tmp/c/steps.csv" <<'PY' && pass "the exported state continues the run" || fail "export --steps: the continuation differs"
import csv, sys
a = list(csv.DictReader(open(sys.argv[1])))
c = list(csv.DictReader(open(sys.argv[2])))
assert len(c) == 20 and all(a[20 + k]["pen_max"] == c[k]["pen_max"] for k in range(20))
assert a[20]["pen_max"] != a[0]["pen_max"]
PY
expect_fail "export --steps A:B with --scene-json" 2 "expected one step count" "" -- \
  export heavy_stack --steps 2:3 --scene-json "$tmp/x.json"

# outcomes stated plainly: a collapsing PGS stack, SAP's overlap beyond 1 % of the smallest
# box and primal descent's energy gain on the table pile are named, per run and per step
"$bin" run heavy_stack --solver pgs,sap,primal-descent --steps 100 --out "$tmp/flags" >"$tmp/o" 2>&1 ||
  fail "run heavy_stack 100 steps: $(cat "$tmp/o")"
grep -Eq '^pgs .*failed [0-9]+ of 100 steps.*collapse: stack_collapsed 1 > 0.5' "$tmp/o" &&
  pass "summary names PGS's failed steps and the collapse" || fail "PGS summary: $(cat "$tmp/o")"
grep -Eq '^sap .*penetration: pen_max 0.1[0-9]* > 0.00866' "$tmp/o" &&
  pass "summary names SAP's penetration" || fail "SAP summary: $(cat "$tmp/o")"
grep -Eq '^primal-descent .* ok$' "$tmp/o" && pass "a run without flags says ok" || fail "primal-descent: $(cat "$tmp/o")"
python3 - "$tmp/flags/steps.csv" <<'PY' && pass "steps.csv flags each step" || fail "steps.csv flags"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
pgs = [r for r in rows if r["solver"] == "pgs"]
assert any("collapse" in r["flags"] for r in pgs) and any("failed" in r["flags"] for r in pgs)
assert all(r["flags"] == "" for r in rows if r["solver"] == "primal-descent")
PY
"$bin" run table_pile --solver primal-descent --steps 100 --out "$tmp/energy" >"$tmp/o" 2>&1
grep -Eq '^primal-descent .*energy \+[0-9.e+]+ J' "$tmp/o" && pass "energy gain named" ||
  fail "energy gain: $(cat "$tmp/o")"
# a scene file's own limit (a slip limit on one box's drift), and one naming no observable
python3 - "$tmp/stack.json" "$tmp/limits.json" "$tmp/badlimit.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["limits"] = [{"observable": "drift_box1", "max": 1e-4, "label": "slip"}]
json.dump(d, open(sys.argv[2], "w"))
d["limits"] = [{"observable": "no_such_obs", "max": 1, "label": "slip"}]
json.dump(d, open(sys.argv[3], "w"))
PY
"$bin" run "$tmp/limits.json" --solver pgs --steps 40 --out "$tmp/lim" >"$tmp/o" 2>&1
grep -q "slip: drift_box1" "$tmp/o" && pass "a declared limit is flagged" || fail "declared limit: $(cat "$tmp/o")"
"$bin" export "$tmp/limits.json" --scene-json "$tmp/limits2.json" >/dev/null 2>&1 &&
  grep -Pq '"label":\s*"slip"' "$tmp/limits2.json" && pass "limits round-trip" || fail "limits round-trip"
expect_fail "limit naming no observable" 1 "no_such_obs" "$tmp/bl" -- run "$tmp/badlimit.json" --out "$tmp/bl"

# two solvers: one row per step and solver
"$bin" run ball_slope --solver pgs,jacobi --steps 5 --set max_iter=30 --out "$tmp/two" >/dev/null 2>&1 ||
  fail "run with two solvers"
n=$(grep -c ',jacobi,' "$tmp/two/steps.csv")
[[ $n -eq 5 ]] && pass "two solvers: 5 jacobi rows" || fail "two solvers: $n jacobi rows, expected 5"

# export: FCLIB files of steps 2..4
if "$bin" export heavy_stack --steps 2:4 --out "$tmp/fclib" >/dev/null 2>"$tmp/stderr"; then
  n=$(ls "$tmp/fclib"/*.hdf5 2>/dev/null | wc -l)
  [[ $n -eq 3 ]] && pass "export 3 FCLIB files" || fail "export wrote $n files, expected 3"
  if "$bin" solve "$tmp/fclib/heavy_stack-step3.hdf5" --solver pgs --out "$tmp/solved" >/dev/null 2>&1; then
    pass "an exported step solves"
  else
    fail "solve of an exported step"
  fi
else
  fail "export: $(head -c 400 "$tmp/stderr")"
fi

# bad input
out=$tmp/bad
expect_fail "unknown scene" 2 "no_such_scene" "$out" -- run no_such_scene --out "$out"
expect_fail "unknown scene parameter" 2 "zzz" "$out" -- run heavy_stack --set heavy_stack.zzz=1 --out "$out"
expect_fail "scene parameter out of range" 2 "mu" "$out" -- run heavy_stack --set mu=-2 --out "$out"
expect_fail "unknown solver option" 2 "no_such_option" "$out" -- run heavy_stack --set no_such_option=1 --out "$out"
expect_fail "unknown solver" 2 "nosuch" "$out" -- run heavy_stack --solver nosuch --out "$out"
expect_fail "bad --steps" 2 "--steps" "$out" -- run heavy_stack --steps many --out "$out"
printf '{"dt": 0.01, "bodies": [{"shape": {"type": "box", "size": [1, 2]}, "mass": 1}]}' >"$tmp/bad.json"
expect_fail "bad scene file" 1 "bodies[0].shape.size" "$out" -- run "$tmp/bad.json" --out "$out"
expect_fail "missing scene file" 1 "$tmp/none.json" "$out" -- run "$tmp/none.json" --out "$out"
expect_fail "export without --steps" 2 "--steps" "$tmp/fc2" -- export heavy_stack --out "$tmp/fc2"

# one table of run parameters (fl_scene_run_params) for canonical scenes, scene files and models
"$bin" export "$tmp/stack.json" --set scene.speculative=1 --scene-json "$tmp/spec.json" >/dev/null 2>"$tmp/stderr" &&
  grep -q '"speculative":[[:space:]]*1,' "$tmp/spec.json" &&
  pass "a scene file takes scene.speculative=1" || fail "scene.speculative on a file: $(cat "$tmp/stderr")"
"$bin" run heavy_stack --set scene.dt=1e-9 --steps 1 --out "$tmp/dt9" >/dev/null 2>"$tmp/stderr" &&
  pass "a canonical scene takes a scene file's dt range (1e-9)" || fail "dt=1e-9: $(cat "$tmp/stderr")"
expect_fail "scene file dt out of range" 2 "$tmp/stack.json: option dt=20 is out of range: expected a real in [1e-12, 10]" \
  "$out" -- run "$tmp/stack.json" --set scene.dt=20 --out "$out"
expect_fail "scene file speculative out of range" 2 "speculative=2 is out of range: expected a real in [0, 1]" \
  "$out" -- run "$tmp/stack.json" --set scene.speculative=2 --out "$out"
expect_fail "canonical dt out of range" 2 "heavy_stack: option dt=20 is out of range: expected a real in [1e-12, 10]" \
  "$out" -- run heavy_stack --set scene.dt=20 --out "$out"
expect_fail "scene file unknown key" 2 "$tmp/stack.json: --set scene.n=3: expected dt" \
  "$out" -- run "$tmp/stack.json" --set scene.n=3 --out "$out"
finish

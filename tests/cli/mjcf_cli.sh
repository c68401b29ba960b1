# SPDX-License-Identifier: Apache-2.0
# MJCF models in the command line (docs/mjcf.md): `run model.xml` builds the world with
# fl_world_from_mjcf; tests/data/boxes_spheres.xml runs with sap, pgs and MuJoCo's Newton with
# the first-step contact count tests/test_mjcf.c expects (10); scene.dt applies; an element
# FrictionLab cannot represent is refused by name before any folder is written; `export`
# writes the model's steps as FCLIB files and as a scene file that runs as the model does.
# Without MuJoCo in the build the command says MJCF needs it, and the test skips (77).
source "$(dirname "$0")/common.bash"

src=${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
model=$src/tests/data/boxes_spheres.xml

"$bin" run "$model" --solver sap,pgs --steps 3 --record 0 --out "$tmp/run" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
if grep -q "needs MuJoCo" "$tmp/stderr"; then
  [[ $rc -ne 0 && ! -e "$tmp/run" ]] || fail "without MuJoCo: rc $rc and no folder expected"
  echo "skipped: $(head -1 "$tmp/stderr")"
  ((nfail == 0)) && exit 77
  finish
fi
[[ $rc -eq 0 ]] || { cat "$tmp/stderr"; fail "run $model (rc $rc)"; finish; }
# contacts of steps.csv by step and solver
contacts() { # DIR SOLVER STEP
  awk -F, -v s="$2" -v k="$3" 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == "contacts") c = i; next}
    $1 == k && $2 == s {print $c}' "$1/steps.csv"
}
for s in sap pgs; do
  [[ "$(contacts "$tmp/run" $s 0)" == 10 ]] && pass "run model.xml with $s: 10 contacts at the first step" ||
    fail "$s: $(contacts "$tmp/run" $s 0) contacts at step 0 (tests/test_mjcf.c: 10)"
done
grep -qF '"problem":	"'"$model"'"' "$tmp/run/manifest.json" || grep -qF "$model" "$tmp/run/manifest.json" ||
  fail "manifest.json does not name the model"
"$bin" run "$model" --solver mujoco-newton --steps 1 --record 0 --out "$tmp/mj" >/dev/null 2>"$tmp/stderr" &&
  [[ "$(contacts "$tmp/mj" mujoco-newton 0)" == 10 ]] &&
  pass "and with MuJoCo's Newton (the mujoco-newton peer): 10 contacts" ||
  fail "mujoco-newton: $(contacts "$tmp/mj" mujoco-newton 0) contacts; $(head -c 300 "$tmp/stderr")"

# the model's settings as a scene file's: scene.dt
"$bin" run "$model" --solver pgs --steps 2 --set scene.dt=0.001 --record 0 --out "$tmp/dt" >/dev/null 2>&1 &&
  awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == "t") c = i; next} $1 == 1 {t = $c} END {exit !(t > 0.00199 && t < 0.00201)}' "$tmp/dt/steps.csv" &&
  pass "--set scene.dt=0.001 applies to the model (t = 0.002 after 2 steps)" || fail "scene.dt on a model"
# the same table and ranges as a scene file (fl_scene_run_params)
"$bin" run "$model" --solver pgs --steps 1 --set scene.margin=0 --set scene.speculative=1 --record 0 \
  --out "$tmp/m0" >/dev/null 2>"$tmp/stderr" && pass "a model takes scene.margin=0 and scene.speculative=1" ||
  fail "margin=0, speculative=1 on a model: $(head -c 300 "$tmp/stderr")"
expect_fail "a model's dt out of range" 2 "$model: option dt=20 is out of range: expected a real in [1e-12, 10]" \
  "$tmp/o4" -- run "$model" --solver pgs --steps 1 --set scene.dt=20 --out "$tmp/o4"

# refusals: by element, nothing written
cat >"$tmp/arm.xml" <<'XML'
<mujoco><worldbody><geom type="plane" size="1 1 0.1"/>
<body name="arm" pos="0 0 1"><joint name="elbow" type="hinge"/><geom size="0.1"/></body>
</worldbody></mujoco>
XML
expect_fail "a hinge joint" 1 "joint 'elbow' (hinge) of body 'arm'" "$tmp/o1" -- \
  run "$tmp/arm.xml" --solver pgs --steps 1 --out "$tmp/o1"
printf '<mujoco><worldbody><geom type="sphere"</worldbody>' >"$tmp/broken.xml"
expect_fail "malformed XML" 1 "MuJoCo's parser refused" "$tmp/o2" -- \
  run "$tmp/broken.xml" --solver pgs --steps 1 --out "$tmp/o2"
expect_fail "a missing model" 1 "$tmp/none.xml" "$tmp/o3" -- run "$tmp/none.xml" --out "$tmp/o3"

# export: the model's first step as FCLIB, solved by solve; the model as a scene file
"$bin" export "$model" --steps 0 --solver sap --out "$tmp/ex" >/dev/null 2>"$tmp/stderr" &&
  "$bin" solve "$tmp/ex/boxes_spheres-step0.hdf5" --solver sap --out "$tmp/exs" >/dev/null 2>&1 &&
  awk -F, '$2 == "sap" && $4 == 10 && $7 == "returned" {ok = 1} END {exit !ok}' "$tmp/exs/steps.csv" &&
  pass "export model.xml --steps 0: an FCLIB file of 10 contacts that solve solves" ||
  fail "export: $(head -c 300 "$tmp/stderr") $(cut -d, -f1-9 "$tmp/exs/steps.csv" 2>/dev/null)"
"$bin" export "$model" --scene-json "$tmp/model.json" >/dev/null 2>&1 &&
  "$bin" run "$tmp/model.json" --solver sap,pgs --steps 3 --record 0 --out "$tmp/json" >/dev/null 2>&1 &&
  cmp -s <(contacts "$tmp/run" pgs 2) <(contacts "$tmp/json" pgs 2) &&
  [[ "$(contacts "$tmp/json" sap 0)" == 10 ]] &&
  pass "export --scene-json: the scene file runs with the model's contacts" ||
  fail "scene file from the model: $(contacts "$tmp/json" sap 0) contacts"
finish

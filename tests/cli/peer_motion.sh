# SPDX-License-Identifier: Apache-2.0
# Every stepper judged by the same motion checks (issue 50, item 1): lift-off is computed from
# the poses and velocities a stepper leaves, so a MuJoCo box that hops while sliding is flagged
# as FrictionLab's solvers would be, and NSN on the same box is not. Skips (77) without MuJoCo.
source "$(dirname "$0")/common.bash"

"$bin" list solvers | grep '^peer simulators' | grep -q "mujoco-newton" ||
  { echo "SKIP: $("$bin" list solvers | grep 'mujoco-newton.*unavailable')"; exit 77; }

# verify's sliding box: 0.2 x 0.2 x 0.1 m, 1 kg, 2 m/s, mu 0.5, dt 0.01
cat >"$tmp/slide.json" <<'EOF'
{"format": "frictionlab-scene", "name": "slide", "dt": 0.01, "duration": 1.5, "gravity": [0, 0, -9.81],
 "materials": [{"name": "m", "mu": 0.5}],
 "bodies": [{"name": "ground", "kind": "fixed", "shape": {"type": "plane"}, "material": "m"},
  {"name": "box", "material": "m", "shape": {"type": "box", "size": [0.1, 0.1, 0.05]}, "mass": 1,
   "position": [0, 0, 0.05], "velocity": [2, 0, 0]}]}
EOF
"$bin" run "$tmp/slide.json" --solver mujoco-newton,nsn --out "$tmp/slide" --record 0 >"$tmp/stdout" 2>"$tmp/stderr" ||
  fail "run slide.json: $(head -c 400 "$tmp/stderr")"
if grep -E '^mujoco-newton ' "$tmp/stdout" | grep -q 'liftoff: liftoff_ratio' && grep -E '^nsn ' "$tmp/stdout" | grep -qE ' ok$'; then
  pass "sliding box: MuJoCo's hop flagged for lift-off, NSN ok"
else
  fail "sliding box summary: $(cat "$tmp/stdout")"
fi
python3 - "$tmp/slide/steps.csv" <<'PY' && pass "sliding box: MuJoCo's liftoff_ratio above 0.1 where its box rises, NSN's 0" || fail "sliding box: liftoff columns"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
mj = [r for r in rows if r["solver"] == "mujoco-newton"]
ns = [r for r in rows if r["solver"] == "nsn"]
hop = [r for r in mj if "liftoff" in r["flags"]]
assert hop and max(float(r["liftoff_ratio"]) for r in mj) > 0.1
assert max(float(r["box.z"]) for r in mj) > 0.05 + 1e-3     # the box does leave the plane
assert max(float(r["liftoff_ratio"]) for r in ns) < 1e-6
assert max(abs(float(r["box.z"]) - 0.05) for r in ns) < 1e-9
PY
finish

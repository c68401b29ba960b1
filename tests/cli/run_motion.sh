# SPDX-License-Identifier: Apache-2.0
# Verdicts on motion in `run`: per-body pose and velocity columns (a free fall against the
# stepper's discrete closed form; a scene's pose group; granular's weight only), the lift-off
# flag (SAP's convex model lifts a sliding box, PGS does not; impacts and a ball rolling off
# an edge are not flagged), deformable contacts in pen_max (the cylinder press) and a NaN
# energy reported as such.
source "$(dirname "$0")/common.bash"

# free fall: symplectic Euler gives v_n = v0 - g n dt and z_n = z0 + n dt v0 - g dt^2 n (n+1)/2
cat >"$tmp/fall.json" <<'EOF'
{"format": "frictionlab-scene", "name": "fall", "dt": 0.01, "duration": 0.5,
 "bodies": [{"name": "ball", "shape": {"type": "sphere", "size": [0.1]}, "density": 1000,
             "position": [0.5, -0.25, 2], "velocity": [0.3, 0, 1.5],
             "angular_velocity": [0, 0, 2]}]}
EOF
if "$bin" run "$tmp/fall.json" --out "$tmp/fall" --record 0 >/dev/null 2>"$tmp/stderr"; then
  python3 - "$tmp/fall/observables.csv" <<'PY' && pass "free fall: ball.z, ball.vz, ball.x and the spin equal the discrete closed form" || fail "free fall: pose columns"
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 50, len(rows)
for c in ("ball.x", "ball.y", "ball.z", "ball.qw", "ball.qx", "ball.qy", "ball.qz",
          "ball.vx", "ball.vy", "ball.vz", "ball.wx", "ball.wy", "ball.wz", "pen_max", "drift_ball"):
    assert c in rows[0], c
g, dt, z0, v0 = 9.81, 0.01, 2.0, 1.5
for r in rows:
    n = int(r["step"]) + 1
    z = z0 + n * dt * v0 - g * dt * dt * n * (n + 1) / 2
    assert abs(float(r["ball.z"]) - z) <= 1e-12 * 4, (n, r["ball.z"], z)
    assert abs(float(r["ball.vz"]) - (v0 - g * n * dt)) <= 1e-12 * 5, (n, r["ball.vz"])
    assert abs(float(r["ball.x"]) - (0.5 + 0.3 * n * dt)) <= 1e-12, (n, r["ball.x"])
    assert float(r["ball.y"]) == -0.25 and float(r["ball.wz"]) == 2.0
    # a spin of 2 rad/s about z for t = n dt: q = (cos t, 0, 0, sin t) to the integrator's order
    t = n * dt
    assert abs(float(r["ball.qw"]) - math.cos(t)) < 1e-4 and abs(float(r["ball.qz"]) - math.sin(t)) < 1e-4
PY
else
  fail "run fall.json: $(head -c 400 "$tmp/stderr")"
fi

# a pose group names the bodies that get columns; the others get none
python3 - "$tmp/fall.json" "$tmp/two.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
b = dict(s["bodies"][0]); b["name"] = "other"; b["position"] = [3, 0, 2]
s["bodies"].append(b)
s["observe"] = [{"kind": "pose", "bodies": ["other"]}]
json.dump(s, open(sys.argv[2], "w"))
PY
"$bin" run "$tmp/two.json" --steps 2 --out "$tmp/two" --record 0 >/dev/null 2>"$tmp/stderr" || fail "run two.json: $(head -c 400 "$tmp/stderr")"
h=$(head -n 1 "$tmp/two/observables.csv")
if [[ $h == *",other.x,"* && $h == *",other.wz"* && $h != *"ball.x"* ]]; then
  pass "a pose group: columns for the bodies it names only"
else
  fail "pose group: header $h"
fi
"$bin" run granular --set n=40 --steps 1 --out "$tmp/gran" --record 0 >/dev/null 2>&1 || fail "run granular"
h=$(head -n 1 "$tmp/gran/observables.csv")
[[ $h == *",weight.z,"* && $h != *"grain"*".x"* ]] && pass "granular: the weight's pose only" || fail "granular header: $h"

# lift-off: a 0.2 m cube sliding at 2 m/s on a plane, mu 0.5, rigid contact
cat >"$tmp/slide.json" <<'EOF'
{"format": "frictionlab-scene", "name": "slide", "dt": 0.001, "duration": 0.3,
 "materials": [{"name": "m", "mu": 0.5}],
 "bodies": [
  {"name": "ground", "kind": "fixed", "material": "m", "shape": {"type": "plane"}},
  {"name": "box", "material": "m", "shape": {"type": "box", "size": [0.1, 0.1, 0.1]},
   "density": 1000, "position": [0, 0, 0.1], "velocity": [2, 0, 0]}]}
EOF
"$bin" run "$tmp/slide.json" --solver pgs,sap --set sap.model=sap --out "$tmp/slide" --record 0 >"$tmp/stdout" 2>"$tmp/stderr" ||
  fail "run slide.json: $(head -c 400 "$tmp/stderr")"
if grep -E '^sap ' "$tmp/stdout" | grep -q 'liftoff: liftoff_ratio' && grep -E '^pgs ' "$tmp/stdout" | grep -qE ' ok$'; then
  pass "sliding box: SAP's convex model flagged for lift-off, PGS ok"
else
  fail "sliding box summary: $(cat "$tmp/stdout")"
fi
python3 - "$tmp/slide/steps.csv" <<'PY' && pass "sliding box: SAP lifts at mu |u_t| / |u_t| = 0.5, PGS below 1e-6; flags column" || fail "sliding box: liftoff columns"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sap = [r for r in rows if r["solver"] == "sap"]
pgs = [r for r in rows if r["solver"] == "pgs"]
rs = max(float(r["liftoff_ratio"]) for r in sap)
assert 0.45 < rs <= 0.5 + 1e-6, rs          # the convex model's u_n = mu |u_t|
assert any("liftoff" in r["flags"] for r in sap)
assert max(float(r["liftoff_ratio"]) for r in pgs) < 1e-6
assert not any("liftoff" in r["flags"] for r in pgs)
# PGS: the box stays on the plane and slides by the closed form v = v0 - mu g t
last = pgs[-1]
assert abs(float(last["box.z"]) - 0.1) < 1e-6 and abs(float(last["box.vx"]) - (2 - 0.5 * 9.81 * 0.3)) < 1e-6
assert max(float(r["box.z"]) for r in sap) > 0.11    # SAP's box is in the air by more than 1 cm
PY

# no lift-off at impacts or rolling off an edge: a ball rolling off a table onto the ground, a
# ball landing while sliding, a spinning cube landing on a corner
cat >"$tmp/edge.json" <<'EOF'
{"format": "frictionlab-scene", "name": "edge", "dt": 0.001, "duration": 1.0,
 "materials": [{"name": "m", "mu": 0.5}],
 "bodies": [
  {"name": "ground", "kind": "fixed", "material": "m", "shape": {"type": "plane"}, "position": [0, 0, -0.5]},
  {"name": "table", "kind": "fixed", "material": "m", "shape": {"type": "box", "size": [0.5, 0.5, 0.05]},
   "position": [-0.5, 0, -0.05]},
  {"name": "ball", "material": "m", "shape": {"type": "sphere", "size": [0.1]}, "density": 1000,
   "position": [-0.4, 0, 0.1], "velocity": [1, 0, 0], "angular_velocity": [0, 10, 0]},
  {"name": "drop", "material": "m", "shape": {"type": "sphere", "size": [0.1]}, "density": 1000,
   "position": [2, 0, -0.1], "velocity": [1, 0, 0]},
  {"name": "cube", "material": "m", "shape": {"type": "box", "size": [0.1, 0.1, 0.1]}, "density": 1000,
   "position": [4, 0, 0.0], "velocity": [2, 0, -1], "angular_velocity": [1, 2, 3]}]}
EOF
"$bin" run "$tmp/edge.json" --solver pgs,nsn --out "$tmp/edge" --record 0 >"$tmp/stdout" 2>"$tmp/stderr" ||
  fail "run edge.json: $(head -c 400 "$tmp/stderr")"
python3 - "$tmp/edge/steps.csv" <<'PY' && pass "impacts and rolling off an edge: no lift-off (PGS, NSN)" || fail "edge: lift-off flagged"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert not any("liftoff" in r["flags"] for r in rows)
assert max(float(r["liftoff_ratio"]) for r in rows) < 1e-4
assert float(rows[-1]["ball.z"]) < -0.39       # the ball did leave the table
PY

# deformable contacts count in pen_max and its limit (1 % of the cylinder's 0.567 m diagonal)
if "$bin" run cylinder_press --set mesh=1 --set ramp=1 --set duration=1 --solver sap --out "$tmp/press" --record 0 >"$tmp/stdout" 2>"$tmp/stderr"; then
  grep -E '^sap ' "$tmp/stdout" | grep -q 'penetration: pen_max 0.01.* > 0.00567' &&
    pass "cylinder press: penetration flagged" || fail "cylinder press summary: $(cat "$tmp/stdout")"
  python3 - "$tmp/press/steps.csv" <<'PY' && pass "cylinder press: pen_max is the contacts' overlap (steps.csv penetration)" || fail "cylinder press: pen_max"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
pen = max(float(r["pen_max"]) for r in rows)
lin = max(float(r["penetration"]) for r in rows)
assert pen > 0.0057 and abs(pen - lin) < 0.02 * lin, (pen, lin)
assert "penetration" in rows[-1]["flags"]
# press_overlap adds the deepest overlap at the plate and at the ground: at least the deepest
# of all (steps.csv penetration), at most twice it
for r in rows[1:]:
    ov, p = float(r["press_overlap"]), float(r["penetration"])
    assert p - 1e-12 <= ov <= 2 * p + 1e-12, (r["step"], ov, p)
PY
else
  fail "run cylinder_press: $(head -c 400 "$tmp/stderr")"
fi

# a NaN energy is reported as such (gravity so large that the energy overflows in one step)
cat >"$tmp/nan.json" <<'EOF'
{"format": "frictionlab-scene", "name": "nan", "dt": 0.001, "duration": 0.005,
 "gravity": [0, 0, -1e300],
 "bodies": [{"name": "ball", "shape": {"type": "sphere", "size": [0.1]}, "density": 1000,
             "position": [0, 0, 1]}]}
EOF
"$bin" run "$tmp/nan.json" --out "$tmp/nan" --record 0 >"$tmp/stdout" 2>"$tmp/stderr"
if grep -E '^pgs ' "$tmp/stdout" | grep -q 'energy NaN from step 0 (5 steps)' && ! grep -qi 'nan J' "$tmp/stdout" &&
   [[ $(grep -c ',energy$' "$tmp/nan/steps.csv") -eq 5 ]]; then
  pass "NaN energy: 'energy NaN from step 0' and flagged in steps.csv"
else
  fail "NaN energy: $(cat "$tmp/stdout")"
fi

finish

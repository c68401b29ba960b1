# SPDX-License-Identifier: Apache-2.0
# A MuJoCo peer's contacts in the recording, like FrictionLab's own: heavy_stack with SAP and
# mujoco-newton for 30 steps. At every recorded MuJoCo step k: as many contacts as steps.csv's
# `contacts` (row k - 1); unit normals; the ground pushes box1 up; the box1-ground contacts'
# deepest gap equals FrictionLab's own measure of that interface (stack_pen_1 of row k - 2:
# MuJoCo finds contacts at the step's start). The viewer (headless Chromium, when there)
# shows them: a contact picked in the MuJoCo pane reads the recorded numbers.
# Skips (77) without MuJoCo in this build.
source "$(dirname "$0")/common.bash"
here=$(cd "$(dirname "$0")" && pwd)

"$bin" list solvers | grep -q "mujoco-newton" || { echo "SKIP: this build has no MuJoCo"; exit 77; }
out=$tmp/stack
"$bin" run heavy_stack --solver sap,mujoco-newton --set sap.beta=0.001 --steps 30 --out "$out" >"$tmp/stdout" 2>"$tmp/stderr" ||
  grep -q "mujoco-newton" "$tmp/stdout" || { echo "FAIL: run: $(head -c 400 "$tmp/stderr")"; exit 1; }
if python3 - "$out" "$here" <<'PY'
import csv, math, sys
sys.path.insert(0, sys.argv[2])
import flrec
out = sys.argv[1]
rows = {int(r["step"]): r for r in csv.DictReader(open(f"{out}/steps.csv")) if r["solver"] == "mujoco-newton"}
h, frames = flrec.read(f"{out}/recording.flrec")
mj = [f for f in frames if f["solver"] == h["solvers"].index("mujoco-newton")]
assert len(mj) == 31, len(mj)
checked = 0
for f in mj[2:]:
    k, cs = f["step"], f["contacts"]
    assert len(cs) == int(rows[k - 1]["contacts"]), (k, len(cs), rows[k - 1]["contacts"])
    assert cs, f"step {k}: no contacts"
    for c in cs:
        assert abs(math.hypot(*c["normal"]) - 1) < 1e-6, c
        assert all(-1 <= s < len(h["bodies"]) for s in c["sides"]), c
    ground = [c for c in cs if c["sides"] == [0, 1]]
    assert ground and all(c["impulse"][2] > 0 for c in ground), (k, ground)
    want = float(rows[k - 2]["stack_pen_1"])
    got = -min(c["phi"] for c in ground)
    assert abs(got - want) <= 1e-6 * (1 + want) + 1e-9, (k, got, want)
    checked += 1
print(f"{checked} MuJoCo frames: contacts as steps.csv counts them; ground gap = stack_pen_1 "
      f"(last {got:.4g} m)")
PY
then pass "MuJoCo's contacts are recorded: counts, normals, directions, gaps"
else fail "MuJoCo's recorded contacts"
fi

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -n "$browser" && -s "$out/viewer.html" ]]; then
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu-sandbox --no-first-run \
    --use-angle=swiftshader --enable-unsafe-swiftshader --user-data-dir="$tmp/profile" \
    --virtual-time-budget=1000 --window-size=1400,800 --dump-dom "file://$out/viewer.html#step=30&pick=c:1:0" \
    2>/dev/null >"$tmp/dom.html"
  if python3 - "$tmp/dom.html" "$out" "$here" <<'PY'
import html, json, re, sys
sys.path.insert(0, sys.argv[3])
import flrec
st = json.loads(html.unescape(re.search(r'<pre id="fl-status">(.*?)</pre>', open(sys.argv[1]).read(), re.S).group(1)))
h, frames = flrec.read(f"{sys.argv[2]}/recording.flrec")
f = next(f for f in frames if f["solver"] == 1 and f["step"] == 30)
pk = st["picked"]
assert pk and pk["solver"] == "mujoco-newton" and pk["kind"] == "contact", st
c = f["contacts"][pk["index"]]
assert all(pk[k] == c[k] for k in ("point", "normal", "impulse", "phi", "sides")), (pk, c)
PY
  then pass "the MuJoCo pane draws its contacts: a picked one reads the recording"
  else fail "MuJoCo pane pick"
  fi
fi
finish

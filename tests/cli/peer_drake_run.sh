# SPDX-License-Identifier: Apache-2.0
# Drake beside FrictionLab in one run (issue 55): `run heavy_stack --solver sap,drake-sap
# --steps 120` writes both runs (120 rows each in steps.csv, the scene Drake was given, the
# manifest naming Drake's version, SAP's Newton iterations read from Drake), the recording holds
# both solvers' 121 frames with Drake's poses as steps.csv has them, `view` gives the page, and
# the viewer (headless Chromium, when there) draws both panes side by side, every body at its
# recorded pose of the last step. A bad Drake option fails before any folder is written.
# Skips (77) without the project's Python environment (scripts/setup makes it).
source "$(dirname "$0")/common.bash"
here=$(cd "$(dirname "$0")" && pwd)

# the peers this build can run are on the line "peer simulators (...): a, b, ..."
"$bin" list solvers | grep '^peer simulators' | grep -q "drake-sap" ||
  { echo "SKIP: $("$bin" list solvers | grep 'drake-sap.*unavailable')"; exit 77; }
out=$tmp/stack
if ! "$bin" run heavy_stack --solver sap,drake-sap --steps 120 --out "$out" >"$tmp/stdout" 2>"$tmp/stderr"; then
  # the run's checks (penetration, collapse) may flag the stack; the run itself must be written
  [[ -s "$out/steps.csv" ]] || { fail "run: $(head -c 400 "$tmp/stderr")"; finish; }
fi
if python3 - "$out" "$here" <<'PY'
import csv, json, sys
sys.path.insert(0, sys.argv[2])
import flrec
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/steps.csv")))
for s in ("sap", "drake-sap"):
    n = sum(1 for r in rows if r["solver"] == s)
    assert n == 120, (s, n)
dk = [r for r in rows if r["solver"] == "drake-sap"]
assert all(float(r["solve_s"]) > 0 for r in dk), "Drake's time per step missing"
assert sum(int(r["iters"]) for r in dk) > 0, "no SAP iterations read from Drake"
man = json.load(open(f"{out}/manifest.json"))
txt = json.dumps(man)
assert "Drake 1." in txt and "(PyPI" in txt, "the manifest does not name Drake's version"
sc = json.load(open(f"{out}/drake-sap.json"))
assert sc["peer"] == "drake-sap" and len(sc["bodies"]) == 6, sc.get("peer")
h, frames = flrec.read(f"{out}/recording.flrec")
assert h["solvers"] == ["sap", "drake-sap"], h["solvers"]
k = h["solvers"].index("drake-sap")
fr = {f["step"]: f for f in frames if f["solver"] == k}
assert len(fr) == 121 and sum(1 for f in frames if f["solver"] == 0) == 121
bs = len(fr[0]["pose"]) // len(h["bodies"])
names = [b["name"] for b in h["bodies"]]
for r in dk[::17]:
    step = int(r["step"]) + 1  # the row of step k is the state after it
    for j in range(1, 6):
        i = names.index(f"box{j}")
        for a, c in zip(fr[step]["pose"][bs * i:bs * i + 3], (float(r[f"box{j}.{x}"]) for x in "xyz")):
            assert abs(a - c) <= 1e-6 * (1 + abs(c)), (step, j, a, c)
print("both runs: 120 rows, 121 frames each; Drake's poses in the recording as in steps.csv")
PY
then pass "run writes sap and drake-sap side by side"
else fail "run sap,drake-sap"
fi

"$bin" view "$out" --print >"$tmp/view" 2>&1 && grep -q "$out/viewer.html" "$tmp/view" ||
  fail "view does not give the page: $(head -c 300 "$tmp/view")"

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -n "$browser" && -s "$out/viewer.html" ]]; then
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu-sandbox --no-first-run \
    --use-angle=swiftshader --enable-unsafe-swiftshader --user-data-dir="$tmp/profile" \
    --virtual-time-budget=1000 --window-size=1400,800 --dump-dom "file://$out/viewer.html#step=120&poses=1" \
    2>/dev/null >"$tmp/dom.html"
  if python3 - "$tmp/dom.html" "$out" "$here" <<'PY'
import html, json, re, sys
sys.path.insert(0, sys.argv[3])
import flrec
st = json.loads(html.unescape(re.search(r'<pre id="fl-status">(.*?)</pre>', open(sys.argv[1]).read(), re.S).group(1)))
assert st.get("ok") and st["errors"] == [], st.get("errors")
h, frames = flrec.read(f"{sys.argv[2]}/recording.flrec")
panes = {p["solver"]: p for p in st["drawn"]}
assert set(panes) == {"sap", "drake-sap"}, list(panes)
bs = len(frames[0]["pose"]) // len(h["bodies"])
for s, p in panes.items():
    assert p["step"] == 120, (s, p["step"])
    fr = next(f for f in frames if f["solver"] == h["solvers"].index(s) and f["step"] == 120)
    for d in p["bodies"]:
        pose = fr["pose"][bs * d["i"]:bs * d["i"] + 3]
        assert all(abs(a - b) <= 1e-6 * (1 + abs(b)) for a, b in zip(d["p"], pose)), (s, d, pose)
print("two panes at step 120, every body at its recorded pose")
PY
  then pass "the viewer plays sap and drake-sap side by side"
  else fail "viewer panes"
  fi
fi

expect_fail "bad Drake option" 2 "contact: expected point|hydroelastic" "$tmp/bad" -- \
  run heavy_stack --solver drake-sap --set drake.contact=soft --steps 2 --out "$tmp/bad"
finish

# SPDX-License-Identifier: Apache-2.0
# The viewer as a diagnosis tool, in headless Chromium, each page opened at a step through the
# address (#step=N):
# - heavy_stack with PGS and SAP: the timeline has a row per solver and marks PGS's first
#   failed step, the first row of steps.csv with a negative reason (its step k is the viewer's
#   step k + 1, the state after k + 1 steps); SAP has none;
# - a contact picked by a click at its arrow (#pick=c:1:0) reads the recording's own numbers
#   (point, normal, impulse, gap, sides, sliding) exactly, and a picked body its pose and a
#   velocity equal to steps.csv's;
# - elastic_cube (FEM): mesh edges drawn, coloured by von Mises stress with the range shown
#   equal to the recording's largest; the recorded fields obey the linear-elastic identity
#   von Mises = 3 G x equivalent strain at every vertex, and the median stress is near
#   F / A = 10 N / 0.01 m^2 = 1000 Pa (uniaxial squeeze);
# - cylinder_press (plane strain): viewed along its z axis by default.
# Skips (77) without Chromium or without a viewer in this build.
# ctest-label: slow
# (the time is Chromium's; the viewer and recordings are written under the sanitizers by cli.view)
source "$(dirname "$0")/common.bash"
here=$(cd "$(dirname "$0")" && pwd)

browser=$(command -v chromium || command -v chromium-browser || true)
[[ -n "$browser" ]] || { echo "SKIP: no chromium (scripts/setup --tests installs it)"; exit 77; }
out=$tmp/stack
"$bin" run heavy_stack --solver pgs,sap --set sap.beta=0.001 --steps 40 --out "$out" >"$tmp/stdout" 2>"$tmp/stderr" ||
  grep -q "failed" "$tmp/stdout" || { echo "FAIL: run: $(head -c 400 "$tmp/stderr")"; exit 1; }
[[ -s "$out/viewer.html" ]] || { echo "SKIP: this build has no viewer: $(grep -i viewer "$tmp/stdout")"; exit 77; }

flags=(--headless --no-sandbox --disable-gpu-sandbox --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --use-angle=swiftshader --enable-unsafe-swiftshader --user-data-dir="$tmp/profile"
       --virtual-time-budget=1000 --window-size=1400,800)

# dom URL: the page's DOM after it ran, into $tmp/dom.html; its status JSON into $tmp/status.json
dom() {
  timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$1" 2>"$tmp/chromium.err" >"$tmp/dom.html"
  python3 - "$tmp/dom.html" "$tmp/status.json" <<'PY'
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
m = re.search(r'<pre id="fl-status">(.*?)</pre>', dom, re.S)
open(sys.argv[2], "w").write(html.unescape(m.group(1)) if m else "{}")
PY
}

# the timeline and a picked contact
dom "$out/viewer.html#step=20&pick=c:1:0"
if python3 - "$tmp/status.json" "$tmp/dom.html" "$out" "$here" <<'PY'
import csv, json, sys
sys.path.insert(0, sys.argv[4])
import flrec
st = json.load(open(sys.argv[1]))
dom = open(sys.argv[2]).read()
out = sys.argv[3]
assert st.get("ok") and st["errors"] == [], f"page errors: {st}"
assert st["shown_step"] == 20, st["shown_step"]
assert dom.count('class="tl-row"') == 2, "expected one timeline row per solver"
rows = list(csv.DictReader(open(f"{out}/steps.csv")))
first = min(int(r["step"]) for r in rows if r["solver"] == "pgs" and int(r["reason"]) < 0)
tl = {t["solver"]: t for t in st["timeline"]}
assert tl["pgs"]["first_failed"] == first + 1, f"pgs first failed {tl['pgs']}, steps.csv row {first}"
nfail = sum(1 for r in rows if r["solver"] == "pgs" and int(r["reason"]) < 0)
assert tl["pgs"]["failed"] == nfail, (tl["pgs"], nfail)
assert tl["sap"]["first_failed"] == -1 and tl["sap"]["failed"] == 0, tl["sap"]
h, frames = flrec.read(f"{out}/recording.flrec")
fr = next(f for f in frames if f["solver"] == 1 and f["step"] == 20)
pk = st["picked"]
assert pk and pk["kind"] == "contact" and pk["solver"] == "sap" and pk["step"] == 20, pk
c = fr["contacts"][pk["index"]]
for k in ("point", "normal", "impulse", "phi", "sides", "sliding"):
    assert pk[k] == c[k], f"{k}: picked {pk[k]}, recorded {c[k]}"
print(f"pgs first failed step {first + 1} ({nfail} failed); sap contact {pk['index']}: "
      f"impulse {pk['impulse']}, phi {pk['phi']:.3g}")
PY
then pass "timeline marks PGS's first failed step; the picked contact's numbers are the recording's"
else fail "timeline or contact pick ($(tail -n 2 "$tmp/chromium.err"))"
fi

# a picked body: its pose is the recording's, its velocity steps.csv's (float32 of it)
dom "$out/viewer.html#step=20&pick=b:1:3"
if python3 - "$tmp/status.json" "$out" <<'PY'
import csv, json, sys
st = json.load(open(sys.argv[1]))
pk = st["picked"]
assert pk and pk["kind"] == "body" and pk["name"] == "box3", pk
row = next(r for r in csv.DictReader(open(f"{sys.argv[2]}/steps.csv")) if r["solver"] == "sap" and r["step"] == "19")
for k, key in ((0, "x"), (1, "y"), (2, "z")):
    assert abs(pk["position"][k] - float(row[f"box3.{key}"])) <= 1e-6 * (1 + abs(float(row[f"box3.{key}"]))), (pk, key)
    want = float(row[f"box3.v{key}"])
    assert abs(pk["velocity"][k] - want) <= 1e-6 * (1 + abs(want)), (pk["velocity"], key, want)
PY
then pass "a picked body reads its pose and velocity (those of steps.csv)"
else fail "body pick"
fi

# a deformable body: edges and a stress colour range; the recorded fields against closed forms
cube=$tmp/cube
"$bin" run elastic_cube --solver sap --steps 100 --out "$cube" >/dev/null 2>"$tmp/stderr" || fail "run elastic_cube: $(head -c 300 "$tmp/stderr")"
dom "$cube/viewer.html#step=100&edges=1&colour=stress&exag=10"
if python3 - "$tmp/status.json" "$cube" "$here" <<'PY'
import json, statistics, sys
sys.path.insert(0, sys.argv[3])
import flrec
st = json.load(open(sys.argv[1]))
assert st.get("ok") and st["errors"] == [], st
h, frames = flrec.read(f"{sys.argv[2]}/recording.flrec")
ntri = len(h["deformable"][0]["tri"]) // 3
# a closed triangulated surface has 3/2 edges per triangle
assert st["edges"] == 3 * ntri // 2, (st["edges"], ntri)
vmax = max(max(f["vm"]) for f in frames)
assert st["colour"] == "stress" and st["colour_range"][0] == 0, st
assert abs(st["colour_range"][1] - vmax) <= 1e-6 * vmax, (st["colour_range"], vmax)
E, nu = 1e5, 0.4
G3 = 3 * E / (2 * (1 + nu))
last = frames[-1]
worst = max(abs(vm / (G3 * e) - 1) for vm, e in zip(last["vm"], last["eps"]) if e > 1e-4)
assert worst < 0.03, f"von Mises / (3 G eps) off by {worst:.3f}"
med = statistics.median(last["vm"])
assert 800 <= med <= 1200, f"median von Mises {med} Pa, F/A = 1000 Pa"
print(f"{st['edges']} edges; stress range 0..{vmax:.4g} Pa; median {med:.4g} Pa; vm = 3G eps within {worst:.2%}")
PY
then pass "elastic_cube: mesh edges, stress colour range, recorded stress and strain"
else fail "elastic_cube viewer"
fi

# plane strain: seen along z
press=$tmp/press
"$bin" run cylinder_press --solver sap --steps 3 --out "$press" >/dev/null 2>"$tmp/stderr" || fail "run cylinder_press: $(head -c 300 "$tmp/stderr")"
dom "$press/viewer.html#step=3"
if python3 - "$tmp/status.json" <<'PY'
import json, math, sys
st = json.load(open(sys.argv[1]))
assert st.get("ok") and st["view_axis"] == "z", st
assert abs(st["camera"]["el"] - math.pi / 2) < 1e-9, st["camera"]
PY
then pass "cylinder_press is viewed along its axis (z)"
else fail "cylinder_press view axis"
fi
finish

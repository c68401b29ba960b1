# SPDX-License-Identifier: Apache-2.0
# The viewer draws every body where the recording has it, on each of its drawing paths: each
# body's pose read back from what three.js draws (#poses=1: a mesh's position, rotation and
# scale; an instance's matrix, decomposed; an impostor sphere's centre and radius) equals the
# recorded pose of the step shown (float32; the rotation up to its sign) and the header's scale:
# - heavy_stack (5 boxes): one mesh per body;
# - granular with 300 grains (over 256 dynamic bodies): the spheres as impostors, the cylinder
#   as an instance, the walls as meshes;
# - box_pile with 300 boxes: the boxes as instances of one mesh.
# Skips (77) without Chromium or without a viewer in this build.
# ctest-label: slow
# (the time is Chromium's; the viewer and recordings are written under the sanitizers by cli.view)
source "$(dirname "$0")/common.bash"
here=$(cd "$(dirname "$0")" && pwd)

browser=$(command -v chromium || command -v chromium-browser || true)
[[ -n "$browser" ]] || { echo "SKIP: no chromium (scripts/setup --tests installs it)"; exit 77; }
flags=(--headless --no-sandbox --disable-gpu-sandbox --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --use-angle=swiftshader --enable-unsafe-swiftshader --user-data-dir="$tmp/profile"
       --virtual-time-budget=1000 --window-size=800,600)

# check NAME DIR STEP 'EXPECTED' : the page of DIR opened at STEP; EXPECTED maps a body's shape
# and kind to how it must be drawn (mesh, instance, dot)
check() {
  local name=$1 dir=$2 step=$3 expect=$4
  [[ -s "$dir/viewer.html" ]] || { echo "SKIP: this build has no viewer"; exit 77; }
  timeout 300 "$browser" "${flags[@]}" --dump-dom "file://$dir/viewer.html#step=$step&poses=1" \
    2>"$tmp/chromium.err" >"$tmp/dom.html"
  if python3 - "$tmp/dom.html" "$dir" "$step" "$here" "$expect" <<'PY'
import html, json, math, re, sys
sys.path.insert(0, sys.argv[4])
import flrec
dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
m = re.search(r'<pre id="fl-status">(.*?)</pre>', dom, re.S)
st = json.loads(html.unescape(m.group(1))) if m else {}
assert st.get("ok") and st["errors"] == [], f"page errors: {st.get('errors')}"
h, frames = flrec.read(f"{sys.argv[2]}/recording.flrec")
step, expect = int(sys.argv[3]), json.loads(sys.argv[5])
bs = 13 if h.get("version", 1) >= 2 else 7
hows = {}
for pane in st["drawn"]:
    s = h["solvers"].index(pane["solver"])
    assert pane["step"] == step, (pane["solver"], pane["step"], step)
    fr = next(f for f in frames if f["solver"] == s and f["step"] == step)
    assert len(pane["bodies"]) == len(h["bodies"])
    for d in pane["bodies"]:
        i, b = d["i"], h["bodies"][d["i"]]
        want = expect[f"{b['kind']} {b['shape']}"]
        assert d["how"] == want, f"{b['name']} drawn as {d['how']}, expected {want}"
        hows[d["how"]] = hows.get(d["how"], 0) + 1
        pose = fr["pose"][bs * i:bs * i + 7]
        for k in range(3):
            assert abs(d["p"][k] - pose[k]) <= 1e-6 * (1 + abs(pose[k])), (b["name"], "position", d["p"], pose[:3])
        if d["q"] is not None:  # q and -q are the same rotation
            err = min(max(abs(a - c) for a, c in zip(d["q"], pose[3:7])), max(abs(a + c) for a, c in zip(d["q"], pose[3:7])))
            assert err <= 1e-5, (b["name"], "rotation", d["q"], pose[3:7])
        for k in range(3):
            assert abs(d["s"][k] - b["scale"][k]) <= 1e-6 * abs(b["scale"][k]), (b["name"], "scale", d["s"], b["scale"])
print(f"{len(st['drawn'])} pane(s) at step {step}: " + ", ".join(f"{n} {k}" for k, n in sorted(hows.items())))
PY
  then pass "$name: every body drawn at its recorded pose"
  else fail "$name poses ($(tail -n 2 "$tmp/chromium.err"))"
  fi
}

"$bin" run heavy_stack --solver pgs,sap --steps 20 --out "$tmp/stack" >/dev/null 2>"$tmp/stderr" ||
  fail "run heavy_stack: $(head -c 300 "$tmp/stderr")"
check "heavy_stack (meshes)" "$tmp/stack" 20 '{"dynamic box": "mesh", "fixed plane": "mesh"}'

"$bin" run granular --set n=300 --solver pgs --steps 4 --out "$tmp/gran" >/dev/null 2>"$tmp/stderr" ||
  grep -q . "$tmp/gran/steps.csv" || fail "run granular: $(head -c 300 "$tmp/stderr")"
check "granular, 300 grains (impostors)" "$tmp/gran" 4 \
  '{"dynamic sphere": "dot", "dynamic cylinder": "instance", "fixed plane": "mesh"}'

"$bin" run box_pile --set n=300 --solver pgs --steps 3 --out "$tmp/pile" >/dev/null 2>"$tmp/stderr" ||
  grep -q . "$tmp/pile/steps.csv" || fail "run box_pile: $(head -c 300 "$tmp/stderr")"
check "box_pile, 300 boxes (instances)" "$tmp/pile" 3 '{"dynamic box": "instance", "fixed plane": "mesh"}'
finish

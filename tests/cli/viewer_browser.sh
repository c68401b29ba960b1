# SPDX-License-Identifier: Apache-2.0
# The viewer in a real browser: a short heavy_stack run with PGS and SAP, its viewer.html
# loaded from disk by headless Chromium (no server), which must report no JavaScript error and
# read the run's body count (6) and step count (31 frames per solver, steps 0..30); a
# screenshot of step 30 is left in the build folder (viewer-heavy-stack.png). The viewer of a
# recording cut short loads too and reads the frames it holds. Skips (77) without Chromium
# (scripts/setup --tests installs Debian's) or without a viewer in this build.
# ctest-label: slow
# (the time is Chromium's; the viewer and recordings are written under the sanitizers by cli.view)
source "$(dirname "$0")/common.bash"

browser=$(command -v chromium || command -v chromium-browser || true)
[[ -n "$browser" ]] || { echo "SKIP: no chromium (scripts/setup --tests installs it)"; exit 77; }
out=$tmp/stack
"$bin" run heavy_stack --solver pgs,sap --steps 30 --out "$out" >"$tmp/stdout" 2>"$tmp/stderr" ||
  { echo "FAIL: run: $(head -c 400 "$tmp/stderr")"; exit 1; }
[[ -s "$out/viewer.html" ]] || { echo "SKIP: this build has no viewer: $(grep -i viewer "$tmp/stdout")"; exit 77; }

# headless, no network, software WebGL (SwiftShader), a fresh profile
flags=(--headless --no-sandbox --disable-gpu-sandbox --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --use-angle=swiftshader --enable-unsafe-swiftshader --user-data-dir="$tmp/profile"
       --virtual-time-budget=8000)

# status KEY=VALUE...: the page's #fl-status JSON must hold each KEY with VALUE (JSON text)
status() {
  local page=$1
  shift
  timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$page" 2>"$tmp/chromium.err" >"$tmp/dom.html"
  python3 - "$tmp/dom.html" "$@" <<'PY'
import html, json, re, sys
dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
m = re.search(r'<pre id="fl-status">(.*?)</pre>', dom, re.S)
if not m or not m.group(1).strip():
    sys.exit("the page wrote no status (its script did not run to the end)")
st = json.loads(html.unescape(m.group(1)))
bad = [f"{k}: {json.dumps(st.get(k))}, expected {v}" for k, v in (a.split("=", 1) for a in sys.argv[2:])
       if st.get(k) != json.loads(v)]
if bad:
    sys.exit("; ".join(bad) + f" (status {json.dumps(st)})")
PY
}

if status "$out/viewer.html#step=30" errors='[]' ok=true webgl=true bodies=6 'solvers=["pgs","sap"]' \
   'frames=[31,31]' steps=31 shown_step=30 cut=false; then
  pass "viewer loads in Chromium: no error, 6 bodies, 31 steps of pgs and sap"
else
  fail "viewer in Chromium (stderr: $(grep -v -i 'dbus\|fontconfig' "$tmp/chromium.err" | tail -n 3))"
fi

timeout 120 "$browser" "${flags[@]}" --window-size=1400,700 --screenshot="$PWD/viewer-heavy-stack.png" \
  "file://$out/viewer.html#step=30" >/dev/null 2>&1
if [[ -s "$PWD/viewer-heavy-stack.png" ]] && [[ $(stat -c %s "$PWD/viewer-heavy-stack.png") -gt 20000 ]]; then
  pass "screenshot $PWD/viewer-heavy-stack.png ($(stat -c %s "$PWD/viewer-heavy-stack.png") bytes)"
else
  fail "no screenshot (or an empty one)"
fi

# a killed run: the recording without its last 200 bytes; sap holds 30 whole frames of 31
cut=$tmp/cut
mkdir "$cut"
size=$(stat -c %s "$out/recording.flrec")
head -c $((size - 200)) "$out/recording.flrec" >"$cut/recording.flrec"
"$bin" view "$cut" --print >/dev/null 2>"$tmp/stderr" || fail "view of the cut recording: $(cat "$tmp/stderr")"
if status "$cut/viewer.html#step=30" errors='[]' ok=true bodies=6 'frames=[31,30]' steps=31 shown_step=30; then
  pass "the viewer of a recording cut short loads and shows the frames it holds"
else
  fail "cut recording in Chromium"
fi
finish

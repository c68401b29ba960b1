# SPDX-License-Identifier: Apache-2.0
# The recording and the viewer from the command line: `run` writes recording.flrec and
# viewer.html with every step of both solvers, `view` prints the page's path, a recording cut
# short (a killed run) still gives a viewer of the frames it holds, and bad input fails
# cleanly (a folder without a recording, a file that is no recording, --record out of range).
source "$(dirname "$0")/common.bash"

out=$tmp/stack
if "$bin" run heavy_stack --solver pgs,sap --steps 12 --out "$out" >"$tmp/stdout" 2>"$tmp/stderr"; then
  [[ -s "$out/recording.flrec" ]] || fail "run: no recording.flrec"
  grep -q '"recording"' "$out/manifest.json" || fail "run: the manifest does not name the recording"
  if [[ -s "$out/viewer.html" ]]; then
    grep -q "viewer: $out/viewer.html (26 frames, every 1 steps" "$tmp/stdout" ||
      fail "run: summary does not name the viewer with 26 frames: $(grep -i viewer "$tmp/stdout")"
  else
    grep -q "no viewer.html: this build has no viewer" "$tmp/stdout" ||
      fail "run: neither a viewer.html nor the reason there is none"
  fi
  pass "run records 2 x 13 frames"
else
  fail "run heavy_stack: $(head -c 400 "$tmp/stderr")"
fi

# view prints the path (no display here, and --print says so anyway)
if [[ -s "$out/viewer.html" ]]; then
  "$bin" view "$out" --print >"$tmp/stdout" 2>"$tmp/stderr" || fail "view: $(cat "$tmp/stderr")"
  grep -qx "$out/viewer.html" "$tmp/stdout" || fail "view --print: no path line: $(cat "$tmp/stdout")"
  grep -q "scene heavy_stack, 2 solvers, 6 bodies, 26 frames" "$tmp/stdout" ||
    fail "view: summary: $(head -n 1 "$tmp/stdout")"
  pass "view prints the viewer's path and what it holds"

  # a run killed mid-write: the tail is cut and there is no viewer yet
  cut=$tmp/cut
  mkdir "$cut"
  size=$(stat -c %s "$out/recording.flrec")
  head -c $((size - 100)) "$out/recording.flrec" >"$cut/recording.flrec"
  "$bin" view "$cut" --print >"$tmp/stdout" 2>"$tmp/stderr" || fail "view of a cut recording: $(cat "$tmp/stderr")"
  grep -q "25 frames (recording cut short" "$tmp/stdout" || fail "view cut: $(head -n 1 "$tmp/stdout")"
  [[ -s "$cut/viewer.html" ]] || fail "view cut: no viewer.html written"
  pass "a recording cut short opens with its 25 whole frames"
fi

# bad input
mkdir -p "$tmp/empty"
expect_fail "view of a folder without a recording" 1 "no recording (recording.flrec) in this folder" "" -- view "$tmp/empty"
grep -q "frictionlab run SCENE --out" "$tmp/stderr" || fail "view: the message does not say how to make a recording"
printf 'step,solver\n0,pgs\n' >"$tmp/empty/recording.flrec"
expect_fail "view of a file that is no recording" 1 "recording.flrec: byte 0: expected the recording magic" "" -- view "$tmp/empty"
[[ ! -e "$tmp/empty/viewer.html" ]] || fail "view wrote a viewer.html from a bad recording"
expect_fail "view of a missing folder" 1 "no such folder" "" -- view "$tmp/nowhere"
expect_fail "run --record -1" 2 "--record '-1': expected an integer in [0, 1000000000]" "$tmp/r1" -- run heavy_stack --record -1 --out "$tmp/r1"

# --record 0: no recording, no viewer; --record 5: frames 0, 5, 10, 12
"$bin" run heavy_stack --steps 12 --record 0 --out "$tmp/r0" >/dev/null 2>&1 || fail "run --record 0"
[[ ! -e "$tmp/r0/recording.flrec" && ! -e "$tmp/r0/viewer.html" ]] || fail "--record 0 still recorded"
"$bin" run heavy_stack --steps 12 --record 5 --out "$tmp/r5" >/dev/null 2>&1 || fail "run --record 5"
if [[ -s "$tmp/r5/viewer.html" ]]; then
  "$bin" view "$tmp/r5" --print | grep -q "1 solvers, 6 bodies, 4 frames" || fail "--record 5: expected 4 frames"
fi
pass "--record 0 and --record 5"
finish

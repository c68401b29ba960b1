# SPDX-License-Identifier: Apache-2.0
# Sizes estimated before they are allocated (issue 51, faults 6 and 10): memory bombs inside the
# documented ranges (a FEM box of 100^3 cells, elastic_cube cells=64, cylinder_press rings=200,
# 5000 spheres with margin 1e6) are refused with the estimate and the limit (fl_mem_limit():
# FL_MEM_LIMIT_MB raises or lowers it) before the big allocation; float-to-integer casts of
# counts (a recording's "nvert": 1e300 or -5, solve --mem-limit 1e15) are range-checked.
source "$(dirname "$0")/common.bash"
eval "plain_$(declare -f expect_fail)"
expect_fail() {
  plain_expect_fail "$@"
  if grep -qE "Sanitizer|runtime error:" "$tmp/stderr"; then fail "$1: a sanitizer report"; fi
}
out=$tmp/out
cd "$tmp" || exit 1
# peak memory of a refused run stays small (GNU time when present)
peak_ok() { # NAME ARGS... : the run's peak RSS below 300 MB
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -f "%M" -o "$tmp/rss" "$bin" "${@:2}" >/dev/null 2>&1
    local kb
    kb=$(tail -1 "$tmp/rss")
    ((kb < 300000)) && pass "$1: refused at $kb kB peak" || fail "$1: peak $kb kB before the refusal"
  fi
}
expect_fail "elastic_cube cells=64" 1 "1572864 tets (with their FEM system, about 8 kB a tet) needs about 13.1 GB, above the limit of 8.59 GB" "$out" -- run elastic_cube --set cells=64 --steps 1 --out "$out"
peak_ok "elastic_cube cells=64" run elastic_cube --set cells=64 --steps 1 --out "$out"
expect_fail "cylinder_press rings=200" 1 "cylinder mesh: 361803 vertices and 1440000 tets" "$out" -- run cylinder_press --set rings=200 --steps 1 --out "$out"
cat >box.json <<'JSON'
{"format": "frictionlab-scene", "version": 1, "name": "m", "dt": 0.01, "duration": 0.02,
 "materials": [{"name": "rubber", "mu": 0.5}],
 "bodies": [{"name": "ground", "kind": "fixed", "material": "rubber", "shape": {"type": "plane"}},
  {"name": "cube", "kind": "deformable", "material": "rubber",
   "mesh": {"type": "box", "size": [1, 1, 1], "cells": [100, 100, 100]},
   "model": {"type": "corotated_lagged", "E": 1e5, "nu": 0.4}, "density": 400,
   "position": [0, 0, 0.6]}]}
JSON
expect_fail "FEM box of 100^3 cells" 1 "box.json: bodies[1].mesh: box mesh: 1030301 vertices and 6000000 tets" "$out" -- run box.json --steps 1 --out "$out"
peak_ok "FEM box of 100^3 cells" run box.json --steps 1 --out "$out"
# the limit is a setting (--mem-limit GB of run and export, or FL_MEM_LIMIT_MB): 1 MiB refuses elastic_cube's default mesh
FL_MEM_LIMIT_MB=1 expect_fail "FL_MEM_LIMIT_MB=1 on elastic_cube" 1 "above the limit of 0.00105 GB (raise it with --mem-limit GB or FL_MEM_LIMIT_MB)" "$out" -- run elastic_cube --steps 1 --out "$out"
expect_fail "run --mem-limit 0.001 on elastic_cube" 1 "above the limit of 0.00107 GB" "$out" -- run elastic_cube --mem-limit 0.001 --steps 1 --out "$out"
expect_fail "run --mem-limit 1e7" 2 "--mem-limit 1e7: expected a number of GB in (0, 1e6]" "$out" -- run elastic_cube --mem-limit 1e7 --out "$out"
FL_MEM_LIMIT_MB=1 "$bin" run elastic_cube --mem-limit 1 --steps 1 --out "$tmp/ml" >/dev/null 2>"$tmp/stderr" &&
  pass "--mem-limit 1 (GB) raises FL_MEM_LIMIT_MB=1: elastic_cube runs" || fail "--mem-limit 1: $(cat "$tmp/stderr")"

# the contact problem (issue 51, item 5): its arrays and J (contacts x rows x nonzeros a row) are
# estimated at each step before they are allocated; granular's default scene (133 contacts at
# step 0) over a lowered limit is refused with the estimate, the limit and the flag, exit 1 and
# no results folder; raising the limit lets it run
lim="above the limit of 1.07e-05 GB (raise it with --mem-limit GB or FL_MEM_LIMIT_MB)"
expect_fail "run granular --mem-limit 0.00001: the contact problem" 1 "$lim" "$out" -- run granular --steps 3 --mem-limit 0.00001 --out "$out"
grep -qE "granular step 0: the contact problem \([0-9]+ contacts, [0-9]+ rows, J with [0-9.e+]+ nonzeros\) needs about [0-9.e+-]+ GB" "$tmp/stderr" &&
  pass "the refusal gives contacts, rows, J's nonzeros and the estimate" || fail "contact problem message: $(head -c 400 "$tmp/stderr")"
expect_fail "export granular --mem-limit 0.00001: the contact problem" 1 "$lim" "$out" -- export granular --steps 0:2 --mem-limit 0.00001 --out "$out"
FL_MEM_LIMIT_MB=0.01 expect_fail "FL_MEM_LIMIT_MB=0.01 on granular" 1 "the contact problem (" "$out" -- run granular --steps 3 --out "$out"
FL_MEM_LIMIT_MB=0.01 "$bin" run granular --steps 3 --mem-limit 0.001 --out "$tmp/gr" >/dev/null 2>"$tmp/stderr" &&
  [[ -s "$tmp/gr/steps.csv" ]] && pass "--mem-limit 0.001 (GB) raises FL_MEM_LIMIT_MB=0.01: granular runs" || fail "granular --mem-limit 0.001: $(cat "$tmp/stderr")"

# 5000 spheres, every pair within the margin: 12.5 million candidate pairs
python3 - <<'PY'
import json
b = [{"name": "ground", "kind": "fixed", "material": "m", "shape": {"type": "plane"}}]
for i in range(5000):
    x, y, z = i % 18, (i // 18) % 18, i // 324
    b.append({"name": "s%d" % i, "kind": "dynamic", "material": "m",
              "shape": {"type": "sphere", "size": [0.1]}, "density": 100,
              "position": [x * 0.5, y * 0.5, 0.2 + z * 0.5]})
json.dump({"format": "frictionlab-scene", "version": 1, "name": "sp", "dt": 0.01,
           "duration": 0.01, "margin": 1e6, "materials": [{"name": "m", "mu": 0.5}],
           "bodies": b}, open("spheres.json", "w"))
PY
"$bin" run spheres.json --steps 1 --solver pgs --out sp >"$tmp/log" 2>&1
rc=$?
[[ $rc -eq 1 ]] && grep -q "broad phase: more than [0-9]* candidate pairs (about 1.5 kB a pair) needs about .* above the limit" "$tmp/log" &&
  [[ ! -e sp ]] && pass "5000 spheres with margin 1e6: the broad phase refuses before allocating (exit $rc, no folder)" ||
  fail "5000 spheres: exit $rc, $(tail -c 400 "$tmp/log")"
peak_ok "5000 spheres with margin 1e6" run spheres.json --steps 1 --solver pgs --out sp3

# a recording header whose "nvert" is 1e300 or negative
"$bin" run ball_slope --steps 2 --out rec >/dev/null 2>&1 || fail "run ball_slope"
for bad in 1e300 -5 2.5; do
  python3 - rec/recording.flrec "rec-$bad/recording.flrec" "$bad" <<'PY'
import json, os, struct, sys
src, dst, bad = sys.argv[1], sys.argv[2], sys.argv[3]
d = open(src, "rb").read()
hl = struct.unpack("<I", d[8:12])[0]
h = json.loads(d[12:12 + hl])
text = json.dumps(h).replace('"nvert": %d' % h["nvert"], '"nvert": ' + bad).encode()
os.makedirs(os.path.dirname(dst), exist_ok=True)
open(dst, "wb").write(d[:8] + struct.pack("<I", len(text)) + text + d[12 + hl:])
PY
  touch "rec-$bad/viewer.html" # newer than the recording: view reads only its header
  expect_fail "recording with nvert $bad" 1 "expected an integer in [0, 2^31 - 1]" "" -- view "rec-$bad" --print
done

# solve --mem-limit / --wall-limit far past what an rlimit or a timer holds
expect_fail "solve --mem-limit 1e15" 2 "--mem-limit 1e15: expected a positive number up to 1e+06" "$out" -- solve box_on_plane --mem-limit 1e15 --out "$out"
expect_fail "solve --wall-limit 1e300" 2 "--wall-limit 1e300: expected a positive number up to 1e+09" "$out" -- solve box_on_plane --wall-limit 1e300 --out "$out"
# a documented maximum that made a default run last tens of minutes (1.2 s a step at 1024 sides)
expect_fail "cylinder_stack segments=1024" 2 "option segments=1024 is out of range: expected an integer in [3, 256]" "$out" -- run cylinder_stack --set segments=1024 --out "$out"
finish

# SPDX-License-Identifier: Apache-2.0
# Linear-time scene loading (issue 51, fault 7): the loader looked names up linearly per body
# (25,000 bodies took 28 s, 200,000 about 25 minutes) and the recording's header tessellated
# and compared a sphere mesh per body. 20,000 spheres now load, write back and start a run in
# a few CPU seconds (measured: docs/robustness.md, "Load time").
source "$(dirname "$0")/common.bash"
src=${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
[[ -x /usr/bin/time ]] || { echo "skip: no /usr/bin/time"; exit 77; }
python3 "$src/tests/cli/gen_bodies.py" 20000 "$tmp/b.json" || { fail "generator"; finish; }
cpu() { # ARGS... -> user+sys CPU seconds of the run, or "failed"
  /usr/bin/time -f "%U %S" -o "$tmp/t" "$bin" "$@" >/dev/null 2>"$tmp/stderr" || { echo failed; return; }
  awk '{print $1 + $2}' "$tmp/t"
}
t=$(cpu export "$tmp/b.json" --scene-json "$tmp/b2.json")
[[ $t != failed ]] && awk -v t="$t" 'BEGIN {exit !(t < 10)}' &&
  pass "20,000 bodies: load and write back in $t s CPU" || fail "export --scene-json: $t s; $(head -c 300 "$tmp/stderr")"
grep -c '"name":' "$tmp/b2.json" | awk '{exit !($1 >= 20002)}' && pass "every body written back" || fail "bodies lost"
t=$(cpu run "$tmp/b.json" --steps 0 --out "$tmp/r")
[[ $t != failed ]] && awk -v t="$t" 'BEGIN {exit !(t < 15)}' &&
  pass "20,000 bodies: run --steps 0 (load, recording header, outputs) in $t s CPU" ||
  fail "run --steps 0: $t s; $(head -c 300 "$tmp/stderr")"
# a body referenced by name among many (joints and observers go through the same index)
python3 - "$tmp/b.json" "$tmp/dup.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["bodies"][-1]["name"] = "s7"
json.dump(s, open(sys.argv[2], "w"))
PY
"$bin" export "$tmp/dup.json" --scene-json "$tmp/dup2.json" >/dev/null 2>"$tmp/stderr"
[[ $? -eq 1 ]] && grep -q "a second body named 's7'" "$tmp/stderr" &&
  pass "a duplicate name among 20,000 is found" || fail "duplicate: $(cat "$tmp/stderr")"
finish

# SPDX-License-Identifier: Apache-2.0
# Derived quantities and --set on a scene file (issue 51, faults 8 and 11): a box of size 1e100
# loaded with an infinite inertia (every step then failed with "singular inertia", and
# `export --scene-json` wrote a bare inf, which is not JSON); `--set scene.dt=11` or
# `scene.margin=1e300` on a scene file passed ranges the file itself could not hold.
source "$(dirname "$0")/common.bash"
eval "plain_$(declare -f expect_fail)"
expect_fail() {
  plain_expect_fail "$@"
  if grep -qE "Sanitizer|runtime error:" "$tmp/stderr"; then fail "$1: a sanitizer report"; fi
}
out=$tmp/out
cd "$tmp" || exit 1
"$bin" export ball_slope --scene-json bs.json >/dev/null 2>"$tmp/stderr" || fail "export: $(cat "$tmp/stderr")"
python3 - <<'PY'
import json
s = json.load(open("bs.json"))
b = s["bodies"][1]
b.pop("mass", None); b.pop("inertia", None); b["density"] = 1000
for size, name in ((1e100, "big"), (1e-30, "small")):
    b["shape"] = {"type": "box", "size": [size] * 3}
    json.dump(s, open(name + ".json", "w"))
PY
expect_fail "box of size 1e100" 1 "big.json: bodies[1]: body ball: mass 8e+303 kg, inertia diagonal [inf, inf, inf] kg m^2" "$out" -- run big.json --steps 1 --out "$out"
expect_fail "box of size 1e100, export --scene-json" 1 "inertia diagonal [inf, inf, inf]" "" -- export big.json --scene-json big2.json
[[ ! -e big2.json ]] && pass "no scene file written for it" || fail "big2.json written"
expect_fail "box of size 1e-30" 1 "small.json: bodies[1]: body ball: mass 8e-87 kg" "$out" -- run small.json --steps 1 --out "$out"
# every exported scene is JSON that Python reads (no bare inf or nan)
for s in ball_slope heavy_stack capsule_lean spinning_coin chain; do
  "$bin" export $s --scene-json "x-$s.json" >/dev/null 2>"$tmp/stderr" &&
    python3 -c "import json, sys; json.load(open(sys.argv[1]), parse_constant=lambda c: sys.exit('bare ' + c))" "x-$s.json" &&
    pass "$s: exported scene file is strict JSON" || fail "$s: $(cat "$tmp/stderr")"
done

# --set scene.* on a scene file: the file's ranges
expect_fail "--set scene.dt=11" 2 "option dt=11 is out of range: expected a real in [1e-12, 10]" "$out" -- run bs.json --set scene.dt=11 --out "$out"
expect_fail "--set scene.margin=1e300" 2 "option margin=1e300 is out of range: expected a real in [0, 1e+06]" "$out" -- export bs.json --set scene.margin=1e300 --steps 0 --out "$out"
expect_fail "--set scene.duration=1e10" 2 "expected a real in [0, 1e+09]" "$out" -- run bs.json --set scene.duration=1e10 --out "$out"
"$bin" run bs.json --set scene.dt=0.002 --steps 1 --out ok >/dev/null 2>"$tmp/stderr" &&
  pass "--set scene.dt=0.002 in range runs" || fail "scene.dt=0.002: $(cat "$tmp/stderr")"
finish

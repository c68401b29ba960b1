# SPDX-License-Identifier: Apache-2.0
# Names are identifiers (issue 51, fault 3): scene, body and material names became file names
# (export's FCLIB files, run --vtk's .vtu/.pvd) and raw CSV header cells. A scene file whose
# names hold '/', '..', ',', '"', a line break, a leading '=' or '.', a byte outside ASCII or
# more than 31 characters is refused at load: the message names the file, the place and the
# character; nothing is written, inside or outside the output folder.
source "$(dirname "$0")/common.bash"
eval "plain_$(declare -f expect_fail)"
expect_fail() {
  plain_expect_fail "$@"
  if grep -qE "Sanitizer|runtime error:" "$tmp/stderr"; then fail "$1: a sanitizer report"; fi
}
mkdir -p "$tmp/a/b/c/d"
cd "$tmp/a/b/c/d" || exit 1
# scene SCENE-NAME BODY-NAME MATERIAL-NAME (JSON string bodies, already escaped)
scene() {
  cat >s.json <<JSON
{"format": "frictionlab-scene", "version": 1, "name": "$1", "dt": 0.01, "duration": 0.02,
 "materials": [{"name": "$3", "mu": 0.5}],
 "bodies": [{"name": "ground", "kind": "fixed", "material": "$3", "shape": {"type": "plane"}},
  {"name": "$2", "kind": "dynamic", "material": "$3", "shape": {"type": "box", "size": [1, 1, 1]},
   "density": 100, "position": [0, 0, 0.5]}]}
JSON
}
check() { # NAME SCENE BODY MATERIAL NEEDLE
  scene "$2" "$3" "$4"
  expect_fail "$1: export" 1 "$5" "$tmp/out" -- export s.json --steps 0:1 --out "$tmp/out"
  expect_fail "$1: run" 1 "$5" "$tmp/out" -- run s.json --steps 1 --out "$tmp/out"
}
check "scene name with ../" "../../../../x" box m "scene name '../../../../x': character 1 (0x2e, '.')"
check "scene name with /" "a/b" box m "character 2 (0x2f, '/')"
check "body name with /" s "../../../ESCV" m "body name '../../../ESCV'"
check "body name with a comma" s "a,b" m "character 2 (0x2c, ',')"
check "body name with a quote" s 'a\"b' m "character 2 (0x22, '\"')"
check "body name with a line break" s 'a\nb' m "a\\x0ab': character 2 (0x0a)"
check "body name as a formula" s "=1+1" m "character 1 (0x3d, '=')"
check "body name with UTF-8" s "b\u00e9" m "character 2 (0xc3)"
check "body name of 32 characters" s "abcdefghijklmnopqrstuvwxyz012345" m "32 characters, at most 31"
check "material name with a space" s box "m m" "material name 'm m': character 2 (0x20"
check "empty body name" s "" m "empty name"
[[ -z "$(ls -A "$tmp/a/b/c/d" | grep -v '^s.json$')" && ! -e "$tmp/x" && ! -e "$tmp/ESCV" ]] &&
  pass "nothing was written beside or above the scene file" || fail "files left: $(ls -R "$tmp")"
# names of the rule: a run writes its .vtu/.vtp inside the results folder, the CSV headers align
scene "ok_scene-1.2" "box.A-1_b" "m_1"
"$bin" run s.json --steps 2 --vtk 1 --out "$tmp/ok" >/dev/null 2>"$tmp/stderr" || fail "run: $(cat "$tmp/stderr")"
awk -F, 'NR == 1 {n = NF} NF != n {bad = 1} END {exit bad || NR < 2}' "$tmp/ok/steps.csv" &&
  pass "a run with names of the rule: steps.csv rows have the header's column count" ||
  fail "steps.csv misaligned"
grep -q "drift_box.A-1_b" "$tmp/ok/observables.csv" && pass "observables.csv names the body" ||
  fail "observables.csv header: $(head -1 "$tmp/ok/observables.csv")"
finish

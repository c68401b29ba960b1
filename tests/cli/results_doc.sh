#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/results.md's measured section and the pictures in docs/figures/ are the committed run's
# (scripts/results-doc, docs/data/figures/): `check` passes on the tree, and fails on a copy
# whose doc says another number or whose picture is not the recorded one.
source "$(dirname "$0")/common.bash"

src=${FL_SOURCE_DIR:-}
[[ -n "$src" && -f "$src/scripts/results-doc" ]] || { echo "SKIP: no source tree"; exit 77; }
py=/usr/bin/python3
[[ -x $py ]] || { echo "SKIP: no /usr/bin/python3"; exit 77; }

out=$("$py" "$src/scripts/results-doc" check 2>&1) && pass "docs/results.md agrees with the committed run" ||
  fail "results-doc check on the tree: $out"
n=$(ls "$src"/docs/data/figures/*.json | wc -l)
((n >= 15)) && pass "$n figures recorded" || fail "only $n figures in docs/data/figures"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts" "$tmp/docs"
cp "$src/scripts/results-doc" "$tmp/scripts/"
cp -r "$src/docs/data" "$src/docs/figures" "$src/docs/results.md" "$tmp/docs/"
"$py" "$tmp/scripts/results-doc" check >/dev/null 2>&1 && pass "a copy agrees" || fail "a copy disagrees"

# a number changed by hand in the generated section
first=$(ls "$tmp"/docs/data/figures/*.json | head -1)
line=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"][0])' "$first")
esc=$(printf '%s' "$line" | sed 's/[][\.*^$/&]/\\&/g')
sed -i "0,/^$esc\$/s//$esc (edited)/" "$tmp/docs/results.md"
grep -q "(edited)" "$tmp/docs/results.md" || fail "the test could not edit the doc"
out=$("$py" "$tmp/scripts/results-doc" check 2>&1); rc=$?
((rc == 1)) && [[ $out == *"disagrees with the committed run"* ]] &&
  pass "an edited number fails the check (exit 1)" || fail "edited doc: exit $rc, $out"

# the doc restored, a picture that is not the recorded one
cp "$src/docs/results.md" "$tmp/docs/results.md"
pic=$(ls "$tmp"/docs/figures/macklin-fig20.png)
printf 'x' >> "$pic"
out=$("$py" "$tmp/scripts/results-doc" check 2>&1); rc=$?
((rc == 1)) && [[ $out == *"macklin-fig20.png: not the picture drawn from the recorded run"* ]] &&
  pass "a replaced picture fails the check" || fail "replaced picture: exit $rc, $out"

# a record that names the machine's paths (the output folder) fails
cp "$src/docs/figures/macklin-fig20.png" "$pic"
"$py" - "$tmp/docs/data/figures/macklin-fig20.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); r["command_line"] = "frictionlab reproduce all --out /home/someone/figs"
json.dump(r, open(sys.argv[1], "w"), indent=1)
PY
out=$("$py" "$tmp/scripts/results-doc" check 2>&1); rc=$?
((rc == 1)) && [[ $out == *"names a path of the machine"* ]] &&
  pass "a record with a machine path fails the check" || fail "machine path: exit $rc, $out"

# bad arguments
"$py" "$tmp/scripts/results-doc" update "$tmp/nowhere" >/dev/null 2>&1; rc=$?
((rc == 2)) && pass "update of a missing folder exits 2" || fail "update of a missing folder: exit $rc"
finish

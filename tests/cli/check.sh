# SPDX-License-Identifier: Apache-2.0
# frictionlab check: the committed baselines pass in every build; a solver made worse on
# purpose fails with a table naming the regressed quantities; missing baselines fail loudly;
# --steps applies; a user's scene file is baselined and checked.
# One CTest test per part (the whole check ran past ten minutes under load; each part is under
# 40 s in Release under a load of 16 on 2 cores): the baselines in groups of scenes, granular
# (the slowest) split by solver, and "misc" for the rest, which also checks that every baseline
# is in a group.
# ctest-parts: box_pile arch_parabolic arch_masonry spinning_coin fem small granular-prox granular-pnewton granular-ipm granular-rest misc
source "$(dirname "$0")/common.bash"
part=${2:?usage: bash check.sh FRICTIONLAB PART}
src=${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
dir=$src/results/baselines
[[ -f $dir/heavy_stack.json ]] || { fail "no baselines in $dir"; finish; }

# the groups: canonical scenes by name, SCENE:SOLVER for one solver of a scene; granular-rest
# takes the solvers of granular's baseline that no other group names
declare -A groups=(
  [box_pile]="box_pile"
  [arch_parabolic]="arch_parabolic"
  [arch_masonry]="arch_masonry"
  [spinning_coin]="spinning_coin"
  [fem]="elastic_cube cylinder_press verify"
  [small]="heavy_stack cylinder_stack capsule_lean chain ball_slope pendulum_mass_ratio pendulum_stiffness_ratio table_pile"
  [granular-prox]="granular:prox"
  [granular-pnewton]="granular:pnewton"
  [granular-ipm]="granular:ipm"
)
named=$(printf '%s\n' ${groups[*]} | sed -n 's/^granular://p' | tr '\n' ' ')
rest=$(python3 -c "import json, sys; print(','.join(s for s in json.load(open(sys.argv[1]))['solvers'] if s not in sys.argv[2].split()))" "$dir/granular.json" "$named")
groups[granular-rest]="granular:$rest"

# The tolerances were chosen from the spread between the Release and the sanitizer builds
# (docs/check.md), so every case must pass in both.
if [[ -n ${groups[$part]+x} ]]; then
  for item in ${groups[$part]}; do
    only=${item%%:*}
    solvers=()
    [[ $item == *:* ]] && solvers=(--solver "${item#*:}")
    "$bin" check --baselines "$dir" --only "$only" "${solvers[@]}" >"$tmp/ok.out" 2>&1
    rc=$?
    [[ $rc -eq 0 ]] && pass "check $only${solvers[*]:+ ${solvers[*]}} passes on the committed baselines (${FL_BUILD_KIND:-unknown build})" ||
      fail "check $only${solvers[*]:+ ${solvers[*]}}: exit $rc on the committed baselines: $(grep -E 'REGRESSED|CHANGED|MISSING|^check' "$tmp/ok.out" | head -n 30)"
    grep -Eq "^check: [0-9]+ cases?, [0-9]+ quantities against .*: 0 regressions in 0 cases, 0 changed outcomes, 0 without baseline" "$tmp/ok.out" && pass "$only: summary line" ||
      fail "$only: no summary: $(tail -n 3 "$tmp/ok.out")"
  done
  finish
fi
[[ $part == misc ]] || { echo "unknown part '$part'"; exit 2; }

# every baseline is in one group, and granular's groups make its whole record
for f in "$dir"/*.json; do
  name=$(basename "$f" .json)
  printf '%s\n' ${groups[*]} | sed 's/:.*//' | grep -qx -- "$name" || fail "baseline $name is in no group of tests/cli/check.sh"
done
[[ ${groups[granular-rest]} != "granular:" ]] && pass "every baseline is in a group; granular's solvers: $named/ $rest" ||
  fail "granular-rest has no solver"

"$bin" check --baselines "$dir" --only arch_parabolic --solver pgs,sap --set pgs.max_iter=3 \
  --set sap.max_iter=1 >"$tmp/bad.out" 2>&1
rc=$?
[[ $rc -eq 1 ]] && pass "a cut budget is a regression (exit 1)" || fail "exit $rc with cut budgets"
grep -q "arch_parabolic *pgs *merit_p90 *REGRESSED" "$tmp/bad.out" &&
  pass "table names pgs merit_p90" || fail "no pgs merit row: $(cat "$tmp/bad.out")"
grep -q "arch_parabolic *sap *nfail *REGRESSED" "$tmp/bad.out" &&
  pass "table names sap failed steps" || fail "no sap nfail row: $(cat "$tmp/bad.out")"
# cases and quantities counted apart; fewer iterations under the cut are the cut, not "improved"
grep -Eq "^check: 2 cases, [0-9]+ quantities .*: [0-9]+ regressions in 2 cases" "$tmp/bad.out" &&
  pass "summary counts regressions and regressed cases apart" || fail "summary: $(tail -n 1 "$tmp/bad.out")"
grep -q "arch_parabolic *sap *iters_mean *cut budget" "$tmp/bad.out" && ! grep -q "iters_mean *improved" "$tmp/bad.out" &&
  pass "fewer iterations from a cut budget labelled as such" || fail "cut budget label: $(grep iters "$tmp/bad.out")"

# found from another working directory (beside the executable or in the source tree)
absbin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
(cd "$tmp" && "$absbin" check --only ball_slope --solver sap >"$tmp/cwd.out" 2>&1)
rc=$?
[[ $rc -eq 0 ]] && grep -q "1 case, [0-9]* quantities against .*results/baselines" "$tmp/cwd.out" &&
  pass "baselines found from another directory" || fail "from another directory: exit $rc: $(cat "$tmp/cwd.out")"

# no silent pass: an empty folder fails naming where it looked, a missing one is bad input
mkdir "$tmp/empty"
"$bin" check --baselines "$tmp/empty" --only ball_slope >"$tmp/o" 2>&1
rc=$?
[[ $rc -eq 1 ]] && grep -q "MISSING.*no baseline at $tmp/empty/ball_slope.json" "$tmp/o" &&
  pass "missing baselines: exit 1 naming the file" || fail "missing baselines: exit $rc: $(cat "$tmp/o")"
expect_fail "absent baselines folder" 2 "$tmp/none" "" -- check --baselines "$tmp/none"
expect_fail "--steps unlike the baseline" 2 "recorded at 20 steps, not 7" "" -- \
  check --baselines "$dir" --only heavy_stack --steps 7
expect_fail "--spread-from without --update" 2 "--spread-from needs --update" "" -- \
  check --spread-from "$tmp"

# --steps applies to a recording, and the record says so
"$bin" check --update --baselines "$tmp/rec" --only ball_slope --solver pgs,sap --steps 7 >"$tmp/o" 2>&1 &&
  python3 -c "import json,sys; d=json.load(open('$tmp/rec/ball_slope.json')); sys.exit(d['steps'] != 7 or sorted(d['solvers']) != ['pgs', 'sap'])" &&
  pass "--update --steps 7 records 7 steps" || fail "--update --steps: $(cat "$tmp/o")"
# a partial update keeps the other solvers
"$bin" check --update --baselines "$tmp/rec" --only ball_slope --solver sap --steps 7 >/dev/null 2>&1
python3 -c "import json,sys; d=json.load(open('$tmp/rec/ball_slope.json')); sys.exit(sorted(d['solvers']) != ['pgs', 'sap'])" &&
  pass "--update --solver sap keeps pgs's record" || fail "partial update dropped a solver"
"$bin" check --baselines "$tmp/rec" --only ball_slope --solver pgs,sap >"$tmp/o" 2>&1 &&
  pass "a 7-step record checks at 7 steps" || fail "7-step check: $(cat "$tmp/o")"

# a user's scene file: recorded beside it, checked, and a regression or an edit is caught
"$bin" export heavy_stack --scene-json "$tmp/my_stack.json" --set n=3 >/dev/null 2>&1 ||
  fail "export --scene-json"
"$bin" check "$tmp/my_stack.json" --update --solver pgs,sap --steps 30 >"$tmp/o" 2>&1 &&
  [[ -f $tmp/my_stack.baseline.json ]] && pass "scene file baselined beside it" ||
  fail "scene file --update: $(cat "$tmp/o")"
"$bin" check "$tmp/my_stack.json" --solver pgs,sap >"$tmp/o" 2>&1 && grep -q "2 cases" "$tmp/o" &&
  pass "scene file checks against its baseline" || fail "scene file check: $(cat "$tmp/o")"
"$bin" check "$tmp/my_stack.json" --solver pgs --set pgs.max_iter=3 >"$tmp/o" 2>&1
[[ $? -eq 1 ]] && grep -q "my_stack *pgs .*REGRESSED" "$tmp/o" &&
  pass "a regression on a scene file is flagged" || fail "scene file regression: $(cat "$tmp/o")"
"$bin" check "$tmp/my_stack.json" --solver nsn >"$tmp/o" 2>&1
[[ $? -eq 1 ]] && grep -q "MISSING" "$tmp/o" && pass "a solver without a record fails" ||
  fail "solver without record: $(cat "$tmp/o")"
sed -i 's/"dt": *[0-9.e-]*/"dt": 0.005/' "$tmp/my_stack.json"
expect_fail "edited scene file" 2 "changed since its baseline" "" -- check "$tmp/my_stack.json"

# bad arguments: named, exit 2
"$bin" check --baselines "$dir" --only no_such_scene >"$tmp/o" 2>"$tmp/e"
[[ $? -eq 2 ]] && grep -q no_such_scene "$tmp/e" && pass "unknown scene named" || fail "unknown scene: $(cat "$tmp/e")"
"$bin" check --baselines "$dir" --solver no_such_solver >"$tmp/o" 2>"$tmp/e"
[[ $? -eq 2 ]] && grep -q no_such_solver "$tmp/e" && pass "unknown solver named" || fail "unknown solver: $(cat "$tmp/e")"
expect_fail "unreadable scene file" 2 "$tmp/none.json" "" -- check "$tmp/none.json"
finish

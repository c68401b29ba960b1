# frictionlab check: the committed baselines pass, and a solver made worse on purpose (its
# iteration budget cut) fails with a table naming the regressed quantities.
source "$(dirname "$0")/common.bash"
src=${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
dir=$src/results/baselines
[[ -f $dir/heavy_stack.json ]] || { fail "no baselines in $dir"; finish; }

# The baselines are recorded by the Release build (scripts/test's first build), which must
# reproduce every case. Other builds (-O1 with sanitizers) round differently, and the solvers
# that stall at a fixed budget on the heavy stack (pgs, nsn) are chaotic there; the solvers
# that converge or are linear per step must still match.
if [[ "${FL_BUILD_KIND:-}" == Release-sanitize-OFF ]]; then
  "$bin" check --dir "$dir" >"$tmp/ok.out" 2>&1
  what="every scene and solver"
else
  "$bin" check --dir "$dir" --only heavy_stack,arch_parabolic,ball_slope \
    --solver sap,primal-descent,dual-descent,jacobi >"$tmp/ok.out" 2>&1
  what="converging solvers on three scenes (${FL_BUILD_KIND:-unknown build})"
fi
rc=$?
[[ $rc -eq 0 ]] && pass "check passes on the committed baselines: $what" ||
  fail "check exit $rc on the committed baselines ($what): $(tail -n 30 "$tmp/ok.out")"
grep -q "0 regressions" "$tmp/ok.out" && pass "summary line" || fail "no summary: $(tail -n 3 "$tmp/ok.out")"

"$bin" check --dir "$dir" --only arch_parabolic --solver pgs,sap --set pgs.max_iter=3 \
  --set sap.max_iter=1 >"$tmp/bad.out" 2>&1
rc=$?
[[ $rc -eq 1 ]] && pass "a cut budget is a regression (exit 1)" || fail "exit $rc with cut budgets"
grep -q "arch_parabolic *pgs *merit_p90 *REGRESSED" "$tmp/bad.out" &&
  pass "table names pgs merit_p90" || fail "no pgs merit row: $(cat "$tmp/bad.out")"
grep -q "arch_parabolic *sap *nfail *REGRESSED" "$tmp/bad.out" &&
  pass "table names sap failed steps" || fail "no sap nfail row: $(cat "$tmp/bad.out")"

# bad arguments: named, exit 2
"$bin" check --dir "$dir" --only no_such_scene >"$tmp/o" 2>"$tmp/e"
[[ $? -eq 2 ]] && grep -q no_such_scene "$tmp/e" && pass "unknown scene named" || fail "unknown scene: $(cat "$tmp/e")"
"$bin" check --dir "$dir" --solver no_such_solver >"$tmp/o" 2>"$tmp/e"
[[ $? -eq 2 ]] && grep -q no_such_solver "$tmp/e" && pass "unknown solver named" || fail "unknown solver: $(cat "$tmp/e")"
finish

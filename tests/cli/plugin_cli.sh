# SPDX-License-Identifier: Apache-2.0
# Solver plug-ins in the command line (docs/plugins.md): the template plug-in
# (build/plugins/damped_jacobi.so) loaded with --plugin or from $FL_PLUGIN_PATH is listed by
# `list solvers` with its file and runs in solve, run, profile, bench and verify; refused
# plug-ins stop the command with the loader's message and exit 2 before anything is written;
# the crash plug-in (SIGSEGV in its first iteration) costs its pairs only: they are recorded
# as CRASHED with a negative reason code and the campaign writes every other pair; check names
# a plug-in solver's missing baseline and the command that records it.
source "$(dirname "$0")/common.bash"

build=$(cd "$(dirname "$bin")" && pwd)
src=${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
so=$build/plugins/damped_jacobi.so
crash=$build/test-plugins/crash.so
data=$src/tests/data/slope_slide-step0.hdf5
[[ -f $so && -f $crash ]] || { echo "skipped: $so or $crash not built"; exit 77; }
unset FL_PLUGIN_PATH

#---- listed, with its file ----
"$bin" list solvers >"$tmp/list0" 2>&1
grep -q '^damped-jacobi:' "$tmp/list0" && fail "damped-jacobi listed without the plug-in"
"$bin" list solvers --plugin "$so" >"$tmp/list1" 2>&1 &&
  grep -A3 '^damped-jacobi:' "$tmp/list1" | grep -qxF "  plug-in: $so" &&
  pass "list solvers --plugin: damped-jacobi from $so" ||
  fail "list solvers --plugin: $(grep -A3 '^damped-jacobi' "$tmp/list1" | head -4)"
FL_PLUGIN_PATH=/nonexistent:$build/plugins "$bin" list solvers >"$tmp/list2" 2>&1 &&
  grep -A3 '^damped-jacobi:' "$tmp/list2" | grep -qxF "  plug-in: $so" &&
  grep -qF "plug-in search path" "$tmp/list2" && grep -qF "/nonexistent:$build/plugins" "$tmp/list2" &&
  pass "FL_PLUGIN_PATH: loaded at start (a missing folder skipped), the path printed" ||
  fail "FL_PLUGIN_PATH: $(grep -A3 -e '^damped-jacobi' -e 'search path' "$tmp/list2" | head -5)"
for c in solve run profile bench verify check list export; do
  "$bin" "$c" --help 2>&1 | grep -q -- '--plugin PATH' || fail "$c --help has no --plugin"
done
"$bin" score --help 2>&1 | grep -q -- '--plugin' && fail "score takes --plugin (it runs no solver)"
pass "--plugin in the help of solve, run, profile, bench, verify, check, list, export"

#---- refused plug-ins: the loader's message, exit 2, nothing written ----
expect_fail "a missing plug-in" 2 "$tmp/nothere.so" "$tmp/o1" -- \
  solve box_on_plane --plugin "$tmp/nothere.so" --out "$tmp/o1"
expect_fail "a plug-in built for another ABI" 2 "built for FrictionLab ABI 2" "$tmp/o2" -- \
  run ball_slope --plugin "$build/test-plugins/bad_abi.so" --steps 2 --out "$tmp/o2"
expect_fail "not a plug-in" 2 "not a FrictionLab plug-in" "$tmp/o3" -- \
  profile box_on_plane --plugin "$build/test-plugins/no_entry.so" --out "$tmp/o3"
expect_fail "a plug-in taking a built-in name" 2 "already registered" "" -- \
  list solvers --plugin "$build/test-plugins/dup_name.so"
mkdir -p "$tmp/badpath" && cp "$build/test-plugins/bad_abi.so" "$tmp/badpath/"
FL_PLUGIN_PATH=$tmp/badpath expect_fail "a refused plug-in on FL_PLUGIN_PATH" 2 "search path" "$tmp/o4" -- \
  solve box_on_plane --out "$tmp/o4"

#---- run by every command ----
"$bin" solve "$data" box_on_plane --plugin "$so" --solver pgs,damped-jacobi --out "$tmp/solve" \
  >"$tmp/stdout" 2>&1 || { cat "$tmp/stdout"; fail "solve with the plug-in"; }
n=$(awk -F, '$2 == "damped-jacobi" && $7 == "returned" && $9 == "CONVERGED_ATOL" && $15 < 1e-8' "$tmp/solve/steps.csv" | wc -l)
[[ $n -eq 2 ]] && pass "solve: damped-jacobi converged on both problems (merit < 1e-8), beside pgs" ||
  fail "solve: $(cut -d, -f1-15 "$tmp/solve/steps.csv")"
grep -q ',damped-jacobi,' "$tmp/solve/iters.csv" && grep -q '"damped-jacobi"' "$tmp/solve/manifest.json" ||
  fail "solve: the plug-in's iterations or options are missing from iters.csv / manifest.json"

"$bin" run ball_slope --plugin "$so" --solver damped-jacobi,pgs --steps 5 --record 0 \
  --out "$tmp/run" >"$tmp/stdout" 2>&1 || { cat "$tmp/stdout"; fail "run with the plug-in"; }
n=$(awk -F, '$2 == "damped-jacobi" && $8 == "CONVERGED_ATOL"' "$tmp/run/steps.csv" | wc -l)
[[ $n -eq 5 ]] && pass "run: ball_slope, 5 steps of damped-jacobi, all converged" ||
  fail "run: $n converged steps of damped-jacobi"

"$bin" profile "$data" box_on_plane --plugin "$so" --solver pgs,damped-jacobi --out "$tmp/prof" \
  >"$tmp/stdout" 2>&1 || { cat "$tmp/stdout"; fail "profile with the plug-in"; }
n=$(awk -F, '$2 == "damped-jacobi" && $3 == 1' "$tmp/prof/costs.csv" 2>/dev/null | wc -l)
[[ $n -eq 2 ]] && grep -q 'by time: damped-jacobi' "$tmp/stdout" &&
  pass "profile: damped-jacobi ranked, solving both problems" || fail "profile: $(cat "$tmp/prof/costs.csv")"

"$bin" bench "$data" --plugin "$so" --solver pgs,damped-jacobi --out "$tmp/bench" \
  >"$tmp/stdout" 2>&1 || { cat "$tmp/stdout"; fail "bench with the plug-in"; }
awk -F, '$2 == "damped-jacobi" && $8 == "CONVERGED_ATOL" {ok = 1} END {exit !ok}' "$tmp/bench/bench.csv" &&
  pass "bench: damped-jacobi timed beside pgs" || fail "bench: $(cat "$tmp/bench/bench.csv")"

"$bin" verify --quick --only slide,slope_below_g --plugin "$so" --solver damped-jacobi \
  --out "$tmp/verify" >"$tmp/stdout" 2>&1 || { cat "$tmp/stdout"; fail "verify with the plug-in"; }
np=$(awk -F, '$2 == "damped-jacobi" && $9 == "pass"' "$tmp/verify/verify.csv" | wc -l)
nf=$(awk -F, '$2 == "damped-jacobi" && $9 != "pass"' "$tmp/verify/verify.csv" | wc -l)
[[ $np -ge 2 && $nf -eq 0 ]] && pass "verify: a damped-jacobi row, $np quantities pass on slide and slope_below_g" ||
  fail "verify: $np pass, $nf other: $(grep damped "$tmp/verify/verify.csv" | head -3)"

#---- a crashing plug-in costs its pairs, not the campaign ----
"$bin" solve "$data" box_on_plane two_box_stack --plugin "$so" --plugin "$crash" \
  --solver pgs,crash,damped-jacobi --out "$tmp/crash" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
ncr=$(awk -F, '$2 == "crash" && $7 == "error" && $9 == "CRASHED" && $10 < 0' "$tmp/crash/steps.csv" 2>/dev/null | wc -l)
nok=$(awk -F, '$2 != "crash" && $7 == "returned"' "$tmp/crash/steps.csv" 2>/dev/null | wc -l)
if [[ $rc -eq 1 && $ncr -eq 3 && $nok -eq 6 ]] && grep -q 'signal 11' "$tmp/crash/manifest.json" &&
   grep -q 'CRASHED' "$tmp/stdout"; then
  pass "crash.so (SIGSEGV): 3 pairs CRASHED (reason code $(awk -F, '$2 == "crash" {print $10; exit}' "$tmp/crash/steps.csv")), 6 others returned, folder written, exit 1"
else
  fail "crash campaign: rc $rc, $ncr crashed, $nok returned; $(head -c 600 "$tmp/stderr")"
fi
cmp -s <(awk -F, '$2 == "damped-jacobi" {print $1, $8, $9, $15}' "$tmp/crash/steps.csv" | head -2) \
       <(awk -F, '$2 == "damped-jacobi" {print $1, $8, $9, $15}' "$tmp/solve/steps.csv") &&
  pass "the guarded damped-jacobi pairs give the unguarded rows (iterations, reason, merit)" ||
  fail "guarded rows differ: $(awk -F, '$2 == "damped-jacobi" {print $1, $8, $9, $15}' "$tmp/crash/steps.csv")"
"$bin" solve box_on_plane --plugin "$crash" --solver crash --set crash.mode=error --out "$tmp/err" \
  >/dev/null 2>&1
awk -F, '$2 == "crash" && $9 == "FL_ERR_LIBRARY" {ok = 1} END {exit !ok}' "$tmp/err/steps.csv" 2>/dev/null &&
  pass "crash.mode=error: recorded as the plug-in's own error (FL_ERR_LIBRARY), not a crash" ||
  fail "crash.mode=error: $(cat "$tmp/err/steps.csv" 2>/dev/null | cut -d, -f1-10)"

#---- check: the missing baseline and how to record it ----
"$bin" check --plugin "$so" --solver damped-jacobi --only ball_slope >"$tmp/stdout" 2>&1
rc=$?
[[ $rc -eq 1 ]] && grep -qF "scripts/record-baselines --solver damped-jacobi --plugin $so" "$tmp/stdout" &&
  grep -qF "ball_slope.json" "$tmp/stdout" &&
  pass "check names the missing baseline file and scripts/record-baselines --solver damped-jacobi --plugin ..." ||
  fail "check without a baseline: rc $rc: $(cat "$tmp/stdout")"
finish

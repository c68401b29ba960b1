# SPDX-License-Identifier: Apache-2.0
# Answers out and in (docs/usage.md, "Answers out and in"): `solve --save-solution` writes each
# pair's answer as solutions/<problem>.<solver>.hdf5 in FCLIB's /solution layout, and
# `frictionlab score PROBLEM SOLUTION` scores such a file with the merit `solve` printed for
# that pair (the same number in the same format), on an FCLIB file of tests/data, a global and
# a local file of the shared FCLIB collection (when present) and a built-in example (no source
# file: the problem is written with the answer). Wrong sizes and a missing file are refused.
source "$(dirname "$0")/common.bash"

src=${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
shared=${FL_SHARED_DIR:-$src/../shared}
probs=("$src/tests/data/slope_slide-step0.hdf5" two_box_stack)
for f in Box_Stacks-i0035-31-0.hdf5 local_problem_test.hdf5; do
  [[ -f $shared/fclib/$f ]] && probs+=("$shared/fclib/$f") || echo "note: no $shared/fclib/$f"
done

"$bin" solve "${probs[@]}" --solver pgs,nsn,sap --save-solution --out "$tmp/s" >"$tmp/solve.out" 2>"$tmp/solve.err"
rc=$?
# unconverged or unsupported pairs are answers too; only a crash of the command fails here
[[ -f "$tmp/s/manifest.json" && $rc -le 1 ]] || { cat "$tmp/solve.err"; fail "solve --save-solution (rc $rc)"; finish; }
grep -q '"solutions"' "$tmp/s/manifest.json" || fail "manifest.json does not name the solutions folder"

checked=0
# solve's table, its columns found by their names in the header line
while read -r label solver iters reason solve_s merit; do
  [[ $iters == - ]] && continue # no answer (unsupported)
  file=$tmp/s/solutions/$label.$solver.hdf5
  [[ -f $file ]] || { fail "$label / $solver: no $file"; continue; }
  prob=$(awk -F'"' -v l="$label" '/"name":/ {n = $4} /"source":/ && n == l {print $4; exit}' "$tmp/s/manifest.json")
  out=$("$bin" score "$prob" "$file" 2>&1) || { fail "score $label / $solver: $out"; continue; }
  got=$(echo "$out" | awk 'NR == 2 {print $(NF - 1)}')
  if [[ "$got" == "$merit" ]]; then
    checked=$((checked + 1))
  else
    fail "$label / $solver: solve printed merit $merit, score printed $got: $out"
  fi
done < <(awk 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next}
               NF >= 7 && $(c["reason"]) ~ /^[A-Z][A-Z_]*$/ {
                 print $(c["problem"]), $(c["solver"]), $(c["iters"]), $(c["reason"]),
                       $(c["solve_s"]), $(c["merit"])}' "$tmp/solve.out")
((checked >= 6)) && pass "score gives the merit solve printed for each of $checked saved answers (${#probs[@]} problems x pgs, nsn, sap)" ||
  fail "only $checked answers scored"

# the saved file keeps the problem: a copy of the source with its /solution
if command -v h5ls >/dev/null; then
  h5ls -r "$tmp/s/solutions/slope_slide-step0.pgs.hdf5" 2>/dev/null | grep -q '^/solution/r' &&
    h5ls -r "$tmp/s/solutions/slope_slide-step0.pgs.hdf5" | grep -q '^/fclib_global' &&
    pass "a saved answer holds the problem and /solution/r (h5ls)" || fail "h5ls: $(h5ls -r "$tmp/s/solutions/slope_slide-step0.pgs.hdf5" 2>&1 | head -5)"
fi

# bad input: an answer of another problem; no such file
expect_fail "an answer of another problem" 1 "/solution/r" "" -- \
  score "$src/tests/data/slope_slide-step0.hdf5" "$tmp/s/solutions/two_box_stack.pgs.hdf5"
expect_fail "no such answer" 1 "$tmp/none.hdf5" "" -- score box_on_plane "$tmp/none.hdf5"
expect_fail "one argument" 2 "PROBLEM and SOLUTION" "" -- score box_on_plane
finish

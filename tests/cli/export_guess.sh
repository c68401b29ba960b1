# SPDX-License-Identifier: Apache-2.0
# `frictionlab export` writes the warm start a simulation offers at each step (the previous
# step's impulses matched by contact feature) as the FCLIB file's /guesses/1, and `solve` with
# warm_start=true starts from it: on a stack at rest the guess is nearly the answer, the zero
# start is not. Without warm_start the file's guess is ignored.
source "$(dirname "$0")/common.bash"

"$bin" export heavy_stack --steps 40:41 --solver pgs --set heavy_stack.n=2 --set pgs.max_iter=5000 \
  --out "$tmp/hs" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
f=$tmp/hs/heavy_stack-step41.hdf5
[[ $rc -eq 0 && -f "$f" ]] && pass "export wrote $f" || { cat "$tmp/stderr"; fail "export exited $rc"; finish; }

# iteration 0 is the start: its merit is the guess's
merit0() { # WARM_START -> the iteration-0 merit of pgs
  "$bin" solve "$f" --solver pgs --set max_iter=0 --set warm_start="$1" --out "$tmp/s$1" \
    >/dev/null 2>"$tmp/stderr" || { cat "$tmp/stderr"; return 1; }
  awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == "merit") c = i} NR == 2 {print $c}' \
    "$tmp/s$1/steps.csv"
}
cold=$(merit0 false) && warm=$(merit0 true) || fail "solve failed"
awk -v c="$cold" -v w="$warm" 'BEGIN {exit !(c > 1e-3 && w < 1e-2 * c)}' &&
  pass "the guess starts near the answer (merit $warm warm, $cold cold)" ||
  fail "warm start from the file's guess: merit $warm warm against $cold cold"
finish

# SPDX-License-Identifier: Apache-2.0
# --wall-limit and --mem-limit run each (problem, solver) pair in a child process: a pair that
# finishes gives the same rows as without them (every column but the timings); a pair past the
# wall limit is killed and recorded as WALL_LIMIT while the other pairs go on and the folder is
# complete; a pair that cannot even start under an address-space limit is recorded, not fatal
# to the harness; bad values are refused before anything is written.
source "$(dirname "$0")/common.bash"

# the columns of steps.csv and iters.csv whose names hold no time
untimed() { # FILE -> the file without its timing columns
  awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) keep[i] = $i !~ /(^time$|_s$)/}
           {s = ""; for (i = 1; i <= NF; i++) if (keep[i]) s = s $i ","; print s}' "$1"
}

"$bin" solve box_on_plane two_box_stack --solver pgs,nsn,pnewton --out "$tmp/plain" \
  >/dev/null 2>"$tmp/stderr" || { cat "$tmp/stderr"; fail "plain solve"; }
"$bin" solve box_on_plane two_box_stack --solver pgs,nsn,pnewton --out "$tmp/guarded" \
  --wall-limit 120 >/dev/null 2>"$tmp/stderr" || { cat "$tmp/stderr"; fail "guarded solve"; }
for f in steps.csv iters.csv; do
  if cmp -s <(untimed "$tmp/plain/$f") <(untimed "$tmp/guarded/$f"); then
    pass "$f under --wall-limit equals the in-process one ($(wc -l <"$tmp/guarded/$f") rows)"
  else
    fail "$f differs under --wall-limit: $(diff <(untimed "$tmp/plain/$f") <(untimed "$tmp/guarded/$f") | head -4)"
  fi
done

# CHOLMOD's supernodal factorization opens OpenMP regions, in the harness when it loads CubeH8
# and again in each child: a child must not wait for the harness's thread pool, which fork()
# does not copy (every pair here took the full wall limit before)
cube=${FL_SHARED_DIR:-}/fclib/CubeH8.hdf5
if [[ -f $cube ]]; then
  "$bin" solve "$cube" --solver pgs,sap,nsn --out "$tmp/cube_plain" >/dev/null 2>"$tmp/stderr" ||
    { cat "$tmp/stderr"; fail "plain solve of CubeH8"; }
  t0=$(date +%s.%N)
  "$bin" solve "$cube" --solver pgs,sap,nsn --wall-limit 20 --out "$tmp/cube_guarded" \
    >/dev/null 2>"$tmp/stderr" || { cat "$tmp/stderr"; fail "guarded solve of CubeH8"; }
  t1=$(date +%s.%N)
  if cmp -s <(untimed "$tmp/cube_plain/iters.csv") <(untimed "$tmp/cube_guarded/iters.csv") &&
     cmp -s <(untimed "$tmp/cube_plain/steps.csv") <(untimed "$tmp/cube_guarded/steps.csv") &&
     ! grep -q WALL_LIMIT "$tmp/cube_guarded/steps.csv"; then
    pass "CubeH8 (supernodal CHOLMOD in harness and children): guarded rows equal the plain ones"
  else
    fail "CubeH8 guarded: $(awk -F, '{print $2, $9}' "$tmp/cube_guarded/steps.csv" | tr '\n' ';')"
  fi
  awk -v a="$t0" -v b="$t1" 'BEGIN {exit !(b - a < 15)}' ||
    fail "CubeH8 guarded took $(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}') s (a child waited)"
else
  echo "skip: no $cube (FL_SHARED_DIR)"
fi

# pgs with no tolerance and no iteration cap never stops by itself: the wall limit stops it
t0=$(date +%s.%N)
"$bin" solve box_on_plane --solver pgs,nsn --set pgs.abs_tol=0 --set pgs.rel_tol=0 \
  --set pgs.max_iter=2000000000 --set error_every=1000000 --wall-limit 1 --out "$tmp/killed" \
  >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
t1=$(date +%s.%N)
row() { awk -F, -v s="$2" '$2 == s {print $7 "," $9}' "$1/steps.csv"; }
if [[ $rc -eq 0 && "$(row "$tmp/killed" pgs)" == "error,WALL_LIMIT" &&
      "$(row "$tmp/killed" nsn)" == "returned,CONVERGED_ATOL" ]]; then
  pass "pgs killed at the wall limit (WALL_LIMIT), nsn solved after it, exit 0"
else
  fail "wall limit: exit $rc, pgs '$(row "$tmp/killed" pgs)', nsn '$(row "$tmp/killed" nsn)'; $(head -c 300 "$tmp/stderr")"
fi
awk -v a="$t0" -v b="$t1" 'BEGIN {exit !(b - a < 60)}' &&
  pass "the killed run returned ($(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s)" ||
  fail "the killed run took $(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}') s"
grep -q 'killed after the wall limit' "$tmp/killed/manifest.json" &&
  pass "the manifest notes the kill" || fail "no note of the kill in the manifest"
[[ -z "$(awk -F, '$2 == "pgs"' "$tmp/killed/iters.csv")" ]] &&
  pass "no iteration records of the killed pair" || fail "iteration records of a killed pair"

# profile takes the limits too; the killed pair counts as not solved
"$bin" profile box_on_plane --solver pgs,nsn --set pgs.abs_tol=0 --set pgs.rel_tol=0 \
  --set pgs.max_iter=2000000000 --set error_every=1000000 --wall-limit 1 --out "$tmp/prof" \
  >/dev/null 2>"$tmp/stderr"
rc=$?
if [[ $rc -eq 0 ]] && grep -q '^box_on_plane,pgs,0,' "$tmp/prof/costs.csv" &&
   grep -q '^box_on_plane,nsn,1,' "$tmp/prof/costs.csv"; then
  pass "profile --wall-limit: pgs unsolved, nsn solved"
else
  fail "profile --wall-limit: exit $rc; $(cat "$tmp/prof/costs.csv" 2>/dev/null | head -3) $(head -c 300 "$tmp/stderr")"
fi

# under AddressSanitizer the allocator serves memory from regions reserved at start, which an
# address-space limit does not see, so these checks run on the plain build only
if ldd "$bin" 2>/dev/null | grep -q libasan; then
  echo "skip: --mem-limit under AddressSanitizer"
else
  "$bin" solve box_on_plane --solver pgs --mem-limit 1000 --out "$tmp/roomy" >/dev/null \
    2>"$tmp/stderr" && cmp -s <(untimed "$tmp/roomy/steps.csv") \
    <(awk -F, 'NR == 1 || $1 == "box_on_plane" && $2 == "pgs"' "$tmp/plain/steps.csv" | untimed /dev/stdin) &&
    pass "--mem-limit 1000: the same row" || fail "--mem-limit 1000 changed the row: $(head -c 300 "$tmp/stderr")"
  # pnewton's LU of a 300-grain pile needs more than 1 MB beyond the harness's memory; pgs does not
  "$bin" export granular --set granular.n=300 --steps 40:40 --solver pgs --out "$tmp/pile" \
    >/dev/null 2>&1 || fail "export of a 300-grain pile"
  "$bin" solve "$tmp/pile/granular-step40.hdf5" --solver pnewton,pgs --set max_iter=3 \
    --mem-limit 0.001 --out "$tmp/tiny" >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  if [[ $rc -eq 0 && "$(row "$tmp/tiny" pnewton)" == "error,FL_ERR_NOMEM" &&
        "$(row "$tmp/tiny" pgs)" == "returned,DIVERGED_MAX_ITER" ]]; then
    pass "--mem-limit 0.001: pnewton out of memory (recorded, not a failure), pgs ran after it"
  else
    fail "--mem-limit 0.001: exit $rc, pnewton '$(row "$tmp/tiny" pnewton)', pgs '$(row "$tmp/tiny" pgs)'; $(head -c 300 "$tmp/stderr")"
  fi
fi

expect_fail "--wall-limit 0" 2 "expected a positive number" "$tmp/bad1" -- \
  solve box_on_plane --solver pgs --wall-limit 0 --out "$tmp/bad1"
expect_fail "--mem-limit abc" 2 "expected a positive number" "$tmp/bad2" -- \
  solve box_on_plane --solver pgs --mem-limit abc --out "$tmp/bad2"
expect_fail "--wall-limit nan" 2 "--wall-limit" "$tmp/bad3" -- \
  profile box_on_plane --solver pgs --wall-limit nan --out "$tmp/bad3"
finish

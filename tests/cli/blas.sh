# SPDX-License-Identifier: Apache-2.0
# The frictionlab program's BLAS (CMake FL_BLAS, issue 52): it runs on OpenBLAS (Debian's
# openblas-pthread) on one thread without any system alternative changed, LD_LIBRARY_PATH can
# put the reference BLAS/LAPACK under it instead, and the committed `check` baselines hold
# under both: the cases below are among those whose numbers moved between the two BLAS (ipm,
# pnewton, admm, nsn on the piles and the arch: docs/check.md, "Which BLAS"), with SAP.
# ctest-label: slow
source "$(dirname "$0")/common.bash"
src=${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
arch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
ref=/usr/lib/$arch/blas
reflp=/usr/lib/$arch/lapack
ob=/usr/lib/$arch/openblas-pthread
# scenes / solvers of each check run (about 15 s a BLAS)
runs=("box_pile,table_pile,arch_parabolic ipm,pnewton,sap" "granular sap,admm,nsn")

"$bin" version >"$tmp/v" 2>&1 || fail "version: $(cat "$tmp/v")"
if [[ -e $ob/libblas.so.3 ]]; then
  grep -q "^blas: $ob/libblas.so.3 (OpenBLAS, 1 thread)" "$tmp/v" &&
    pass "the program runs on OpenBLAS, one thread: $(grep '^blas:' "$tmp/v")" ||
    fail "not OpenBLAS on one thread: $(cat "$tmp/v")"
  OPENBLAS_NUM_THREADS=2 "$bin" version | grep -q "(OpenBLAS, 2 threads)" &&
    pass "OPENBLAS_NUM_THREADS is honoured" || fail "OPENBLAS_NUM_THREADS=2 not honoured"
  # the machine's own libblas.so.3 is whatever it was: the program's choice is its own
  sys=$(readlink -f "/usr/lib/$arch/libblas.so.3")
  pass "system libblas.so.3 left at $sys"
else
  echo "no $ob (libopenblas0-pthread): the OpenBLAS half is skipped"
fi

if [[ -e $ref/libblas.so.3 && -e $reflp/liblapack.so.3 ]]; then
  LD_LIBRARY_PATH=$ref:$reflp "$bin" version | grep -q "^blas: $ref/libblas.so.3$" &&
    pass "LD_LIBRARY_PATH puts the reference BLAS under it" ||
    fail "reference BLAS not taken: $(LD_LIBRARY_PATH=$ref:$reflp "$bin" version)"
fi

dir=$src/results/baselines
for which in default reference; do
  if [[ $which == reference ]]; then
    [[ -e $ref/libblas.so.3 ]] || continue
    env=(env LD_LIBRARY_PATH=$ref:$reflp)
  else
    env=(env)
  fi
  for r in "${runs[@]}"; do
    read -r only solvers <<<"$r"
    "${env[@]}" "$bin" check --baselines "$dir" --only "$only" --solver "$solvers" >"$tmp/c.$which" 2>&1
    rc=$?
    [[ $rc -eq 0 ]] && grep -Eq "^check: [0-9]+ cases, .*: 0 regressions in 0 cases, 0 changed outcomes" "$tmp/c.$which" &&
      pass "check --only $only --solver $solvers holds under the $which BLAS ($(grep '^check:' "$tmp/c.$which"))" ||
      fail "check $only / $solvers under the $which BLAS: exit $rc: $(grep -E 'REGRESSED|CHANGED|MISSING|^check' "$tmp/c.$which" | head -n 20)"
  done
done
finish

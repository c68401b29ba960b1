# SPDX-License-Identifier: Apache-2.0
# frictionlab check catches regressions: every solver made worse in three ways (fewer
# iterations, a looser tolerance or a shorter fixed budget, a perturbed parameter) must be
# flagged by at least one case of the committed baselines (exit 1, a REGRESSED row). Prints
# the table of docs/check.md: mutation, cases flagged, the quantities that caught it.
# One CTest test per mutation, SOLVER-KEY-VALUE (the whole script took 89 s in Release at a
# load of 16 on 2 cores; the three of nsn 116 s under the sanitizers at a load of 9).
# ctest-parts: pgs-max_iter-3 pgs-abs_tol-1e-5 pgs-omega-0.6 jacobi-max_iter-3 jacobi-abs_tol-1e-5 jacobi-omega-0.1 primal-descent-max_iter-5 primal-descent-max_iter-15 primal-descent-k_n-1e6 dual-descent-max_iter-5 dual-descent-max_iter-15 dual-descent-alpha-0.05 sap-max_iter-2 sap-rel_tol-1e-3 sap-beta-10 nsn-max_iter-10 nsn-abs_tol-1e-5 nsn-lin.max_iter-3
# ctest-label: slow
# (whether check flags a worse solver is the same question in every build: the Release pass
# answers it; the sanitizer pass runs cli.check's cases, the same solvers on the same scenes)
source "$(dirname "$0")/common.bash"
part=${2:?usage: bash check_mutations.sh FRICTIONLAB SOLVER-KEY-VALUE}
src=${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
dir=$src/results/baselines
[[ -f $dir/heavy_stack.json ]] || { fail "no baselines in $dir"; finish; }

mutations=(
  "pgs max_iter=3" "pgs abs_tol=1e-5" "pgs omega=0.6"
  "jacobi max_iter=3" "jacobi abs_tol=1e-5" "jacobi omega=0.1"
  "primal-descent max_iter=5" "primal-descent max_iter=15" "primal-descent k_n=1e6"
  "dual-descent max_iter=5" "dual-descent max_iter=15" "dual-descent alpha=0.05"
  "sap max_iter=2" "sap rel_tol=1e-3" "sap beta=10"
  "nsn max_iter=10" "nsn abs_tol=1e-5" "nsn lin.max_iter=3"
)
echo "| solver | mutation | cases flagged | quantities that caught it (cases) |"
echo "| --- | --- | --- | --- |"
# every mutation is a part (the ctest-parts line above)
parts=" $(sed -n 's/^# ctest-parts: //p' "$0") "
for m in "${mutations[@]}"; do
  name="${m%% *}-${m#* }"
  [[ $parts == *" ${name//=/-} "* ]] || fail "mutation '$m' is no part of the ctest-parts line"
done
n=0
for m in "${mutations[@]}"; do
  solver=${m%% *} set=${m#* }
  name="$solver-${set//=/-}"
  [[ $name == "$part" ]] || continue
  n=$((n + 1))
  "$bin" check --baselines "$dir" --solver "$solver" --set "$solver.$set" >"$tmp/m.out" 2>&1
  rc=$?
  ncase=$(grep REGRESSED "$tmp/m.out" | awk '{print $1}' | sort -u | wc -l)
  qs=$(grep REGRESSED "$tmp/m.out" | awk '{print $3}' | sort | uniq -c | sort -rn |
    awk '{printf "%s%s (%d)", (NR > 1 ? ", " : ""), $2, $1}')
  echo "| $solver | $set | $ncase | $qs |"
  if [[ $rc -eq 1 && $ncase -gt 0 ]]; then
    pass "$solver.$set flagged"
  else
    fail "$solver.$set not flagged (exit $rc): $(tail -n 5 "$tmp/m.out")"
  fi
done
((n > 0)) || fail "no mutation '$part'"
finish

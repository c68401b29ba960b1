# SPDX-License-Identifier: Apache-2.0
# `frictionlab list`: every registered solver (the registry's fl_solver_register calls) with its
# summary, capabilities and options; the built-in examples; figures; help and version.
source "$(dirname "$0")/common.bash"

"$bin" list solvers >"$tmp/solvers" 2>"$tmp/stderr" || fail "list solvers exited non-zero"
mapfile -t names < <(solver_names)
n=${#names[@]}
claimed=$(sed -n 's/^solvers (\([0-9]*\) registered.*/\1/p' "$tmp/solvers")
[[ "$claimed" == "$n" && $n -gt 0 ]] && pass "list solvers shows $n solvers" ||
  fail "list solvers: header says '$claimed', $n entries"

# the registry source registers as many tables as are listed (when the source is at hand)
reg=${FL_SOURCE_DIR:-}/solvers/registry.c
if [[ -f "$reg" ]]; then
  # ops tables named outside #if blocks must all be listed (GPU ones may be compiled out)
  nreg=$(awk '/^[ \t]*#[ \t]*if/ {depth++} /^[ \t]*#[ \t]*endif/ {depth--}
              depth == 0 && /&fl_[a-z0-9_]+_ops/ {n++} END {print n + 0}' "$reg")
  ((n >= nreg)) && pass "all $nreg unconditionally registered ops tables of registry.c are listed" ||
    fail "registry.c registers $nreg solvers unconditionally, list shows $n"
fi
for s in pgs jacobi; do
  printf '%s\n' "${names[@]}" | grep -qx "$s" && pass "$s is listed" || fail "$s is not listed"
done

# each solver block has capabilities and the common options with defaults
for s in "${names[@]}"; do
  block=$(awk -v s="$s" '$0 ~ "^" s ": " {on = 1; next} /^[a-z0-9][a-z0-9._-]*: / {on = 0} on' "$tmp/solvers")
  grep -q "capabilities:" <<<"$block" || fail "$s: no capabilities line"
  for key in max_iter abs_tol rel_tol; do
    grep -q "$key" <<<"$block" || fail "$s: option $key not listed"
  done
  # every listed solver name is accepted by solve (checked before anything runs)
  "$bin" solve --solver "$s" --set no_such_option=1 --out "$tmp/x" >/dev/null 2>"$tmp/err"
  grep -q "no_such_option" "$tmp/err" || fail "$s: solve did not check options: $(cat "$tmp/err")"
done
pass "capabilities and options of every solver"

"$bin" list problems >"$tmp/problems" || fail "list problems exited non-zero"
nprob=$(awk 'NR > 2 && ($2 == "global" || $2 == "local")' "$tmp/problems" | wc -l)
((nprob > 0)) && pass "list problems shows $nprob examples" || fail "list problems shows none: $(cat "$tmp/problems")"
grep -q "cannot be created" "$tmp/problems" && fail "an example cannot be created: $(grep 'cannot be created' "$tmp/problems")"

# the rows show the default that runs, a solver's overrides of the common options included
"$bin" list solvers >"$tmp/solvers" || fail "list solvers exited non-zero"
grep -Eq '^  primal-descent.max_iter +int +default 20 ' "$tmp/solvers" &&
  grep -Eq '^  nsn.max_iter +int +default 100 ' "$tmp/solvers" &&
  grep -Eq '^  sap.rel_tol +real +default 1e-06 ' "$tmp/solvers" &&
  grep -Eq '^  pgs.max_iter +int +default 100 ' "$tmp/solvers" &&
  pass "list solvers shows the defaults that run" ||
  fail "list solvers defaults: $(grep -E 'max_iter|rel_tol' "$tmp/solvers" | head)"

"$bin" list figures >"$tmp/figures" || fail "list figures exited non-zero"
[[ -s "$tmp/figures" ]] && pass "list figures prints something" || fail "list figures prints nothing"
# each figure names its paper (first author, year), and the papers' references follow
grep -Eq '^  macklin-fig20 +Macklin 2020 ' "$tmp/figures" && grep -Eq '^  han-fig4 +Han 2023 ' "$tmp/figures" &&
  grep -q 'arXiv:2303.08912' "$tmp/figures" && ! grep -q ' seed [0-9]' "$tmp/figures" &&
  pass "list figures names each figure's paper" || fail "list figures papers: $(head -n 5 "$tmp/figures")"

"$bin" list >"$tmp/all" || fail "list exited non-zero"
grep -q "^solvers (" "$tmp/all" && grep -q "example problems" "$tmp/all" && grep -q "^figures" "$tmp/all" &&
  pass "list without argument shows all sections" || fail "list without argument: $(head -c 300 "$tmp/all")"

"$bin" help >"$tmp/help" && grep -q "solve" "$tmp/help" && grep -q "list" "$tmp/help" &&
  pass "help lists the sub-commands" || fail "help: $(cat "$tmp/help")"
"$bin" solve --help >"$tmp/help" && grep -q -- "--solver" "$tmp/help" && pass "solve --help" || fail "solve --help"
"$bin" version | grep -Eq '^frictionlab [0-9]+\.[0-9]+\.[0-9]+' && pass "version" || fail "version: $("$bin" version)"

finish

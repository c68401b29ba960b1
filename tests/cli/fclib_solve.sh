# SPDX-License-Identifier: Apache-2.0
# `frictionlab solve` on FCLIB files from $FL_SHARED_DIR/fclib (skipped without them): a local
# and a global problem; solvers that need A and J run on the local one through its lift
# (docs/lift.md), except peers (Siconos's global solvers), which report "unsupported".
source "$(dirname "$0")/common.bash"

dir=${FL_SHARED_DIR:-}/fclib
local_file=$dir/Capsules-i97-269.hdf5
global_file=$dir/LMGC_GFC3D-i00001-1-00000.hdf5
if [[ ! -f "$local_file" || ! -f "$global_file" ]]; then
  echo "skipped: no FCLIB files under \$FL_SHARED_DIR/fclib"
  exit 77
fi
mapfile -t solvers < <(solver_names)
list=$(IFS=,; echo "${solvers[*]}")
# solvers whose capabilities say they need A and J
"$bin" list solvers >"$tmp/solvers"
mapfile -t needs_aj < <(awk -F: '/^[a-z0-9][a-z0-9._-]*: / {name = $1} /capabilities:.*needs-A-and-J/ && !/capabilities:.*peer/ {print name}' "$tmp/solvers")
mapfile -t peers_aj < <(awk -F: '/^[a-z0-9][a-z0-9._-]*: / {name = $1} /capabilities:.*needs-A-and-J.*peer/ {print name}' "$tmp/solvers")

out=$tmp/fclib
"$bin" solve "$local_file" "$global_file" --solver "$list" --set max_iter=300 --out "$out" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
[[ $rc -eq 0 ]] && pass "solve on a local and a global FCLIB file" || { cat "$tmp/stdout" "$tmp/stderr"; fail "solve exited $rc"; finish; }
nrows=$(awk 'END {print NR - 1}' "$out/steps.csv")
[[ $nrows -eq $((2 * ${#solvers[@]})) ]] && pass "steps.csv has $nrows rows" || fail "steps.csv has $nrows rows, expected $((2 * ${#solvers[@]}))"
awk -F, 'NR > 1 && $1 == "Capsules-i97-269" && $3 != "local" {exit 1}' "$out/steps.csv" &&
  awk -F, 'NR > 1 && $1 == "LMGC_GFC3D-i00001-1-00000" && ($3 != "global" || $5 != 48) {exit 1}' "$out/steps.csv" &&
  pass "kinds and sizes of the two problems" || fail "kinds or sizes in steps.csv: $(cat "$out/steps.csv")"
[[ ${#needs_aj[@]} -ge 2 ]] && pass "${#needs_aj[@]} solvers need A and J" || fail "needs A and J: ${needs_aj[*]}"
for s in "${needs_aj[@]}"; do
  # a result (primal descent's penalty iteration may well be far from converged: docs/lift.md)
  st=$(awk -F, -v s="$s" 'NR > 1 && $1 == "Capsules-i97-269" && $2 == s {print $7 "," $9}' "$out/steps.csv")
  [[ "$st" == returned,[A-Z]* ]] && pass "$s (needs A and J) returned a result on the lifted local file" ||
    fail "$s on the local file: status,reason '$st', expected returned with a reason"
done
for s in "${peers_aj[@]}"; do
  st=$(awk -F, -v s="$s" 'NR > 1 && $1 == "Capsules-i97-269" && $2 == s {print $7}' "$out/steps.csv")
  [[ "$st" == unsupported ]] && pass "peer $s (needs A and J) is unsupported on the local file" ||
    fail "$s on the local file: status '$st', expected unsupported"
  grep -q "Capsules-i97-269 / $s: unsupported" "$tmp/stdout" || fail "$s: unsupported not reported on stdout"
done
# the others ran
for s in pgs jacobi; do
  st=$(awk -F, -v s="$s" 'NR > 1 && $2 == s && $7 != "returned" {print $1}' "$out/steps.csv")
  [[ -z "$st" ]] && pass "$s solved both files" || fail "$s did not solve: $st"
done

# --keep-going reports an unreadable file and solves the rest
echo "not hdf5" >"$tmp/bad.hdf5"
"$bin" solve "$tmp/bad.hdf5" "$local_file" --solver pgs --set max_iter=20 --keep-going --out "$tmp/kg" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
if [[ $rc -eq 0 ]] && grep -q "$tmp/bad.hdf5" "$tmp/stderr" && grep -q "bad.hdf5" "$tmp/kg/manifest.json" &&
   [[ $(awk 'END {print NR - 1}' "$tmp/kg/steps.csv") -eq 1 ]]; then
  pass "--keep-going skips the unreadable file and records it"
else
  fail "--keep-going: exit $rc, stderr $(cat "$tmp/stderr")"
fi

finish

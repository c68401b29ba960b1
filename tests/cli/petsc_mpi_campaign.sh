# SPDX-License-Identifier: Apache-2.0
# Campaigns over MPI ranks (docs/campaigns.md): `mpiexec -n 2 frictionlab solve|profile` writes
# the same folder as a serial run, apart from timings, the date and the manifest's rank count.
# Skipped without mpiexec or in a build without MPI (it comes with PETSc). Named petsc_* so
# that the sanitizer pass runs it with the MPI leak suppressions.
source "$(dirname "$0")/common.bash"
command -v mpiexec >/dev/null 2>&1 || { echo "skipped: no mpiexec"; exit 77; }
mpi() { timeout 300 mpiexec --allow-run-as-root --oversubscribe -n 2 "$bin" "$@"; }

mpi solve --examples --solver sap,pgs,nsn --out "$tmp/par" >"$tmp/o" 2>"$tmp/e"
rc=$?
if grep -q "this build has no MPI" "$tmp/e"; then
  [[ $rc -ne 0 && ! -e "$tmp/par" ]] || { fail "no-MPI build: exit $rc, yet a folder"; finish; }
  echo "skipped: this build has no MPI (it refused the 2-rank launch, as it should)"
  exit 77
fi
[[ $rc -eq 0 ]] && pass "2-rank solve exits 0" || { fail "2-rank solve: exit $rc: $(tail -5 "$tmp/e")"; finish; }
"$bin" solve --examples --solver sap,pgs,nsn --out "$tmp/ser" >/dev/null 2>&1 ||
  fail "serial solve failed"

for f in steps.csv iters.csv; do
  msg=$(same_rows "$tmp/ser/$f" "$tmp/par/$f" 2>&1) && pass "$f of 2 ranks equals the serial one" ||
    fail "$f differs: $msg"
done
rows=$(($(wc -l <"$tmp/ser/steps.csv") - 1))
[[ $rows -ge 20 ]] && pass "$rows (problem, solver) pairs compared" || fail "only $rows pairs"
ranks() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ranks"])' "$1"; }
[[ $(ranks "$tmp/par/manifest.json") == 2 && $(ranks "$tmp/ser/manifest.json") == 1 ]] &&
  pass "manifest counts the ranks (2 and 1)" || fail "ranks: $(ranks "$tmp/par/manifest.json")"
n=$(grep -c "^problem " "$tmp/o")
[[ $n -eq 1 ]] && pass "one table, printed by rank 0" || fail "$n tables printed"

# profile over FCLIB files (a local and a global one) with Siconos when the build has it
if [[ -d "${FL_SHARED_DIR:-}/fclib" ]]; then
  solvers=pgs,nsn,sap
  "$bin" list solvers | grep -q '^siconos-nsgs: ' && solvers=$solvers,siconos-nsgs
  files=("$FL_SHARED_DIR/fclib/Box_Stacks-i0035-31-0.hdf5"
         "$FL_SHARED_DIR/fclib/converted_from_siconos_dat/FrictionContact3D_1c.hdf5")
  mpi profile "${files[@]}" --solver "$solvers" --tol 1e-8 --out "$tmp/ppar" >"$tmp/o" 2>"$tmp/e"
  rc=$?
  "$bin" profile "${files[@]}" --solver "$solvers" --tol 1e-8 --out "$tmp/pser" >/dev/null 2>&1
  if [[ $rc -eq 0 ]]; then
    pass "2-rank profile ($solvers) exits 0"
    msg=$(same_rows "$tmp/pser/solve/steps.csv" "$tmp/ppar/solve/steps.csv" 2>&1) &&
      pass "profile's solve rows equal the serial ones" || fail "profile rows differ: $msg"
    cmp -s <(cut -d, -f1-3,5 "$tmp/pser/costs.csv") <(cut -d, -f1-3,5 "$tmp/ppar/costs.csv") &&
      pass "profile's costs (solved, iterations) equal the serial ones" ||
      fail "costs differ: $(diff "$tmp/pser/costs.csv" "$tmp/ppar/costs.csv" | head -5)"
  else
    fail "2-rank profile: exit $rc: $(tail -5 "$tmp/e")"
  fi
fi

# a collective PETSc solve cannot run while the ranks solve different pairs: a reason, no hang
# (the Fischer-Burmeister Newton on global problems; local ones are solved by the Alart-Curnier
# Newton, with no inner solver)
mpi solve --examples --solver nsn --set nsn.ncp=fb --set nsn.lin=petsc --set nsn.lin.petsc_comm=world \
  --out "$tmp/w" >"$tmp/o" 2>"$tmp/e"
grep -q "cannot run inside an MPI campaign" "$tmp/o" "$tmp/e" &&
  awk -F, 'NR > 1 && $3 == "global" {n++; if ($7 != "unsupported") bad = 1}
           END {exit bad || n == 0}' "$tmp/w/steps.csv" &&
  pass "lin.petsc_comm=world refused inside a campaign, as unsupported" ||
  fail "petsc_comm=world: $(tail -3 "$tmp/e") $(cut -d, -f1-7 "$tmp/w/steps.csv" 2>&1 | head -3)"

# the folder exists already: both ranks stop, no hang, nothing half-written
mpi solve --examples --solver pgs --out "$tmp/par" >"$tmp/o" 2>"$tmp/e"
rc=$?
[[ $rc -ne 0 && $rc -ne 124 ]] && grep -q "already exists" "$tmp/e" &&
  pass "existing folder refused on every rank (exit $rc)" || fail "existing folder: exit $rc"

# commands that do not split their work refuse several ranks
mpi run heavy_stack --steps 2 --out "$tmp/run" >"$tmp/o" 2>"$tmp/e"
rc=$?
[[ $rc -eq 2 && ! -e "$tmp/run" ]] && grep -q "only solve and profile" "$tmp/e" &&
  pass "run refuses several ranks (exit 2)" || fail "run under mpiexec: exit $rc: $(head -3 "$tmp/e")"
finish

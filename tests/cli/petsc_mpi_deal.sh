# SPDX-License-Identifier: Apache-2.0
# The dynamic deal over MPI ranks (docs/campaigns.md, issue 49 item 6): under mpiexec rank 0
# hands out pairs, largest problem first, as ranks free up, and commits each record as it
# arrives; the folder equals a serial run's (timings aside); a SIGTERM stops the deal and
# leaves an "interrupted" folder that `mpiexec ... --resume` finishes. Skipped without
# mpiexec or MPI. Named petsc_* so the sanitizer pass runs it with the MPI suppressions.
source "$(dirname "$0")/common.bash"
command -v mpiexec >/dev/null 2>&1 || { echo "skipped: no mpiexec"; exit 77; }
export FL_PROGRESS_EVERY=0
mpi() { timeout 300 mpiexec --allow-run-as-root --oversubscribe -n "$@"; }
ex=(one_contact_slide one_contact_stick box_on_plane box_on_plane_compliant box_push_slide
    two_box_stack pendulum_bilateral)
args=()
for _ in $(seq 6); do args+=("${ex[@]}"); done
if [[ -d "${FL_SHARED_DIR:-}/fclib" ]]; then
  args+=("$FL_SHARED_DIR/fclib/Box_Stacks-i0035-31-0.hdf5" "$FL_SHARED_DIR/fclib/Capsules-i97-269.hdf5")
fi
cmd=(solve "${args[@]}" --solver pgs,nsn,sap --set max_iter=60)
total=$((${#args[@]} * 3))
state() { /usr/bin/python3 -c 'import json,sys; c=json.load(open(sys.argv[1]+"/campaign.json")); print(c["state"], c["done"], c["pairs"], c["resumed"])' "$1"; }

mpi 3 "$bin" "${cmd[@]}" --out "$tmp/par" >"$tmp/o" 2>"$tmp/e"
rc=$?
if grep -q "this build has no MPI" "$tmp/e"; then echo "skipped: this build has no MPI"; exit 77; fi
[[ $rc -eq 0 ]] && pass "3 ranks (a dealer, 2 workers): exit 0" || { fail "3 ranks: exit $rc: $(tail -3 "$tmp/e")"; finish; }
"$bin" "${cmd[@]}" --out "$tmp/ser" >/dev/null 2>&1 || fail "serial run"
msg=$(same_rows "$tmp/ser" "$tmp/par" 2>&1) && pass "dealt folder equals the serial one ($total pairs)" ||
  fail "dealt folder differs: $msg"
[[ $(state "$tmp/par") == "complete $total $total 0" ]] && pass "campaign.json complete" || fail "state $(state "$tmp/par")"
/usr/bin/python3 - "$tmp/ser/manifest.json" "$tmp/par/manifest.json" <<'PY' && pass "manifest problems (sizes from the workers) as the serial run's" || fail "manifest problems differ"
import json, sys
a, b = (json.load(open(f))["problems"] for f in sys.argv[1:3])
assert a == b, (a[:2], b[:2])
PY

# SIGTERM on rank 0 after 20 pairs: the deal stops, the folder says interrupted; resume under MPI
FL_CAMPAIGN_KILL_AFTER=20 mpi 2 "$bin" "${cmd[@]}" --out "$tmp/k" >/dev/null 2>"$tmp/e"
rc=$?
st=$(state "$tmp/k" 2>/dev/null)
[[ $rc -ne 0 && $st == "interrupted 20 $total 0" ]] && pass "SIGTERM under mpiexec: $st, exit $rc" ||
  fail "SIGTERM under mpiexec: exit $rc, state '$st'; $(tail -3 "$tmp/e")"
mpi 2 "$bin" "${cmd[@]}" --out "$tmp/k" --resume >/dev/null 2>"$tmp/e"
rc=$?
[[ $rc -eq 0 && $(state "$tmp/k") == "complete $total $total 20" ]] &&
  pass "--resume under mpiexec takes over 20 pairs and deals the rest" ||
  fail "resume under mpiexec: exit $rc, $(state "$tmp/k" 2>&1); $(tail -3 "$tmp/e")"
msg=$(same_rows "$tmp/ser" "$tmp/k" 2>&1) && pass "and equals the serial folder" || fail "differs: $msg"
finish

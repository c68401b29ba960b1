# SPDX-License-Identifier: Apache-2.0
# `frictionlab solve ../shared/fclib/*.hdf5 --solver pgs,jacobi` over the whole folder. The
# folder holds a rolling-friction file, a valid FCLIB file of a kind FrictionLab does not
# model: it is reported, recorded as skipped in the manifest, and the others are solved.
source "$(dirname "$0")/common.bash"
shared=${FL_SHARED_DIR:-}
[[ -d "$shared/fclib" ]] || { echo "skipped: no $shared/fclib"; exit 77; }
files=("$shared"/fclib/*.hdf5)
out=$tmp/all
"$bin" solve "${files[@]}" --solver pgs,jacobi --set max_iter=50 --out "$out" >"$tmp/o" 2>"$tmp/e"
rc=$?
[[ $rc -eq 0 ]] && pass "solve over the folder exits 0" || { fail "exit $rc: $(cat "$tmp/e")"; finish; }
nrolling=$(grep -c "rolling" "$tmp/e")
grep -q "skipped: .*rolling-friction problems are unsupported" "$tmp/e" && pass "rolling file reported as skipped" ||
  fail "no skip message: $(cat "$tmp/e")"
grep -q '"skipped"' "$out/manifest.json" && grep -q 'Chute' "$out/manifest.json" &&
  pass "manifest records the skipped file" || fail "manifest lacks the skipped file"
want=$(( (${#files[@]} - nrolling) * 2 ))
rows=$(($(wc -l <"$out/steps.csv") - 1))
[[ $rows -eq $want ]] && pass "steps.csv: $rows rows (problems x 2 solvers)" || fail "steps.csv has $rows rows, want $want"
finish

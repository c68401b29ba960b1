# SPDX-License-Identifier: Apache-2.0
# Bad input on the command line: each case exits non-zero with a message naming the thing,
# and leaves no results folder (nor a staging folder) behind.
source "$(dirname "$0")/common.bash"

out=$tmp/runs/out
first=$(solver_names | head -n 1)
[[ -n "$first" ]] || { echo "no solver listed by 'list solvers'"; exit 1; }

expect_fail "unknown sub-command" 2 "frobnicate" "" -- frobnicate
expect_fail "unknown list section" 2 "widgets" "" -- list widgets
expect_fail "unknown solver" 2 "nosuchsolver" "$out" -- solve --solver nosuchsolver --out "$out"
expect_fail "unknown solver lists valid names" 2 "$first" "$out" -- solve --solver nosuchsolver --out "$out"
expect_fail "empty solver in list" 2 "empty solver name" "$out" -- solve --solver "$first,," --out "$out"
expect_fail "unknown option" 2 "no_such_option" "$out" -- solve --solver "$first" --set no_such_option=1 --out "$out"
# a near miss names the key it nearly spells; a scene file's refusal says which keys it takes
expect_fail "near-miss option" 2 "did you mean 'max_iter'?" "$out" -- solve --solver pgs --set max_itr=5 --out "$out"
expect_fail "near-miss scene parameter" 2 "did you mean heavy_stack's parameter 'n'?" "$out" -- \
  run heavy_stack --solver pgs --set nn=3 --out "$out"
"$bin" export heavy_stack --scene-json "$tmp/hs.json" >/dev/null 2>&1
expect_fail "unknown key on a scene file" 2 "A scene file takes scene.dt" "$out" -- \
  run "$tmp/hs.json" --solver pgs --set mu=0.3 --out "$out"
expect_fail "option of the wrong type" 2 "max_iter" "$out" -- solve --solver "$first" --set max_iter=many --out "$out"
expect_fail "option out of range" 2 "max_iter" "$out" -- solve --solver "$first" --set max_iter=-3 --out "$out"
expect_fail "real option out of range" 2 "abs_tol" "$out" -- solve --solver "$first" --set abs_tol=-1 --out "$out"
expect_fail "option without a value" 2 "key=value" "$out" -- solve --solver "$first" --set max_iter --out "$out"
# a prefix naming a registered solver that is not run: ignored with a note (docs/usage.md)
last=$(solver_names | tail -n 1)
"$bin" solve one_contact_slide --solver "$first" --set "$last.max_iter=5" --out "$tmp/unsel" >/dev/null 2>"$tmp/stderr" &&
  grep -qF -- "--set '$last.max_iter=5': $last is not run here; ignored" "$tmp/stderr" &&
  pass "prefixed option for an unselected solver: ignored with a note" ||
  fail "prefixed option for an unselected solver: $(head -c 400 "$tmp/stderr")"
# a key that is both a scene parameter and an option of a solver run is refused as ambiguous
expect_fail "ambiguous scene and solver key" 2 "write scene.beta=0.2 or sap.beta=0.2" "$out" -- \
  run elastic_cube --solver sap --steps 1 --set beta=0.2 --out "$out"
expect_fail "missing --out value" 2 "--out needs a value" "" -- solve --solver "$first" --out
expect_fail "missing --solver value" 2 "--solver needs a value" "$out" -- solve --out "$out" --solver
expect_fail "unknown flag" 2 "--frobnicate" "$out" -- solve --frobnicate --out "$out"
expect_fail "unknown normalization" 2 "euclid" "$out" -- solve --norm euclid --out "$out"
expect_fail "missing file" nonzero "$tmp/none/missing.hdf5" "$out" -- solve "$tmp/none/missing.hdf5" --out "$out"
expect_fail "unknown example" nonzero "no_such_example" "$out" -- solve no_such_example --out "$out"

# files that are not FCLIB files: the loader names the file
printf '' >"$tmp/empty.hdf5"
expect_fail "empty file" nonzero "$tmp/empty.hdf5" "$out" -- solve "$tmp/empty.hdf5" --out "$out"
echo "this is not HDF5" >"$tmp/text.hdf5"
expect_fail "text file" nonzero "$tmp/text.hdf5" "$out" -- solve "$tmp/text.hdf5" --out "$out"
shared=${FL_SHARED_DIR:-}
if [[ -n "$shared" && -f "$shared/fclib/Capsules-i97-269.hdf5" ]]; then
  head -c 20000 "$shared/fclib/Capsules-i97-269.hdf5" >"$tmp/truncated.hdf5"
  expect_fail "truncated FCLIB file" nonzero "$tmp/truncated.hdf5" "$out" -- solve "$tmp/truncated.hdf5" --out "$out"
  # one bad file among good ones still stops everything before the folder is made
  expect_fail "bad file after a good one" nonzero "$tmp/text.hdf5" "$out" -- solve "$shared/fclib/Capsules-i97-269.hdf5" "$tmp/text.hdf5" --out "$out"
else
  echo "note: no \$FL_SHARED_DIR/fclib; truncated-file cases not run"
fi

# an existing non-empty folder is not overwritten without --force, and is left as it was
mkdir -p "$tmp/keep" && echo precious >"$tmp/keep/file"
"$bin" solve --solver "$first" --set max_iter=3 --out "$tmp/keep" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
if [[ $rc -ne 0 ]] && grep -q -- "--force" "$tmp/stderr" && [[ "$(cat "$tmp/keep/file")" == precious ]] &&
   ! ls -a "$tmp" | grep -q staging; then
  pass "existing folder kept without --force (exit $rc)"
else
  fail "existing folder without --force: exit $rc, stderr: $(cat "$tmp/stderr")"
fi
"$bin" solve --solver "$first" --set max_iter=3 --out "$tmp/keep" --force >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
if [[ $rc -eq 0 && -f "$tmp/keep/manifest.json" && ! -e "$tmp/keep/file" ]]; then
  pass "--force replaces the folder"
else
  fail "--force: exit $rc, contents: $(ls "$tmp/keep"), stderr: $(cat "$tmp/stderr")"
fi

finish

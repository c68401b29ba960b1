# SPDX-License-Identifier: Apache-2.0
# scripts/benchmark on a corner of the set: the scene export writes a problem that loads with
# contacts, the profile runs FrictionLab's solvers (and Siconos's, when built with them) in one
# run, and the table has one row per problem with the best solver of each system.
source "$(dirname "$0")/common.bash"
src=${FL_SOURCE_DIR:?}
[[ -d "${FL_SHARED_DIR:-}/fclib" ]] || { echo "skipped: no fclib folder"; exit 77; }
command -v gnuplot >/dev/null 2>&1 && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null ||
  { echo "skipped: gnuplot or matplotlib (/usr/bin/python3) missing"; exit 77; }
export FL_BIN=$bin
n=$(bash "$src/scripts/benchmark" list | wc -l)
nf=$(find "$FL_SHARED_DIR/fclib" -name '*.hdf5' | wc -l)
[[ $n -eq $((nf + 8)) ]] && pass "the set: $nf FCLIB files and 8 scene problems" ||
  fail "list has $n lines, expected $((nf + 8))"
solvers=pgs,nsn
"$bin" list solvers | grep -q '^siconos-nsgs: ' && solvers=$solvers,siconos-nsgs
bash "$src/scripts/benchmark" run --only heavy_stack,Rover --solver "$solvers" \
  --set-dir "$tmp/set" --out "$tmp/b" --time-limit 10 >"$tmp/o" 2>"$tmp/e"
rc=$?
[[ $rc -eq 0 ]] && pass "benchmark exits 0" || { fail "exit $rc: $(tail -5 "$tmp/e")"; finish; }
f=$tmp/set/heavy_stack/heavy_stack-step120.hdf5
[[ -s $f ]] && pass "heavy_stack step 120 exported" || fail "$f missing"
# the five-box stack standing at step 120: four resting faces of four corners each
nc=$(awk -F, '$1 == "heavy_stack-step120" {print $4; exit}' "$tmp/b/solve/steps.csv")
[[ "$nc" -ge 16 ]] && pass "heavy_stack step 120 has $nc contacts" || fail "heavy_stack nc '$nc'"
for p in heavy_stack-step120 Rover4396; do
  grep -q "^| $p | " "$tmp/b/benchmark.md" && pass "table row $p" || fail "no table row $p"
done
# NSN solves the heavy stack's step to 1e-8 (its Newton iterations with PCR)
awk -F, '$1 == "heavy_stack-step120" && $2 == "nsn" {t = $4} END {exit !(t + 0 > 0 && t != "inf")}' \
  "$tmp/b/costs.csv" && pass "nsn solves heavy_stack step 120 to 1e-8" ||
  fail "nsn's cost on heavy_stack: $(grep heavy_stack "$tmp/b/costs.csv")"
grep -q "Geometric mean ratio\|FrictionLab / Siconos" "$tmp/b/benchmark.md" ||
  [[ $solvers != *siconos* ]] && pass "summary line" || fail "no summary: $(cat "$tmp/b/benchmark.md")"
bash "$src/scripts/benchmark" run --bogus >"$tmp/o" 2>"$tmp/e"
[[ $? -eq 2 ]] && grep -q "unknown argument '--bogus'" "$tmp/e" && pass "unknown argument refused" ||
  fail "bad argument: $(cat "$tmp/e")"
finish

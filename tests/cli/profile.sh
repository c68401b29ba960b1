# SPDX-License-Identifier: Apache-2.0
# frictionlab profile on built-in examples: costs.csv has one row per problem and solver,
# the profiles start at tau = 1 and never decrease, and the pictures are written.
source "$(dirname "$0")/common.bash"
command -v gnuplot >/dev/null 2>&1 && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null ||
  { echo "skipped: gnuplot or matplotlib (/usr/bin/python3) missing"; exit 77; }
out=$tmp/prof
"$bin" profile box_on_plane one_contact_slide one_contact_stick --solver pgs,jacobi \
  --set max_iter=500 --tol 1e-6 --out "$out" >"$tmp/o" 2>"$tmp/e"
rc=$?
[[ $rc -eq 0 ]] && pass "profile exits 0" || { fail "exit $rc: $(cat "$tmp/e")"; finish; }
rows=$(($(wc -l <"$out/costs.csv") - 1))
[[ $rows -eq 6 ]] && pass "costs.csv: 3 problems x 2 solvers" || fail "costs.csv has $rows rows"
awk -F, 'NR == 1 {next} NR == 2 && $1 + 0 != 1 {bad = 1}
         NR > 2 {for (i = 2; i <= NF; i++) if ($i + 0 < prev[i] - 1e-12) bad = 1}
         {for (i = 2; i <= NF; i++) prev[i] = $i + 0} END {exit bad}' "$out/profile_time.csv" &&
  pass "profile by time starts at tau = 1 and never decreases" || fail "profile_time.csv not monotone"
[[ -s $out/figure.png && -s $out/figure-gnuplot.png && -s $out/manifest.json ]] &&
  pass "pictures and manifest" || fail "pictures or manifest missing"
# both profile's by-iteration and by-time profiles count the same solved problems at large tau
# (the iteration cost is iterations + 1, so a solve at iteration 0 is not dropped)
paste -d, <(tail -n 1 "$out/profile_time.csv") <(tail -n 1 "$out/profile_iters.csv") |
  awk -F, '{n = NF / 2; for (i = 2; i <= n; i++) if ($i != $(i + n)) bad = 1} END {exit bad}' &&
  pass "the time and iteration profiles end at the same fraction solved" ||
  fail "profiles end apart: $(tail -n 1 "$out/profile_time.csv") / $(tail -n 1 "$out/profile_iters.csv")"

# folders: solve and profile take them the same way, subfolders included, saying what they skipped
fclib=${FL_SHARED_DIR:-}/fclib
if [[ -f $fclib/CubeH8.hdf5 ]]; then
  mkdir -p "$tmp/d/sub"
  cp "$fclib/CubeH8.hdf5" "$tmp/d/" && cp "$fclib/CubeH8.hdf5" "$tmp/d/sub/Cube2.hdf5" &&
    echo notes >"$tmp/d/notes.txt"
  "$bin" solve "$tmp/d" --solver pgs --out "$tmp/s" >"$tmp/o" 2>&1 &&
    grep -q "2 FCLIB files (1 in subfolders: sub); skipped 1 other entry: notes.txt" "$tmp/o" &&
    pass "solve takes a folder, subfolders included, naming what it skipped" || fail "solve DIR: $(cat "$tmp/o")"
  "$bin" profile "$tmp/d" --solver pgs --out "$tmp/pd" >"$tmp/o" 2>&1 &&
    grep -q "2 FCLIB files (1 in subfolders" "$tmp/o" && [[ $(($(wc -l <"$tmp/pd/costs.csv") - 1)) -eq 2 ]] &&
    pass "profile takes the same folder the same way" || fail "profile DIR: $(cat "$tmp/o")"
  # every path it prints exists
  grep -o "$tmp/[^ ]*" "$tmp/o" | sed 's/[,:)]*$//' | while read -r path; do
    [[ -e $path ]] || echo "$path"
  done >"$tmp/gone"
  [[ ! -s $tmp/gone ]] && pass "profile prints only paths that exist" || fail "paths gone: $(cat "$tmp/gone")"
fi
"$bin" profile --from "$tmp/nowhere" --out "$tmp/p2" >"$tmp/o" 2>"$tmp/e"
[[ $? -ne 0 && ! -e $tmp/p2 ]] && grep -q nowhere "$tmp/e" && pass "missing --from folder named, nothing written" ||
  fail "bad --from: $(cat "$tmp/e")"
finish

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
"$bin" profile --from "$tmp/nowhere" --out "$tmp/p2" >"$tmp/o" 2>"$tmp/e"
[[ $? -ne 0 && ! -e $tmp/p2 ]] && grep -q nowhere "$tmp/e" && pass "missing --from folder named, nothing written" ||
  fail "bad --from: $(cat "$tmp/e")"
finish

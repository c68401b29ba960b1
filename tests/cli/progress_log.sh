# SPDX-License-Identifier: Apache-2.0
# Progress in logs (docs/campaigns.md, issue 49 item 8): when stderr is not a terminal, solve
# and profile print a line every few seconds (FL_PROGRESS_EVERY seconds here) with the pairs
# done of the total, failures, elapsed time and time left, and one at the end; a short command
# prints none.
source "$(dirname "$0")/common.bash"
ex=(one_contact_slide one_contact_stick box_on_plane box_on_plane_compliant box_push_slide
    two_box_stack pendulum_bilateral)
args=()
for _ in $(seq 20); do args+=("${ex[@]}"); done
FL_PROGRESS_EVERY=0.05 "$bin" solve "${args[@]}" --solver pgs,nsn,sap --set abs_tol=0 \
  --set rel_tol=0 --set max_iter=300 --out "$tmp/a" >/dev/null 2>"$tmp/e" || fail "solve: $(tail -2 "$tmp/e")"
re='^solve: [0-9]+/420 pairs done, [0-9]+ failed, [0-9hms]+ elapsed, ~[0-9hms?]+ left$'
n=$(grep -Ec "$re" "$tmp/e")
[[ $n -ge 1 ]] && pass "$n progress lines in the log: $(grep -E "$re" "$tmp/e" | head -1)" ||
  fail "no progress lines: $(head -3 "$tmp/e")"
grep -Eq '^solve: 420/420 pairs done, 0 failed, [0-9hms]+ elapsed$' "$tmp/e" &&
  pass "a closing line with the total" || fail "closing line: $(tail -2 "$tmp/e")"
FL_PROGRESS_EVERY=0.05 "$bin" profile "${args[@]}" --solver pgs,nsn,sap --set abs_tol=0 \
  --set rel_tol=0 --set max_iter=300 --out "$tmp/p" >/dev/null 2>"$tmp/e" || fail "profile: $(tail -2 "$tmp/e")"
grep -Eq "$re" "$tmp/e" && pass "profile prints them too" || fail "profile: no progress lines"
"$bin" solve one_contact_slide --solver pgs --out "$tmp/b" >/dev/null 2>"$tmp/e"
[[ ! -s "$tmp/e" ]] && pass "a short solve prints nothing on stderr" || fail "short solve: $(cat "$tmp/e")"
finish

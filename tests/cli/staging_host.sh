# SPDX-License-Identifier: Apache-2.0
# Staging folders carry the host and the process id (.NAME.staging-HOST-PID, issue 49 item 7):
# a stale one of this host is removed, one of another host (a node or container sharing the
# results folder) never is, whatever its process id.
source "$(dirname "$0")/common.bash"
par=$tmp/res
mkdir -p "$par"
host=$(hostname)
sh -c 'exit 0' &
dead=$!
wait $dead
mkdir -p "$par/.mine.staging-$host-$dead" "$par/.theirs.staging-node-elsewhere-$dead" \
  "$par/.theirs2.staging-node-elsewhere-$$" "$par/.legacy.staging-$dead"
"$bin" solve one_contact_slide --solver pgs --out "$par/a" >/dev/null 2>"$tmp/stderr" ||
  fail "solve failed: $(cat "$tmp/stderr")"
[[ ! -e "$par/.mine.staging-$host-$dead" ]] && grep -q "staging-$host-$dead, an unfinished" "$tmp/stderr" &&
  pass "a dead process's staging folder of this host is removed, and said so" ||
  fail "own stale folder: $(ls -a "$par" | tr '\n' ' '); $(cat "$tmp/stderr")"
[[ -d "$par/.theirs.staging-node-elsewhere-$dead" && -d "$par/.theirs2.staging-node-elsewhere-$$" ]] &&
  ! grep -q theirs "$tmp/stderr" &&
  pass "staging folders of another host are left alone (dead or live pid here)" ||
  fail "another host's folder touched: $(ls -a "$par" | tr '\n' ' ')"
[[ ! -e "$par/.legacy.staging-$dead" ]] && pass "an older binary's .NAME.staging-PID is judged as this host's" ||
  fail "legacy staging folder kept"

# the staging folder of a live command names this host and its pid
"$bin" run heavy_stack --steps 400 --out "$par/slow" >/dev/null 2>&1 &
pid=$!
seen=""
for _ in $(seq 1 200); do
  seen=$(ls -a "$par" | grep "^\.slow\.staging-" || true)
  [[ -n "$seen" ]] && break
  sleep 0.05
done
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
[[ "$seen" == ".slow.staging-$host-$pid" ]] && pass "staging folder named .slow.staging-HOST-PID" ||
  fail "staging name '$seen', expected .slow.staging-$host-$pid"

# a killed campaign's staging folder is kept for --resume only when a pair record was committed
# in it; a record cut off while written (<id>.json.tmp-PID) is not a finished pair
mkdir -p "$par/.cut.staging-$host-$dead/pairs" "$par/.done.staging-$host-$dead/pairs"
touch "$par/.cut.staging-$host-$dead/pairs/0123456789abcdef.json.tmp-$dead"
echo '{}' >"$par/.done.staging-$host-$dead/pairs/0123456789abcdef.json"
"$bin" solve one_contact_slide --solver pgs --out "$par/after2" >/dev/null 2>"$tmp/stderr" ||
  fail "solve failed: $(cat "$tmp/stderr")"
[[ ! -e "$par/.cut.staging-$host-$dead" && -d "$par/.done.staging-$host-$dead" ]] &&
  grep -q "kept .*done.staging-$host-$dead: it holds finished pairs" "$tmp/stderr" &&
  pass "a staging folder with a committed pair is kept for --resume, one with a half-written record removed" ||
  fail "pairs staging: $(ls -a "$par" | tr '\n' ' '); $(cat "$tmp/stderr")"
finish

# SPDX-License-Identifier: Apache-2.0
# Faults lose nothing: SIGKILL of run, solve, profile and reproduce at random moments leaves no
# results folder under the target name unless it is complete (it has its manifest); the next
# command removes the unfinished staging folders of dead processes and says so; a kill between
# moving the old folder aside and renaming the new one in (--force) is finished by the next
# command; a file-size limit (ulimit -f) and a folder that cannot be written give a message, a
# non-zero exit and no folder.
source "$(dirname "$0")/common.bash"
# under the sanitizers a report is a failure even when the exit status is the expected one
eval "plain_$(declare -f expect_fail)"
expect_fail() {
  plain_expect_fail "$@"
  if grep -qE "Sanitizer|runtime error:" "$tmp/stderr"; then fail "$1: a sanitizer report"; fi
}
par=$tmp/res
mkdir -p "$par"

# kill_at CMD_NAME DELAY ARGS...: starts frictionlab ARGS, SIGKILLs it after DELAY seconds
kill_at() {
  local delay=$1
  shift
  "$bin" "$@" >/dev/null 2>&1 &
  local pid=$!
  sleep "$delay"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}

# a folder under the target name must be complete; returns 0 when the state is consistent
consistent() {
  local target=$1
  [[ ! -e "$target" || -f "$target/manifest.json" ]]
}

RANDOM=36 # reproducible "random" moments
k=0
stale=0
for cmd in run run run solve profile reproduce; do
  k=$((k + 1))
  delay=$(printf '0.%02d' $((5 + RANDOM % 90)))
  case $cmd in
    run) args=(run heavy_stack --set n=4 --steps 2000 --out "$par/$cmd$k") ;;
    solve) args=(solve two_box_stack box_on_plane --solver pgs --set max_iter=100000 --set abs_tol=0 --set rel_tol=0 --out "$par/$cmd$k") ;;
    profile) args=(profile two_box_stack box_on_plane --solver pgs --set max_iter=100000 --set abs_tol=0 --set rel_tol=0 --out "$par/$cmd$k") ;;
    reproduce) args=(reproduce zong-fig3 --quick --out "$par/$cmd$k") ;;
  esac
  kill_at "$delay" "${args[@]}"
  stale=$((stale + $(find "$par" -maxdepth 2 -name '.*.staging-*' | wc -l)))
  target=$par/$cmd$k
  [[ $cmd == reproduce ]] && target=$par/$cmd$k/zong-fig3 # --out is the figures' parent folder
  consistent "$target" && pass "SIGKILL of $cmd after $delay s: no incomplete folder under its name" ||
    fail "SIGKILL of $cmd after $delay s: $target exists without a manifest"
done
# (each command also removes the leftovers of the one killed before it in the same folder)
echo "note: $stale staging folder(s) seen after the kills"
# the next command in each parent folder removes them and says so
for d in "$par" "$par"/reproduce*; do
  [[ -d "$d" ]] || continue
  [[ -n "$(find "$d" -maxdepth 1 -name '.*.staging-*' -print -quit)" ]] || continue
  "$bin" solve one_contact_slide --solver pgs --out "$d/after" >/dev/null 2>"$tmp/stderr" ||
    fail "solve after the kills: $(cat "$tmp/stderr")"
  left=$(find "$d" -maxdepth 1 -name '.*.staging-*' -print -quit)
  if [[ -z "$left" ]] && grep -q "an unfinished results folder of process" "$tmp/stderr"; then
    pass "the next command removed the leftover staging folders in $(basename "$d") and said so"
  elif [[ -n "$left" && -n "$(find "$left/pairs" -name '*.json' -print -quit 2>/dev/null)" ]] &&
       grep -q "it holds finished pairs of process .* --resume" "$tmp/stderr"; then
    # a killed solve whose pairs had begun to finish: its staging folder is kept for --resume
    # (docs/campaigns.md), and said so; the kill's timing decides which of the two happens
    pass "the next command kept the killed campaign's staging folder with its finished pairs in $(basename "$d") and said how to resume it"
  else
    fail "leftovers in $d: $(ls -a "$d" | tr '\n' ' '); stderr: $(cat "$tmp/stderr")"
  fi
done
[[ $stale -gt 0 ]] || echo "note: every kill landed outside a staging window"

# a replacement under --force killed between the two renames: the old folder moved aside, the
# complete new one still staged, nothing under the name
sh -c 'exit 0' &
dead=$!
wait $dead
mkdir -p "$par/.swap.staging-$dead" "$par/.swap.staging-$dead.old-$dead"
echo new >"$par/.swap.staging-$dead/manifest.json"
echo old >"$par/.swap.staging-$dead.old-$dead/manifest.json"
"$bin" solve one_contact_slide --solver pgs --out "$par/other" >/dev/null 2>"$tmp/stderr"
if [[ "$(cat "$par/swap/manifest.json" 2>/dev/null)" == new && ! -e "$par/.swap.staging-$dead.old-$dead" ]] &&
   grep -q "finished its replacement" "$tmp/stderr"; then
  pass "an interrupted --force replacement is finished by the next command, which says so"
else
  fail "interrupted replacement: $(ls -a "$par" | tr '\n' ' '); stderr: $(cat "$tmp/stderr")"
fi
# killed before the new folder was complete: the old folder goes back
mkdir -p "$par/.swap2.staging-$dead.old-$dead"
echo old >"$par/.swap2.staging-$dead.old-$dead/manifest.json"
"$bin" solve one_contact_slide --solver pgs --out "$par/other2" >/dev/null 2>"$tmp/stderr"
[[ "$(cat "$par/swap2/manifest.json" 2>/dev/null)" == old ]] && grep -q "put the old folder back" "$tmp/stderr" &&
  pass "an old folder moved aside is put back when there is nothing to replace it" ||
  fail "old folder not restored: $(ls -a "$par" | tr '\n' ' '); stderr: $(cat "$tmp/stderr")"

# full disk: a file-size limit (SIGXFSZ is ignored, the write fails with EFBIG)
(ulimit -f 40; "$bin" run heavy_stack --steps 100 --out "$par/full" >/dev/null 2>"$tmp/stderr")
rc=$?
if [[ $rc -ne 0 && $rc -lt 128 && ! -e "$par/full" ]] && grep -q "File too large" "$tmp/stderr" &&
   [[ -z "$(find "$par" -maxdepth 1 -name '.full.staging-*' -print -quit)" ]]; then
  pass "run under ulimit -f: exit $rc, message, no folder"
else
  fail "run under ulimit -f: exit $rc, stderr: $(cat "$tmp/stderr"), $(ls -a "$par" | tr '\n' ' ')"
fi
(ulimit -f 8; "$bin" export heavy_stack --steps 5:6 --set n=6 --out "$par/fullx" >/dev/null 2>"$tmp/stderr")
rc=$?
if [[ $rc -ne 0 && $rc -lt 128 && ! -e "$par/fullx" ]] && grep -q "File too large" "$tmp/stderr" &&
   [[ -z "$(find "$par" -maxdepth 1 -name '.fullx.staging-*' -print -quit)" ]]; then
  pass "FCLIB export under ulimit -f: exit $rc (no crash at exit), message, no folder"
else
  fail "export under ulimit -f: exit $rc, stderr: $(cat "$tmp/stderr")"
fi

# a folder that cannot be written: read-only for a normal user; as root (who writes anywhere)
# a sysfs folder, where creating anything is refused
if [[ $(id -u) -ne 0 ]]; then
  mkdir -p "$tmp/ro" && chmod 555 "$tmp/ro"
  ro=$tmp/ro
else
  ro=/sys/kernel
fi
if [[ -d "$ro" ]]; then
  expect_fail "results in a folder that cannot be written" 1 "cannot create folder" "$ro/out" -- solve one_contact_slide --out "$ro/out"
fi
chmod 755 "$tmp/ro" 2>/dev/null

finish

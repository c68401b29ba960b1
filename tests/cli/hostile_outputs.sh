# SPDX-License-Identifier: Apache-2.0
# Single-file outputs (issue 51, fault 2): `export --scene-json PATH` wrote a temporary file and
# renamed it onto PATH whatever PATH was, so a FIFO, a device node or a symlink became a regular
# file (as root, /dev/full was replaced). Now a folder, symlink, FIFO or device at PATH is never
# replaced (--force or not): a message, exit 1, the thing untouched, no temporary left beside it;
# a regular file is replaced atomically.
source "$(dirname "$0")/common.bash"
d=$tmp/o
mkdir -p "$d"
no_tmp() { ! ls -a "$d" | grep -q '\.tmp'; }

# a regular file: replaced by the scene file
echo old >"$d/plain.json"
"$bin" export ball_slope --scene-json "$d/plain.json" >/dev/null 2>"$tmp/stderr" &&
  grep -q frictionlab-scene "$d/plain.json" && no_tmp && pass "a regular file is replaced" ||
  fail "regular file: $(cat "$tmp/stderr")"

# a FIFO (nobody reads it: a write into it would block, a rename would replace it)
mkfifo "$d/fifo.json"
timeout 20 "$bin" export ball_slope --scene-json "$d/fifo.json" >/dev/null 2>"$tmp/stderr"
rc=$?
[[ $rc -eq 1 && -p "$d/fifo.json" ]] && grep -q "is a FIFO" "$tmp/stderr" && no_tmp &&
  pass "a FIFO is refused and kept" || fail "FIFO: exit $rc, $(cat "$tmp/stderr")"

# a symlink to a file: neither the link nor its target changes
echo target >"$d/target"
ln -s target "$d/link.json"
"$bin" export ball_slope --scene-json "$d/link.json" >/dev/null 2>"$tmp/stderr"
rc=$?
[[ $rc -eq 1 && -L "$d/link.json" && "$(cat "$d/target")" == target ]] &&
  grep -q "is a symbolic link" "$tmp/stderr" && no_tmp && pass "a symlink is refused and kept" ||
  fail "symlink: exit $rc, $(cat "$tmp/stderr")"

# a folder
mkdir "$d/dir.json"
"$bin" export ball_slope --scene-json "$d/dir.json" --steps 1 >/dev/null 2>"$tmp/stderr"
rc=$?
[[ $rc -eq 1 && -d "$d/dir.json" ]] && grep -q "is a folder" "$tmp/stderr" && no_tmp &&
  pass "a folder is refused" || fail "folder: exit $rc, $(cat "$tmp/stderr")"

# a solver's monitor file is written in place, row by row, but never into a FIFO (it blocked)
mkfifo "$d/mon.csv"
timeout 20 "$bin" solve box_on_plane --solver pgs --set "monitor=csv:$d/mon.csv" --out "$tmp/mon" >/dev/null 2>"$tmp/stderr"
rc=$?
[[ $rc -ne 124 && -p "$d/mon.csv" ]] && grep -q "FL_ERR_IO" "$tmp/mon/steps.csv" &&
  pass "a monitor csv: into a FIFO is refused (the pair's status: FL_ERR_IO)" ||
  fail "monitor FIFO: exit $rc, $(cat "$tmp/stderr")"

# a device node (needs the right to make one: root outside a restricted container)
if mknod "$d/null.json" c 1 3 2>/dev/null; then
  "$bin" export ball_slope --scene-json "$d/null.json" >/dev/null 2>"$tmp/stderr"
  rc=$?
  [[ $rc -eq 1 && -c "$d/null.json" ]] && grep -q "is a character device" "$tmp/stderr" && no_tmp &&
    pass "a device node is refused and kept" || fail "device: exit $rc, $(cat "$tmp/stderr")"
else
  echo "skip: cannot make a device node here"
fi
finish

# SPDX-License-Identifier: Apache-2.0
# Inputs are regular files (issue 51, fault 5): a FIFO blocked every reader forever (scene file,
# .msh, .vtu, FCLIB, recording, MJCF), a folder named x.json said only "read error", /dev/zero as
# a scene file grew until memory ran out. Now each reader opens without blocking and refuses
# anything but a regular file, naming what it found and what was expected; each has a size
# limit. Every case runs under `timeout`: a hang is a failure, not a stuck suite.
source "$(dirname "$0")/common.bash"
eval "plain_$(declare -f expect_fail)"
expect_fail() {
  plain_expect_fail "$@"
  if grep -qE "Sanitizer|runtime error:" "$tmp/stderr"; then fail "$1: a sanitizer report"; fi
  if grep -q "^timeout:" "$tmp/stderr"; then fail "$1: hung"; fi
}
bin_real=$bin
bin=$tmp/fl
printf '#!/bin/sh\nexec timeout 20 "%s" "$@"\n' "$bin_real" >"$bin"
chmod +x "$bin"
out=$tmp/out
cd "$tmp" || exit 1
mkfifo fifo.json fifo.msh fifo.vtu fifo.hdf5 fifo.xml
mkdir dir.json dir.msh dir.hdf5
ln -s /dev/zero zero.json

expect_fail "scene file that is a FIFO" 1 "fifo.json: is a FIFO, not a scene file (.json) (expected a regular file)" "$out" -- run fifo.json --out "$out"
expect_fail "scene file that is a folder" 1 "dir.json: is a folder, not a scene file" "$out" -- run dir.json --out "$out"
expect_fail "scene file that is /dev/zero" 1 "zero.json: is a character device, not a scene file" "$out" -- export zero.json --steps 0 --out "$out"

scene() { # scene FILE.json MESH-JSON
  cat >"$1" <<JSON
{"format": "frictionlab-scene", "version": 1, "name": "m", "dt": 0.01, "duration": 0.02,
 "materials": [{"name": "rubber", "mu": 0.5}],
 "bodies": [{"name": "ground", "kind": "fixed", "material": "rubber", "shape": {"type": "plane"}},
  {"name": "cube", "kind": "deformable", "material": "rubber", "mesh": $2,
   "model": {"type": "corotated_lagged", "E": 1e5, "nu": 0.4}, "density": 400,
   "position": [0, 0, 1]}]}
JSON
}
scene m1.json '{"type": "file", "path": "fifo.msh"}'
expect_fail ".msh that is a FIFO" 1 "fifo.msh: is a FIFO, not a Gmsh .msh file" "$out" -- run m1.json --out "$out"
scene m2.json '{"type": "file", "path": "dir.msh"}'
expect_fail ".msh that is a folder" 1 "dir.msh: is a folder, not a Gmsh .msh file" "$out" -- run m2.json --out "$out"
scene m3.json '{"type": "file", "path": "fifo.vtu"}'
expect_fail ".vtu that is a FIFO" 1 "fifo.vtu: is a FIFO, not a VTK .vtu file" "$out" -- run m3.json --out "$out"

expect_fail "FCLIB file that is a FIFO" 1 "fifo.hdf5: is a FIFO, not a FCLIB .hdf5 file" "$out" -- solve fifo.hdf5 --out "$out"
# a folder is a set of FCLIB files to solve: an empty one says so
expect_fail "FCLIB folder with no files" 1 "dir.hdf5: no FCLIB file" "$out" -- solve dir.hdf5 --out "$out"

# a recording that is a FIFO: `view` reads the results folder's recording.flrec
"$bin" run ball_slope --steps 2 --out rec >/dev/null 2>"$tmp/stderr" || fail "run ball_slope: $(cat "$tmp/stderr")"
if [[ -f rec/recording.flrec ]]; then
  rm -f rec/recording.flrec rec/viewer.html
  mkfifo rec/recording.flrec
  sleep 1
  touch rec/viewer.html # newer than the recording: view only reads the recording's header
  "$bin" view rec --print >/dev/null 2>"$tmp/stderr"
  rc=$?
  [[ $rc -ne 0 && $rc -ne 124 ]] && grep -q "is a FIFO, not a recording" "$tmp/stderr" &&
    pass "recording that is a FIFO (exit $rc)" || fail "recording FIFO: exit $rc, $(head -c 300 "$tmp/stderr")"
fi
finish

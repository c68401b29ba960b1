#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The licence holds for every source: LICENSE is Apache-2.0, and every tracked C, CUDA, Python,
# shell, JavaScript, gnuplot and CMake file and every script says so in an SPDX line within its
# first three lines (docs/api.md, "Licence"). Needs the source tree with its git metadata.
source "$(dirname "$0")/common.bash"

src=${FL_SOURCE_DIR:-}
[[ -n "$src" && -d "$src/.git" || -f "$src/.git" ]] || { echo "SKIP: no git source tree"; exit 77; }
command -v git >/dev/null || { echo "SKIP: no git"; exit 77; }
grep -q "Apache License" "$src/LICENSE" && grep -q "Version 2.0" "$src/LICENSE" &&
  pass "LICENSE is the Apache License 2.0" || fail "LICENSE is not the Apache License 2.0"
[[ -f "$src/CITATION.cff" ]] && grep -q '^license: Apache-2.0' "$src/CITATION.cff" &&
  pass "CITATION.cff names the licence" || fail "CITATION.cff missing or without 'license: Apache-2.0'"

missing=()
n=0
while IFS= read -r f; do
  case "$f" in
    fuzz/corpus/*|fuzz/seeds/*|tests/data/*|results/*) continue ;;
  esac
  base=${f##*/}
  case "$f" in
    *.c|*.h|*.cu|*.cuh|*.py|*.sh|*.js|*.gp|*.cmake|*.cmake.in|*/CMakeLists.txt|CMakeLists.txt|scripts/*|.ci/*) ;;
    *) continue ;;
  esac
  n=$((n + 1))
  head -n 3 "$src/$f" | grep -q 'SPDX-License-Identifier: Apache-2.0' || missing+=("$f")
done < <(git -C "$src" ls-files)
((n > 100)) || fail "only $n source files found"
((${#missing[@]} == 0)) && pass "all $n source files carry the SPDX line" ||
  fail "${#missing[@]} of $n source files lack 'SPDX-License-Identifier: Apache-2.0' in their first 3 lines: ${missing[*]:0:10}"
finish

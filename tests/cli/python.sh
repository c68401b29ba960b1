# SPDX-License-Identifier: Apache-2.0
# The frictionlab Python module (python/frictionlab, docs/python.md): its pytest tests
# (tests/python/) with Debian's Python, numpy and pytest, over this build's libfrictionlab.
# Among them: an FCLIB file solved by three built-in solvers and one written in Python, and
# the profile that ranks all four, checked against `frictionlab profile`.
source "$(dirname "$0")/common.bash"

py=/usr/bin/python3
src=${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=$(cd "$(dirname "$bin")" && pwd)
if [[ ! -x $py ]] || ! $py -c "import numpy, pandas, pytest" 2>/dev/null; then
  echo "skipped: $py with numpy, pandas and pytest is needed (scripts/setup --tests installs python3-pytest)"
  exit 77
fi
# an ASan-instrumented library cannot be loaded into an uninstrumented Python
if [[ "${FL_BUILD_KIND:-}" == *sanitize-ON* ]]; then
  echo "skipped: the sanitizer build's library needs the ASan runtime loaded first"
  exit 77
fi
[[ -f $build/libfrictionlab.so ]] || { fail "no $build/libfrictionlab.so"; finish; }

FRICTIONLAB_LIBRARY=$build/libfrictionlab.so PYTHONPATH=$src/python FL_BINARY=$bin \
  FL_BUILD_DIR=$build PYTHONDONTWRITEBYTECODE=1 \
  $py -m pytest -q -p no:cacheprovider "$src/tests/python" >"$tmp/out" 2>&1
rc=$?
tail -n 30 "$tmp/out"
if [[ $rc -eq 0 ]]; then
  pass "pytest tests/python: $(tail -n 1 "$tmp/out")"
elif [[ $rc -eq 5 ]]; then
  fail "pytest found no tests"
else
  fail "pytest exited $rc"
fi
finish

# SPDX-License-Identifier: Apache-2.0
# Every CTest test of this build has a timeout, of 120 s at most (issue 56: a long test is split
# into parts, "# ctest-parts:" in CMakeLists.txt, rather than given more time).
source "$(dirname "$0")/common.bash"
command -v ctest >/dev/null 2>&1 || { echo "skipped: no ctest"; exit 77; }
build=$(cd "$(dirname "$bin")" && pwd)
ctest --test-dir "$build" --show-only=json-v1 >"$tmp/tests.json" 2>"$tmp/e" ||
  { fail "ctest --show-only=json-v1: $(cat "$tmp/e")"; finish; }
python3 - "$tmp/tests.json" >"$tmp/o" 2>&1 <<'PY'
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
bad = []
for t in tests:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    limit = props.get("TIMEOUT")
    if limit is None or not 0 < float(limit) <= 120:
        bad.append("%s (TIMEOUT %s)" % (t["name"], limit))
print("%d tests" % len(tests))
if bad:
    print("over 120 s or none: " + ", ".join(bad))
    sys.exit(1)
PY
rc=$?
n=$(head -n 1 "$tmp/o")
[[ $rc -eq 0 ]] && pass "$n, every TIMEOUT <= 120 s" || fail "$(cat "$tmp/o")"
((${n%% *} > 100)) && pass "the list is the whole suite ($n)" || fail "only $n found"
finish

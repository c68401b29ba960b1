# SPDX-License-Identifier: Apache-2.0
# The scale test of campaigns, small (docs/campaigns.md, issue 49 item 9; the full one is
# `scripts/campaign-scale BIN DIR`): one campaign run serially, as 4 shards + collect, killed
# with SIGTERM at random moments and resumed until done, and under mpiexec -n 2 with the
# dynamic deal gives the same rows; no finished pair is lost to the kills.
source "$(dirname "$0")/common.bash"
src=${FL_SOURCE_DIR:-$(dirname "$0")/../..}
bash "$src/scripts/campaign-scale" "$bin" "$tmp/scale" --small --ranks 2 >"$tmp/o" 2>&1
rc=$?
cat "$tmp/o"
[[ $rc -eq 0 ]] && pass "scale test (small) exits 0" || fail "scale test: exit $rc"
grep -q "^campaign-scale: (b) 4 shards + collect: .* rows equal the serial run" "$tmp/o" &&
  pass "4 shards + collect = serial" || fail "shards"
grep -q "^campaign-scale: (c) .*: 0 finished pairs lost, rows equal the serial run" "$tmp/o" &&
  pass "SIGTERM at random moments + resume = serial, nothing lost" || fail "kills"
grep -Eq "^campaign-scale: \(d\) (mpiexec -n 2: .* rows equal the serial run|skipped)" "$tmp/o" &&
  pass "mpiexec -n 2 = serial (or skipped without MPI)" || fail "mpi"
finish

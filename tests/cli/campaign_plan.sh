# SPDX-License-Identifier: Apache-2.0
# frictionlab plan (docs/campaigns.md, issue 49 item 1): one row per (problem, solver) pair in
# solve's order, with the settings hash solve records for it, the file size and the shard
# `solve --shard I/N` gives it; nothing is solved.
source "$(dirname "$0")/common.bash"
export FL_PROGRESS_EVERY=0
probs=(one_contact_slide box_on_plane two_box_stack box_on_plane)
if [[ -d "${FL_SHARED_DIR:-}/fclib" ]]; then
  probs+=("$FL_SHARED_DIR/fclib/Box_Stacks-i0035-31-0.hdf5" "$FL_SHARED_DIR/fclib/Capsules-i97-269.hdf5")
fi
"$bin" plan "${probs[@]}" --solver pgs,nsn --set pgs.max_iter=10 --shards 2 --out "$tmp/plan.csv" ||
  fail "plan failed"
rows=$(($(wc -l <"$tmp/plan.csv") - 1))
[[ $rows -eq $((${#probs[@]} * 2)) ]] && pass "$rows pairs: problems x solvers" || fail "$rows rows"
grep -q "^3,box_on_plane,box_on_plane,nsn," "$tmp/plan.csv" && grep -q "^7,box_on_plane~2,box_on_plane,nsn," "$tmp/plan.csv" &&
  pass "serial order and solve's labels (box_on_plane~2)" || fail "order/labels: $(head -9 "$tmp/plan.csv")"
for i in 0 1; do
  "$bin" solve "${probs[@]}" --solver pgs,nsn --set pgs.max_iter=10 --shard $i/2 --out "$tmp/s$i" >/dev/null 2>&1 ||
    fail "shard $i"
done
/usr/bin/python3 - "$tmp" <<'PY' && pass "plan's settings hashes and shards are those solve records" || fail "plan vs solve"
import csv, glob, json, sys
t = sys.argv[1]
plan = {(r["problem"], r["solver"]): r for r in csv.DictReader(open(t + "/plan.csv"))}
seen = 0
for i in (0, 1):
    for f in glob.glob(f"{t}/s{i}/pairs/*.json"):
        r = json.load(open(f))
        p = plan[(r["problem"], r["solver"])]
        assert p["settings_hash"] == r["hash"], (p, r["hash"])
        assert p["shard"] == str(i), (p, i)
        seen += 1
assert seen == len(plan), (seen, len(plan))
PY
"$bin" plan one_contact_slide --solver nope >/dev/null 2>"$tmp/e"
[[ $? -eq 2 ]] && grep -q "unknown solver 'nope'" "$tmp/e" && pass "unknown solver refused (exit 2)" ||
  fail "bad solver: $(cat "$tmp/e")"
finish

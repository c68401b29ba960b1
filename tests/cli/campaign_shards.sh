# SPDX-License-Identifier: Apache-2.0
# Shards and collect (docs/campaigns.md, issue 49 items 2 and 5): `solve --shard I/N` loads
# and solves only its problems (dealt largest first by file size), `collect` merges the N
# folders into what one serial run writes, and refuses an incomplete set, an interrupted
# folder, and folders of other solvers or options; `profile --from` takes several folders.
source "$(dirname "$0")/common.bash"
export FL_PROGRESS_EVERY=0
ex=(one_contact_slide one_contact_stick box_on_plane box_on_plane_compliant box_push_slide
    two_box_stack pendulum_bilateral)
args=()
for _ in $(seq 4); do args+=("${ex[@]}"); done
files=()
if [[ -d "${FL_SHARED_DIR:-}/fclib" ]]; then
  files=("$FL_SHARED_DIR/fclib/Box_Stacks-i0035-31-0.hdf5" "$FL_SHARED_DIR/fclib/Capsules-i97-269.hdf5"
         "$FL_SHARED_DIR/fclib/converted_from_siconos_dat/FrictionContact3D_1c.hdf5")
fi
cmd=(solve "${args[@]}" "${files[@]}" --solver pgs,nsn --set max_iter=60)
"$bin" "${cmd[@]}" --out "$tmp/serial" >/dev/null 2>"$tmp/e" || fail "serial: $(tail -2 "$tmp/e")"
total=$(($(wc -l <"$tmp/serial/steps.csv") - 1))
sum=0
for i in 0 1 2; do
  "$bin" "${cmd[@]}" --shard $i/3 --out "$tmp/s$i" >/dev/null 2>"$tmp/e" ||
    fail "shard $i/3: $(tail -2 "$tmp/e")"
  n=$(($(wc -l <"$tmp/s$i/steps.csv") - 1))
  np=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["problems"]))' "$tmp/s$i/manifest.json")
  echo "shard $i/3: $np problems, $n pairs"
  sum=$((sum + n))
done
[[ $sum -eq $total ]] && pass "3 shards hold $sum pairs, as the serial run" || fail "$sum pairs in shards, $total serial"
if ((${#files[@]})); then
  # the largest file goes first, alone, to shard 0 (largest first onto the least loaded)
  big=$(ls -S "${files[@]}" | head -1)
  stem=$(basename "${big%.*}")
  grep -q "^$stem," "$tmp/s0/steps.csv" && ! grep -q "^$stem," "$tmp/s1/steps.csv" &&
    pass "the largest file ($stem) is dealt to shard 0" || fail "largest file not on shard 0"
fi
"$bin" collect "$tmp/s2" "$tmp/s0" "$tmp/s1" --out "$tmp/merged" >"$tmp/o" 2>"$tmp/e" ||
  fail "collect: $(cat "$tmp/e")"
msg=$(same_rows "$tmp/serial" "$tmp/merged" 2>&1) && pass "collect of 3 shards equals the serial run" ||
  fail "collected rows differ: $msg"
/usr/bin/python3 - "$tmp/merged" <<'PY' && pass "merged manifest lists the 3 shards; campaign complete" || fail "manifest shards"
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
assert sorted(s["shard"] for s in m["shards"]) == ["0/3", "1/3", "2/3"], m["shards"]
assert m["command"] == "collect" and json.load(open(sys.argv[1] + "/campaign.json"))["state"] == "complete"
PY

expect_fail "collect refuses an incomplete set of shards" 1 "shard 1/3 is missing" "$tmp/m2" -- \
  collect "$tmp/s0" "$tmp/s2" --out "$tmp/m2"
"$bin" "${cmd[@]}" --set pgs.max_iter=5 --shard 1/3 --out "$tmp/s1b" >/dev/null 2>&1
expect_fail "collect refuses a shard run with other options" 1 "differ in the manifest's solvers" "$tmp/m3" -- \
  collect "$tmp/s0" "$tmp/s1b" "$tmp/s2" --out "$tmp/m3"
# the shard with the most pairs, killed (SIGTERM) after 3 of them, then resumed
big=0
for i in 1 2; do (($(wc -l <"$tmp/s$i/steps.csv") > $(wc -l <"$tmp/s$big/steps.csv"))) && big=$i; done
others=()
for i in 0 1 2; do [[ $i -ne $big ]] && others+=("$tmp/s$i"); done
FL_CAMPAIGN_KILL_AFTER=3 "$bin" "${cmd[@]}" --shard $big/3 --out "$tmp/sk" >/dev/null 2>&1
[[ $? -eq 143 ]] || fail "shard $big/3 was not interrupted"
expect_fail "collect refuses an interrupted shard" 1 "finish it first" "$tmp/m4" -- \
  collect "${others[@]}" "$tmp/sk" --out "$tmp/m4"
"$bin" "${cmd[@]}" --shard $big/3 --out "$tmp/sk" --resume >/dev/null 2>&1
"$bin" collect "${others[@]}" "$tmp/sk" --out "$tmp/m5" >/dev/null 2>"$tmp/e" &&
  msg=$(same_rows "$tmp/serial" "$tmp/m5" 2>&1) && pass "a shard killed and resumed collects to the serial rows" ||
  fail "killed+resumed shard: $(cat "$tmp/e") $msg"
expect_fail "--shard 3/3 is a usage error" 2 "0 <= I < N" "$tmp/x" -- \
  solve one_contact_slide --shard 3/3 --out "$tmp/x"

# profile over several folders: the same costs as over the serial one
"$bin" profile --from "$tmp/serial" --tol 1e-6 --out "$tmp/p1" >/dev/null 2>"$tmp/e" || fail "profile --from serial: $(cat "$tmp/e")"
"$bin" profile --from "$tmp/s0" --from "$tmp/s1" --from "$tmp/s2" --tol 1e-6 --out "$tmp/p3" >/dev/null 2>"$tmp/e" ||
  fail "profile --from 3 shards: $(cat "$tmp/e")"
cmp -s <(cut -d, -f1-3,5 "$tmp/p1/costs.csv") <(cut -d, -f1-3,5 "$tmp/p3/costs.csv") &&
  pass "profile --from 3 shard folders: the serial run's costs" ||
  fail "profile costs differ: $(diff "$tmp/p1/costs.csv" "$tmp/p3/costs.csv" | head -4)"
finish

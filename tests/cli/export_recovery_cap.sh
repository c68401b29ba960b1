# SPDX-License-Identifier: Apache-2.0
# `frictionlab export --max-recovery-speed V` caps the rigid contacts' penetration recovery in the
# steps written (from the first on; the history before is the scene's): the manifest lists each
# step's overlaps, the speed -phi0/dt the overlaps ask and the largest one the written problem
# keeps. The 30-grain weighted pile's PGS history leaves the cylinder about 11 mm deep (asking
# about 1.4 m/s); written uncapped, a step keeps what it asks.
source "$(dirname "$0")/common.bash"

for cap in none 0.05; do
  flags=()
  [[ $cap != none ]] && flags=(--max-recovery-speed "$cap")
  "$bin" export granular --steps 39:40 --solver pgs --set granular.n=30 "${flags[@]}" \
    --out "$tmp/g$cap" >"$tmp/stdout" 2>"$tmp/stderr" ||
    { cat "$tmp/stderr"; fail "export (cap $cap) exited $?"; finish; }
done
python3 - "$tmp/gnone/manifest.json" "$tmp/g0.05/manifest.json" <<'PY' && pass "the cap holds in both steps written; the first step written asks what it asked uncapped (same history)" || fail "manifests"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ok = "max_recovery_speed" not in a and b["max_recovery_speed"] == 0.05
for k, (x, y) in enumerate(zip(a["overlap"], b["overlap"])):
    print(x["file"], x["contacts"], x["max_overlap_m"], x["max_recovery_speed_asked"],
          y["max_recovery_speed_asked"], y["max_recovery_speed_kept"])
    ok &= x["file"] == y["file"] and x["contacts"] > 60 and y["contacts"] > 60
    ok &= x["max_recovery_speed_asked"] > 1.0 and x["max_recovery_speed_kept"] == x["max_recovery_speed_asked"]
    ok &= y["max_recovery_speed_asked"] > 1.0 and y["max_recovery_speed_kept"] == 0.05
    # step 39 follows the same uncapped history; step 40 follows a capped step 39
    ok &= k > 0 or (y["contacts"] == x["contacts"] and y["max_recovery_speed_asked"] == x["max_recovery_speed_asked"])
sys.exit(0 if ok and len(a["overlap"]) == 2 else 1)
PY

"$bin" export granular --steps 1 --max-recovery-speed -1 --out "$tmp/bad" >/dev/null 2>"$tmp/stderr"
rc=$?
[[ $rc -eq 2 ]] && grep -q -- "--max-recovery-speed -1: expected a speed >= 0" "$tmp/stderr" &&
  pass "a negative cap is refused (exit 2, named)" || { cat "$tmp/stderr"; fail "negative cap: exit $rc"; }
finish

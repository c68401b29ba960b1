# SPDX-License-Identifier: Apache-2.0
# frictionlab reproduce NAME --quick: every available figure gets its data (CSV with rows), a
# gnuplot PNG, a matplotlib PNG and PDF, a summary and a manifest; unavailable figures are
# refused with what they need, never faked; bad names are errors.
# ctest-label: slow
# (every recipe simulates scenes: minutes under the sanitizers, so the Release pass runs it)
# One CTest test per part (`reproduce all` ran past ten minutes under load; a part of five
# figures past two minutes at a load of 16 on 2 cores): the part names the figures it makes,
# and part "rest" checks that every available figure belongs to one part.
# ctest-parts: han-fig4 han-fig5 han-table1 macklin-a macklin-b masterjohn zong rest
source "$(dirname "$0")/common.bash"
part=${2:?usage: bash reproduce.sh FRICTIONLAB PART}
command -v gnuplot >/dev/null 2>&1 && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null ||
  { echo "skipped: gnuplot or matplotlib (/usr/bin/python3) missing"; exit 77; }

declare -A figures=(
  [han-fig4]="han-fig4"
  [han-fig5]="han-fig5"
  [han-table1]="han-table1"
  [macklin-a]="macklin-fig15 macklin-fig18 macklin-fig19 macklin-fig20 macklin-fig22"
  [macklin-b]="macklin-fig26 macklin-fig27 macklin-fig28 macklin-fig30 macklin-fig31"
  [masterjohn]="masterjohn-fig5 masterjohn-fig6"
  [zong]="zong-fig3 zong-fig6"
  [rest]="peers-heavy-stack"
)
[[ -n ${figures[$part]+x} ]] || { echo "unknown part '$part' (expected: ${!figures[*]})"; exit 2; }
out=$tmp/figs

is_png() { [[ -s "$1" ]] && [[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" == 89504e470d0a1a0a ]]; }
# available figures: a "  NAME PAPER ..." line not followed by an "unavailable:" line (the
# list ends at the first blank line, before the papers)
available=$("$bin" list figures | awk '
  /^$/ { done = 1 }
  done { next }
  /unavailable:/ { name = ""; next }
  /^  [a-z]/ { if (name != "") print name; name = $1; next }
  END { if (name != "") print name }')
# check_figure NAME: the folder of a figure made under $out
check_figure() {
  local name=$1 d=$out/$1 rows
  [[ -d $d ]] || { fail "$name: no folder"; return; }
  is_png "$d/figure.png" && is_png "$d/figure-gnuplot.png" && pass "$name: both PNGs" ||
    fail "$name: PNGs missing"
  [[ "$(head -c 4 "$d/figure.pdf")" == "%PDF" ]] && pass "$name: PDF" || fail "$name: no PDF"
  grep -q '"command"' "$d/manifest.json" && grep -q '"git_revision"\|"revision"' "$d/manifest.json" &&
    pass "$name: manifest" || fail "$name: manifest lacks command or revision"
  [[ -s $d/summary.txt ]] && pass "$name: summary" || fail "$name: empty summary"
  rows=$(cat "$d"/*.csv | wc -l)
  ((rows > 4)) && pass "$name: $rows CSV lines" || fail "$name: CSV nearly empty ($rows lines)"
  # every series in the specification names a CSV column that exists
  /usr/bin/python3 - "$d" <<'PY' && pass "$name: series columns exist" || fail "$name: a series names a missing column"
import csv, json, os, sys
d = sys.argv[1]
spec = json.load(open(os.path.join(d, "figure.json")))
for p in spec["panels"]:
    assert p["xlabel"] and p["ylabel"] and p["title"]
    for s in p["series"]:
        hdr = next(csv.reader(open(os.path.join(d, s["csv"]))))
        assert s["x"] in hdr and s["y"] in hdr, (s, hdr)
PY
  # what a reviewer sees: every legend entry has a drawn curve, every title fits the picture
  /usr/bin/python3 "${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}/scripts/plot_figure.py" \
    "$d/figure.json" --check >"$tmp/check.out" 2>&1 && pass "$name: legends have curves, titles fit" ||
    fail "$name: $(cat "$tmp/check.out")"
}

nfig=0
for name in ${figures[$part]}; do
  grep -qx -- "$name" <<<"$available" || { echo "($name unavailable here)"; continue; }
  nfig=$((nfig + 1))
  # han-fig4 runs twice at once, in one process and with --jobs 2: the same figure
  if [[ $name == han-fig4 ]]; then
    "$bin" reproduce han-fig4 --quick --jobs 2 --out "$tmp/jobs" >"$tmp/jobs.out" 2>"$tmp/jobs.err" &
    jpid=$!
  fi
  "$bin" reproduce "$name" --quick --out "$out" >"$tmp/$name.out" 2>"$tmp/$name.err"
  rc=$?
  [[ $rc -eq 0 ]] && pass "reproduce $name --quick exits 0" || fail "$name: exit $rc: $(tail -n 20 "$tmp/$name.err")"
  check_figure "$name"
done

case $part in
han-fig4)
# the title names the meshes it draws (1-2 at quick size), and each is drawn
/usr/bin/python3 - "$out/han-fig4" <<'PY' && pass "han-fig4: the meshes the title names are drawn" ||
import json, os, re, sys
spec = json.load(open(os.path.join(sys.argv[1], "figure.json")))
p = spec["panels"][0]
n = int(re.search(r"meshes 1-(\d)", p["title"]).group(1))
meshes = [s["label"] for s in p["series"] if s["label"].startswith("mesh ")]
assert meshes == [f"mesh {k}" + s[len(f"mesh {k}"):] for k, s in zip(range(1, n + 1), meshes)], meshes
assert len(meshes) == n and "four" not in spec["title"], (p["title"], meshes, spec["title"])
PY
  fail "han-fig4: the title's meshes and the drawn ones differ"
# --jobs: han-fig4's meshes in worker processes give the same figure as one process
if [[ -n ${jpid:-} ]]; then
wait "$jpid"
rc=$?
[[ $rc -eq 0 ]] && grep -q "worker processes" "$tmp/jobs.out" && pass "han-fig4 --jobs 2 exits 0" ||
  fail "han-fig4 --jobs 2: exit $rc: $(tail -n 5 "$tmp/jobs.err")"
cmp -s "$out/han-fig4/targets.csv" "$tmp/jobs/han-fig4/targets.csv" &&
  pass "han-fig4: the same targets with --jobs 2" || fail "han-fig4: targets differ with --jobs 2"
for m in 1 2; do
  cmp -s <(cut -d, -f1-5 "$out/han-fig4/mesh$m.csv") <(cut -d, -f1-5 "$tmp/jobs/han-fig4/mesh$m.csv") &&
    [[ -s "$tmp/jobs/han-fig4/mesh$m.flrec" ]] && pass "han-fig4 mesh $m: same curve, recording written by its worker" ||
    fail "han-fig4 mesh $m: curve or recording differs with --jobs 2"
done
# han-fig4 reads its references from the shared folder: the curve it plots is that file's,
# and without the folder the figure is unavailable, naming the file
if [[ -n "${FL_SHARED_DIR:-}" && -f "$FL_SHARED_DIR/reference/cylinder_vm201_targets.csv" ]]; then
  python3 - "$FL_SHARED_DIR/reference" "$out/han-fig4" <<'PY' && pass "han-fig4: reference curve and VM201 targets from shared/reference" || fail "han-fig4: references differ from shared/reference"
import csv, sys
def rows(path, cols):
    lines = [l for l in open(path) if not l.startswith("#")]
    return [tuple(float(r[c]) for c in cols) for r in csv.DictReader(lines)]
ref, fig = sys.argv[1], sys.argv[2]
b = rows(ref + "/cylinder_bijelonja2005_force_vs_total_displacement.csv", ("total_displacement_m", "force_per_length_MN_per_m"))
v = rows(ref + "/cylinder_vm201_targets.csv", ("total_displacement_m", "force_MN_per_m"))
assert rows(fig + "/reference.csv", ("approach_m", "force_MN_per_m")) == b
assert rows(fig + "/vm201.csv", ("approach_m", "force_MN_per_m")) == v
t = list(csv.DictReader(open(fig + "/targets.csv")))
assert [float(r["vm201_MN_per_m"]) for r in t[:2]] == [f for _, f in v]
PY
fi
FL_SHARED_DIR=$tmp/none "$bin" reproduce han-fig4 --quick --out "$tmp/noref" >"$tmp/o" 2>"$tmp/e"
[[ $? -ne 0 ]] && grep -q "none/reference/cylinder_bijelonja2005" "$tmp/e" && [[ ! -e "$tmp/noref" ]] &&
  pass "han-fig4 without the shared references: unavailable, the file named" ||
  fail "han-fig4 without references: $(cat "$tmp/e")"
for bad in 0 x 65; do
  "$bin" reproduce han-fig4 --quick --jobs $bad --out "$tmp/bad" >"$tmp/o" 2>"$tmp/e"
  [[ $? -eq 2 ]] && grep -q -- "--jobs .*expected an integer in \[1, 64\]" "$tmp/e" && [[ ! -e "$tmp/bad" ]] &&
    pass "--jobs $bad refused" || fail "--jobs $bad: $(cat "$tmp/e")"
done
fi
  ;;
han-table1)
# han-table1: seed 000 Fig. 2's cost split as stacked bars, one per example, named on the x
# axis; the five shares of a step add up to 100 %
/usr/bin/python3 - "$out/han-table1" <<'PY' && pass "han-table1: stacked bars of shares adding to 100 %" ||
import csv, json, os, sys
d = sys.argv[1]
panel = json.load(open(os.path.join(d, "figure.json")))["panels"][0]
assert panel["xtics"] == "example" and len(panel["series"]) == 5, panel
assert all(s["style"] == "bars" for s in panel["series"]), panel
rows = list(csv.DictReader(open(os.path.join(d, "table1.csv"))))
assert len(rows) >= 5, rows
for r in rows:
    total = sum(float(r[s["y"]]) for s in panel["series"])
    assert abs(total - 100) < 0.6, (r["example"], total)
PY
  fail "han-table1: the cost split is not stacked shares of 100 %"
grep -q "with histograms" "$out/han-table1/figure.gp" && pass "han-table1: gnuplot draws histograms" ||
  fail "han-table1: figure.gp has no histograms"
# seed 000's rows (arch, press) run SAP's convex model, the paper's; the cube (seed 003) the
# default lagged one: the manifest records each row's run, table1.csv and summary.txt its model
/usr/bin/python3 - "$out/han-table1" <<'PY' && pass "han-table1: seed 000's rows on SAP's convex model, the cube on lagged" ||
import csv, json, os, sys
d = sys.argv[1]
runs = json.load(open(os.path.join(d, "manifest.json")))["runs"]
rows = list(csv.DictReader(open(os.path.join(d, "table1.csv"))))
assert len(runs) == len(rows), (len(runs), len(rows))
for run, row in zip(runs, rows):
    want = "lagged" if run["scene"] == "elastic_cube" else "convex"
    assert run["solver"] == "sap" and run["options"]["model"] == want, (row["example"], run)
    assert row["sap_model"] == want, row
assert sum(r["scene"] == "arch_masonry" for r in runs) == 4, runs
summary = open(os.path.join(d, "summary.txt")).read()
assert "arch mu=0.2 (rigid stones)       convex" in summary, summary
PY
  fail "han-table1: a row's SAP model is not the one its paper used"
  ;;
han-fig5)
# han-fig5: seed 000's setup (knife edges) stands at mu 1.0 and falls at 0.2, both stone models
for k in rigid deformable; do
  grep -q "^knife edges, $k stones, mu = 1.0: .* stands by the 1 % rule" "$out/han-fig5/summary.txt" &&
    grep -q "^knife edges, $k stones, mu = 0.2: .* falls by the 1 % rule" "$out/han-fig5/summary.txt" &&
    pass "han-fig5: $k stones on knife edges stand at 1.0, fall at 0.2" ||
    fail "han-fig5 $k: $(grep "knife edges, $k" "$out/han-fig5/summary.txt")"
done
# seed 000 solves the convex approximation (the friction cone): every run is SAP's convex
# model, so the friction a loaded contact uses never exceeds mu (the lagged default reached 12.8)
/usr/bin/python3 - "$out/han-fig5" <<'PY' && pass "han-fig5: every run SAP's convex model, friction within the cone" ||
import json, os, re, sys
d = sys.argv[1]
runs = json.load(open(os.path.join(d, "manifest.json")))["runs"]
assert runs and all(r["solver"] == "sap" and r["options"]["model"] == "convex" for r in runs), runs[0]
n = 0
for line in open(os.path.join(d, "summary.txt")):
    m = re.match(r"knife edges, \w+ stones, mu = ([0-9.]+): .*friction used at most ([0-9.e+-]+) ", line)
    if m:
        n += 1
        assert float(m.group(2)) <= float(m.group(1)) * (1 + 1e-6), line
assert n == 4, n
PY
  fail "han-fig5: a run is not the convex model, or its friction leaves the cone"

  ;;
macklin-b)
# macklin-fig27's and -fig26's residual panels draw every run (each method's residual is the
# equation it does not meet by construction); macklin-fig31's drift is on a log axis, where
# the two runs that hold are told apart
/usr/bin/python3 - "$out" <<'PY' && pass "macklin-fig26/27: every run's residual drawn; fig31 on a log axis" ||
import json, os, sys
d = sys.argv[1]
for name, n in (("macklin-fig27", 4), ("macklin-fig26", 2)):
    for p in json.load(open(os.path.join(d, name, "figure.json")))["panels"]:
        assert not p.get("not_drawn") and len(p["series"]) == n, (name, p["title"], p.get("not_drawn"))
p = json.load(open(os.path.join(d, "macklin-fig31", "figure.json")))["panels"][0]
assert p["logy"] and len(p["series"]) == 3 and not p.get("not_drawn"), p
PY
  fail "macklin-b: a run's residual is not drawn, or fig31's drift is not on a log axis"
  ;;
masterjohn)
# masterjohn-fig5: the first panel draws every solver its title promises (all at full size, the
# one it names at quick size), and the trajectories the second panel compares start at the
# eps0 its title names, the exact curve's and the runs' alike
/usr/bin/python3 - "$out/masterjohn-fig5" <<'PY' && pass "masterjohn-fig5: the promised solvers drawn, trajectories from the titled eps0" ||
import csv, json, os, re, sys
d = sys.argv[1]
p0, p1 = json.load(open(os.path.join(d, "figure.json")))["panels"][:2]
runs = [s for s in p0["series"] if not s["label"].startswith("exact")]
m = re.search(r"every solver with compliant contact \((\d+)\)", p0["title"])
promised = int(m.group(1)) if m else 1
assert m or " only (" in p0["title"], p0["title"]
assert len(runs) == promised, (p0["title"], [s["label"] for s in runs])
e0 = float(re.search(r"eps0 = ([0-9.]+)", p1["title"]).group(1))
assert len(p1["series"]) >= 2, p1
for s in p1["series"]:
    assert s["label"].endswith(f"eps0 = {e0:g}"), (s["label"], e0)
    first = next(csv.DictReader(open(os.path.join(d, s["csv"]))))
    assert abs(float(first[s["y"]]) / e0 - 1) < 0.02, (s["label"], first[s["y"]], e0)
PY
  fail "masterjohn-fig5: a promised solver is missing or a trajectory starts elsewhere"
  ;;
rest)
  # every available figure is made by one part
  all="${figures[*]}"
  for name in $available; do
    tr ' ' '\n' <<<"$all" | grep -qx -- "$name" || fail "figure $name is in no part of tests/cli/reproduce.sh"
  done
  n=$(wc -w <<<"$available")
  ((n >= 5)) && pass "$n figures available, each in one part" || fail "only $n figures available"
  "$bin" list figures | grep -q "unavailable" && pass "unavailable figures listed" || pass "every figure available"
  "$bin" reproduce no-such-figure >"$tmp/o" 2>"$tmp/e"
  [[ $? -eq 2 ]] && grep -q "no-such-figure" "$tmp/e" && grep -q "macklin-fig28" "$tmp/e" &&
    pass "unknown figure named, valid names listed" || fail "unknown figure: $(cat "$tmp/e")"
  # peers-heavy-stack's timing panel: process CPU time per step, the load around the runs stated
  if [[ -f $out/peers-heavy-stack/figure.json ]]; then
    /usr/bin/python3 - "$out/peers-heavy-stack" <<'PY' && pass "peers-heavy-stack: CPU time per step, the load stated" ||
import json, os, re, sys
d = sys.argv[1]
p = json.load(open(os.path.join(d, "figure.json")))["panels"][1]
assert re.search(r"CPU time per step, measured at load average [0-9.]+ to [0-9.]+ on \d+ cores", p["title"]), p["title"]
assert p["ylabel"] == "process CPU time per step (us)", p["ylabel"]
assert re.search(r"measured at a load average .* on \d+ cores: (a quiet machine|not a quiet machine)",
                 open(os.path.join(d, "summary.txt")).read())
PY
      fail "peers-heavy-stack: the timing panel does not state CPU time and load"
  fi
  # a figure made above (peers-heavy-stack needs MuJoCo: else one made here)
  fig=peers-heavy-stack
  [[ -f $out/$fig/manifest.json ]] || { fig=macklin-fig28; "$bin" reproduce $fig --quick --out "$out" >/dev/null 2>&1; }
  "$bin" reproduce $fig --quick --out "$out" >"$tmp/o" 2>"$tmp/e"
  [[ $? -ne 0 ]] && grep -q "force" "$tmp/e" && pass "existing figure folder not overwritten without --force" ||
    fail "overwrite: $(cat "$tmp/e")"
  # plot_figure.py --check sees the twins disagree and a hidden curve: a copy of the figure
  # with a reference line dropped from figure.gp, one with a point of figure-data.dat moved,
  # and one whose marked hidden series lost its marker
  plot=${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}/scripts/plot_figure.py
  broken() { rm -rf "$tmp/bad"; cp -r "$out/$fig" "$tmp/bad"; }
  broken
  /usr/bin/python3 - "$tmp/bad" <<'PY'
import re, sys
p = sys.argv[1] + "/figure.gp"
s = open(p).read()
s2 = re.sub(r", \\\n     [-0-9.e+]+ with lines [^\n]*noenhanced", "", s, count=1)
assert s2 != s, "no reference line in figure.gp"
open(p, "w").write(s2)
PY
  /usr/bin/python3 "$plot" "$tmp/bad/figure.json" --check >"$tmp/o" 2>&1
  [[ $? -eq 1 ]] && grep -q "figure.gp .*draws\|lacks the reference" "$tmp/o" &&
    pass "--check: a reference line missing from figure.gp is caught" || fail "--check missed a dropped reference: $(cat "$tmp/o")"
  broken
  /usr/bin/python3 - "$tmp/bad" <<'PY'
import sys
p = sys.argv[1] + "/figure-data.dat"
lines = open(p).read().split("\n")
k = next(i for i, l in enumerate(lines) if l[:1].isdigit() or l[:1] == "-")
x, y = lines[k].split(",")
lines[k] = f"{x},{float(y) * 1.5 + 1e-3!r}"
open(p, "w").write("\n".join(lines))
PY
  /usr/bin/python3 "$plot" "$tmp/bad/figure.json" --check >"$tmp/o" 2>&1
  [[ $? -eq 1 ]] && grep -q "differs from" "$tmp/o" &&
    pass "--check: a data block that differs from its CSV is caught" || fail "--check missed a moved point: $(cat "$tmp/o")"
  if grep -q '(under ' "$out/$fig/figure.json"; then
    broken
    /usr/bin/python3 - "$tmp/bad" <<'PY'
import json, re, sys
p = sys.argv[1] + "/figure.json"
spec = json.load(open(p))
for panel in spec["panels"]:
    for s in panel["series"]:
        if "(under " in s["label"]:
            s["marker"] = 0
            s["label"] = re.sub(r" \(under .*\)$", "", s["label"])
json.dump(spec, open(p, "w"))
PY
    /usr/bin/python3 "$plot" "$tmp/bad/figure.json" --check >"$tmp/o" 2>&1
    [[ $? -eq 1 ]] && grep -q "lies under later series" "$tmp/o" &&
      pass "--check: a hidden series without its marker is caught" || fail "--check missed a hidden series: $(cat "$tmp/o")"
  fi
  ;;
esac
finish

# SPDX-License-Identifier: Apache-2.0
# A figure's runs on one viewer page: zong-fig3 --quick runs the ball on the slope with PGS
# and SAP at four friction coefficients (8 runs, one recording each); the figure's folder must
# hold one page, viewer.html, whose embedded recording has the 8 runs as panes named after
# their CSVs, each pane's frames equal to that run's own recording (poses, contacts).
# Skips (77) without a viewer in this build.
source "$(dirname "$0")/common.bash"
here=$(cd "$(dirname "$0")" && pwd)

"$bin" reproduce zong-fig3 --quick --out "$tmp/figs" >"$tmp/stdout" 2>"$tmp/stderr" ||
  { echo "FAIL: reproduce zong-fig3: $(head -c 400 "$tmp/stderr")"; exit 1; }
dir=$tmp/figs/zong-fig3
pages=$(cd "$dir" && ls *.html 2>/dev/null | tr '\n' ' ')
[[ -n "$pages" ]] || { echo "SKIP: this build has no viewer"; exit 77; }
if python3 - "$dir" "$here" <<'PY'
import base64, glob, os, re, sys, tempfile
sys.path.insert(0, sys.argv[2])
import flrec
d = sys.argv[1]
pages = sorted(os.path.basename(p) for p in glob.glob(f"{d}/*.html"))
assert pages == ["viewer.html"], f"pages {pages}"
page = open(f"{d}/viewer.html").read()
data = re.search(r'<script id="fl-data" type="application/octet-stream">(.*?)</script>', page, re.S).group(1)
with tempfile.NamedTemporaryFile(suffix=".flrec", delete=False) as t:
    t.write(base64.b64decode("".join(data.split())))
h, frames = flrec.read(t.name)
os.unlink(t.name)
stems = sorted(os.path.basename(p)[:-6] for p in glob.glob(f"{d}/*.flrec"))
assert len(stems) == 8 and h["solvers"] == stems, (h["solvers"], stems)
for k, s in enumerate(stems):
    _, own = flrec.read(f"{d}/{s}.flrec")
    mine = [f for f in frames if f["solver"] == k]
    assert len(mine) == len(own) > 0, (s, len(mine), len(own))
    for a, b in zip(mine, own):
        assert a["step"] == b["step"] and a["pose"] == b["pose"] and a["contacts"] == b["contacts"], (s, a["step"])
print(f"one page, {len(stems)} panes: {', '.join(stems)}")
PY
then pass "zong-fig3 writes one viewer page with its 8 runs side by side"
else fail "figure viewer page"
fi
finish

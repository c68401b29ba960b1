#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Render a FrictionLab figure specification (figure.json) with matplotlib.

Usage: /usr/bin/python3 scripts/plot_figure.py FOLDER/figure.json [--out NAME] [--dpi N] [--check]

Reads the panels and series of figure.json (written by `frictionlab reproduce`), each series
being two named columns of a CSV file in the same folder (drawn from the figure's data file,
figure.json's "data", block "data_index": the points gnuplot's figure.gp draws too), and writes NAME.png (N dpi, default
150) and NAME.pdf beside it (NAME defaults to "figure"). Needs Debian's python3-matplotlib, which is
importable from /usr/bin/python3. Long titles are wrapped to the figure's width; a panel's
"not_drawn" series (no point its axes can show) are named in a note, not in the legend.
Each series is drawn in the colour, dash and marker figure.json gives it (the figure kit assigns
them: colour for the solver or strategy, dash for the quantity), legends beside the frames.
--check verifies the specification and the rendered picture: no two series of a panel (nor two
reference lines) are drawn alike, every legend entry has a drawn line or reference with at
least one point, every title lies inside the figure, no series without a marker lies under later
ones (most of its points within a line's width of theirs), and figure.gp draws the same data
(check_twins); it prints what fails and exits 1.
"""
import bisect
import csv
import json
import math
import os
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_blocks(path):
    """The blocks of a figure's data file (figure.json's "data"): lists of (x, y), in order."""
    blocks, cur, blank = [], None, 0
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                blank += 1
                continue
            if cur is None or blank >= 2:
                cur = []
                blocks.append(cur)
            blank = 0
            if line.startswith("#") or line == "x,y":
                continue
            x, y = line.split(",")
            cur.append((float(x), float(y)))
    return blocks


_blocks = {}


def read_series(folder, spec, data=None):
    """A series' points: from the figure's data file when it has one (the points gnuplot draws
    too), else from its CSV (finite x and y)."""
    if data and "data_index" in spec:
        path = os.path.join(folder, data)
        if path not in _blocks:
            _blocks[path] = read_blocks(path)
        pts = _blocks[path][int(spec["data_index"])]
        return [p[0] for p in pts], [p[1] for p in pts]
    return read_series_csv(folder, spec)


def read_series_csv(folder, spec):
    xs, ys = [], []
    with open(os.path.join(folder, spec["csv"]), newline="") as f:
        for row in csv.DictReader(f):
            try:
                x, y = float(row[spec["x"]]), float(row[spec["y"]])
            except (KeyError, ValueError, TypeError):
                continue
            if math.isfinite(x) and math.isfinite(y):
                xs.append(x)
                ys.append(y)
    return xs, ys


DASHES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1))]
MARKERS = [None, "o", "s", "^", "x", "+", "D", "v"]


def style_of(s):
    """matplotlib keywords of a series' colour, dash and marker as figure.json gives them"""
    kw = {}
    if "color" in s:
        kw["color"] = s["color"]
    kw["linestyle"] = DASHES[int(s.get("dash", 0)) % len(DASHES)]
    m = MARKERS[int(s.get("marker", 0)) % len(MARKERS)]
    if s.get("style") == "points":
        kw.update(marker=m or "o", linestyle="none", markersize=4)
    elif s.get("style") == "linespoints":
        kw.update(marker=m or "o", markersize=3)
    elif m:
        kw.update(marker=m, markersize=5, markevery=0.1)
    return kw


def check_styles(spec):
    """Problems of the specification itself: two series of one panel drawn alike (colour, dash,
    marker and style), or two reference lines drawn alike."""
    bad = []
    for p in spec["panels"]:
        seen = {}
        for s in p["series"]:
            key = (s.get("color"), s.get("dash", 0), s.get("marker", 0), s.get("style"))
            if key in seen:
                bad.append(f"panel '{p['title']}': '{s['label']}' is drawn like '{seen[key]}'")
            seen[key] = s["label"]
        refs = {}
        for r in p.get("refs", []):
            key = (r.get("color"), r.get("dash"))
            if key in refs:
                bad.append(f"panel '{p['title']}': reference '{r['label']}' is drawn like "
                           f"'{refs[key]}'")
            refs[key] = r["label"]
    return bad


# hidden curves (the tolerances of harness/figures/figures.c, which marks such a series): a line
# is about 1 % of a frame's height thick and later series are drawn over earlier ones
HIDE_TOL_Y, HIDE_TOL_X, HIDE_SHARE = 0.01, 0.005, 0.9


def check_hidden(spec, folder):
    """Series without a marker of their own most of whose points lie under the lines of later
    series of the panel (the figure kit gives such a series a marker and says so in its label)."""
    bad = []
    for p in spec["panels"]:
        def ax(v, log):
            return math.log10(v) if log else v
        pts = []
        for s in p["series"]:
            if s.get("style") == "bars":
                pts.append([])
                continue
            xs, ys = read_series_csv(folder, s)
            pts.append([(ax(x, p.get("logx")), ax(y, p.get("logy"))) for x, y in zip(xs, ys)
                        if (not p.get("logx") or x > 0) and (not p.get("logy") or y > 0)])
        allx = [x for q in pts for x, _ in q]
        ally = [y for q in pts for _, y in q] + [ax(r["y"], p.get("logy")) for r in p.get("refs", [])
                                                 if not p.get("logy") or r["y"] > 0]
        if not allx:
            continue
        wx = HIDE_TOL_X * ((max(allx) - min(allx)) or 1)
        ty = HIDE_TOL_Y * ((max(ally) - min(ally)) or 1)

        def under(e, ex, x, y):
            lo, hi = math.inf, -math.inf
            j = max(bisect.bisect_left(ex, x - wx) - 1, 0)
            for (x0, y0), (x1, y1) in zip(e[j:], e[j + 1:]):
                if x0 > x + wx:
                    break
                if x1 < x - wx:
                    continue
                for c in (max(x0, x - wx), min(x1, x + wx)):
                    yc = y0 + (y1 - y0) * (c - x0) / (x1 - x0) if x1 > x0 else y0
                    lo, hi = min(lo, yc), max(hi, yc)
            return lo - ty <= y <= hi + ty

        for i, s in enumerate(p["series"]):
            if s.get("marker") or not pts[i] or s.get("style") == "bars":
                continue
            # a copy of s later on (within 0.1 %) already says it lies on s: a marker, "(on s)"
            later = [(q, [x for x, _ in q]) for q, e in zip(pts[i + 1:], p["series"][i + 1:])
                     if q and all(a[0] <= b[0] for a, b in zip(q, q[1:]))
                     and f"(on {s['label']}" not in e["label"]]
            n = sum(1 for x, y in pts[i] if any(under(e, ex, x, y) for e, ex in later))
            # a little above the kit's share, so that rounding never fails a marked figure
            if n > (HIDE_SHARE + 0.03) * len(pts[i]):
                bad.append(f"panel '{p['title']}': '{s['label']}' lies under later series "
                           f"({n} of {len(pts[i])} points) without a marker or a note")
    return bad


def gp_quote(text):
    """a string as figure.gp writes it (harness/figures/figures.c, gp_str)"""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def check_twins(spec, folder):
    """The gnuplot twin (figure.gp) and this picture are given the same data: every line or
    point series' block of the data file holds exactly its CSV's drawable points (finite,
    positive on a log axis), and figure.gp's plot of each panel draws that block (bars: that
    CSV column) under the series' label, and every reference line, and nothing else."""
    bad = []
    gp_path = os.path.join(folder, "figure.gp")
    if not os.path.exists(gp_path):
        return [f"{gp_path}: missing"]
    plots, cur = [], None
    for line in open(gp_path):
        if line.startswith("plot "):
            cur = line
            plots.append(cur)
        elif cur is not None and plots[-1].rstrip().endswith("\\"):
            plots[-1] += line
        else:
            cur = None
    if len(plots) != len(spec["panels"]):
        return [f"figure.gp has {len(plots)} plots for {len(spec['panels'])} panels"]
    data = spec.get("data")
    for p, gp in zip(spec["panels"], plots):
        clauses = gp.count(" title ")
        want = len(p["series"]) + len(p.get("refs", []))
        if clauses != want:
            bad.append(f"panel '{p['title']}': figure.gp draws {clauses} curves, figure.json {want}")
        for s in p["series"]:
            if s.get("style") == "bars":
                clause = f"'{s['csv']}' using (column({gp_quote(s['y'])}))"
            else:
                if not data or "data_index" not in s:
                    bad.append(f"panel '{p['title']}': '{s['label']}' has no data block")
                    continue
                xs, ys = read_series(folder, s, data)
                cx, cy = read_series_csv(folder, s)
                keep = [(x, y) for x, y in zip(cx, cy)
                        if (not p.get("logx") or x > 0) and (not p.get("logy") or y > 0)]
                if list(zip(xs, ys)) != keep:
                    bad.append(f"panel '{p['title']}': '{s['label']}': the data file's block "
                               f"{s['data_index']} ({len(xs)} points) differs from {s['csv']} "
                               f"({len(keep)} drawable points)")
                clause = f"'{data}' index {s['data_index']} using 1:2"
            if clause not in gp or f"title {gp_quote(s['label'])}" not in gp:
                bad.append(f"panel '{p['title']}': figure.gp does not draw '{s['label']}' ({clause})")
        # a reference: "Y with lines ... title LABEL" (Y at full precision; figure.json's
        # number may be rounded)
        clauses_text = gp.split(", \\\n")
        for r in p.get("refs", []):
            ok = False
            for c in clauses_text:
                c = c.strip()
                if c.startswith("plot "):
                    c = c[5:]
                if " with lines " in c and c.rstrip().endswith(f"title {gp_quote(r['label'])} noenhanced"):
                    try:
                        y = float(c.split(" with lines ")[0])
                    except ValueError:
                        continue
                    ok = abs(y - r["y"]) <= 1e-9 * max(1.0, abs(r["y"]))
            if not ok:
                bad.append(f"panel '{p['title']}': figure.gp lacks the reference '{r['label']}'")
    return bad


def read_column(folder, csv_name, column):
    with open(os.path.join(folder, csv_name), newline="") as f:
        return [row.get(column, "") for row in csv.DictReader(f)]


def check(fig, panels_axes):
    """Problems of a rendered figure: legend entries without points, titles outside it."""
    bad = []
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    fb = fig.bbox
    texts = [fig._suptitle] if fig._suptitle else []
    for ax in panels_axes:
        texts.append(ax.title)
        leg = ax.get_legend()
        if leg is None:
            if ax.lines:
                bad.append(f"panel '{ax.get_title()}': lines without a legend")
            continue
        drawn = {}
        for line in ax.lines:
            n = len(line.get_xdata())
            drawn[line.get_label()] = max(drawn.get(line.get_label(), 0), n)
        for bars in ax.containers:
            drawn[bars.get_label()] = max(drawn.get(bars.get_label(), 0), len(bars.patches))
        for t in leg.get_texts():
            if drawn.get(t.get_text(), 0) < 1:
                bad.append(f"panel '{ax.get_title()}': legend entry '{t.get_text()}' has no points")
    for t in texts:
        b = t.get_window_extent(renderer=r)
        if b.x0 < fb.x0 - 1 or b.x1 > fb.x1 + 1 or b.y1 > fb.y1 + 1:
            bad.append(f"title '{t.get_text()[:60]}...' does not fit ({b.x0:.0f}..{b.x1:.0f} of "
                       f"{fb.x1:.0f} px)")
    return bad


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    path = argv[1]
    name = argv[argv.index("--out") + 1] if "--out" in argv else "figure"
    dpi = int(argv[argv.index("--dpi") + 1]) if "--dpi" in argv else 150
    folder = os.path.dirname(os.path.abspath(path))
    with open(path) as f:
        spec = json.load(f)
    panels = spec["panels"]
    cols = 3 if len(panels) > 6 else 2 if len(panels) > 1 else 1
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(8.8 * cols, 4.4 * rows), squeeze=False)
    used = []
    for k, panel in enumerate(panels):
        ax = axes[k // cols][k % cols]
        used.append(ax)
        bottom = {}  # stacked bars: the top of the stack so far, per x
        for s in panel["series"]:
            xs, ys = read_series(folder, s, spec.get("data"))
            if s.get("style") == "bars":
                base = [bottom.get(x, 0.0) for x in xs]
                ax.bar(xs, ys, bottom=base, width=0.75, label=s["label"] if xs else "_nolegend_",
                       edgecolor="black", linewidth=0.5, color=s.get("color"))
                for x, y in zip(xs, ys):
                    bottom[x] = bottom.get(x, 0.0) + y
                continue
            keep = [(x, y) for x, y in zip(xs, ys)
                    if (not panel.get("logy") or y > 0) and (not panel.get("logx") or x > 0)]
            xs, ys = [p[0] for p in keep], [p[1] for p in keep]
            # a series the renderer cannot show gets no legend entry
            ax.plot(xs, ys, label=s["label"] if xs else "_nolegend_", linewidth=1.5, **style_of(s))
        for r in panel.get("refs", []):
            ax.axhline(r["y"], color=r.get("color", "black"),
                       linestyle=DASHES[int(r.get("dash", 1)) % len(DASHES)], linewidth=1.2,
                       label=r["label"])
        if panel.get("xtics") and panel["series"]:
            # every row names a tick, also rows whose y is missing (a case not run)
            first = panel["series"][0]
            ticks = []
            for tick_x, tick_name in zip(read_column(folder, first["csv"], first["x"]),
                                         read_column(folder, first["csv"], panel["xtics"])):
                try:
                    if math.isfinite(float(tick_x)):
                        ticks.append((float(tick_x), tick_name))
                except (ValueError, TypeError):
                    pass
            ax.set_xticks([t[0] for t in ticks])
            ax.set_xticklabels([t[1] for t in ticks], rotation=30, ha="right", fontsize=7)
        if panel.get("logx"):
            ax.set_xscale("log")
        if panel.get("logy"):
            ax.set_yscale("log")
        ax.set_title("\n".join(textwrap.wrap(panel["title"], 70)), fontsize=10)
        ax.set_xlabel(panel["xlabel"])
        ax.set_ylabel(panel["ylabel"])
        ax.grid(True, which="both", alpha=0.3)
        if panel.get("not_drawn"):
            note = "not drawn (no points): " + panel["not_drawn"]
            ax.text(0.01, 0.01, "\n".join(textwrap.wrap(note, 90)), transform=ax.transAxes,
                    fontsize=6, va="bottom", color="0.3")
        if any(not a.get_label().startswith("_") for a in list(ax.lines) + list(ax.containers)):
            # beside the frame, never over the data
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    for k in range(len(panels), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.suptitle("\n".join(textwrap.wrap(spec.get("title", ""), 80 * cols)), fontsize=11)
    fig.tight_layout()
    if "--check" in argv:
        bad = (check_styles(spec) + check_twins(spec, folder) + check_hidden(spec, folder) +
               check(fig, used))
        for b in bad:
            print(f"{path}: {b}")
        plt.close(fig)
        return 1 if bad else 0
    fig.savefig(os.path.join(folder, name + ".png"), dpi=dpi)
    fig.savefig(os.path.join(folder, name + ".pdf"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/python3
"""Render a FrictionLab figure specification (figure.json) with matplotlib.

Usage: /usr/bin/python3 scripts/plot_figure.py FOLDER/figure.json [--out NAME] [--dpi N]

Reads the panels and series of figure.json (written by `frictionlab reproduce`), each series
being two named columns of a CSV file in the same folder, and writes NAME.png (N dpi, default
150) and NAME.pdf beside it (NAME defaults to "figure"). Needs Debian's python3-matplotlib, which is
importable from /usr/bin/python3.
"""
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_series(folder, spec):
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
    cols = 2 if len(panels) > 1 else 1
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.4 * rows), squeeze=False)
    for k, panel in enumerate(panels):
        ax = axes[k // cols][k % cols]
        for s in panel["series"]:
            xs, ys = read_series(folder, s)
            if panel.get("logy"):
                xs, ys = zip(*[(x, y) for x, y in zip(xs, ys) if y > 0]) if any(y > 0 for y in ys) else ([], [])
            style = {"points": dict(marker="o", linestyle="none", markersize=4),
                     "linespoints": dict(marker="o", markersize=3)}.get(s.get("style"), {})
            ax.plot(xs, ys, label=s["label"], linewidth=1.5, **style)
        for r in panel.get("refs", []):
            ax.axhline(r["y"], color="black", linestyle="--", linewidth=1, label=r["label"])
        if panel.get("logx"):
            ax.set_xscale("log")
        if panel.get("logy"):
            ax.set_yscale("log")
        ax.set_title(panel["title"], fontsize=10)
        ax.set_xlabel(panel["xlabel"])
        ax.set_ylabel(panel["ylabel"])
        ax.grid(True, which="both", alpha=0.3)
        if panel["series"] or panel.get("refs"):
            ax.legend(fontsize=7)
    for k in range(len(panels), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.suptitle(spec.get("title", ""), fontsize=11)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, name + ".png"), dpi=dpi)
    fig.savefig(os.path.join(folder, name + ".pdf"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

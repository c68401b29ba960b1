#!/usr/bin/python3
"""Convergence curves of a FrictionLab results folder (matplotlib, headless).

    /usr/bin/python3 scripts/plot_convergence.py RESULTS_DIR [--problem NAME] [--out DIR]

Reads RESULTS_DIR/iters.csv (and steps.csv, manifest.json when present) and writes, per
problem (or only NAME), OUT/<problem>.png and .pdf (OUT defaults to RESULTS_DIR/plots): the
solver's own residual and the common natural-map residual (when recorded) against iteration
and against wall time, log scales, one curve per solver. Use Debian's /usr/bin/python3: it is
the interpreter that has matplotlib.
"""
import argparse
import csv
import json
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return math.nan


def read_iters(path):
    """{problem: {solver: {column: [values]}}}, in file order."""
    data = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            cols = data.setdefault(row["problem"], {}).setdefault(row["solver"], {})
            for key in ("iter", "time", "error", "merit"):
                cols.setdefault(key, []).append(num(row.get(key)))
    return data


def read_steps(path):
    """{(problem, solver): row} from steps.csv, or {} when absent."""
    if not os.path.exists(path):
        return {}
    with open(path, newline="") as f:
        return {(r["problem"], r["solver"]): r for r in csv.DictReader(f)}


def positive(xs, ys):
    """Points with finite positive coordinates (log axes)."""
    pts = [(x, y) for x, y in zip(xs, ys)
           if math.isfinite(x) and math.isfinite(y) and y > 0 and x >= 0]
    return [p[0] for p in pts], [p[1] for p in pts]


def safe_name(s):
    return re.sub(r"[^A-Za-z0-9._+-]", "_", s) or "problem"


def plot_problem(problem, solvers, steps, norm, out_dir):
    has_merit = any(any(math.isfinite(v) and v > 0 for v in c["merit"]) for c in solvers.values())
    rows = [("error", "own residual (solver's test)")]
    if has_merit:
        rows.append(("merit", f"natural-map residual ({norm} normalization)"))
    fig, axes = plt.subplots(len(rows), 2, figsize=(11, 4.0 * len(rows)), squeeze=False)
    for r, (col, label) in enumerate(rows):
        for name, c in solvers.items():
            st = steps.get((problem, name), {})
            legend = name
            if st.get("reason"):
                legend += f" ({st['reason']}, {st.get('iterations', '?')} it)"
            x, y = positive(c["iter"], c[col])
            axes[r][0].plot(x, y, label=legend, lw=1.4)
            # time axis: t = 0 (iteration 0) cannot sit on a log axis
            t, yt = positive(c["time"], c[col])
            pts = [(a, b) for a, b in zip(t, yt) if a > 0]
            axes[r][1].plot([p[0] for p in pts], [p[1] for p in pts], label=legend, lw=1.4)
        axes[r][0].set_xlabel("iteration")
        axes[r][1].set_xlabel("wall time (s), monitors excluded")
        axes[r][1].set_xscale("log")
        for ax in axes[r]:
            ax.set_yscale("log")
            ax.set_ylabel(label)
            ax.grid(True, which="both", alpha=0.3)
            if ax.lines:
                ax.legend(fontsize=8)
    st0 = next((steps[k] for k in steps if k[0] == problem), {})
    size = f" (nc = {st0['nc']}, nv = {st0['nv']})" if st0 else ""
    fig.suptitle(f"{problem}{size}: residual against iteration and time")
    fig.tight_layout()
    base = os.path.join(out_dir, safe_name(problem))
    fig.savefig(base + ".png", dpi=110)
    fig.savefig(base + ".pdf")
    plt.close(fig)
    return base + ".png"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="a results folder (holding iters.csv)")
    ap.add_argument("--problem", help="plot only this problem")
    ap.add_argument("--out", help="output folder (default RESULTS/plots)")
    a = ap.parse_args()

    iters = os.path.join(a.results, "iters.csv")
    if not os.path.exists(iters):
        sys.exit(f"plot_convergence.py: {iters}: no such file (expected a results folder)")
    data = read_iters(iters)
    steps = read_steps(os.path.join(a.results, "steps.csv"))
    norm = "fclib"
    try:
        with open(os.path.join(a.results, "manifest.json")) as f:
            norm = json.load(f).get("norm", norm)
    except (OSError, ValueError):
        pass
    if a.problem:
        if a.problem not in data:
            sys.exit(f"plot_convergence.py: no problem '{a.problem}' in {iters}; "
                     f"problems: {', '.join(data) or '(none)'}")
        data = {a.problem: data[a.problem]}
    out_dir = a.out or os.path.join(a.results, "plots")
    os.makedirs(out_dir, exist_ok=True)
    for problem, solvers in data.items():
        print(plot_problem(problem, solvers, steps, norm, out_dir))
    if not data:
        print(f"plot_convergence.py: {iters} holds no iterations; nothing to plot")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Convergence curves of a FrictionLab results folder (matplotlib, headless).

    /usr/bin/python3 scripts/plot_convergence.py RESULTS_DIR [--problem NAME] [--max N]
                                                 [--step K] [--out DIR]

RESULTS_DIR is a `solve`, `profile` (its solve/ subfolder is read) or `run` folder. For solve
and profile folders: per problem (at most --max, default 24, or only NAME) OUT/<problem>.png
and .pdf with the solver's own residual and the common natural-map residual against iteration
and wall time, one curve per solver. For run folders: one picture OUT/run.png with a panel per
quantity against the step (iterations, own residual at return, natural-map residual; failed
steps marked), and with --step K the convergence of step K (OUT/step-K.png). OUT defaults to
RESULTS_DIR/plots. Use Debian's /usr/bin/python3: it is the interpreter with matplotlib.
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


def read_run_steps(path):
    """{solver: {column: [values]}} of a run's steps.csv, in step order."""
    data = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            cols = data.setdefault(row["solver"], {})
            for key in ("step", "iters", "error", "natmap", "reason"):
                cols.setdefault(key, []).append(num(row.get(key)))
    return data


# observables.csv columns every scene has; of these the run plot draws the first three, then the
# scene's own observables (not per body: no trailing digit), at most three
GENERIC_OBS = ["pen_max", "drift_max", "energy", "step", "solver", "t", "contacts", "kinetic",
               "potential", "px", "py", "pz", "Lx", "Ly", "Lz", "joint_err"]
OBS_LABEL = {"pen_max": "deepest penetration (m)", "drift_max": "largest drift (m)",
             "energy": "total energy (J)"}


def read_observables(path):
    """(names to draw, {solver: {column: [values]}}) of a run's observables.csv, or ([], {})."""
    if not os.path.exists(path):
        return [], {}
    data = {}
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        cols = r.fieldnames or []
        for row in r:
            c = data.setdefault(row["solver"], {})
            for key in cols:
                if key != "solver":
                    c.setdefault(key, []).append(num(row.get(key)))
    own = [k for k in cols if k not in GENERIC_OBS and not k[-1:].isdigit()][:3]
    return [k for k in GENERIC_OBS[:3] if k in cols] + own, data


def plot_run(results, steps_path, out_dir):
    data = read_run_steps(steps_path)
    panels = [("iters", "iterations per step", False),
              ("error", "own residual at return", True),
              ("natmap", "natural-map residual (common)", True)]
    # the run's result: its observables against time, every solver
    obs, odata = read_observables(os.path.join(results, "observables.csv"))
    fig, axes = plt.subplots(len(panels) + len(obs), 1,
                             figsize=(9, 2.6 * (len(panels) + len(obs))))
    for ax, name in zip(axes[len(panels):], obs):
        for solver, c in odata.items():
            ax.plot(c.get("t", []), c.get(name, []), label=solver, lw=1.2)
        ax.set_ylabel(OBS_LABEL.get(name, name), fontsize=9)
        ax.set_xlabel("time (s)", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    for ax, (col, label, log) in zip(axes, panels):
        for name, c in data.items():
            x, y = c["step"], c[col]
            if log:
                x, y = positive(x, y)
            line, = ax.plot(x, y, label=name, lw=1.2)
            bad = [(s, v) for s, v, r in zip(c["step"], c[col], c["reason"])
                   if r < 0 and math.isfinite(v) and (v > 0 or not log)]
            if bad:
                ax.plot([b[0] for b in bad], [b[1] for b in bad], "x", ms=4,
                        color=line.get_color(), label=f"{name}: failed step")
        if log:
            ax.set_yscale("log")
        ax.set_ylabel(label, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.set_xlabel("step", fontsize=9)
    scene = os.path.basename(os.path.normpath(results))
    try:
        with open(os.path.join(results, "manifest.json")) as f:
            scene = json.load(f).get("scene", scene)
    except (OSError, ValueError):
        pass
    fig.suptitle(f"{scene}: per step and observables against time, every solver", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / fig.get_figheight()))
    base = os.path.join(out_dir, "run")
    fig.savefig(base + ".png", dpi=110)
    fig.savefig(base + ".pdf")
    plt.close(fig)
    return base + ".png"


def read_run_iters(path, step):
    """{solver: {column: [values]}} of one step of a run's iters.csv."""
    data = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["step"] != str(step):
                continue
            cols = data.setdefault(row["solver"], {})
            for key in ("iter", "time", "error", "merit"):
                cols.setdefault(key, []).append(num(row.get(key)))
    return data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="a solve, profile or run folder")
    ap.add_argument("--problem", help="solve and profile folders: plot only this problem")
    ap.add_argument("--max", type=int, default=24,
                    help="solve and profile folders: at most this many problems (default 24)")
    ap.add_argument("--step", type=int, help="run folders: also the convergence of this step")
    ap.add_argument("--out", help="output folder (default RESULTS/plots)")
    a = ap.parse_args()

    src = a.results
    iters = os.path.join(src, "iters.csv")
    if not os.path.exists(iters) and os.path.exists(os.path.join(src, "solve", "iters.csv")):
        src = os.path.join(src, "solve")  # a profile folder keeps its solve results there
        iters = os.path.join(src, "iters.csv")
    if not os.path.exists(iters):
        sys.exit(f"plot_convergence.py: {iters}: no such file (expected a solve, profile or run "
                 "results folder)")
    with open(iters, newline="") as f:
        header = next(csv.reader(f), [])
    out_dir = a.out or os.path.join(a.results, "plots")
    os.makedirs(out_dir, exist_ok=True)
    norm = "fclib"
    try:
        with open(os.path.join(src, "manifest.json")) as f:
            norm = json.load(f).get("norm", norm)
    except (OSError, ValueError):
        pass

    if header[:1] == ["step"]:  # a run folder
        if a.problem:
            sys.exit("plot_convergence.py: --problem applies to solve and profile folders; "
                     f"{a.results} is a run folder (use --step K)")
        print(plot_run(a.results, os.path.join(src, "steps.csv"), out_dir))
        if a.step is not None:
            data = read_run_iters(iters, a.step)
            if not data:
                sys.exit(f"plot_convergence.py: no iterations of step {a.step} in {iters}")
            print(plot_problem(f"step-{a.step}", data, {}, norm, out_dir))
        return

    data = read_iters(iters)
    steps = read_steps(os.path.join(src, "steps.csv"))
    if a.problem:
        if a.problem not in data:
            sys.exit(f"plot_convergence.py: no problem '{a.problem}' in {iters}; "
                     f"problems: {', '.join(data) or '(none)'}")
        data = {a.problem: data[a.problem]}
    names = list(data)
    for problem in names[:max(a.max, 0)]:
        print(plot_problem(problem, data[problem], steps, norm, out_dir))
    if len(names) > a.max:
        print(f"plot_convergence.py: drew {a.max} of {len(names)} problems; choose one with "
              "--problem NAME or raise --max", file=sys.stderr)
    if not data:
        print(f"plot_convergence.py: {iters} holds no iterations; nothing to plot")


if __name__ == "__main__":
    main()

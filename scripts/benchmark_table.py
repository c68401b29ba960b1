#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""benchmark_table.py PROFILE_DIR [--tol T]: the benchmark's table from a profile folder.

Reads PROFILE_DIR/costs.csv (time and iterations to the tolerance per problem and solver, inf
when not reached) and PROFILE_DIR/solve/steps.csv (sizes, reasons, final merits) and prints
Markdown: one row per problem with the best FrictionLab solver and the best Siconos solver
(names starting with 'siconos-') and the ratio of their times, then the geometric mean of the
ratios over the problems both solve, and the solve counts per solver.
"""
import csv
import math
import os
import sys


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def fmt_t(t):
    if not math.isfinite(t):
        return "-"
    if t >= 1:
        return f"{t:.2f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.2f} ms"
    return f"{t * 1e6:.0f} us"


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    d = argv[1]
    tol = argv[argv.index("--tol") + 1] if "--tol" in argv else "?"
    try:
        costs = read_csv(os.path.join(d, "costs.csv"))
        steps = read_csv(os.path.join(d, "solve", "steps.csv"))
    except OSError as e:
        sys.exit(f"benchmark_table.py: {e.filename}: {e.strerror} (expected a profile folder)")

    size, order = {}, []
    for r in steps:
        p = r["problem"]
        if p not in size:
            size[p] = (r["kind"], r["nc"], r["nv"])
            order.append(p)
    final = {(r["problem"], r["solver"]): r for r in steps}
    best = {}  # (problem, family) -> (time, solver, iterations)
    solvers, solved = [], {}
    for r in costs:
        p, s = r["problem"], r["solver"]
        if s not in solvers:
            solvers.append(s)
        t = float(r["time_s"])
        fam = "siconos" if s.startswith("siconos-") else "frictionlab"
        if math.isfinite(t):
            solved[s] = solved.get(s, 0) + 1
            if (p, fam) not in best or t < best[(p, fam)][0]:
                best[(p, fam)] = (t, s, r["iterations"])
    have_siconos = any(s.startswith("siconos-") for s in solvers)

    out = []
    out.append(f"Time to a merit <= {tol} (Siconos's normalization), each system's best solver.")
    out.append("")
    out.append("| problem | kind | nc | nv | best FrictionLab | time | best Siconos | time | ratio |")
    out.append("|---|---|---:|---:|---|---:|---|---:|---:|")
    ratios, nloss, nfl_unsolved = [], [], []
    for p in order:
        kind, nc, nv = size[p]
        fl = best.get((p, "frictionlab"))
        sc = best.get((p, "siconos"))
        ratio = ""
        if fl and sc:
            rr = fl[0] / sc[0] if sc[0] > 0 else math.inf
            ratios.append(rr)
            ratio = f"{rr:.2f}x"
            if rr > 1:
                nloss.append(p)
        elif fl and have_siconos:
            ratio = "Siconos unsolved"
        elif sc:
            ratio = "FrictionLab unsolved"
        if not fl:
            nfl_unsolved.append(p)

        def cell(b):
            return (f"`{b[1]}` ({b[2]} its)", fmt_t(b[0])) if b else ("none", "-")

        a, b = cell(fl), cell(sc)
        out.append(f"| {p} | {kind} | {nc} | {nv} | {a[0]} | {a[1]} | {b[0]} | {b[1]} | {ratio} |")
    out.append("")
    if ratios:
        gm = math.exp(sum(math.log(max(r, 1e-300)) for r in ratios) / len(ratios))
        out.append(f"Geometric mean ratio (FrictionLab / Siconos) over the {len(ratios)} problems "
                   f"both solve: {gm:.3f}. FrictionLab slower on {len(nloss)}"
                   + (f" ({', '.join(nloss)})" if nloss else "") + f"; FrictionLab unsolved on "
                   f"{len(nfl_unsolved)}" + (f" ({', '.join(nfl_unsolved)})" if nfl_unsolved else "")
                   + ".")
        out.append("")
    out.append("| solver | problems solved | of |")
    out.append("|---|---:|---:|")
    for s in solvers:
        out.append(f"| `{s}` | {solved.get(s, 0)} | {len(order)} |")
    # reasons of the unsolved cells, so that a '-' is never a mystery
    out.append("")
    out.append("Unsolved cells, by reason (final merit in brackets):")
    out.append("")
    for s in solvers:
        why = {}
        for p in order:
            r = final.get((p, s))
            if r is None:
                continue
            if not any(c["problem"] == p and c["solver"] == s and math.isfinite(float(c["time_s"]))
                       for c in costs):
                key = r["reason"]
                why.setdefault(key, []).append(f"{p} [{r['merit']}]")
        if why:
            parts = "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(why.items()))
            out.append(f"- `{s}`: {parts}")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

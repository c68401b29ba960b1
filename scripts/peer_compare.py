#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""peer_compare.py: the tables of docs/peers.md, "Today's peers": FrictionLab's SAP (each model)
against Drake's, and FrictionLab's best solver (NSN) against MuJoCo 4's Newton, CG and PGS, on
the canonical rigid scenes and verify's sliding and incline cases.

    python3 scripts/peer_compare.py BUILD/frictionlab OUTDIR [--reps 3] [--only heavy_stack,...]

For every scene and row: `frictionlab run` (poses from the recording, penetration and iterations
from steps.csv) and `frictionlab bench --steps` with interleaved repetitions (min and median time
per step; a peer's is measured inside it). Pose difference: the largest distance between the
same body's centre in the row's last frame and its reference's (the row it is paired with).
Writes OUTDIR/tables.md and OUTDIR/rows.json; prints the machine's load before and after.
"""
import csv
import json
import math
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cli"))
import flrec  # noqa: E402

# (name, scene, steps, scene settings)
SCENES = [
    ("heavy_stack", "heavy_stack", 120, []),
    ("table_pile", "table_pile", 120, []),
    ("box_pile", "box_pile", 120, []),
    ("arch_masonry", "arch_masonry", 50, []),
    ("slide", "CASE:slide", 60, []),
    ("slope_below_g", "CASE:slope_below_g", 50, []),
    ("slope_at_g", "CASE:slope_at_g", 50, []),
    ("slope_above_g", "CASE:slope_above_g", 50, []),
]

SAP_MODELS = [  # FrictionLab's SAP row, its Drake counterpart
    ("convex", "sap.model=convex", "drake-sap"),
    ("similar", "sap.model=similar,sap.friction=soft,sap.passes=1", "drake-similar"),
    ("lagged", "sap.model=lagged,sap.friction=soft,sap.passes=1", "drake-lagged"),
]


def load():
    return open("/proc/loadavg").read().split()[:3]


def sh(cmd, log):
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        f.write(r.stdout + "\n")
    return r


def final_poses(d, solver):
    h, frames = flrec.read(os.path.join(d, "recording.flrec"))
    k = h["solvers"].index(solver)
    fr = [f for f in frames if f["solver"] == k]
    last = fr[-1]
    nb = len(h["bodies"])
    p = last["pose"]
    bs = len(p) // nb
    return [p[bs * i:bs * i + 3] for i in range(nb)], last["step"]


def run_row(fl, scene, steps, sets, solver, out, log):
    cmd = [fl, "run", scene, "--solver", solver, "--steps", str(steps), "--out", out, "--force"]
    for s in sets:
        cmd += ["--set", s]
    r = sh(cmd, log)
    if not os.path.exists(os.path.join(out, "steps.csv")):
        return {"error": r.stdout.strip().splitlines()[-1] if r.stdout.strip() else "no output"}
    rows = [x for x in csv.DictReader(open(os.path.join(out, "steps.csv"))) if x["solver"] == solver]
    pen = max(float(x["pen_max"]) for x in rows) if rows else math.nan
    its = sum(float(x["iters"]) for x in rows) / max(len(rows), 1)
    failed = sum(1 for x in rows if int(x["reason"]) < 0)
    if len(rows) < steps:  # the run stopped: its reason, no pose difference
        msg = [l for l in r.stdout.splitlines() if l.startswith(solver)]
        return {"error": "stopped after %d of %d steps: %s" % (len(rows), steps, msg[-1][60:] if msg else r.stdout[-200:])}
    poses, last = final_poses(out, solver)
    return {"steps": len(rows), "pen_max": pen, "iters": its, "failed": failed, "poses": poses,
            "last_step": last, "status": r.stdout.strip().splitlines()[-2] if r.returncode == 0 else r.stdout[-300:]}


def bench_rows(fl, scene, steps, sets, solvers, reps, out, log):
    cmd = [fl, "bench", scene, "--steps", str(steps), "--reps", str(reps), "--solver",
           ",".join(solvers), "--out", out, "--force"]
    for s in sets:
        cmd += ["--set", s]
    sh(cmd, log)
    res = {}
    p = os.path.join(out, "bench.csv")
    if os.path.exists(p):
        for x in csv.DictReader(open(p)):
            res[x.get("solver")] = x
    return res


def posediff(a, b):
    return max(math.dist(p, q) for p, q in zip(a, b))


def main():
    fl, outdir = sys.argv[1], sys.argv[2]
    reps = 3
    only = None
    args = sys.argv[3:]
    for i, a in enumerate(args):
        if a == "--reps":
            reps = int(args[i + 1])
        if a == "--only":
            only = set(args[i + 1].split(","))
    os.makedirs(outdir, exist_ok=True)
    log = os.path.join(outdir, "log.txt")
    load0 = load()
    # verify's cases as scene files
    cases = os.path.join(outdir, "cases")
    sh([fl, "verify", "--only", "slide,slope_below_g,slope_at_g,slope_above_g", "--solver", "sap",
        "--out", cases, "--force"], log)
    result = {"load_before": load0, "scenes": {}}
    for name, scene, steps, ssets in SCENES:
        if only and name not in only:
            continue
        if scene.startswith("CASE:"):
            scene = os.path.join(cases, "cases", scene[5:] + ".json")
        R = result["scenes"][name] = {"steps": steps, "rows": {}}
        d = os.path.join(outdir, name)
        rows = R["rows"]

        def row(label, solver, sets):
            rows[label] = run_row(fl, scene, steps, ssets + sets, solver,
                                  os.path.join(d, label.replace(" ", "_").replace(",", "")), log)
            rows[label]["solver"] = solver
            rows[label]["sets"] = sets
            print(name, label, {k: v for k, v in rows[label].items() if k != "poses"}, flush=True)

        for model, fset, dk in SAP_MODELS:
            fs = fset.split(",")
            row("sap " + model, "sap", fs)
            row("sap " + model + " margin 0", "sap", fs + ["margin=0"])
            row(dk, dk, [])
            both = ["sap"] + ([dk] if "error" not in rows[dk] else [])
            b = bench_rows(fl, scene, steps, ssets + fs, both, reps, os.path.join(d, "bench-" + model), log)
            for lab, s in (("sap " + model, "sap"), (dk, dk)):
                if s in b:
                    rows[lab]["t_min_us"] = 1e6 * float(b[s]["step_min_s"] or "nan")
                    rows[lab]["t_med_us"] = 1e6 * float(b[s]["step_median_s"] or "nan")
        row("drake-sap hydroelastic", "drake-sap", ["drake.contact=hydroelastic"])
        row("drake-tamsi", "drake-tamsi", [])
        row("sap defaults", "sap", [])
        row("nsn", "nsn", [])
        for s in ("mujoco4-newton", "mujoco4-cg", "mujoco4-pgs"):
            row(s, s, [])
        # only rows that ran through (a run that stops fails the whole bench)
        ok = [("sap" if lab == "sap defaults" else lab) for lab in
              ("nsn", "sap defaults", "mujoco4-newton", "mujoco4-cg", "mujoco4-pgs", "drake-tamsi")
              if "error" not in rows.get(lab, {"error": 1})]
        b = bench_rows(fl, scene, steps, ssets, ok, reps, os.path.join(d, "bench-nsn"), log) if ok else {}
        for lab in ("nsn", "sap defaults", "mujoco4-newton", "mujoco4-cg", "mujoco4-pgs", "drake-tamsi"):
            s = "sap" if lab == "sap defaults" else lab
            if s in b and lab in rows:
                rows[lab]["t_min_us"] = 1e6 * float(b[s]["step_min_s"] or "nan")
                rows[lab]["t_med_us"] = 1e6 * float(b[s]["step_median_s"] or "nan")
        # pose differences against each row's reference
        ref = {"drake-sap": "sap convex margin 0", "drake-similar": "sap similar margin 0",
               "drake-lagged": "sap lagged margin 0", "sap convex": "drake-sap",
               "sap similar": "drake-similar", "sap lagged": "drake-lagged",
               "sap convex margin 0": "drake-sap", "sap similar margin 0": "drake-similar",
               "sap lagged margin 0": "drake-lagged", "drake-sap hydroelastic": "sap convex",
               "drake-tamsi": "sap defaults", "mujoco4-newton": "nsn", "mujoco4-cg": "nsn",
               "mujoco4-pgs": "nsn", "sap defaults": "nsn"}
        for lab, r in rows.items():
            rr = rows.get(ref.get(lab, ""), {})
            if "poses" in r and "poses" in rr:
                r["ref"] = ref[lab]
                r["posediff"] = posediff(r["poses"], rr["poses"])
        json.dump(result, open(os.path.join(outdir, "rows.json"), "w"), indent=1, default=str)
    result["load_after"] = load()
    json.dump(result, open(os.path.join(outdir, "rows.json"), "w"), indent=1, default=str)
    # the tables
    with open(os.path.join(outdir, "tables.md"), "w") as f:
        f.write("load (1, 5, 15 min) before %s, after %s\n\n" % (" ".join(load0), " ".join(result["load_after"])))
        for name, R in result["scenes"].items():
            f.write("#### %s (%d steps)\n\n" % (name, R["steps"]))
            f.write("| row | largest pose difference (m) against | deepest penetration (m) | iterations/step | failed steps | time/step min, median (us) |\n")
            f.write("| --- | --- | ---: | ---: | ---: | --- |\n")
            for lab, r in R["rows"].items():
                if "error" in r:
                    f.write("| %s | error: %s | | | | |\n" % (lab, r["error"][:160].replace("|", "/")))
                    continue
                pd = "%.3g (%s)" % (r["posediff"], r["ref"]) if "posediff" in r else ""
                t = "%.0f, %.0f" % (r["t_min_us"], r["t_med_us"]) if "t_min_us" in r else ""
                f.write("| %s | %s | %.3g | %.2f | %d | %s |\n" % (lab, pd, r["pen_max"], r["iters"], r["failed"], t))
            f.write("\n")
    print(open(os.path.join(outdir, "tables.md")).read())


if __name__ == "__main__":
    main()

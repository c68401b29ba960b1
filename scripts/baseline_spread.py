#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/baseline_spread.py: widens the tolerances of `check` baselines so that they cover the
round-off between BLAS libraries (docs/check.md, "Which BLAS").

    scripts/baseline_spread.py BASELINES OTHER [OTHER...]

BASELINES is a folder of baselines (results/baselines); each OTHER holds the same cases recorded
by `frictionlab check --update --baselines OTHER` under another BLAS (LD_LIBRARY_PATH). For
every case and quantity, the tolerance becomes at least 4 x the difference between the baseline
and each other record, relative to the baseline's value (failed steps: 4 x the difference, in
whole steps; a baseline of 0: an absolute tolerance), as `--spread-from` does between two
builds; the spread (relative to the larger value) is stored as "spread_blas". Values are
left as recorded. The cases are those the OTHER folders hold (a `check --update --only ...` run
records a few); prints what widened; exits 1 on a case missing from an OTHER or from BASELINES.
"""
import json
import math
import os
import sys

FACTOR = 4.0
SKIP = {"solve_s"}


def cjson_number(d):
    """a number as cJSON prints it (so that a rewritten file differs only where it changed)"""
    if isinstance(d, bool):
        return "true" if d else "false"
    d = float(d)
    if math.isnan(d) or math.isinf(d):
        return "null"
    vi = int(max(min(d, 2147483647), -2147483648))
    if d == float(vi):
        return "%d" % vi
    s = "%1.15g" % d
    return s if float(s) == d else "%1.17g" % d


def cjson_print(v, ind=""):
    """cJSON_Print's layout: tabs, "key":<tab>value, arrays on one line"""
    if isinstance(v, dict):
        if not v:
            return "{\n" + ind + "}"
        items = [ind + "\t" + json.dumps(k, ensure_ascii=False) + ":\t" + cjson_print(x, ind + "\t")
                 for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + ind + "}"
    if isinstance(v, list):
        return "[" + ", ".join(cjson_print(x, ind) for x in v) + "]"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if v is None:
        return "null"
    return cjson_number(v)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    base, others = argv[1], argv[2:]
    missing = 0
    names = set()
    for other in others:
        names.update(n for n in os.listdir(other) if n.endswith(".json") and n != "verify.json")
    for name in sorted(names):
        path = os.path.join(base, name)
        if not os.path.exists(path):
            print(f"{path}: missing", file=sys.stderr)
            missing += 1
            continue
        with open(path) as f:
            doc = json.load(f)
        if "solvers" not in doc:
            continue
        changed = False
        for other in others:
            opath = os.path.join(other, name)
            if not os.path.exists(opath):
                print(f"{opath}: missing", file=sys.stderr)
                missing += 1
                continue
            with open(opath) as f:
                odoc = json.load(f)
            if odoc.get("steps") != doc.get("steps"):
                print(f"{opath}: {odoc.get('steps')} steps, not {doc.get('steps')}", file=sys.stderr)
                missing += 1
                continue
            for solver, rec in doc["solvers"].items():
                orec = odoc.get("solvers", {}).get(solver)
                if not isinstance(orec, dict) or "tolerance" not in rec:
                    continue
                spread = {}
                for q, tol in rec["tolerance"].items():
                    if q in SKIP:
                        continue
                    a, b = rec.get(q), orec.get(q)
                    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
                        continue
                    d, m = abs(a - b), max(abs(a), abs(b))
                    s = d / m if m > 0 else 0.0
                    spread[q] = s
                    if q == "nfail" or q == "limit_steps":
                        want = math.ceil(FACTOR * d)
                        if want > tol["abs"]:
                            print(f"{name[:-5]:22s} {solver:16s} {q:12s} abs {tol['abs']} -> {want}")
                            tol["abs"] = want
                            changed = True
                    elif a != 0 and FACTOR * d / abs(a) > tol["rel"]:
                        # relative to the baseline's value, which check multiplies by 1 + rel
                        want = FACTOR * d / abs(a)
                        print(f"{name[:-5]:22s} {solver:16s} {q:12s} rel {tol['rel']:.4g} -> {want:.4g}"
                              f" (values {a:.6g}, {b:.6g})")
                        tol["rel"] = want
                        changed = True
                    elif a == 0 and FACTOR * d > tol["abs"]:
                        print(f"{name[:-5]:22s} {solver:16s} {q:12s} abs {tol['abs']:.4g} -> {FACTOR * d:.4g}")
                        tol["abs"] = FACTOR * d
                        changed = True
                if any(x > 0 for x in spread.values()):
                    old = rec.get("spread_blas", {})
                    rec["spread_blas"] = {q: max(x, old.get(q, 0.0)) for q, x in spread.items()}
                    changed = True
        if changed:
            with open(path, "w") as f:
                f.write(cjson_print(doc) + "\n")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

# SPDX-License-Identifier: Apache-2.0
# Every CSV FrictionLab writes reads into pandas (Debian's python3-pandas) as written: one
# header, unique column names (pandas would rename a repeated "contacts" to "contacts.1"), a
# value per column on every row. One folder of each kind: run (with a deformable body), solve,
# profile, bench, a --quick figure. Skipped (77) without pandas.
source "$(dirname "$0")/common.bash"
/usr/bin/python3 -c 'import pandas' 2>/dev/null || { echo "skipped: python3-pandas is not installed"; exit 77; }

"$bin" run heavy_stack --solver pgs,sap --steps 5 --out "$tmp/run" >/dev/null 2>&1 || fail "run"
"$bin" run elastic_cube --solver sap --steps 2 --out "$tmp/run_fem" >/dev/null 2>&1 || fail "run elastic_cube"
"$bin" solve box_on_plane one_contact_slide --solver pgs,nsn --out "$tmp/solve" >/dev/null 2>&1 || fail "solve"
"$bin" profile box_on_plane two_box_stack --solver pgs,sap --out "$tmp/profile" >/dev/null 2>&1 || fail "profile"
"$bin" bench heavy_stack --solver pgs,sap --reps 2 --out "$tmp/bench" >/dev/null 2>&1 || fail "bench"
"$bin" reproduce zong-fig3 --quick --out "$tmp/figs" >/dev/null 2>&1 || fail "reproduce zong-fig3 --quick"

/usr/bin/python3 - "$tmp" <<'PY'
import csv, glob, os, sys
import pandas as pd
root = sys.argv[1]
bad = 0
files = sorted(glob.glob(os.path.join(root, "**", "*.csv"), recursive=True))
kinds = {os.path.relpath(f, root).split(os.sep)[0] for f in files}
for f in files:
    with open(f, newline="") as fh:
        header = next(csv.reader(fh), [])
    df = pd.read_csv(f)
    rel = os.path.relpath(f, root)
    dup = sorted({c for c in header if header.count(c) > 1})
    if dup or list(df.columns) != header:
        print(f"FAIL: {rel}: columns {dup or list(df.columns)} (header {header[:8]}...)")
        bad += 1
    else:
        print(f"ok: {rel}: {len(header)} unique columns, {len(df)} rows")
want = {"run", "run_fem", "solve", "profile", "bench", "figs"}
if not want <= kinds:
    print(f"FAIL: no CSV from {sorted(want - kinds)}")
    bad += 1
sys.exit(1 if bad else 0)
PY
[[ $? -eq 0 ]] && pass "pandas reads every CSV" || fail "a CSV pandas cannot read as written"
finish

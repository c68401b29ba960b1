#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/verify.md's Results table is scripts/verify-table's output from the committed runs in
# docs/data/verify/ (named on its begin marker): `--check` passes on the tree, fails on a copy
# whose doc has an edited cell or whose data changed, and `--update` restores it.
source "$(dirname "$0")/common.bash"

src=${FL_SOURCE_DIR:-}
[[ -n "$src" && -f "$src/scripts/verify-table" ]] || { echo "SKIP: no source tree"; exit 77; }
py=$(command -v python3) || { echo "SKIP: no python3"; exit 77; }

out=$("$py" "$src/scripts/verify-table" --check "$src/docs/verify.md" 2>&1) &&
  pass "docs/verify.md's table is the committed runs'" || fail "check on the tree: $out"

# every committed run is on the marker, and the marker names only committed runs
marker=$(grep '^<!-- verify-table: begin ' "$src/docs/verify.md")
for f in "$src"/docs/data/verify/*/verify.csv; do
  rel=${f#"$src/"}
  [[ " $marker " == *" $rel "* ]] && pass "$rel is on the marker" || fail "$rel is not on the marker: $marker"
done
for rel in ${marker#<!-- verify-table: begin }; do
  [[ $rel == "-->" ]] && continue
  [[ $rel == docs/data/verify/* && -f "$src/$rel" ]] && pass "$rel is committed" || fail "$rel: not in docs/data/verify"
done

mkdir -p "$tmp/t/scripts" "$tmp/t/docs/data"
cp "$src/scripts/verify-table" "$tmp/t/scripts/"
cp "$src/docs/verify.md" "$tmp/t/docs/"
cp -r "$src/docs/data/verify" "$tmp/t/docs/data/"
doc=$tmp/t/docs/verify.md
"$py" "$tmp/t/scripts/verify-table" --check "$doc" >/dev/null 2>&1 && pass "a copy agrees" || fail "a copy disagrees"

# one cell of the table edited by hand: the first passing cell of the first table row
n=$(awk '/^<!-- verify-table: begin /{on=1} on && /^[|] [a-z_]+ [|]/ && /[|] pass /{print NR; exit}' "$doc")
sed -i "${n}s/| pass [^|]*|/| pass 0.5 |/" "$doc"
cmp -s "$doc" "$src/docs/verify.md" && fail "the test could not edit a cell"
out=$("$py" "$tmp/t/scripts/verify-table" --check "$doc" 2>&1); rc=$?
((rc == 1)) && [[ $out == *"line $n: the table disagrees"* ]] &&
  pass "an edited cell fails the check (exit 1, line $n)" || fail "edited cell: exit $rc, $out"
"$py" "$tmp/t/scripts/verify-table" --update "$doc" && cmp -s "$doc" "$src/docs/verify.md" &&
  pass "--update restores the doc" || fail "--update did not restore the doc"

# the data changed under the doc: a measured value in the first run's CSV
csv=$(ls "$tmp"/t/docs/data/verify/*/verify.csv | head -1)
"$py" - "$csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
for r in rows[1:]:
    if r[8] == "pass":
        r[8] = "fail"
        break
csv.writer(open(sys.argv[1], "w", newline=""), lineterminator="\n").writerows(rows)
PY
out=$("$py" "$tmp/t/scripts/verify-table" --check "$doc" 2>&1); rc=$?
((rc == 1)) && pass "changed data fails the check" || fail "changed data: exit $rc, $out"

# a doc without its markers
grep -v '^<!-- verify-table: end -->' "$src/docs/verify.md" > "$tmp/t/nomark.md"
out=$("$py" "$tmp/t/scripts/verify-table" --check "$tmp/t/nomark.md" 2>&1); rc=$?
((rc == 2)) && [[ $out == *"nomark.md: expected one line"* ]] &&
  pass "a doc without its end marker exits 2" || fail "no end marker: exit $rc, $out"
finish

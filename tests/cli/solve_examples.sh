# SPDX-License-Identifier: Apache-2.0
# `frictionlab solve` on the built-in examples with every registered solver: the results
# folder has manifest.json, steps.csv and iters.csv with the documented columns, one steps row
# per (problem, solver), one iters row per recorded iteration, and consistent numbers.
source "$(dirname "$0")/common.bash"

out=$tmp/runs/examples
mapfile -t solvers < <(solver_names)
((${#solvers[@]} > 0)) || { echo "no solvers listed"; exit 1; }
list=$(IFS=,; echo "${solvers[*]}")

"$bin" solve --solver "$list" --set max_iter=500 --set abs_tol=1e-10 --out "$out" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
if [[ $rc -ne 0 ]]; then
  cat "$tmp/stdout" "$tmp/stderr"
  fail "solve exited $rc"
  finish
fi
pass "solve on the examples with ${#solvers[@]} solvers"
for f in manifest.json steps.csv iters.csv; do
  [[ -s "$out/$f" ]] && pass "$f written" || fail "$f missing or empty"
done
ls -a "$tmp/runs" | grep -q staging && fail "staging folder left in $tmp/runs"
grep -q "results written to $out" "$tmp/stdout" && pass "prints where results went" ||
  fail "stdout does not say where results went"

# the table says when a converged solver answered its own, regularized model (issue 50, item 8):
# SAP's answer on box_push_slide is 5.3e-3 from the rigid law at abs_tol 1e-10; NSN's is not
if grep -E '^box_push_slide +sap ' "$tmp/stdout" | grep -qE 'CONVERGED.* own model$' &&
   ! grep -E '^box_push_slide +nsn ' "$tmp/stdout" | grep -q 'own model' &&
   grep -q '^own model: .* regularized model; merit above 1e-06' "$tmp/stdout"; then
  pass "table: SAP's converged answer marked 'own model' with the note, NSN's not"
else
  fail "table own-model column: $(grep -E '^(problem|box_push_slide|own model)' "$tmp/stdout")"
fi

# columns
steps_header="problem,solver,kind,nc,nv,nh,status,iterations,reason,reason_code,solve_s,setup_s,monitor_s,error,merit,history_lost,natmap,natmap_raw,momentum,signorini,cone,dual,dissipation,penetration,bilateral"
iters_header="problem,solver,iter,time,error,merit,momentum,objective,step_length,inner_iters"
[[ "$(head -n 1 "$out/steps.csv")" == "$steps_header" ]] && pass "steps.csv header" ||
  fail "steps.csv header: $(head -n 1 "$out/steps.csv")"
[[ "$(head -n 1 "$out/iters.csv")" == "$iters_header" ]] && pass "iters.csv header" ||
  fail "iters.csv header: $(head -n 1 "$out/iters.csv")"

# one steps row per (problem, solver); problems from `list problems`
nprob=$("$bin" list problems | awk 'NR > 2 && NF >= 5 && ($2 == "global" || $2 == "local")' | wc -l)
nrows=$(awk 'END {print NR - 1}' "$out/steps.csv")
((nprob > 0)) || fail "list problems shows no examples"
[[ $nrows -eq $((nprob * ${#solvers[@]})) ]] && pass "steps.csv: $nrows rows = $nprob problems x ${#solvers[@]} solvers" ||
  fail "steps.csv: $nrows rows, expected $nprob x ${#solvers[@]}"
nbad=$(awk -F, 'NR > 1 && NF != 25' "$out/steps.csv" | wc -l)
[[ $nbad -eq 0 ]] && pass "steps.csv: 25 fields in every row" || fail "steps.csv: $nbad rows without 25 fields"

# every solved row: iterations + 1 records (iteration 0 is the guess), numbered 0, 1, ...,
# time never decreasing, the last record's error equal to the reported final error, finite
# common metrics, and a reason that is not 0
awk -F, '
  FNR == 1 { next }
  FILENAME ~ /steps.csv$/ {
    key = $1 SUBSEP $2
    status[key] = $7; iters[key] = $8; err[key] = $14; merit[key] = $15; lost[key] = $16
    natmap[key] = $17; code[key] = $10; kind[key] = $3; mom[key] = $19
    next
  }
  {
    key = $1 SUBSEP $2
    if (key in count) {
      if ($3 != last_iter[key] + 1) { printf "iters.csv: %s/%s: iteration %s after %s\n", $1, $2, $3, last_iter[key]; bad++ }
      if ($4 + 0 < last_t[key]) { printf "iters.csv: %s/%s: time goes back at iteration %s\n", $1, $2, $3; bad++ }
    } else if ($3 != 0) { printf "iters.csv: %s/%s starts at iteration %s\n", $1, $2, $3; bad++ }
    count[key]++; last_iter[key] = $3; last_t[key] = $4 + 0; last_err[key] = $5
  }
  END {
    for (key in status) {
      split(key, pk, SUBSEP)
      if (status[key] != "returned") {
        if (key in count) { printf "%s/%s: %s but has iteration rows\n", pk[1], pk[2], status[key]; bad++ }
        continue
      }
      nsolved++
      if (lost[key] == 0 && count[key] != iters[key] + 1) {
        printf "%s/%s: %d iteration rows for %d iterations\n", pk[1], pk[2], count[key], iters[key]; bad++
      }
      e = err[key] + 0; l = last_err[key] + 0
      if (err[key] != last_err[key] && !(e - l <= 1e-9 * (e > 0 ? e : -e) && l - e <= 1e-9 * (e > 0 ? e : -e))) {
        printf "%s/%s: final error %s but last record %s\n", pk[1], pk[2], err[key], last_err[key]; bad++
      }
      if (natmap[key] == "nan" || natmap[key] == "inf" || natmap[key] + 0 < 0) {
        printf "%s/%s: natmap %s\n", pk[1], pk[2], natmap[key]; bad++
      }
      if (kind[key] == "global" && (mom[key] == "nan" || mom[key] + 0 < 0)) {
        printf "%s/%s: momentum %s\n", pk[1], pk[2], mom[key]; bad++
      }
      if (code[key] == 0) { printf "%s/%s: reason 0 after a solve\n", pk[1], pk[2]; bad++ }
      # the common merit: at least the natural map, and inf exactly when the reason says NaN
      if (merit[key] == "nan" || (merit[key] != "inf" && merit[key] + 0 < natmap[key] + 0)) {
        printf "%s/%s: merit %s below natmap %s\n", pk[1], pk[2], merit[key], natmap[key]; bad++
      }
    }
    printf "%d returned rows checked\n", nsolved
    if (nsolved == 0) { print "no returned rows"; bad++ }
    exit bad > 0
  }' "$out/steps.csv" "$out/iters.csv" && pass "steps.csv and iters.csv agree" || fail "steps.csv and iters.csv disagree"

# the manifest: valid JSON with command, versions, git revision, every solver's options
py=/usr/bin/python3
[[ -x $py ]] || py=$(command -v python3 || true)
if [[ -n "$py" ]]; then
  "$py" - "$out/manifest.json" "$nprob" "${solvers[@]}" <<'PY' && pass "manifest.json contents" || fail "manifest.json contents"
import json, sys
m = json.load(open(sys.argv[1]))
nprob, solvers = int(sys.argv[2]), sys.argv[3:]
bad = []
if m.get("command") != "solve": bad.append("command")
if not m.get("argv") or "solve" not in m["argv"]: bad.append("argv")
fl = m.get("frictionlab", {})
if not fl.get("version") or not fl.get("git_revision"): bad.append("frictionlab version/git")
for lib in ("cholmod", "hdf5", "suitesparse"):
    if not m.get("libraries", {}).get(lib): bad.append("libraries." + lib)
for k in ("compiler", "machine", "date"):
    if not m.get(k): bad.append(k)
for s in solvers:
    opts = m.get("solvers", {}).get(s)
    if not isinstance(opts, dict) or not opts: bad.append("solvers." + s)
    elif not any(k.endswith("max_iter") for k in opts): bad.append("solvers.%s lacks max_iter" % s)
    elif not any(k.endswith("max_iter") and str(v) == "500" for k, v in opts.items()):
        bad.append("solvers.%s max_iter is not the --set value 500: %s" % (s, opts))
if len(m.get("problems", [])) != nprob: bad.append("problems: %d" % len(m.get("problems", [])))
if bad: print("manifest problems:", bad); sys.exit(1)
PY
else
  echo "note: no python3; manifest contents not checked"
fi

finish

# SPDX-License-Identifier: Apache-2.0
# The plot scripts draw a results folder: gnuplot (pngcairo) and matplotlib (Agg, Debian's
# /usr/bin/python3) both write a PNG per problem. Skipped when neither is installed.
# ctest-label: slow
# (the time is gnuplot's and matplotlib's, outside FrictionLab's code)
source "$(dirname "$0")/common.bash"

src=${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
have_gp=0 have_mpl=0
command -v gnuplot >/dev/null 2>&1 && have_gp=1
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null && have_mpl=1
if ((!have_gp && !have_mpl)); then
  echo "skipped: neither gnuplot nor matplotlib (/usr/bin/python3) is installed"
  exit 77
fi

first=$("$bin" list problems | awk 'NR > 2 && ($2 == "global" || $2 == "local") {print $1; exit}')
out=$tmp/run
"$bin" solve "$first" --solver pgs,jacobi --set max_iter=100 --out "$out" >/dev/null 2>"$tmp/stderr" ||
  { fail "solve: $(cat "$tmp/stderr")"; finish; }

is_png() { [[ -s "$1" ]] && [[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" == 89504e470d0a1a0a ]]; }
if ((have_gp)); then
  gnuplot -e "dir='$out'" "$src/scripts/plot_convergence.gp" >"$tmp/gp.out" 2>&1 || fail "gnuplot: $(cat "$tmp/gp.out")"
  is_png "$out/plots/$first-gnuplot.png" && pass "gnuplot PNG for $first" || fail "no gnuplot PNG: $(cat "$tmp/gp.out")"
fi
if ((have_mpl)); then
  /usr/bin/python3 "$src/scripts/plot_convergence.py" "$out" --problem "$first" >"$tmp/py.out" 2>&1 ||
    fail "matplotlib: $(cat "$tmp/py.out")"
  is_png "$out/plots/$first.png" && pass "matplotlib PNG for $first" || fail "no matplotlib PNG: $(cat "$tmp/py.out")"
  /usr/bin/python3 "$src/scripts/plot_convergence.py" "$out" --problem no_such_problem >/dev/null 2>"$tmp/py.err" &&
    fail "matplotlib accepted an unknown problem" || { grep -q no_such_problem "$tmp/py.err" && pass "unknown problem named"; }
fi
# a run folder: one overview picture per script (not one per step), and --step K
"$bin" run heavy_stack --solver pgs,sap --steps 30 --out "$tmp/runf" >/dev/null 2>&1 || fail "run heavy_stack"
if ((have_gp)); then
  n=$(gnuplot -e "dir='$tmp/runf'" "$src/scripts/plot_convergence.gp" 2>"$tmp/gp.err" | wc -l)
  [[ $n -eq 1 ]] && is_png "$tmp/runf/plots/run-gnuplot.png" && pass "gnuplot: one picture for a 30-step run" ||
    fail "gnuplot on a run folder: $n pictures; $(cat "$tmp/gp.err")"
fi
if ((have_mpl)); then
  n=$(/usr/bin/python3 "$src/scripts/plot_convergence.py" "$tmp/runf" --step 12 2>"$tmp/py.err" | wc -l)
  [[ $n -eq 2 ]] && is_png "$tmp/runf/plots/run.png" && is_png "$tmp/runf/plots/step-12.png" &&
    pass "matplotlib: run overview and step 12" || fail "matplotlib on a run folder: $n pictures; $(cat "$tmp/py.err")"
fi
# a profile folder (its solve/ subfolder) and a bounded count
"$bin" profile box_on_plane two_box_stack box_push_slide --solver pgs,sap --out "$tmp/prof" >/dev/null 2>&1 ||
  fail "profile"
if ((have_mpl)); then
  n=$(/usr/bin/python3 "$src/scripts/plot_convergence.py" "$tmp/prof" --max 2 2>"$tmp/py.err" | wc -l)
  [[ $n -eq 2 ]] && grep -q "drew 2 of 3 problems" "$tmp/py.err" && pass "matplotlib: profile folder, --max 2 of 3" ||
    fail "matplotlib on a profile folder: $n pictures; $(cat "$tmp/py.err")"
fi
if ((have_gp)); then
  n=$(gnuplot -e "dir='$tmp/prof'; maxn=2" "$src/scripts/plot_convergence.gp" 2>"$tmp/gp.err" | wc -l)
  [[ $n -eq 2 ]] && grep -q "drawing 2 of 3" "$tmp/gp.err" && pass "gnuplot: profile folder, maxn=2 of 3" ||
    fail "gnuplot on a profile folder: $n pictures; $(cat "$tmp/gp.err")"
fi
finish

# The plot scripts draw a results folder: gnuplot (pngcairo) and matplotlib (Agg, Debian's
# /usr/bin/python3) both write a PNG per problem. Skipped when neither is installed.
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
finish

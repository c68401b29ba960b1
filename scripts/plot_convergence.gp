# SPDX-License-Identifier: Apache-2.0
# Convergence curves of a FrictionLab results folder (gnuplot, pngcairo).
#
#   gnuplot -e "dir='results/runs/NAME'" scripts/plot_convergence.gp
#   gnuplot -e "dir='...'; problem='Capsules-i97-269'; out='/tmp/plots'" scripts/plot_convergence.gp
#   gnuplot -e "dir='...'; maxn=50" scripts/plot_convergence.gp
#
# dir is a solve, profile (its solve/ subfolder is read) or run folder. Solve and profile
# folders: per problem of iters.csv (at most maxn, default 24, or only `problem`)
# out/<problem>-gnuplot.png (out defaults to dir/plots): the solver's own residual and, when
# recorded, the common natural-map residual, against iteration and wall time, one curve per
# solver. Run folders: one picture out/run-gnuplot.png, a panel per quantity against the step
# (iterations, own residual at return, natural-map residual), one curve per solver.
# iters.csv columns (solve): 1 problem, 2 solver, 3 iter, 4 time, 5 error, 6 merit, ...

# errors go to stderr (gnuplot's default for print), the list of pictures to stdout
if (!exists("dir")) {
  print "usage: gnuplot -e \"dir='RESULTS_DIR'\" scripts/plot_convergence.gp"
  exit status 2
}
if (!exists("out")) { out = dir."/plots" }
if (!exists("maxn")) { maxn = 24 }
readable(f) = system(sprintf("test -r '%s' && echo 1 || echo 0", f)) eq "1"
src = dir
if (!readable(src."/iters.csv") && readable(src."/solve/iters.csv")) { src = dir."/solve" }
csv = src."/iters.csv"
if (!readable(csv)) {
  print sprintf("plot_convergence.gp: %s: no such file (expected a solve, profile or run results folder)", csv)
  exit status 1
}
system(sprintf("mkdir -p '%s'", out))
set print "-"

# a run folder: one overview from steps.csv, columns found by name
if (system(sprintf("head -n 1 '%s' | cut -d, -f1", csv)) eq "step") {
  steps = src."/steps.csv"
  col(name) = int(system(sprintf("head -n 1 '%s' | tr ',' '\\n' | grep -nx '%s' | cut -d: -f1", steps, name)))
  solvers = system(sprintf("awk -F, 'NR > 1 {print $2}' '%s' | awk '!seen[$0]++' | tr '\\n' ' '", steps))
  srows(s, c) = sprintf("< awk -F, -v s='%s' 'NR > 1 && $2 == s {print $1, $%d}' '%s'", s, c, steps)
  set datafile missing "nan"
  set grid
  set key top right font ",9"
  set terminal pngcairo size 1000,900 font ",10" enhanced
  set output sprintf("%s/run-gnuplot.png", out)
  set multiplot layout 3, 1 title sprintf("%s: per step, every solver", system(sprintf("basename '%s'", dir))) noenhanced
  set xlabel "step"
  set ylabel "iterations per step"
  plot for [s in solvers] srows(s, col("iters")) using 1:2 with lines lw 1.5 title s noenhanced
  set logscale y
  set format y "10^{%L}"
  set ylabel "own residual at return"
  plot for [s in solvers] srows(s, col("error")) using 1:($2 > 0 ? $2 : NaN) with lines lw 1.5 title s noenhanced
  set ylabel "natural-map residual (common)"
  plot for [s in solvers] srows(s, col("natmap")) using 1:($2 > 0 ? $2 : NaN) with lines lw 1.5 title s noenhanced
  unset multiplot
  set output
  print sprintf("%s/run-gnuplot.png", out)
  exit
}

# problems and, per problem, solvers, in file order (names hold no spaces or quotes)
uniq(col, filter) = system(sprintf("awk -F, 'NR > 1 %s {print $%d}' '%s' | awk '!seen[$0]++' | tr '\\n' ' '", filter, col, csv))
problems = exists("problem") ? problem : uniq(1, "")
nprob = words(problems)
if (nprob > maxn) {
  set print
  print sprintf("plot_convergence.gp: drawing %d of %d problems; choose with problem='NAME' or raise maxn", maxn, nprob)
  set print "-"
  problems = system(sprintf("echo '%s' | tr ' ' '\\n' | grep -v '^$' | head -n %d | tr '\\n' ' '", problems, maxn))
}
if (strlen(problems) == 0) {
  print sprintf("plot_convergence.gp: %s holds no iterations; nothing to plot", csv)
  exit
}
# rows of one (problem, solver) as "iter time error merit"
rows(p, s) = sprintf("< awk -F, -v p='%s' -v s='%s' 'NR > 1 && $1 == p && $2 == s {print $3, $4, $5, $6}' '%s'", p, s, csv)
# number of points that can be drawn on log axes: y column > 0 (and time > 0 when xt)
npos(p, ycol, xt) = int(system(sprintf("awk -F, -v p='%s' 'NR > 1 && $1 == p && $%d != \"nan\" && $%d + 0 > 0 && (%d == 0 || $4 + 0 > 0) {n++} END {print n + 0}' '%s'", p, ycol, ycol, xt, csv)))
safe(s) = system(sprintf("printf '%%s' '%s' | tr -c 'A-Za-z0-9._+-' '_'", s))

set datafile missing "nan"
set logscale y
set format y "10^{%L}"
set grid
set key top right font ",9"

do for [p in problems] {
  solvers = uniq(2, sprintf("&& $1 == \"%s\"", p))
  has_merit = npos(p, 6, 0) > 0
  set terminal pngcairo size 1200,(has_merit ? 900 : 480) font ",10" enhanced
  set output sprintf("%s/%s-gnuplot.png", out, safe(p))
  set multiplot layout (has_merit ? 2 : 1), 2 title sprintf("%s: residual against iteration and time", p) noenhanced
  do for [col in (has_merit ? "5 6" : "5")] {
    c = int(col)
    ylab = (c == 5) ? "own residual (solver's test)" : "natural-map residual (common)"
    ycol = c - 2
    # against iteration
    unset logscale x
    set format x "%g"
    set xlabel "iteration"
    set ylabel ylab
    if (npos(p, c, 0) > 0) {
      plot for [s in solvers] rows(p, s) using 1:ycol with lines lw 1.5 title s noenhanced
    } else {
      set label 1 "no positive values to draw" at graph 0.5, 0.5 center
      plot [0:1] [0.1:1] NaN notitle
      unset label 1
    }
    # against time (iteration 0 sits at t = 0, off a log axis)
    set logscale x
    set format x "10^{%L}"
    set xlabel "wall time (s), monitors excluded"
    if (npos(p, c, 1) > 0) {
      plot for [s in solvers] rows(p, s) using ($2 > 0 ? $2 : NaN):ycol with lines lw 1.5 title s noenhanced
    } else {
      set label 1 "no positive values to draw" at graph 0.5, 0.5 center
      plot [0.1:1] [0.1:1] NaN notitle
      unset label 1
    }
  }
  unset multiplot
  set output
  print sprintf("%s/%s-gnuplot.png", out, safe(p))
}

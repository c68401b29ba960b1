# SPDX-License-Identifier: Apache-2.0
# The installed library as a user gets it (docs/api.md, docs/plugins.md): cmake --install into
# a temporary prefix; the template plug-in (examples/plugin) configured and built OUT OF TREE
# against that prefix with find_package(FrictionLab); a program built with pkg-config's flags
# loads it and solves an FCLIB file with it; the installed program and Python module run.
source "$(dirname "$0")/common.bash"

src=${FL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=$(cd "$(dirname "$bin")" && pwd)
file=${FL_SHARED_DIR:-}/fclib/Box_Stacks-i0035-31-0.hdf5
[[ -f "$file" ]] || { echo "skipped: no $file"; exit 77; }
command -v cmake >/dev/null && command -v pkg-config >/dev/null || { echo "skipped: cmake and pkg-config needed"; exit 77; }
# the sanitizer build's library needs the sanitizers' runtime in every program that loads it
san=()
[[ "${FL_BUILD_KIND:-}" == *sanitize-ON* ]] && san=(-fsanitize=address,undefined)

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 &&
  pass "cmake --install into a fresh prefix" || { tail -n 20 "$tmp/install.log"; fail "cmake --install"; finish; }
lib=$(ls "$prefix"/lib*/libfrictionlab.so.1 2>/dev/null | head -1)
libdir=$(dirname "${lib:-$prefix/lib/x}")
[[ -n "$lib" && -L "$libdir/libfrictionlab.so" ]] && pass "library and its links: $(ls "$libdir" | grep frictionlab | tr '\n' ' ')" || fail "no libfrictionlab.so.1 under $prefix"
soname=$(readelf -d "$lib" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ "$soname" == libfrictionlab.so.1 ]] && pass "SONAME $soname" || fail "SONAME '$soname'"
for h in frictionlab.h core/fl_core.h solvers/fl_plugin.h sim/fl_world.h peers/fl_peer.h; do
  [[ -f "$prefix/include/frictionlab/$h" ]] || fail "header $h not installed"
done
ls -R "$prefix/include" | grep -q "_impl.h" && fail "a private *_impl.h was installed"
# the internals are hidden, the API exported
nm -D --defined-only "$lib" | grep -q ' fl__' && fail "fl__ internals exported"
nm -D --defined-only "$lib" | grep -q ' T fl_solver_create$' && pass "exports the API, hides fl__" || fail "fl_solver_create not exported"

# the template plug-in, out of tree, against the installed package
cmake -S "$src/examples/plugin" -B "$tmp/plugin-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="${san[*]}" >"$tmp/cfg.log" 2>&1 &&
  cmake --build "$tmp/plugin-build" >"$tmp/bld.log" 2>&1 &&
  pass "examples/plugin configured and built against $prefix" ||
  { cat "$tmp/cfg.log" "$tmp/bld.log" | tail -n 30; fail "examples/plugin out of tree"; finish; }
so=$tmp/plugin-build/damped_jacobi.so
grep -q "$prefix" "$tmp/plugin-build/CMakeCache.txt" && pass "find_package found the prefix" || fail "FrictionLab_DIR not in $prefix"
cmake --install "$tmp/plugin-build" >/dev/null 2>&1 && [[ -f "$libdir/frictionlab/plugins/damped_jacobi.so" ]] &&
  pass "the plug-in installs into the library's plug-in folder" || fail "plug-in install into $libdir/frictionlab/plugins"

# a program of one's own, with pkg-config's flags only: loads the plug-in from the installed
# folder (no FL_PLUGIN_PATH) and solves an FCLIB file with it
cat >"$tmp/user.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <frictionlab/frictionlab.h>
int main(int argc, char **argv) {
  if (fl_register_all() < 0) return 2;
  int n = fl_plugin_load_search_path();
  if (n < 1 || !fl_solver_find("damped-jacobi")) { fprintf(stderr, "load: %d %s\n", n, fl_errmsg()); return 1; }
  fl_problem *p = NULL;
  if (fl_problem_load_fclib(argv[1], &p) < 0) { fprintf(stderr, "%s\n", fl_errmsg()); return 1; }
  fl_solver *s = NULL;
  if (fl_solver_create("damped-jacobi", &s) < 0 ||
      fl_solver_set_options(s, "omega=0.8,max_iter=5000,abs_tol=1e-9,error_every=1") < 0 ||
      fl_solver_setup(s, p) < 0) { fprintf(stderr, "%s\n", fl_errmsg()); return 1; }
  double *v = calloc(p->nv + 1, sizeof *v), *g = calloc(3 * p->nc + p->nh + 1, sizeof *g);
  fl_result r;
  if (fl_solver_solve(s, p, v, g, &r) < 0) { fprintf(stderr, "%s\n", fl_errmsg()); return 1; }
  int nh; const fl_iter_stat *h = fl_solver_history(s, &nh);
  fl_score sc;
  fl_solution_score(p, v, g, FL_NORM_FCLIB, 1e-8, &sc);
  printf("%s %s iters %d merit %.6g scored %.6g from %s\n", fl_version(), fl_reason_name(r.reason),
         r.iters, h[nh - 1].merit, sc.merit, fl_solver_ops_origin(fl_solver_find("damped-jacobi")));
  int ok = h[nh - 1].merit < 1e-6 && sc.merit == h[nh - 1].merit;
  free(v); free(g); fl_solver_destroy(s); fl_problem_free(p);
  return ok ? 0 : 1;
}
C
pcdir=$libdir/pkgconfig
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs frictionlab 2>&1) &&
  pass "pkg-config: $flags" || fail "pkg-config frictionlab: $flags"
cc "${san[@]}" -std=c11 -Wall -Werror "$tmp/user.c" $flags -Wl,-rpath,"$libdir" -o "$tmp/user" 2>"$tmp/cc.log" &&
  pass "a program compiled with pkg-config's flags" || { cat "$tmp/cc.log"; fail "compile with pkg-config"; finish; }
env -u FL_PLUGIN_PATH "$tmp/user" "$file" >"$tmp/user.out" 2>&1 && grep -q "CONVERGED" "$tmp/user.out" &&
  pass "the out-of-tree plug-in solves $(basename "$file"): $(cat "$tmp/user.out")" ||
  fail "user program: $(cat "$tmp/user.out")"

# the installed program finds its library through its RPATH
"$prefix/bin/frictionlab" --version >"$tmp/ver" 2>&1 && pass "installed program: $(head -1 "$tmp/ver")" ||
  fail "installed program: $(cat "$tmp/ver")"
# the installed program loads the installed plug-in from <libdir>/frictionlab/plugins by itself
# (no --plugin, no FL_PLUGIN_PATH): listed with its file, and solving beside a built-in solver
env -u FL_PLUGIN_PATH "$prefix/bin/frictionlab" list solvers >"$tmp/list" 2>&1 &&
  grep -A3 '^damped-jacobi:' "$tmp/list" | grep -qF "plug-in: $libdir/frictionlab/plugins/damped_jacobi.so" &&
  pass "installed frictionlab list solvers: damped-jacobi from $libdir/frictionlab/plugins" ||
  fail "installed list solvers: $(grep -A3 '^damped-jacobi' "$tmp/list" | head -4)"
env -u FL_PLUGIN_PATH "$prefix/bin/frictionlab" solve "$file" --solver pgs,damped-jacobi \
  --set damped-jacobi.omega=0.8 --set damped-jacobi.max_iter=5000 --out "$tmp/isolve" >"$tmp/isolve.out" 2>&1 &&
  awk -F, '$2 == "damped-jacobi" && $7 == "returned" {ok = 1} END {exit !ok}' "$tmp/isolve/steps.csv" &&
  pass "installed frictionlab solve with the installed plug-in: $(grep damped "$tmp/isolve.out")" ||
  fail "installed solve: $(tail -3 "$tmp/isolve.out")"
# the installed Python module finds the installed library (no FRICTIONLAB_LIBRARY)
if [[ ${#san[@]} -eq 0 ]] && /usr/bin/python3 -c "import numpy" 2>/dev/null; then
  pyd=$(ls -d "$prefix"/lib*/python3/dist-packages | head -1)
  out=$(cd "$tmp" && env -u FRICTIONLAB_LIBRARY PYTHONPATH="$pyd" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c "
import frictionlab as fl
print(fl.library_path)
fl.load_plugin_path()
p = fl.Problem.load_fclib('$file')
s = fl.solve(p, 'damped-jacobi', options='omega=0.8,max_iter=5000,abs_tol=1e-9')
assert s.merit < 1e-6, s
print(s)" 2>&1)
  [[ $? -eq 0 && "$out" == "$prefix"* ]] && pass "installed Python module: $(echo "$out" | tr '\n' ' ')" ||
    fail "installed Python module: $out"
fi
finish

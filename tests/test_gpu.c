// SPDX-License-Identifier: Apache-2.0
/* test_gpu.c: the per-contact arithmetic shared by the CPU and CUDA solvers (core/
 * fl_contact_ops.h), tested on the CPU; and, on a machine with a CUDA device, the GPU solvers'
 * iterates against the CPU solvers' (GPU.md section 4). The device cases exit 77 without a
 * device (or in a build without CUDA).
 */
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "../core/fl_contact_ops.h"
#include "../sim/fl_world.h"
#include "../solvers/fl_solver.h"
#include "../solvers/fl_solver_impl.h"
#include "../solvers/relax.h"
#include "fl_test.h"

#ifdef FL_HAVE_CUDA
#include "../gpu/fl_gpu.h"
#include "../gpu/sell.h"
#endif

//---- host-device arithmetic, on the CPU ----

/* Moreau: x = P_K(x) + P_K*(-x)... checked as: P_K(x) in K, x - P_K(x) in the polar cone
 * {y : mu |y_t| <= -y_n}, orthogonal to P_K(x); P_K idempotent. */
FL_TEST(cone_projection_is_the_moreau_projection) {
  const double mus[] = {0, 0.1, 0.5, 1, 3};
  unsigned seed = 12345;
  for (int t = 0; t < 2000; t++) {
    double mu = mus[t % 5], x[3], p[3], pp[3];
    for (int c = 0; c < 3; c++) {
      seed = seed * 1103515245u + 12345u;
      x[c] = ((double)(seed >> 8) / (double)(1u << 24)) * 4 - 2;
    }
    fl_hd_cone_project(mu, x, p);
    double pt = hypot(p[1], p[2]);
    ASSERT(pt <= mu * p[0] * (1 + 1e-12) + 1e-15);
    double y[3] = {x[0] - p[0], x[1] - p[1], x[2] - p[2]};
    ASSERT(mu * hypot(y[1], y[2]) <= -y[0] * (1 + 1e-12) + 1e-12 || mu == 0);
    ASSERT_NEAR(y[0] * p[0] + y[1] * p[1] + y[2] * p[2], 0, 1e-12);
    fl_hd_cone_project(mu, p, pp);
    for (int c = 0; c < 3; c++) ASSERT_NEAR(pp[c], p[c], 1e-15 * (1 + fabs(p[c])));
  }
  return 0;
}


/* One contact, W = I, u = gamma + q, q = (-1, 0.5, 0), mu = 0.3: the Coulomb solution slides,
 * gamma = (1, -0.3, 0). Both local updates, iterated, reach it and the natural map is 0 there;
 * with q_t = (0.1, 0) it sticks: gamma = (1, -0.1, 0). */
FL_TEST(local_updates_reach_the_coulomb_solution) {
  const double W[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const double qs[2][3] = {{-1, 0.5, 0}, {-1, 0.1, 0}};
  const double sol[2][3] = {{1, -0.3, 0}, {1, -0.1, 0}};
  for (int cse = 0; cse < 2; cse++)
    for (int variant = 0; variant < 2; variant++) {
      double g[3] = {0, 0, 0}, u[3], nw[3];
      for (int k = 0; k < 200; k++) {
        for (int c = 0; c < 3; c++) u[c] = g[c] + qs[cse][c];
        if (variant) fl_hd_relax_block(0.3, 0, 0, 1.0, u, g, nw);
        else fl_hd_relax_nf(W, 0.3, 0, 0, 1.0 / fl_hd_eig2max(1, 0, 1), u, g, nw);
        fl_hd_apply_omega(0.3, 1.0, g, nw);
        memcpy(g, nw, sizeof g);
      }
      for (int c = 0; c < 3; c++) ASSERT_NEAR(g[c], sol[cse][c], 1e-12);
      for (int c = 0; c < 3; c++) u[c] = g[c] + qs[cse][c];
      double wn;
      int mode;
      ASSERT_NEAR(fl_hd_natmap2(0.3, 0, 0, u, g, &wn, &mode), 0, 1e-24);
      ASSERT_EQ(mode, cse == 0 ? 2 : 1);
    }
  return 0;
}


/* Over-relaxation past 1 stays in the cone; below 1 it interpolates. The bilateral row update
 * solves W_hh g + res0 = 0 inside its box and clamps outside it. */
FL_TEST(relaxation_and_bilateral_rows) {
  double g[3] = {1, 0.2, 0}, nw[3] = {0.5, 0.6, 0};
  fl_hd_apply_omega(0.5, 1.8, g, nw);
  ASSERT(hypot(nw[1], nw[2]) <= 0.5 * nw[0] * (1 + 1e-12));
  double a[3] = {0.5, 0.1, 0};
  fl_hd_apply_omega(0.5, 0.5, g, a);
  ASSERT_NEAR(a[0], 0.75, 1e-15);
  ASSERT_NEAR(a[1], 0.15, 1e-15);
  // W_hh = 2, u_h = 1 (res = 1 at g = 0): g = -0.5 in [-1, 1], clamped to -0.25 in [-0.25, 1]
  ASSERT_NEAR(fl_hd_relax_row(2, 0, 0, -1, 1, 1, 0), -0.5, 1e-15);
  ASSERT_NEAR(fl_hd_relax_row(2, 0, 0, -0.25, 1, 1, 0), -0.25, 0);
  // with g0/dt = 1 and compliance 1 (W_hh + c = 3): g - (u + 1 + g)/3 from g = 0.3
  ASSERT_NEAR(fl_hd_relax_row(3, 1, 1, -INFINITY, INFINITY, 1, 0.3), 0.3 - 2.3 / 3, 1e-15);
  return 0;
}


//---- the GPU solvers ----

/* 1 when the GPU solvers can run here; prints why not */
static int have_device(void) {
#ifdef FL_HAVE_CUDA
  if (fl_gpu_device_count() > 0) return 1;
  fprintf(stderr, "no CUDA device\n");
#else
  fprintf(stderr, "built without CUDA\n");
#endif
  return 0;
}


/* Without a device the GPU solvers are registered with the GPU capability (in a CUDA build) and
 * refuse set-up with a message that says why; in a build without CUDA they are absent. */
FL_TEST(gpu_solvers_registered_or_absent) {
  ASSERT_OK(fl_register_all());
  const char *names[] = {"jacobi-cuda", "pgs-cuda"};
  for (int k = 0; k < 2; k++) {
    const fl_solver_ops *ops = fl_solver_find(names[k]);
#ifdef FL_HAVE_CUDA
    ASSERT(ops != NULL);
    ASSERT(fl_solver_ops_caps(ops) & FL_CAP_GPU);
    if (fl_gpu_device_count() > 0) continue;
    fl_problem *p;
    ASSERT_OK(fl_problem_create_example("one_contact_slide", &p));
    fl_solver *s;
    ASSERT_OK(fl_solver_create(names[k], &s));
    ASSERT_EQ(fl_solver_setup(s, p), FL_ERR_UNSUPPORTED);
    ASSERT(strstr(fl_errmsg(), "no CUDA device") != NULL);
    fl_solver_destroy(s);
    fl_problem_free(p);
#else
    ASSERT(ops == NULL);
#endif
  }
  return 0;
}


/* The device layout of J and B^T (gpu/sell.h), on the CPU: every row of a random CSR matrix
 * (rows of 0 to 40 entries, row counts around the slice width) sums to the bit the same in
 * sliced ELL as in CSR order, the zero-skipping sum equals a scatter of the nonzero x in
 * increasing order, and the padding is each slice's longest row times 32. */
FL_TEST(sliced_ell_rows_sum_in_csr_order) {
#ifndef FL_HAVE_CUDA
  return FL_TEST_SKIP_CODE;
#else
  const int sizes[] = {0, 1, 31, 32, 33, 64, 100, 1000};
  unsigned seed = 777;
#define RND() (seed = seed * 1103515245u + 12345u, (double)(seed >> 8) / (double)(1u << 24))
  for (int t = 0; t < 8; t++) {
    int nrow = sizes[t], ncol = 50;
    int32_t *ptr = calloc((size_t)nrow + 1, sizeof *ptr);
    int32_t *col = malloc(sizeof *col * ((size_t)nrow * 41 + 1));
    double *val = malloc(sizeof *val * ((size_t)nrow * 41 + 1)), x[50];
    ASSERT(ptr && col && val);
    for (int r = 0; r < nrow; r++) {
      int n = (int)(RND() * 41), at = ptr[r];
      if (r % 7 == 3) n = 0;
      for (int c = 0; c < ncol && at - ptr[r] < n; c++)
        if (RND() < 0.6) {
          col[at] = c;
          val[at++] = RND() * 2 - 1;
        }
      ptr[r + 1] = at;
    }
    for (int c = 0; c < ncol; c++) x[c] = c % 3 == 1 ? 0.0 : RND() * 10 - 5;
    fl_sell m;
    ASSERT_OK(fl_sell_from_csr(nrow, ptr, col, val, &m));
    ASSERT_EQ(m.nslice, (nrow + 31) / 32);
    size_t pad = 0;
    for (int sl = 0; sl < m.nslice; sl++) {
      int w = 0;
      for (int r = 32 * sl; r < nrow && r < 32 * sl + 32; r++)
        if (ptr[r + 1] - ptr[r] > w) w = ptr[r + 1] - ptr[r];
      pad += 32 * (size_t)w;
    }
    ASSERT_EQ(m.nent, pad);
    for (int r = 0; r < nrow; r++) {
      double a = 0, b = 0.25;
      for (int k = ptr[r]; k < ptr[r + 1]; k++) a += val[k] * x[col[k]];
      for (int k = ptr[r]; k < ptr[r + 1]; k++)
        if (x[col[k]] != 0) b += val[k] * x[col[k]];
      ASSERT(fl_sell_dot(m.sp, m.len, m.col, m.val, r, x) == a);
      ASSERT(fl_sell_add_nonzero(m.sp, m.len, m.col, m.val, r, x, 0.25) == b);
    }
    fl_sell_free(&m);
    ASSERT(m.sp == NULL && m.nent == 0);
    free(ptr);
    free(col);
    free(val);
  }
#undef RND
  return 0;
#endif
}


/* max |a - b| / max(max |b|, tiny) */
static double rel_diff(const double *a, const double *b, long n) {
  double d = 0, m = 0;
  for (long k = 0; k < n; k++) {
    d = fmax(d, fabs(a[k] - b[k]));
    m = fmax(m, fabs(b[k]));
  }
  return m > 0 ? d / m : d;
}


/* k iterations of `cpu` (with cpu_opts) and `gpu` from v*, 0; iterates and own residuals equal
 * to 1e-10 relative; *worst gets the largest iterate difference */
static int compare(const fl_problem *p, const char *cpu, const char *cpu_opts, const char *gpu,
                   const char *opts, int k, double *worst) {
  char common[256];
  snprintf(common, sizeof common, "max_iter=%d,never_stop=true,error_every=0%s%s", k,
           opts[0] ? "," : "", opts);
  long nv = p->kind == FL_PROBLEM_GLOBAL ? p->nv : 0, nr = fl_problem_nrows(p);
  double *v[2], *g[2];
  fl_result res[2];
  const fl_iter_stat *h[2];
  int nh[2];
  fl_solver *s[2];
  for (int a = 0; a < 2; a++) {
    v[a] = calloc((size_t)nv + 1, sizeof(double));
    g[a] = calloc((size_t)nr + 1, sizeof(double));
    ASSERT(v[a] && g[a]);
    ASSERT_OK(fl_solver_create(a ? gpu : cpu, &s[a]));
    ASSERT_OK(fl_solver_set_options(s[a], common));
    if (!a) ASSERT_OK(fl_solver_set_options(s[a], cpu_opts));
    ASSERT_OK(fl_solver_setup(s[a], p));
    ASSERT_OK(fl_solver_solve(s[a], p, nv ? v[a] : NULL, g[a], &res[a]));
    h[a] = fl_solver_history(s[a], &nh[a]);
  }
  // the same run: k iterations, or the same earlier stop (DIVERGED_GROWTH ignores never_stop)
  ASSERT(res[0].iters <= k);
  ASSERT_EQ(res[1].iters, res[0].iters);
  ASSERT_EQ(res[1].reason, res[0].reason);
  ASSERT_EQ(nh[0], nh[1]);
  double dg = rel_diff(g[1], g[0], nr), dv = nv ? rel_diff(v[1], v[0], nv) : 0;
  if (!(dg <= 1e-10 && dv <= 1e-10))
    FL_FAIL_("%s vs %s on %s after %d iterations: gamma %.3g, v %.3g relative", gpu, cpu,
             p->name, k, dg, dv);
  // own residuals: 1e-8 relative, or 1e-12 of the start's once round-off dominates (their sums
  // run in another order; with omega = 1.3 on LMGC_100_PR_PerioBox iterates within 1e-10 give
  // residuals 2e-10 apart)
  for (int it = 0; it < nh[0]; it++) {
    double e0 = h[0][it].error, e1 = h[1][it].error;
    if (!(fabs(e1 - e0) <= 1e-8 * fabs(e0) + 1e-12 * fabs(h[0][0].error)))
      FL_FAIL_("%s vs %s on %s: own residual at iteration %d: %.17g vs %.17g", gpu, cpu,
               p->name, it, e1, e0);
    ASSERT_EQ(h[0][it].nactive, h[1][it].nactive);
  }
  ASSERT(res[1].device_s > 0 && res[1].device_bytes > 0);
  ASSERT(isnan(res[0].device_s));
  *worst = fmax(*worst, fmax(dg, dv));
  for (int a = 0; a < 2; a++) {
    fl_solver_destroy(s[a]);
    free(v[a]);
    free(g[a]);
  }
  return 0;
}


/* Calls fn on every FCLIB file of the shared folder and its converted/ folder that loads (the
 * rolling file does not); stops at the first non-zero return, naming the file. *ndir counts the
 * folders found (none in a bare clone), *nfile the files visited. */
static int for_each_fclib(int (*fn)(const fl_problem *p, void *ctx), void *ctx, int *ndir,
                          int *nfile) {
  const char *sub[] = {"fclib", "fclib/converted_from_siconos_dat"};
  *ndir = *nfile = 0;
  for (int d = 0; d < 2; d++) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", fl_test_shared_dir(), sub[d]);
    DIR *dp = opendir(dir);
    if (!dp) continue;
    (*ndir)++;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(dp))) {
      size_t n = strlen(e->d_name);
      if (n < 6 || strcmp(e->d_name + n - 5, ".hdf5")) continue;
      char path[2048];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      fl_problem *p;
      if (fl_problem_load_fclib(path, &p) != FL_OK) continue;
      rc = fn(p, ctx);
      fl_problem_free(p);
      if (rc) fprintf(stderr, "  (file %s)\n", path);
      (*nfile)++;
    }
    closedir(dp);
    if (rc) return rc;
  }
  return 0;
}


/* The colouring of pgs-cuda (fl__relax_colour) on p: every item once, colours in increasing
 * item order, and no two items of a colour coupled (rows of J A^-1 sharing a dof, or a nonzero
 * block of W), checked dof by dof and row by row independently of the colouring's own walk.
 * Returns 0 and the colour count in *ncolour. */
static int check_colouring(const fl_problem *p, int *ncolour) {
  fl_solver *s;
  ASSERT_OK(fl_solver_create("pgs", &s));
  fl__relax r;
  memset(&r, 0, sizeof r);
  ASSERT_OK(fl__relax_setup(s, p, &r, 0, s->common.norm));
  ASSERT_OK(fl__relax_colour(&r));
  fl_int nitem = r.nc + r.nh;
  ASSERT(r.ncolour >= (nitem > 0) && r.colour_ptr[0] == 0 && r.colour_ptr[r.ncolour] == nitem);
  int *colour = malloc(sizeof(int) * (size_t)(nitem + 1));
  fl_int ndof = r.global ? r.nv : r.nrow;
  fl_int *owner = malloc(sizeof(fl_int) * (size_t)(ndof + 1));
  ASSERT(colour && owner);
  for (fl_int it = 0; it < nitem; it++) colour[it] = -1;
  for (int c = 0; c < r.ncolour; c++)
    for (fl_int k = r.colour_ptr[c]; k < r.colour_ptr[c + 1]; k++) {
      fl_int it = r.colour_items[k];
      ASSERT(it >= 0 && it < nitem && colour[it] == -1);
      if (k > r.colour_ptr[c]) ASSERT(it > r.colour_items[k - 1]);
      colour[it] = c;
    }
  for (int c = 0; c < r.ncolour; c++) {
    for (fl_int j = 0; j < ndof; j++) owner[j] = -1;
    for (fl_int k = r.colour_ptr[c]; k < r.colour_ptr[c + 1]; k++) {
      fl_int it = r.colour_items[k];
      fl_int r0 = it < r.nc ? 3 * it : 3 * r.nc + (it - r.nc), r1 = it < r.nc ? r0 + 3 : r0 + 1;
      for (fl_int row = r0; row < r1; row++) {
        const fl_csr *m = r.global ? r.B : r.W;
        for (fl_int q = m->rowptr[row]; q < m->rowptr[row + 1]; q++) {
          fl_int j = m->col[q];
          if (r.global) {
            // a dof written by two items of one colour: a race on the device
            ASSERT(owner[j] == -1 || owner[j] == it);
            owner[j] = it;
          } else if (m->val[q] != 0.0) {
            fl_int it2 = j < 3 * r.nc ? j / 3 : r.nc + (j - 3 * r.nc);
            ASSERT(it2 == it || colour[it2] != c);
          }
        }
      }
    }
  }
  *ncolour = r.ncolour;
  free(colour);
  free(owner);
  fl__relax_free(&r);
  fl_solver_destroy(s);
  return 0;
}


static int colouring_on_file(const fl_problem *p, void *ctx) {
  int nc, *most = ctx, rc = check_colouring(p, &nc);
  if (nc > *most) *most = nc;
  return rc;
}


FL_TEST(colouring_separates_coupled_items) {
  ASSERT_OK(fl_register_all());
  int nfile, most = 0, nc, ndir;
  int rc = for_each_fclib(colouring_on_file, &most, &ndir, &nfile);
  if (rc) return rc;
  if (ndir) ASSERT(nfile >= 10);
  // granular: spheres touch at most 12 neighbours and the ground, so a handful of colours
  const char *set[] = {"n=1000", "spacing=1"};
  fl_world *w;
  ASSERT_OK(fl_scene_create("granular", 2, set, &w));
  ASSERT_OK(fl_world_prepare(w, NULL));
  ASSERT_OK(check_colouring(fl_world_problem(w), &nc));
  printf("%d FCLIB files (at most %d colours), granular 1e3: %d colours\n", nfile, most, nc);
  ASSERT(nc >= 2 && nc <= 13);
  fl_world_free(w);
  return 0;
}


/* one GPU solver against its CPU twin: the solvers and the largest difference so far */
typedef struct pair_ctx {
  const char *cpu, *cpu_opts, *gpu;
  double worst;
} pair_ctx;


/* the pair on p under the three option sets, 20 iterations each */
static int compare_variants(const fl_problem *p, void *ctx) {
  pair_ctx *c = ctx;
  const char *variants[] = {"", "local=block", "omega=1.3"};
  for (int vv = 0; vv < 3; vv++) {
    int rc = compare(p, c->cpu, c->cpu_opts, c->gpu, variants[vv], 20, &c->worst);
    if (rc) {
      fprintf(stderr, "  (options '%s')\n", variants[vv]);
      return rc;
    }
  }
  return 0;
}


/* every FCLIB file of the shared folder (and its converted/ folder) and granular with 1e4
 * grains, for one GPU solver against its CPU twin */
static int compare_all(const char *cpu, const char *cpu_opts, const char *gpu) {
  if (!have_device()) return FL_TEST_SKIP_CODE;
  ASSERT_OK(fl_register_all());
  pair_ctx c = {cpu, cpu_opts, gpu, 0};
  int nfile, ndir;
  int rc = for_each_fclib(compare_variants, &c, &ndir, &nfile);
  if (rc) return rc;
  // granular, 1e4 grains in contact at the start
  const char *set[] = {"n=10000", "spacing=1"};
  fl_world *w;
  ASSERT_OK(fl_scene_create("granular", 2, set, &w));
  ASSERT_OK(fl_world_prepare(w, NULL));
  fl_problem *p = fl_world_problem(w);
  ASSERT(p && p->nc > 1000);
  ASSERT_OK(compare_variants(p, &c));
  fl_world_free(w);
  printf("%s = %s%s%s: %d FCLIB files and granular (1e4 grains), 3 option sets, 20 "
         "iterations: largest relative difference %.3g\n",
         gpu, cpu, cpu_opts[0] ? " with " : "", cpu_opts, nfile, c.worst);
  if (ndir) ASSERT(nfile >= 10);
  return 0;
}


FL_TEST(jacobi_cuda_equals_jacobi) { return compare_all("jacobi", "", "jacobi-cuda"); }


FL_TEST(pgs_cuda_equals_pgs_in_colour_order) {
  return compare_all("pgs", "order=colour", "pgs-cuda");
}


// SPDX-License-Identifier: Apache-2.0
/* cmd_run.c: `frictionlab run PROBLEM|FILE.json --solver a,b --steps N --set key=value
 * --out DIR`.
 *
 * Outline: parse the arguments; sort each --set into scene parameters and solver options;
 * build the scene once and every solver once to check them (bad input leaves no folder);
 * create the results folder; for each solver rebuild the scene and step it N times
 * (collide, assemble, solve, integrate), writing per step and solver one row of steps.csv
 * (contacts, iterations, reason, times, final errors, observables), the solver's iteration
 * records to iters.csv and the observables to observables.csv; commit the folder; print a
 * summary per solver.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "../../sim/fl_fem.h"
#include "../../sim/fl_loop.h"
#include "../../sim/fl_world.h"
#include "fl_args.h"
#include "../fl_harness.h"
#include "../../peers/fl_peer.h"
#include "../output/fl_record.h"
#include "../output/fl_run_csv.h"
#include "fl_settings.h"

#define EXIT_USAGE 2
#define RECORD_BUDGET 12e6 /* bytes: the automatic recording interval keeps the file below */
#define MAX_SOLVERS 32
#define MAX_SETS 128

typedef struct run_args {
  fl_arg_multi pos;               /* the scene name or .json file */
  fl_arg_multi solver_arg;        /* --solver values */
  fl_arg_multi set_arg;           /* --set values */
  long steps;                     /* -1: duration/dt */
  long every;                     /* observables every k steps */
  const char *out;
  const char *mem_limit; /* --mem-limit GB: FL_MEM_LIMIT_MB for this process */
  int force;
  long vtk;          /* > 0: bodies, contacts and deformable meshes as VTK every vtk steps */
  long record;       /* recording interval in steps: 0 off, -1 automatic (RECORD_BUDGET) */
  const char *input;              /* pos.v[0] */
  const char *solvers[MAX_SOLVERS];
  int nsolvers;
  char solver_buf[1024];
  fl_settings set;                /* --set, sorted (fl_settings.h) */
  const char *scene_sets[MAX_SETS]; /* "key=value" for the scene */
  int nscene;
  const char *solver_sets[MAX_SETS]; /* what the peers receive */
  int nsolver_sets;
  const char *staging; /* the results' staging folder (set once it exists) */
} run_args;

#define FL_RUN_MAX_STEPS 1000000000L /* most steps of one run (--steps, or duration / dt) */

#define A(m) offsetof(run_args, m)
static const fl_arg_desc run_flags[] = {
  {"--solver", FL_ARG_MULTI, A(solver_arg), 0, 0, "a,b", "pgs",
   "solvers (or peers) by registered name"},
  {"--steps", FL_ARG_INT, A(steps), 0, FL_RUN_MAX_STEPS, "N", NULL,
   "steps to take (default: the scene's duration / dt)"},
  {"--set", FL_ARG_MULTI, A(set_arg), 0, 0, "key=value", NULL,
   "a scene parameter (mu=0.2, scene.dt=0.01, heavy_stack.n=3), or a solver option for every "
   "solver (max_iter=20, warm_start=1) or for one (pgs.omega=1.2); docs/usage.md, \"What --set "
   "means\". Scene files take scene.dt, scene.duration, scene.margin, scene.speculative "
   "and scene.fem_solve=full|schur"},
  {"--out", FL_ARG_STR, A(out), 0, 0, "DIR", NULL,
   "results folder (default results/runs/run-<problem>-<date>-<time>)"},
  {"--every", FL_ARG_INT, A(every), 1, 1000000000L, "K", "1", "observables.csv every K steps"},
  {"--record", FL_ARG_INT, A(record), 0, 1000000000L, "K", NULL,
   "record every K-th step (and the first and last) for the viewer; 0: no recording, no viewer "
   "(default: every step, or the interval that keeps the recording under 12 MB)"},
  {"--vtk", FL_ARG_INT, A(vtk), 1, 1000000000L, "K", NULL,
   "VTK files every K steps (and the last) for ParaView, per solver in vtk/<solver>/: "
   "bodies_<step>.vtp (rigid bodies' surfaces, velocity), contacts_<step>.vtp (points with "
   "normal, impulse, phi, slip) and <body>_<step>.vtu per deformable body (velocity, von Mises "
   "stress); each series has its .pvd, the time series ParaView opens"},
  {"--force", FL_ARG_FLAG, A(force), 0, 0, NULL, NULL, "replace an existing --out folder"},
  {"--mem-limit", FL_ARG_STR, A(mem_limit), 0, 0, "GB", NULL,
   "the limit memory estimates (meshes, FEM systems, broad-phase pairs, contact problems, "
   "files) are checked "
   "against before allocating; default 8 GiB or FL_MEM_LIMIT_MB"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef A

static const fl_cmd_spec run_spec = {
  "run", "PROBLEM|FILE.json|MODEL.xml", 1, offsetof(run_args, pos),
  "Simulates a canonical scene (see `frictionlab list problems` or docs/scenes.md) or a scene\n"
  "file (docs/scene-format.md) with each solver from the same initial state, and writes a\n"
  "results folder: manifest.json, steps.csv (one row per step and solver: contacts,\n"
  "iterations, reason, times, final errors, observables), iters.csv (one row per solver\n"
  "iteration), observables.csv (one row per K steps and solver), recording.flrec (poses,\n"
  "contacts and impulses per step: docs/recording.md) and viewer.html, which plays every\n"
  "solver's run side by side in a browser (`frictionlab view DIR`). MODEL.xml is an MJCF model,\n"
  "read with MuJoCo's parser (docs/mjcf.md; needs a build with MuJoCo).\n",
  "Solvers evaluate the common metrics only on their final iterate (error_every=0) unless\n"
  "--set error_every=K says otherwise.\n",
  run_flags};


static int parse_args(int argc, char **argv, run_args *a) {
  memset(a, 0, sizeof *a);
  a->steps = -1;
  a->record = -1;
  int rc = fl_args_parse(&run_spec, argc, argv, a);
  if (rc) return rc == 1 ? 1 : EXIT_USAGE;
  if (fl_cli_mem_limit("run", a->mem_limit)) return EXIT_USAGE;
  if (a->pos.n == 0) {
    fprintf(stderr, "frictionlab run: no problem given (expected a scene name or FILE.json; "
                    "see `frictionlab list problems`)\n");
    return EXIT_USAGE;
  }
  a->input = a->pos.v[0];
  // solvers: default pgs; every name must be registered
  const char *names[MAX_SOLVERS + 1];
  int nn = fl_args_names(&a->solver_arg, a->solver_buf, sizeof a->solver_buf, names, MAX_SOLVERS + 1);
  if (nn < 0) {
    fprintf(stderr, "frictionlab run: --solver: list too long\n");
    return EXIT_USAGE;
  }
  if (nn == 0) names[nn++] = "pgs";
  for (int j = 0; j < nn; j++) {
    const char *tok = names[j];
    if (*tok && fl_peer_unavailable(tok)) {
      fprintf(stderr, "frictionlab run: --solver %s: %s\n", tok, fl_peer_unavailable(tok));
      return EXIT_USAGE;
    }
    if (!*tok || (!fl_solver_find(tok) && !fl_peer_find(tok))) {
      fprintf(stderr, "frictionlab run: --solver: unknown solver '%s'; registered: ", tok);
      const char *const *sn = fl_solver_list();
      for (int i = 0; sn && sn[i]; i++) fprintf(stderr, "%s%s", i ? ", " : "", sn[i]);
      for (const char *const *pn = fl_peer_list(); *pn; pn++) fprintf(stderr, ", %s", *pn);
      fprintf(stderr, "\n");
      return EXIT_USAGE;
    }
    for (int i = 0; i < a->nsolvers; i++) {
      if (strcmp(a->solvers[i], tok) == 0) {
        fprintf(stderr, "frictionlab run: --solver: '%s' is given twice\n", tok);
        return EXIT_USAGE;
      }
    }
    if (a->nsolvers == MAX_SOLVERS) return EXIT_USAGE;
    a->solvers[a->nsolvers++] = tok;
  }
  // sort the settings: scene parameters, solver options (fl_settings.h)
  fl_settings_ctx ctx = {"run", a->input, a->nsolvers, a->solvers, 0};
  fl_settings_init(&a->set, &ctx);
  for (int i = 0; i < a->set_arg.n; i++) {
    if (fl_settings_add(&a->set, a->set_arg.v[i], 0) < 0) {
      fprintf(stderr, "frictionlab run: %s\n", fl_errmsg());
      return EXIT_USAGE;
    }
  }
  a->nscene = fl_settings_scene(&a->set, a->scene_sets, MAX_SETS);
  a->nsolver_sets = fl_settings_for_peers(&a->set, a->solver_sets, MAX_SETS);
  return 0;
}


/* Builds the world: a canonical scene, a scene file or an MJCF model with scene.* overrides. */
static int make_world(const run_args *a, fl_world **out) {
  return fl_scene_open(a->input, a->nscene, a->scene_sets, fl_world_from_mjcf, out);
}


/* What to add to a solver's refusal of an unprefixed key: on a scene file, which keys it takes
 * (scene.*); on a canonical scene, the scene parameter the key nearly spells. */
static const char *set_hint(const run_args *a, const char *key, int rc) {
  static char hint[256];
  hint[0] = 0;
  if (rc != FL_ERR_UNKNOWN_OPTION || strchr(key, '.')) return hint;
  if (fl_scene_kind_of(a->input) != FL_SCENE_BUILTIN) {
    snprintf(hint, sizeof hint, ". A scene file takes scene.dt, scene.duration, scene.margin, "
             "scene.speculative and scene.fem_solve=full|schur; its other values (friction, "
             "bodies) are edited in the file (docs/scene-format.md)");
  } else {
    const fl_scene_desc *d = fl_scene_find(a->input);
    const char *near = d ? fl_options_suggest(d->params, key) : NULL;
    if (near) snprintf(hint, sizeof hint, ". Or did you mean %s's parameter '%s'?", a->input, near);
  }
  return hint;
}


/* Creates solver `name` with run's defaults and the applicable settings. */
static int make_solver(const run_args *a, const char *name, fl_solver **out) {
  *out = NULL;
  fl_solver *s = NULL;
  FL_TRY(fl_solver_create(name, &s));
  int bad = -1;
  int rc = fl_solver_set_option(s, "error_every", "0");
  if (rc >= 0) rc = fl_settings_apply(&a->set, s, &bad);
  if (rc < 0 && bad >= 0)
    fl_seterr(rc, "--set '%s': %s%s", a->set.s[bad].text, fl_errmsg(),
              set_hint(a, a->set.s[bad].full, rc));
  if (rc < 0) {
    fl_solver_destroy(s);
    return rc;
  }
  *out = s;
  return FL_OK;
}


static void default_out(const char *input, char *buf, size_t n) {
  char stem[64], prefix[128];
  const char *base = strrchr(input, '/');
  snprintf(stem, sizeof stem, "%s", base ? base + 1 : input);
  char *dot = strrchr(stem, '.');
  if (dot && fl_scene_kind_of(input) != FL_SCENE_BUILTIN) *dot = 0;
  snprintf(prefix, sizeof prefix, "results/runs/run-%s", stem);
  fl_results_default_dir(prefix, buf, n);
}


//---- frames ----

/* Records a peer simulator's step with its own contacts (MuJoCo's points, normals, forces). */
static int record_peer_frame(fl_recorder *rec, int sidx, long step, fl_world *w,
                             const fl_step_info *info, const fl_peer *peer) {
  int n = fl_peer_contacts(peer);
  fl_record_contact *c = fl_calloc((size_t)(n > 0 ? n : 1), sizeof *c);
  if (!c) return fl_seterr(FL_ERR_NOMEM, "run: out of memory");
  int rc = FL_OK;
  for (int i = 0; rc >= 0 && i < n; i++) {
    fl_peer_contact_info pc;
    rc = fl_peer_contact(peer, i, &pc);
    if (rc < 0) break;
    memcpy(c[i].point, pc.point, sizeof pc.point);
    memcpy(c[i].normal, pc.normal, sizeof pc.normal);
    memcpy(c[i].impulse, pc.impulse, sizeof pc.impulse);
    c[i].phi = pc.dist;
    c[i].side[0] = pc.body[0];
    c[i].side[1] = pc.body[1];
    c[i].sliding = pc.sliding;
  }
  if (rc >= 0) rc = fl_record_frame_contacts(rec, sidx, step, w, info, n, c);
  fl_free(c);
  return rc;
}


//---- one solver's simulation ----

/* Energy gain flagged: E(t) - E(0) > ENERGY_GAIN x S, where E = kinetic + potential + elastic
 * and S = K(0) + elastic(0) + sum over dynamic rigid and deformable bodies of m |g| size (the
 * energy of raising each body by its own size): a scale independent of where z = 0 is. Not
 * checked where forces, drives or moving prescribed bodies do work on the system. */
#define ENERGY_GAIN 0.1
enum { MAX_LIMITS = 64 };

/* one limit's crossings over a run */
typedef struct {
  char obs[40], label[24];
  double lo, hi;
  long steps, first; /* steps outside [lo, hi], the first of them (-1: none) */
  double worst;      /* the value farthest outside */
} limit_tally;

typedef struct run_summary {
  long steps;
  long iters;
  int failed;         /* steps whose reason was < 0 */
  int fallback;       /* steps the solver solved again with a fallback law (fl_result) */
  long first_failed;  /* -1: none */
  double solve_s, collide_s, assemble_s, wall_s;
  double pen_max;     /* largest pen_max over the run */
  int energy_checked; /* 0 where external work makes a gain legitimate */
  int external;       /* forces, drives or moving prescribed bodies do work */
  double e0, escale;  /* E(0) and the scale S (J) */
  double egain;       /* largest E(t) - E(0) (J) */
  long energy_steps, energy_first;
  long nonfinite_steps, nonfinite_first; /* steps whose energy is NaN or infinite, the first */
  double nonfinite;   /* the energy at nonfinite_first (NaN, +inf or -inf) */
  int nlimit;
  limit_tally limit[MAX_LIMITS];
  char error[256];    /* error that stopped the run, "" if none */
} run_summary;


/* total energy E = kinetic + potential + elastic from the observables (J) */
static double total_energy(const fl_world *w, const double *val) {
  double e = 0;
  for (fl_int i = 0; i < fl_world_nobs(w); i++) {
    const char *n = fl_world_obs_name(w, i);
    if (!strcmp(n, "energy") || !strncmp(n, "elastic_", 8)) e += val[i];
  }
  return e;
}


/* whether something outside the system does work on it */
static int external_work(const fl_world *w) {
  if (w->nforce > 0) return 1;
  for (fl_int j = 0; j < w->njoint; j++)
    if (w->joint[j].driven) return 1;
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    if (b->kind == FL_BODY_PRESCRIBED && (fl_v3_norm(b->vel) > 0 || fl_v3_norm(b->omega) > 0))
      return 1;
  }
  return 0;
}


/* Sets up the energy and limit checks of a run from the initial state. */
static int flags_begin(fl_world *w, double *val, run_summary *sum) {
  sum->first_failed = sum->energy_first = sum->nonfinite_first = -1;
  const fl_obs_limit *lim;
  const fl_int *ix;
  fl_int nl;
  FL_TRY(fl_world_limits(w, &lim, &ix, &nl));
  for (fl_int k = 0; k < nl && k < MAX_LIMITS; k++) {
    limit_tally *t = &sum->limit[sum->nlimit++];
    snprintf(t->obs, sizeof t->obs, "%s", lim[k].obs);
    snprintf(t->label, sizeof t->label, "%s", lim[k].label);
    t->lo = lim[k].lo;
    t->hi = lim[k].hi;
    t->first = -1;
    t->worst = NAN;
  }
  FL_TRY(fl_world_observe(w, val));
  double g = fl_v3_norm(w->gravity), s = 0, k0 = 0, el0 = 0;
  for (fl_int i = 0; i < w->nbody; i++)
    if (w->body[i].kind == FL_BODY_DYNAMIC && isfinite(w->body[i].size))
      s += w->body[i].mass * g * w->body[i].size;
  // deformable bodies: the same m |g| size, with size the rest mesh's bounding-box diagonal
  for (fl_int b = 0; b < w->nfem; b++) {
    const fl_mesh *me = w->fem[b]->mesh;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (fl_int v = 0; v < me->nvert; v++)
      for (int c = 0; c < 3; c++) {
        lo[c] = fmin(lo[c], me->X[3 * v + c]);
        hi[c] = fmax(hi[c], me->X[3 * v + c]);
      }
    double d[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    if (me->nvert > 0) s += w->fem[b]->mass * g * fl_v3_norm(d);
  }
  for (fl_int i = 0; i < fl_world_nobs(w); i++) {
    const char *n = fl_world_obs_name(w, i);
    if (!strcmp(n, "kinetic")) k0 = val[i];
    if (!strncmp(n, "elastic_", 8)) el0 += val[i];
  }
  sum->e0 = total_energy(w, val);
  sum->escale = s + k0 + el0;
  sum->external = external_work(w);
  sum->energy_checked = !sum->external && sum->escale > 0 && isfinite(sum->escale) &&
                        isfinite(sum->e0);
  return FL_OK;
}


/* Flags of step k into buf ("" when none; ';'-separated labels) and the energy tallies; the
 * failed steps and the limits are the stepping loop's (l). */
static void flags_step(const fl_world *w, const double *val, long k, int reason,
                       const fl_loop *l, run_summary *sum, char *buf, size_t n) {
  buf[0] = '\0';
#define ADD(label)                                                                        \
  do {                                                                                    \
    if (!strstr(buf, label)) {                                                            \
      size_t u = strlen(buf);                                                             \
      snprintf(buf + u, n - u, "%s%s", u ? ";" : "", label);                              \
    }                                                                                     \
  } while (0)
  if (reason < 0) ADD("failed");
  double e = total_energy(w, val);
  if (!isfinite(e)) {
    // a NaN or infinite energy: the state is lost, whether or not the gain is checked
    if (sum->nonfinite_first < 0) {
      sum->nonfinite_first = k;
      sum->nonfinite = e;
    }
    sum->nonfinite_steps++;
    ADD("energy");
  } else if (sum->energy_checked) {
    double gain = e - sum->e0;
    if (gain > sum->egain) sum->egain = gain;
    if (!(gain <= ENERGY_GAIN * sum->escale)) {
      sum->energy_steps++;
      if (sum->energy_first < 0) sum->energy_first = k;
      ADD("energy");
    }
  }
  for (fl_int j = 0; j < l->nlimit && j < sum->nlimit; j++)
    if (l->tally[j].last == k) ADD(sum->limit[j].label);
#undef ADD
}


/* the summary's status: "ok", or what went wrong, in words (buf, n bytes) */
static const char *flags_text(const run_summary *s, char *buf, size_t n) {
  buf[0] = '\0';
  size_t u = 0;
  if (s->error[0]) u += (size_t)snprintf(buf + u, n - u, "%s", s->error);
  if (s->failed && u < n)
    u += (size_t)snprintf(buf + u, n - u, "%sfailed %d of %ld steps (first %ld)", u ? "; " : "",
                          s->failed, s->steps, s->first_failed);
  if (s->energy_steps && u < n)
    u += (size_t)snprintf(buf + u, n - u, "%senergy +%.3g J (%.3g x the scale %.3g J) from step %ld",
                          u ? "; " : "", s->egain, s->egain / s->escale, s->escale, s->energy_first);
  if (s->nonfinite_steps && u < n)
    u += (size_t)snprintf(buf + u, n - u, "%senergy %s from step %ld (%ld steps)", u ? "; " : "",
                          isnan(s->nonfinite) ? "NaN" : s->nonfinite > 0 ? "+inf" : "-inf",
                          s->nonfinite_first, s->nonfinite_steps);
  for (int j = 0; j < s->nlimit && u < n; j++) {
    const limit_tally *t = &s->limit[j];
    if (!t->steps) continue;
    if (t->worst > t->hi)
      u += (size_t)snprintf(buf + u, n - u, "%s%s: %s %.3g > %.3g in %ld steps from step %ld",
                            u ? "; " : "", t->label, t->obs, t->worst, t->hi, t->steps, t->first);
    else
      u += (size_t)snprintf(buf + u, n - u, "%s%s: %s %.3g < %.3g in %ld steps from step %ld",
                            u ? "; " : "", t->label, t->obs, t->worst, t->lo, t->steps, t->first);
  }
  if (!u) snprintf(buf, n, "ok");
  return buf;
}


/* one solver's run as the stepping loop sees it */
typedef struct run_step_ctx {
  const run_args *a;
  const char *sname;
  int sidx;
  long nsteps, bar0;
  FILE *steps, *iters, *obs;
  fl_recorder *rec;
  fl_peer *peer;
  fl_vtk_series *ser;
  fl_progress *bar;
  run_summary *sum;
  fl_loop *loop;
  const fl_csv_col *cols, *ocols; /* steps.csv's and observables.csv's (fl_run_steps_cols) */
  int ncols, nocols;
} run_step_ctx;


/* the recording's frame (fl_loop frame): a peer's with its own contacts */
static int run_frame(void *ctx, fl_world *w, long step, const fl_step_info *info) {
  run_step_ctx *c = ctx;
  if (c->peer && info) return record_peer_frame(c->rec, c->sidx, step, w, info, c->peer);
  return fl_record_frame(c->rec, c->sidx, step, w, info);
}


/* after step k (fl_loop each): VTK, the summary, steps.csv, iters.csv and observables.csv */
static int run_each(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  run_step_ctx *c = ctx;
  const run_args *a = c->a;
  run_summary *sum = c->sum;
  const char *sname = c->sname;
  if (c->ser && ((k + 1) % a->vtk == 0 || k == c->nsteps - 1))
    FL_TRY(fl_vtk_series_frame(c->ser, w, k + 1));
  sum->fallback += info->res.fallback > 0;
  sum->solve_s += info->solve_s;
  sum->collide_s += info->collide_s;
  sum->assemble_s += info->assemble_s;
  if (val[2] > sum->pen_max) sum->pen_max = val[2];
  char flags[256];
  flags_step(w, val, k, info->res.reason, c->loop, sum, flags, sizeof flags);
  FILE *steps = c->steps, *iters = c->iters, *obs = c->obs;
  // steps.csv
  fl_run_step_row row = {k, sname, (long)info->nbody_pairs, (long)info->nc, (long)info->nh,
                  info->res.iters, info->res.reason, fl_reason_name(info->res.reason),
                  info->solve_s, info->collide_s, info->assemble_s, info->collide_cpu_s,
                  info->assemble_cpu_s, info->warm_matched, info->res.error, info->met, val,
                  flags};
  fl_csv_row(steps, c->cols, c->ncols, &row);
  // iters.csv: the solver's records of this step
  int nh = 0;
  const fl_stepper *st = &c->loop->stepper;
  const fl_iter_stat *h = st->history(st->self, info, &nh);
  fl_csv_col ic[FL_ITERS_NCOLS];
  if (h && nh > 0) fl_iters_cols(ic, 0);
  for (int i = 0; h && i < nh; i++) {
    fl_iters_row ir = {k, NULL, sname, h[i]};
    fl_csv_row(iters, ic, FL_ITERS_NCOLS, &ir);
  }
  // observables.csv every `every` steps and at the last
  if (k % a->every == 0 || k == c->nsteps - 1) {
    fl_csv_row(obs, c->ocols, c->nocols, &row);
  }
  fl_progress_update(c->bar, c->bar0 + k + 1);
  return FL_OK;
}


static int simulate(const run_args *a, int sidx, long nsteps, FILE *steps, FILE *iters, FILE *obs,
                    fl_recorder *rec, fl_progress *bar, long bar0, run_summary *sum, cJSON *final) {
  const char *sname = a->solvers[sidx];
  memset(sum, 0, sizeof *sum);
  sum->pen_max = 0;
  fl_world *w = NULL;
  fl_solver *s = NULL;
  fl_peer *peer = NULL; /* a whole simulator stepping the world instead (fl_peer.h) */
  double *val = NULL;
  int rc = make_world(a, &w);
  if (rc >= 0) w->cpu_times = 1; // steps.csv's collide_cpu_s and assemble_cpu_s
  if (rc >= 0 && fl_peer_find(sname)) {
    char xml[1200];
    snprintf(xml, sizeof xml, "%s/%s.xml", a->staging, sname);
    rc = fl_peer_create(sname, w, a->nsolver_sets, a->solver_sets, xml, &peer);
    fl_peer_expect(peer, nsteps);
  } else if (rc >= 0) {
    rc = make_solver(a, sname, &s);
  }
  fl_int nobs = rc >= 0 ? fl_world_nobs(w) : 0;
  if (rc >= 0) {
    val = fl_malloc((size_t)(nobs > 0 ? nobs : 1) * sizeof(double));
    if (!val) rc = fl_seterr(FL_ERR_NOMEM, "run: out of memory");
  }
  if (rc >= 0) rc = flags_begin(w, val, sum);
  fl_vtk_series *ser = NULL;
  if (rc >= 0 && a->vtk > 0) {
    ser = fl_vtk_series_open(a->staging, sname, w);
    if (!ser) rc = FL_ERR_NOMEM;
    if (rc >= 0) rc = fl_vtk_series_frame(ser, w, 0);
  }
  fl_loop loop = {.stepper = peer ? fl_peer_stepper(peer) : fl_stepper_solver(s),
                  .steps = nsteps, .observe = 1, .frame_every = rec ? a->record : 0,
                  .frame = run_frame, .each = run_each, .first_failed = -1};
  int ncols = 0, nocols = 0;
  fl_csv_col *cols = NULL;
  const fl_csv_col *ocols = NULL;
  if (rc >= 0 && !(cols = fl_run_steps_cols(w, &ncols, &ocols, &nocols)))
    rc = fl_seterr(FL_ERR_NOMEM, "run: out of memory");
  run_step_ctx ctx = {a, sname, sidx, nsteps, bar0, steps, iters, obs, rec, peer, ser, bar, sum,
                      &loop, cols, ocols, ncols, nocols};
  loop.ctx = &ctx;
  if (rc >= 0) rc = fl_loop_run(&loop, w);
  sum->steps = loop.taken;
  sum->iters = loop.iters;
  sum->failed = (int)loop.failed;
  sum->first_failed = loop.first_failed;
  sum->wall_s = loop.wall_s;
  for (int j = 0; j < sum->nlimit && j < loop.nlimit; j++) {
    sum->limit[j].steps = loop.tally[j].steps;
    sum->limit[j].first = loop.tally[j].first;
    if (loop.tally[j].steps) sum->limit[j].worst = loop.tally[j].worst;
  }
  if (ser) {
    int rv = fl_vtk_series_close(ser, w);
    if (rc >= 0) rc = rv;
  }
  if (rc < 0) {
    snprintf(sum->error, sizeof sum->error, "%s: %s", fl_errname(rc), fl_errmsg());
  } else if (final && sum->steps > 0) {
    for (fl_int i = 0; i < nobs; i++) {
      double v = loop.obs[i];
      cJSON_AddNumberToObject(final, fl_world_obs_name(w, i), isfinite(v) ? v : 0);
    }
  }
  fl_loop_free(&loop);
  fl_free(cols);
  fl_free(val);
  fl_solver_destroy(s);
  fl_peer_free(peer);
  fl_world_free(w);
  return rc;
}


//---- the command ----

int fl_cmd_run(int argc, char **argv) {
  fl_register_all();
  run_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc != 0) return rc == 1 ? 0 : rc;

  // check the scene and every solver before anything is written
  fl_world *w = NULL;
  if (make_world(&a, &w) < 0) {
    fprintf(stderr, "frictionlab run: %s\n", fl_errmsg());
    int code = fl_errcode();
    return (code == FL_ERR_UNKNOWN_PROBLEM || code == FL_ERR_UNKNOWN_OPTION ||
            code == FL_ERR_OPTION_TYPE || code == FL_ERR_OPTION_RANGE)
               ? EXIT_USAGE
               : 1;
  }
  // bodies that start inside each other: said, not silently pushed apart
  fl_overlap ov[3];
  int nov = 0;
  if (fl_world_overlaps(w, FL_OVERLAP_TOL, ov, 3, &nov) == FL_OK) {
    for (int k = 0; k < nov && k < 3; k++)
      fprintf(stderr, "frictionlab run: warning: %s: bodies '%s' and '%s' overlap by %.3g m at "
              "t = 0\n", a.input, w->body[ov[k].a].name, w->body[ov[k].b].name, ov[k].depth);
    if (nov > 3) fprintf(stderr, "frictionlab run: warning: ... %d overlapping pairs in all\n", nov);
  }
  double nsteps_d = a.steps >= 0 ? (double)a.steps : round(w->duration / w->dt);
  if (!(nsteps_d <= FL_RUN_MAX_STEPS)) {
    fprintf(stderr, "frictionlab run: %s: duration / dt = %g / %g = %g steps, expected at most "
            "%ld\n", a.input, w->duration, w->dt, nsteps_d, FL_RUN_MAX_STEPS);
    fl_world_free(w);
    return EXIT_USAGE;
  }
  long nsteps = (long)nsteps_d;
  double dt = w->dt;
  char wname[64];
  snprintf(wname, sizeof wname, "%s", w->name);
  // the CSV headers' columns (observable names quoted by fl_csv_str's rule)
  int ncols = 0, nocols = 0;
  const fl_csv_col *ocols = NULL;
  fl_csv_col *cols = fl_run_steps_cols(w, &ncols, &ocols, &nocols);
  if (!cols) {
    fl_world_free(w);
    return 1;
  }
  for (int j = 0; j < a.nsolvers; j++) {
    // a peer must express the scene and take its options (else the reason, before any folder)
    fl_peer *pe = NULL;
    if (fl_peer_find(a.solvers[j]) &&
        fl_peer_create(a.solvers[j], w, a.nsolver_sets, a.solver_sets, NULL, &pe) < 0) {
      fprintf(stderr, "frictionlab run: %s: %s\n", a.solvers[j], fl_errmsg());
      fl_free(cols);
      fl_world_free(w);
      return fl_errcode() == FL_ERR_UNSUPPORTED ? 1 : EXIT_USAGE;
    }
    fl_peer_free(pe);
  }
  fl_world_free(w);
  for (int j = 0; j < a.nsolvers; j++) {
    fl_solver *s;
    if (fl_peer_find(a.solvers[j])) continue;
    if (make_solver(&a, a.solvers[j], &s) < 0) {
      fprintf(stderr, "frictionlab run: solver '%s': %s\n", a.solvers[j], fl_errmsg());
      fl_free(cols);
      return EXIT_USAGE;
    }
    fl_solver_destroy(s);
  }

  char outbuf[512];
  if (!a.out) {
    default_out(a.input, outbuf, sizeof outbuf);
    a.out = outbuf;
  }
  fl_results *res = NULL;
  if (fl_results_begin(a.out, "run", a.force, &res) < 0) {
    fprintf(stderr, "frictionlab run: %s\n", fl_errmsg());
    fl_free(cols);
    return 1;
  }
  a.staging = fl_results_staging(res);
  FILE *steps = fl_results_file(res, "steps.csv");
  FILE *iters = fl_results_file(res, "iters.csv");
  FILE *obs = fl_results_file(res, "observables.csv");
  if (!steps || !iters || !obs) {
    fprintf(stderr, "frictionlab run: %s\n", fl_errmsg());
    fl_results_abort(res);
    fl_free(cols);
    return 1;
  }
  fl_csv_header(steps, cols, ncols);
  fl_csv_col ic[FL_ITERS_NCOLS];
  fl_iters_cols(ic, 0);
  fl_csv_header(iters, ic, FL_ITERS_NCOLS);
  fl_csv_header(obs, ocols, nocols);
  fl_free(cols);

  cJSON *man = fl_results_manifest(res);
  cJSON_AddStringToObject(man, "problem", a.input);
  cJSON_AddStringToObject(man, "scene", wname);
  cJSON_AddNumberToObject(man, "dt", dt);
  cJSON_AddNumberToObject(man, "steps", (double)nsteps);
  cJSON *sp = cJSON_AddArrayToObject(man, "scene_settings");
  for (int i = 0; i < a.nscene; i++) cJSON_AddItemToArray(sp, cJSON_CreateString(a.scene_sets[i]));
  cJSON *runs = cJSON_AddObjectToObject(man, "runs");
  for (int j = 0; j < a.nsolvers; j++) {
    fl_solver *s;
    if (fl_peer_find(a.solvers[j])) {
      char js[1024];
      if (fl_peer_options_resolve(a.solvers[j], a.nsolver_sets, a.solver_sets, js, sizeof js) >= 0)
        cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(man, "solvers"), a.solvers[j],
                              cJSON_Parse(js));
      continue;
    }
    if (make_solver(&a, a.solvers[j], &s) == 0) {
      fl_results_add_solver(res, s);
      fl_solver_destroy(s);
    }
  }

  // the recording: every step unless that passes RECORD_BUDGET bytes
  fl_recorder *rec = NULL;
  if (a.record != 0) {
    fl_world *w0 = NULL;
    FILE *rf = NULL;
    int rr = make_world(&a, &w0);
    if (rr >= 0 && a.record < 0) a.record = fl_record_auto_every(w0, nsteps, a.nsolvers, RECORD_BUDGET);
    if (rr >= 0) rf = fl_results_file(res, FL_RECORD_FILE);
    if (rr >= 0 && !rf) rr = fl_errcode();
    if (rr >= 0) rr = fl_record_begin(rf, w0, a.input, a.nsolvers, a.solvers, (int)a.record, nsteps, &rec);
    fl_world_free(w0);
    if (rr < 0) {
      fprintf(stderr, "frictionlab run: %s\n", fl_errmsg());
      fl_results_abort(res);
      return 1;
    }
    cJSON *ro = cJSON_AddObjectToObject(man, "recording");
    cJSON_AddStringToObject(ro, "file", FL_RECORD_FILE);
    cJSON_AddNumberToObject(ro, "every", (double)a.record);
  }

  fl_progress bar;
  fl_progress_begin(&bar, "run", nsteps * a.nsolvers);
  run_summary sums[MAX_SOLVERS];
  int failed = 0;
  for (int j = 0; j < a.nsolvers; j++) {
    cJSON *r = cJSON_AddObjectToObject(runs, a.solvers[j]);
    cJSON *final = cJSON_CreateObject();
    int src = simulate(&a, j, nsteps, steps, iters, obs, rec, &bar, (long)j * nsteps, &sums[j], final);
    // a size refused against the memory limit (contact problem, broad phase) is the scene's, not
    // the solver's: no results folder, the estimate and the limit on stderr (issue 51, item 5)
    if (src == FL_ERR_NOMEM) {
      fl_progress_end(&bar);
      fprintf(stderr, "frictionlab run: %s: %s\n", a.solvers[j], sums[j].error);
      cJSON_Delete(final);
      fl_record_free(rec);
      fl_results_abort(res);
      return 1;
    }
    cJSON_AddNumberToObject(r, "steps", (double)sums[j].steps);
    cJSON_AddNumberToObject(r, "iterations", (double)sums[j].iters);
    cJSON_AddNumberToObject(r, "steps_not_converged", sums[j].failed);
    cJSON_AddNumberToObject(r, "solve_s", sums[j].solve_s);
    cJSON_AddNumberToObject(r, "collide_s", sums[j].collide_s);
    cJSON_AddNumberToObject(r, "assemble_s", sums[j].assemble_s);
    cJSON_AddNumberToObject(r, "wall_s", sums[j].wall_s);
    cJSON_AddNumberToObject(r, "pen_max", sums[j].pen_max);
    const run_summary *su = &sums[j];
    cJSON *fl = cJSON_AddObjectToObject(r, "flags");
    cJSON_AddNumberToObject(fl, "failed_steps", su->failed);
    cJSON_AddNumberToObject(fl, "first_failed_step", (double)su->first_failed);
    cJSON_AddNumberToObject(fl, "fallback_steps", su->fallback);
    cJSON *en = cJSON_AddObjectToObject(fl, "energy");
    cJSON_AddBoolToObject(en, "checked", su->energy_checked);
    // NaN or infinite energy (any run): steps and the first of them (-1: none)
    cJSON_AddNumberToObject(en, "nonfinite_steps", (double)su->nonfinite_steps);
    cJSON_AddNumberToObject(en, "nonfinite_first_step", (double)su->nonfinite_first);
    if (su->energy_checked) {
      cJSON_AddNumberToObject(en, "initial_J", su->e0);
      cJSON_AddNumberToObject(en, "scale_J", su->escale);
      cJSON_AddNumberToObject(en, "allowed_gain", ENERGY_GAIN);
      cJSON_AddNumberToObject(en, "largest_gain_J", su->egain);
      cJSON_AddNumberToObject(en, "steps", (double)su->energy_steps);
      cJSON_AddNumberToObject(en, "first_step", (double)su->energy_first);
    }
    cJSON *ls = cJSON_AddArrayToObject(fl, "limits");
    for (int q = 0; q < su->nlimit; q++) {
      const limit_tally *t = &su->limit[q];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "observable", t->obs);
      cJSON_AddStringToObject(o, "label", t->label);
      if (isfinite(t->lo)) cJSON_AddNumberToObject(o, "min", t->lo);
      if (isfinite(t->hi)) cJSON_AddNumberToObject(o, "max", t->hi);
      cJSON_AddNumberToObject(o, "steps", (double)t->steps);
      cJSON_AddNumberToObject(o, "first_step", (double)t->first);
      if (t->steps) cJSON_AddNumberToObject(o, "worst", isfinite(t->worst) ? t->worst : 1e300);
      cJSON_AddItemToArray(ls, o);
    }
    cJSON_AddItemToObject(r, "final_observables", final);
    if (sums[j].error[0]) {
      cJSON_AddStringToObject(r, "error", sums[j].error);
      failed = 1;
    }
  }
  fl_progress_end(&bar);
  fl_record_free(rec);
  // the viewer, from the recording as written (the same file `frictionlab view` reads)
  char viewer_note[512] = "";
  if (rec) {
    char rp[1200], vp[1200];
    snprintf(rp, sizeof rp, "%s/%s", a.staging, FL_RECORD_FILE);
    snprintf(vp, sizeof vp, "%s/%s", a.staging, FL_VIEWER_FILE);
    FILE *rf = fl_results_file(res, FL_RECORD_FILE);
    fl_record_info ri;
    int rv = rf && fflush(rf) == 0 ? fl_viewer_write(rp, vp, &ri) : fl_errcode();
    if (rv >= 0)
      snprintf(viewer_note, sizeof viewer_note, "viewer: %s/%s (%ld frames, every %ld steps; "
               "`frictionlab view %s`)", a.out, FL_VIEWER_FILE, ri.frames, a.record, a.out);
    else
      snprintf(viewer_note, sizeof viewer_note, "no viewer.html: %s (the recording is in %s)",
               fl_errmsg(), FL_RECORD_FILE);
  }
  if (fl_results_commit(res) < 0) {
    fprintf(stderr, "frictionlab run: %s\n", fl_errmsg());
    return 1;
  }
  printf("%s: %ld steps of %g s -> %s\n", a.input, nsteps, dt, a.out);
  if (viewer_note[0]) printf("%s\n", viewer_note);
  printf("%-16s %8s %10s %12s %10s %10s  %s\n", "solver", "steps", "iters/step", "pen_max (m)",
         "solve (s)", "wall (s)", "status");
  for (int j = 0; j < a.nsolvers; j++) {
    const run_summary *s = &sums[j];
    char st[1024];
    printf("%-16s %8ld %10.1f %12.3g %10.3g %10.3g  %s\n", a.solvers[j], s->steps,
           s->steps ? (double)s->iters / s->steps : 0.0, s->pen_max, s->solve_s, s->wall_s,
           flags_text(s, st, sizeof st));
  }
  for (int j = 0; j < a.nsolvers; j++)
    if (sums[j].fallback)
      printf("%s: %d of %ld steps solved again with a fallback law (sap: friction=soft; "
             "iterations counted)\n", a.solvers[j], sums[j].fallback, sums[j].steps);
  if (a.nsolvers > 0) {
    const run_summary *s = &sums[0];
    printf("(checked: solver failures; NaN or infinite energy; energy gain above %g x %.3g J%s",
           ENERGY_GAIN, s->escale,
           s->energy_checked ? "" : s->external ? ", not checked here: external work"
                                                : ", not checked here: no finite initial energy");
    for (int q = 0; q < s->nlimit; q++)
      printf("; %s %s %s %.3g", s->limit[q].label, s->limit[q].obs,
             isfinite(s->limit[q].hi) ? "<=" : ">=", isfinite(s->limit[q].hi) ? s->limit[q].hi : s->limit[q].lo);
    printf("; per step in steps.csv's flags column)\n");
  }
  return failed ? 1 : 0;
}

// SPDX-License-Identifier: Apache-2.0
/* costs.c: what `profile` reads back from a solve campaign's folder, the cost of each
 * (problem, solver) pair to reach a tolerance on the common merit, and the Dolan-More
 * performance profile of those costs (fl_perf_profile; the definition is in profile.c's
 * head comment). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fl_harness.h"
#include "fl_camp.h"

int fl_perf_profile(int np, int ns, const double *cost, int ntau, const double *tau,
                    double *rho) {
  if (np < 0 || ns < 0 || ntau < 0) return fl_seterr(FL_ERR_INVAL, "profile: negative size");
  for (int s = 0; s < ns; s++)
    for (int t = 0; t < ntau; t++) rho[s * ntau + t] = 0;
  if (np == 0) return FL_OK;
  for (int p = 0; p < np; p++) {
    // best cost on this problem
    double best = INFINITY;
    for (int s = 0; s < ns; s++) {
      double c = cost[p * ns + s];
      if (isnan(c) || c < 0) return fl_seterr(FL_ERR_INVAL, "profile: cost[%d][%d] = %g", p, s, c);
      if (c < best) best = c;
    }
    if (isinf(best)) continue;
    for (int s = 0; s < ns; s++) {
      double c = cost[p * ns + s];
      if (isinf(c)) continue;
      // a zero best cost (e.g. solved at iteration 0) makes every solver with cost 0 ratio 1
      double r = best > 0 ? c / best : (c == 0 ? 1 : INFINITY);
      for (int t = 0; t < ntau; t++)
        if (r <= tau[t] * (1 + 1e-12)) rho[s * ntau + t] += 1.0 / np;
    }
  }
  return FL_OK;
}


//---- a small CSV reader (fields may be quoted, as fl_csv_str writes them) ----

enum { MAXF = 64 };

/* splits `line` in place into at most MAXF fields; returns their number */
static int csv_split(char *line, char **f) {
  int n = 0;
  char *p = line;
  while (n < MAXF) {
    if (*p == '"') {
      char *w = ++p;
      f[n++] = w;
      while (*p && !(*p == '"' && p[1] != '"')) {
        if (*p == '"') p++;
        *w++ = *p++;
      }
      if (*p == '"') p++;
      *w = '\0';
      if (*p == ',') p++;
      else break;
    } else {
      f[n++] = p;
      char *c = strpbrk(p, ",\r\n");
      if (!c || *c != ',') {
        if (c) *c = '\0';
        break;
      }
      *c = '\0';
      p = c + 1;
    }
  }
  return n;
}


static int col_of(char **hdr, int n, const char *name) {
  for (int k = 0; k < n; k++)
    if (strcmp(hdr[k], name) == 0) return k;
  return -1;
}


static int names_index(fl_camp_names *nm, const char *s) {
  for (int k = 0; k < nm->n; k++)
    if (strcmp(nm->s[k], s) == 0) return k;
  if (nm->n == nm->cap) {
    int cap = nm->cap ? 2 * nm->cap : 16;
    char **t = fl_realloc(nm->s, (size_t)cap * sizeof *t);
    if (!t) return -1;
    nm->s = t;
    nm->cap = cap;
  }
  size_t len = strlen(s) + 1;
  nm->s[nm->n] = fl_malloc(len);
  if (!nm->s[nm->n]) return -1;
  memcpy(nm->s[nm->n], s, len);
  return nm->n++;
}


/* the index of s, or -1 when it is not among the names */
static int names_find(const fl_camp_names *nm, const char *s) {
  for (int k = 0; k < nm->n; k++)
    if (strcmp(nm->s[k], s) == 0) return k;
  return -1;
}


/* a CSV number (nan and inf included) into *x; 0 when the field is not one */
static int csv_number(const char *f, double *x) {
  char *end;
  *x = strtod(f, &end);
  return end != f && *end == '\0';
}


void fl_camp_names_free(fl_camp_names *nm) {
  for (int k = 0; k < nm->n; k++) fl_free(nm->s[k]);
  fl_free(nm->s);
}


/* reads iters.csv of a solve folder: cost by time (s) and by iterations to reach merit <= tol.
 * Rows of steps.csv decide which pairs exist; pairs never below tol cost INFINITY. */
int fl_camp_read_costs(const char *dir, double tol, fl_camp_names *probs,
                       fl_camp_names *solvers, double **ctime, double **citer) {
  char path[4096], line[8192];
  char *f[MAXF], *hdr[MAXF];
  char hbuf[8192];
  *ctime = *citer = NULL;
  //---- pass 1: steps.csv names the problems and solvers ----
  if (snprintf(path, sizeof path, "%s/steps.csv", dir) >= (int)sizeof path)
    return fl_seterr(FL_ERR_INVAL, "%s: folder name too long", dir);
  FILE *in = NULL;
  FL_TRY(fl_open_input(path, "results table (.csv)", 0, &in));
  if (!fgets(hbuf, sizeof hbuf, in)) {
    fclose(in);
    return fl_seterr(FL_ERR_FORMAT, "%s: empty file, expected a header row", path);
  }
  int nh = csv_split(hbuf, hdr), cp = col_of(hdr, nh, "problem"), cs = col_of(hdr, nh, "solver");
  if (cp < 0 || cs < 0) {
    fclose(in);
    return fl_seterr(FL_ERR_FORMAT, "%s: header lacks the columns problem and solver", path);
  }
  while (fgets(line, sizeof line, in)) {
    int n = csv_split(line, f);
    if (n <= cp || n <= cs) continue;
    if (names_index(probs, f[cp]) < 0 || names_index(solvers, f[cs]) < 0) {
      fclose(in);
      return fl_seterr(FL_ERR_NOMEM, "profile: out of memory");
    }
  }
  fclose(in);
  size_t np = (size_t)probs->n, ns = (size_t)solvers->n;
  FL_TRY(fl_mem_check(path, "the cost table of its problems x solvers",
                      2.0 * (double)np * (double)ns * sizeof(double)));
  *ctime = fl_malloc((np * ns + 1) * sizeof(double));
  *citer = fl_malloc((np * ns + 1) * sizeof(double));
  if (!*ctime || !*citer) return fl_seterr(FL_ERR_NOMEM, "profile: out of memory");
  for (size_t k = 0; k < np * ns; k++) (*ctime)[k] = (*citer)[k] = INFINITY;
  //---- pass 2: first record under the tolerance ----
  if (snprintf(path, sizeof path, "%s/iters.csv", dir) >= (int)sizeof path)
    return fl_seterr(FL_ERR_INVAL, "%s: folder name too long", dir);
  FL_TRY(fl_open_input(path, "results table (.csv)", 0, &in));
  if (!fgets(hbuf, sizeof hbuf, in)) {
    fclose(in);
    return fl_seterr(FL_ERR_FORMAT, "%s: empty file, expected a header row", path);
  }
  nh = csv_split(hbuf, hdr);
  cp = col_of(hdr, nh, "problem");
  cs = col_of(hdr, nh, "solver");
  int ci = col_of(hdr, nh, "iter"), ct = col_of(hdr, nh, "time"), cm = col_of(hdr, nh, "merit");
  if (cp < 0 || cs < 0 || ci < 0 || ct < 0 || cm < 0) {
    fclose(in);
    return fl_seterr(FL_ERR_FORMAT,
                     "%s: header lacks one of the columns problem, solver, iter, time, merit",
                     path);
  }
  long row = 1;
  int need = cp;
  if (cs > need) need = cs;
  if (ci > need) need = ci;
  if (ct > need) need = ct;
  if (cm > need) need = cm;
  while (fgets(line, sizeof line, in)) {
    row++;
    int n = csv_split(line, f);
    if (n == 1 && f[0][0] == '\0') continue; // a blank line
    if (n <= need) {
      fclose(in);
      return fl_seterr(FL_ERR_FORMAT, "%s: row %ld: %d fields, expected at least %d", path, row,
                       n, need + 1);
    }
    // the names come from steps.csv: a pair it lacks is an inconsistent folder
    int p = names_find(probs, f[cp]), s = names_find(solvers, f[cs]);
    if (p < 0 || s < 0) {
      int rc = fl_seterr(FL_ERR_FORMAT, "%s: row %ld: %s '%.200s' does not appear in steps.csv",
                         path, row, p < 0 ? "problem" : "solver", p < 0 ? f[cp] : f[cs]);
      fclose(in);
      return rc;
    }
    double merit, t, it;
    if (!csv_number(f[cm], &merit) || !csv_number(f[ct], &t) || !csv_number(f[ci], &it)) {
      fclose(in);
      return fl_seterr(FL_ERR_FORMAT, "%s: row %ld: merit, time and iter must be numbers", path,
                       row);
    }
    size_t k = (size_t)p * ns + (size_t)s;
    if (merit <= tol && isinf((*ctime)[k])) {
      (*ctime)[k] = t;
      (*citer)[k] = it;
    }
  }
  fclose(in);
  return FL_OK;
}


int fl_profile_read_costs(const char *dir, double tol, int *nprob, int *nsolver) {
  fl_camp_names probs = {0}, solvers = {0};
  double *ctime = NULL, *citer = NULL;
  int rc = fl_camp_read_costs(dir, tol, &probs, &solvers, &ctime, &citer);
  *nprob = probs.n;
  *nsolver = solvers.n;
  fl_camp_names_free(&probs);
  fl_camp_names_free(&solvers);
  fl_free(ctime);
  fl_free(citer);
  return rc;
}

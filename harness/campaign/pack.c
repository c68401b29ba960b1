// SPDX-License-Identifier: Apache-2.0
/* pack.c: a pair's record, its rows, notes and outcome as one JSON text (fl_camp.h). The
 * same text is a pair's file in the store (pairs.c), an MPI worker's result for rank 0
 * (deal.c) and a guarded child's message to its parent (guard.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fl_camp.h"

static void put_num(cJSON *o, const char *k, double x) {
  if (isfinite(x)) cJSON_AddNumberToObject(o, k, x);
  else cJSON_AddStringToObject(o, k, isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
}

static double get_num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (cJSON_IsNumber(v)) return v->valuedouble;
  if (cJSON_IsString(v)) return strtod(v->valuestring, NULL);
  return NAN;
}

char *fl_camp_pack(const char *steps, const char *iters, cJSON *notes, const fl_camp_outcome *o,
                   int broke) {
  cJSON *m = cJSON_CreateObject();
  if (!m) return NULL;
  cJSON_AddStringToObject(m, "steps", steps ? steps : "");
  cJSON_AddStringToObject(m, "iters", iters ? iters : "");
  cJSON_AddItemReferenceToObject(m, "notes", notes);
  cJSON_AddStringToObject(m, "status", o->status ? o->status : "error");
  cJSON_AddNumberToObject(m, "code", o->code);
  if (o->reason) cJSON_AddStringToObject(m, "reason", o->reason);
  cJSON_AddNumberToObject(m, "iterations", o->iters);
  put_num(m, "solve_s", o->solve_s);
  put_num(m, "natmap", o->natmap);
  put_num(m, "merit", o->merit);
  put_num(m, "own", o->own);
  cJSON_AddNumberToObject(m, "broke", broke);
  char *txt = cJSON_PrintUnformatted(m);
  cJSON_Delete(m);
  return txt;
}


int fl_camp_unpack(const char *txt, FILE *steps, FILE *iters, cJSON *notes,
                   fl_camp_outcome *o) {
  cJSON *m = cJSON_Parse(txt);
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(m, "steps"),
              *it = cJSON_GetObjectItemCaseSensitive(m, "iters"),
              *ns = cJSON_GetObjectItemCaseSensitive(m, "notes"),
              *ss = cJSON_GetObjectItemCaseSensitive(m, "status");
  if (!cJSON_IsString(st) || !cJSON_IsString(it) || !cJSON_IsArray(ns) || !cJSON_IsString(ss)) {
    cJSON_Delete(m);
    return -1;
  }
  fputs(st->valuestring, steps);
  fputs(it->valuestring, iters);
  const cJSON *n;
  cJSON_ArrayForEach(n, ns) cJSON_AddItemToArray(notes, cJSON_Duplicate(n, 1));
  memset(o, 0, sizeof *o);
  o->code    = (int)get_num(m, "code");
  o->iters   = (int)get_num(m, "iterations");
  o->solve_s = get_num(m, "solve_s");
  o->natmap  = get_num(m, "natmap");
  o->merit   = get_num(m, "merit");
  o->own     = get_num(m, "own");
  if (!strcmp(ss->valuestring, "returned")) {
    o->status = "returned";
    o->reason = fl_reason_name(o->code);
  } else if (!strcmp(ss->valuestring, "unsupported")) {
    o->status = "unsupported";
    o->reason = "UNSUPPORTED";
  } else {
    // a guarded pair's own reasons (its process died or ran out of time) are not error codes
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(m, "reason");
    const char  *r  = cJSON_IsString(rs) ? rs->valuestring : "";
    o->status = "error";
    o->reason = !strcmp(r, "CRASHED")      ? "CRASHED"
                : !strcmp(r, "WALL_LIMIT") ? "WALL_LIMIT"
                                           : fl_errname(o->code);
  }
  int broke = (int)get_num(m, "broke") != 0;
  cJSON_Delete(m);
  return broke;
}


char *fl_camp_pack_run(int (*solve)(void *ctx, FILE *steps, FILE *iters, cJSON *notes,
                                    fl_camp_outcome *o),
                       void *ctx, fl_camp_outcome *o, int *broke) {
  char  *sb = NULL, *ib = NULL, *txt = NULL;
  size_t sn = 0, in = 0;
  FILE  *fs = open_memstream(&sb, &sn), *fi = open_memstream(&ib, &in);
  cJSON *pn = cJSON_CreateArray();
  if (fs && fi && pn) {
    *broke = solve(ctx, fs, fi, pn, o);
    fclose(fs);
    fclose(fi);
    fs = fi = NULL;
    txt = fl_camp_pack(sb, ib, pn, o, *broke);
  }
  if (fs) fclose(fs);
  if (fi) fclose(fi);
  free(sb);
  free(ib);
  cJSON_Delete(pn);
  return txt;
}


long fl_camp_write_records(const char *label, fl_pairs *store, long npairs, FILE *steps,
                           FILE *iters, cJSON *notes, fl_camp_outcome *outs) {
  long nbroke = 0;
  for (long k = 0; k < npairs; k++) {
    if (!fl_pairs_done(store, k)) { // interrupted before it ran
      memset(&outs[k], 0, sizeof outs[k]);
      outs[k].status = "error";
      outs[k].reason = "NOT_RUN";
      outs[k].iters  = -1;
      outs[k].solve_s = outs[k].natmap = outs[k].merit = NAN;
      continue;
    }
    char *txt   = fl_pairs_get(store, k);
    int   broke = txt ? fl_camp_unpack(txt, steps, iters, notes, &outs[k]) : -1;
    fl_free(txt);
    if (broke < 0) {
      fprintf(stderr, "frictionlab %s: pair %ld: %s\n", label, k,
              txt ? "malformed record" : fl_errmsg());
      return -1;
    }
    nbroke += broke;
  }
  return nbroke;
}

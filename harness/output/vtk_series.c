// SPDX-License-Identifier: Apache-2.0
/* vtk_series.c: a run's VTK files for ParaView (fl_record.h): one frame's files at a time under
 * <root>/vtk/<name>/, and at the end one .pvd per series that lists its frames with their
 * times. Series 0 is the rigid bodies, 1 the contacts, 2 + k deformable body k. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../../sim/fl_fem.h"
#include "../../sim/fl_mesh.h"
#include "fl_record.h"

typedef struct vtk_series {
  int nframe, cap;
  double *t;
  char (*file)[96];
} vtk_series;

struct fl_vtk_series {
  const char *root, *name; /* the caller's */
  fl_int nser;             /* 2 + the world's deformable bodies */
  vtk_series *ser;
};


/* Series k's next file name for step `step` (recorded with the time t). */
static const char *vtk_next(vtk_series *s, const char *stem, long step, const char *ext, double t) {
  if (s->nframe == s->cap) {
    int nc = s->cap ? 2 * s->cap : 64;
    double *tt = fl_realloc(s->t, (size_t)nc * sizeof(double));
    if (!tt) return NULL;
    s->t = tt;
    void *f = fl_realloc(s->file, (size_t)nc * sizeof *s->file);
    if (!f) return NULL;
    s->file = f;
    s->cap = nc;
  }
  snprintf(s->file[s->nframe], sizeof s->file[0], "%.40s_%06ld.%s", stem, step, ext);
  s->t[s->nframe] = t;
  return s->file[s->nframe++];
}


fl_vtk_series *fl_vtk_series_open(const char *root, const char *name, const fl_world *w) {
  fl_vtk_series *v = fl_calloc(1, sizeof *v);
  if (v) v->ser = fl_calloc((size_t)w->nfem + 2, sizeof *v->ser);
  if (!v || !v->ser) {
    fl_free(v);
    fl_seterr(FL_ERR_NOMEM, "run: out of memory");
    return NULL;
  }
  v->root = root;
  v->name = name;
  v->nser = 2 + w->nfem;
  return v;
}


int fl_vtk_series_frame(fl_vtk_series *v, fl_world *w, long step) {
  vtk_series *ser = v->ser;
  char dir[1024], path[1200];
  snprintf(dir, sizeof dir, "%s/vtk", v->root);
  mkdir(dir, 0777);
  snprintf(dir, sizeof dir, "%s/vtk/%s", v->root, v->name);
  mkdir(dir, 0777);
  if (w->nbody > 0) {
    const char *fb = vtk_next(&ser[0], "bodies", step, "vtp", w->t);
    const char *fc = step > 0 ? vtk_next(&ser[1], "contacts", step, "vtp", w->t) : NULL;
    if (!fb || (step > 0 && !fc)) return fl_seterr(FL_ERR_NOMEM, "run: out of memory");
    char pc[1200];
    snprintf(path, sizeof path, "%s/%s", dir, fb);
    if (fc) snprintf(pc, sizeof pc, "%s/%s", dir, fc);
    FL_TRY(fl_vtk_write_rigid(w, path, fc ? pc : NULL));
  }
  for (fl_int k = 0; k < w->nfem; k++) {
    const char *f = vtk_next(&ser[2 + k], w->fem[k]->name, step, "vtu", w->t);
    if (!f) return fl_seterr(FL_ERR_NOMEM, "run: out of memory");
    snprintf(path, sizeof path, "%s/%s", dir, f);
    FL_TRY(fl_fem_write_vtu(w, (int)k, path));
  }
  return FL_OK;
}


int fl_vtk_series_close(fl_vtk_series *v, const fl_world *w) {
  if (!v) return FL_OK;
  int rc = FL_OK;
  for (fl_int k = 0; k < v->nser; k++) {
    vtk_series *s = &v->ser[k];
    if (rc >= 0 && s->nframe > 0) {
      char path[1200];
      const char **files = fl_malloc((size_t)s->nframe * sizeof(char *));
      if (!files) {
        rc = fl_seterr(FL_ERR_NOMEM, "run: out of memory");
      } else {
        for (int f = 0; f < s->nframe; f++) files[f] = s->file[f];
        snprintf(path, sizeof path, "%s/vtk/%s/%.40s.pvd", v->root, v->name,
                 k == 0 ? "bodies" : k == 1 ? "contacts" : w->fem[k - 2]->name);
        rc = fl_pvd_write(path, s->nframe, s->t, files);
        fl_free(files);
      }
    }
    fl_free(s->t);
    fl_free(s->file);
  }
  fl_free(v->ser);
  fl_free(v);
  return rc;
}

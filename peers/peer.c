// SPDX-License-Identifier: Apache-2.0
/* peer.c: the peers' dispatch by name (fl_peer.h): each peer name belongs to one module
 * (fl__peer_ops, fl_peer_impl.h); this file finds it and forwards the calls. It also holds what
 * the modules share: the combined contact law of two materials and the settings' split.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fl_peer_impl.h"

static const fl__peer_ops *const modules[] = {&fl__peer_mujoco_ops, &fl__peer_drake_ops,
                                              &fl__peer_mujoco4_ops, NULL};

struct fl_peer {
  const fl__peer_ops *ops;
  void *self;
  char name[32];
};


/* The module running peer `name`, or NULL. */
static const fl__peer_ops *module_of(const char *name) {
  for (int m = 0; name && modules[m]; m++)
    for (int k = 0; modules[m]->names[k]; k++)
      if (!strcmp(name, modules[m]->names[k])) return modules[m];
  return NULL;
}


int fl_peer_prefix(const char *prefix) {
  if (!prefix) return 0;
  for (int m = 0; modules[m]; m++)
    if (modules[m]->group && !strcmp(prefix, modules[m]->group)) return 1;
  return module_of(prefix) != NULL;
}


const char *fl_peer_unavailable(const char *name) {
  const fl__peer_ops *o = module_of(name);
  return o ? o->unavailable(name) : NULL;
}


int fl_peer_find(const char *name) {
  const fl__peer_ops *o = module_of(name);
  return o && !o->unavailable(name);
}


const char *const *fl_peer_list(void) {
  static const char *list[64];
  int n = 0;
  for (int m = 0; modules[m]; m++)
    for (int k = 0; modules[m]->names[k] && n < 63; k++)
      if (!modules[m]->unavailable(modules[m]->names[k])) list[n++] = modules[m]->names[k];
  list[n] = NULL;
  return list;
}


int fl_peer_own_clock(const fl_peer *p) { return p && p->ops->own_clock; }


void fl_peer_expect(fl_peer *p, long steps) {
  if (p && p->ops->expect) p->ops->expect(p->self, steps);
}


int fl_peer_create(const char *name, const fl_world *w, int nset, const char *const *set,
                   const char *path, fl_peer **out) {
  if (out) *out = NULL;
  const fl__peer_ops *o = module_of(name);
  if (!o) return fl_seterr(FL_ERR_UNKNOWN_SOLVER, "peer '%s': no such peer", name ? name : "(null)");
  if (o->unavailable(name))
    return fl_seterr(FL_ERR_UNKNOWN_SOLVER, "peer '%s': %s", name, o->unavailable(name));
  if (!out || !w) return fl_seterr(FL_ERR_INVAL, "fl_peer_create: NULL argument");
  fl_peer *p = fl_calloc(1, sizeof *p);
  if (!p) return fl_seterr(FL_ERR_NOMEM, "peer: out of memory");
  p->ops = o;
  snprintf(p->name, sizeof p->name, "%s", name);
  int rc = o->create(name, w, nset, set, path, &p->self);
  if (rc < 0) {
    fl_free(p);
    return rc;
  }
  *out = p;
  return FL_OK;
}


void fl_peer_free(fl_peer *p) {
  if (!p) return;
  p->ops->free(p->self);
  fl_free(p);
}


int fl_peer_step(fl_peer *p, fl_world *w, fl_step_info *info) {
  if (!p || !w) return fl_seterr(FL_ERR_INVAL, "fl_peer_step: NULL argument");
  return p->ops->step(p->self, w, info);
}


void fl_peer_stages_last(const fl_peer *p, fl_peer_stages *st) { p->ops->stages(p->self, st); }


const fl_iter_stat *fl_peer_history(const fl_peer *p, int *n) {
  if (!p) {
    *n = 0;
    return NULL;
  }
  return p->ops->history(p->self, n);
}


int fl_peer_contacts(const fl_peer *p) { return p ? p->ops->contacts(p->self) : 0; }
double fl_peer_normal_impulse(const fl_peer *p) { return p ? p->ops->normal_impulse(p->self) : NAN; }


int fl_peer_contact(const fl_peer *p, int i, fl_peer_contact_info *out) {
  if (!p || !out) return fl_seterr(FL_ERR_INVAL, "peer contact %d out of range", i);
  return p->ops->contact(p->self, i, out);
}


const char *fl_peer_options_json(const fl_peer *p) { return p->ops->options_json(p->self); }


void fl_peer_view(const fl_peer *p, FILE *f) {
  fprintf(f, "%s: %s\n", p->name, fl_peer_options_json(p));
}


int fl_peer_options_resolve(const char *name, int nset, const char *const *set, char *buf,
                            size_t n) {
  if (n) buf[0] = 0;
  const fl__peer_ops *o = module_of(name);
  if (!o) return fl_seterr(FL_ERR_UNKNOWN_SOLVER, "peer '%s': no such peer", name ? name : "(null)");
  if (o->unavailable(name))
    return fl_seterr(FL_ERR_UNKNOWN_SOLVER, "peer '%s': %s", name, o->unavailable(name));
  return o->options_resolve(name, nset, set, buf, n);
}


//---- shared by the modules ----

void fl__peer_pair_law(const fl_world *w, int a, int b, double *mu, double *k, double *tau_d) {
  for (fl_int p = 0; p < w->npair; p++) {
    const fl_pair_material *pm = &w->pair[p];
    if ((pm->mat_a == a && pm->mat_b == b) || (pm->mat_a == b && pm->mat_b == a)) {
      *mu = pm->mu;
      *k = pm->stiffness;
      if (tau_d) *tau_d = pm->tau_d;
      return;
    }
  }
  fl_material_combine(&w->mat[a], &w->mat[b], w->mu_rule, mu, k, tau_d);
}


unsigned char *fl__peer_materials_meeting(const fl_world *w) {
  fl_int nm = w->nmat;
  unsigned char *used = fl_calloc((size_t)(nm * nm) + 1, 1);
  if (!used) return NULL;
  unsigned char *dyn = fl_calloc((size_t)nm + 1, 1), *any = fl_calloc((size_t)nm + 1, 1);
  if (!dyn || !any) {
    fl_free(used);
    fl_free(dyn);
    fl_free(any);
    return NULL;
  }
  for (fl_int i = 0; i < w->nbody; i++) {
    any[w->body[i].material] = 1;
    if (w->body[i].kind == FL_BODY_DYNAMIC) dyn[w->body[i].material] = 1;
  }
  // a pair of materials meets when one side has a dynamic body (a dynamic body of a material
  // meets its own material only if two bodies have it; erring on the side of "meets" only adds
  // explicit pairs that are never generated)
  for (fl_int a = 0; a < nm; a++)
    for (fl_int b = 0; b < nm; b++)
      if (any[a] && any[b] && (dyn[a] || dyn[b])) used[a * nm + b] = 1;
  fl_free(dyn);
  fl_free(any);
  return used;
}


int fl__peer_setting(const char *set, const char *name, const char *group,
                     const char *const *keys, char *buf, size_t n, char **key, char **val) {
  snprintf(buf, n, "%s", set);
  char *eq = strchr(buf, '=');
  if (!eq) return fl_seterr(FL_ERR_INVAL, "--set %s: expected key=value", set);
  *eq = 0;
  *val = eq + 1;
  *key = buf;
  char *dot = strchr(buf, '.');
  if (dot) {
    *dot = 0;
    if ((!group || strcmp(buf, group) != 0) && strcmp(buf, name) != 0) return 1; // not ours
    *key = dot + 1;
    return FL_OK;
  }
  for (int i = 0; keys[i]; i++)
    if (!strcmp(buf, keys[i])) return FL_OK;
  return 1; // a registered solver's option
}


//---- the stepping loop's stepper ----

static int peer_step(void *self, fl_world *w, fl_step_info *info) { return fl_peer_step(self, w, info); }


static const fl_iter_stat *peer_history(void *self, const fl_step_info *info, int *n) {
  (void)info;
  return fl_peer_history(self, n);
}


fl_stepper fl_peer_stepper(fl_peer *p) {
  fl_stepper st = {peer_step, peer_history, p};
  return st;
}

// SPDX-License-Identifier: Apache-2.0
/* fl_peer_impl.h: what a peer simulator's module gives the dispatch of peers/peer.c (internal
 * to peers/). A module runs the peers its `names` list; peer.c finds a name's module, checks
 * it is available and forwards every fl_peer.h call to the module's functions with the
 * module's own state (`self`). */
#ifndef FL_PEER_IMPL_H
#define FL_PEER_IMPL_H
#if defined(FL_LAYER) && FL_LAYER < 5
#error "peers/fl_peer_impl.h is in peers/, layer 5: a lower layer may not include it (docs/layers.md)"
#endif

#include "fl_peer.h"

typedef struct fl__peer_ops {
  const char *const *names;    /* the peers this module runs, NULL-terminated */
  const char *group;           /* option prefix shared by its peers ("mujoco"), or NULL */
  /* why `name` cannot run here (static storage, or a buffer of the module), NULL when it can */
  const char *(*unavailable)(const char *name);
  int own_clock;               /* 1: the step call does not time the step; stages() step_s does */
  int (*create)(const char *name, const fl_world *w, int nset, const char *const *set,
                const char *path, void **out);
  void (*free)(void *self);
  int (*step)(void *self, fl_world *w, fl_step_info *info);
  void (*stages)(const void *self, fl_peer_stages *st);
  const fl_iter_stat *(*history)(const void *self, int *n);
  int (*contacts)(const void *self);
  double (*normal_impulse)(const void *self);
  int (*contact)(const void *self, int i, fl_peer_contact_info *out);
  const char *(*options_json)(const void *self);
  int (*options_resolve)(const char *name, int nset, const char *const *set, char *buf, size_t n);
  void (*expect)(void *self, long steps); /* the caller's hint (fl_peer_expect), or NULL */
} fl__peer_ops;

extern const fl__peer_ops fl__peer_mujoco_ops;  /* peer_mujoco.c: MuJoCo's C library (2.2) */
extern const fl__peer_ops fl__peer_drake_ops;   /* peer_py.c: Drake (PyPI) */
extern const fl__peer_ops fl__peer_mujoco4_ops; /* peer_py.c: MuJoCo 3 or later (PyPI) */

/* Shared by the modules (peer.c). */
/* Combined contact law of materials a and b as the stepper forms it (explicit pairs win). */
void fl__peer_pair_law(const fl_world *w, int a, int b, double *mu, double *k, double *tau_d);
/* Material pairs that can meet (one side has a dynamic body): used[a * nmat + b] = 1, both
 * orders; fl_free it. NULL when out of memory. */
unsigned char *fl__peer_materials_meeting(const fl_world *w);
/* Splits "key=value" set[k] for peer `name` of `group`: FL_OK with key/val pointing into buf
 * when the setting is the peer's ("name.key", "group.key", or a bare key listed in keys),
 * 1 when it is not (another peer's or a registered solver's), FL_ERR_INVAL without '='. */
int fl__peer_setting(const char *set, const char *name, const char *group,
                     const char *const *keys, char *buf, size_t n, char **key, char **val);

/* MuJoCo's options (cone, solref, solimp, iterations, tolerance) for peer `name` of `group`
 * with `solver` ("PGS", "CG", "Newton") from the settings, on MuJoCo's defaults (peer_mujoco.c). */
int fl__mjcf_options(const char *name, const char *group, const char *solver, int nset,
                     const char *const *set, fl_mjcf_opts *o);

#endif /* FL_PEER_IMPL_H */

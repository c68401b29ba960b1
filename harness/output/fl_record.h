// SPDX-License-Identifier: Apache-2.0
/* fl_record.h: recorded trajectories of `run` (recording.flrec), the browser viewer built from
 * them (viewer.html) and the VTK series of rigid bodies and contacts.
 *
 * The recording format is specified in docs/recording.md: an 8-byte magic "FLREC01\n", a u32
 * header length and a JSON header (scene, solvers, body meshes, deformable surfaces), then
 * length-prefixed frames, each one solver's state after one step: body poses (float32),
 * deformable vertices (float32), the step's contacts with their impulses, and the solver's
 * outcome (iterations, reason, residual). Frames are appended and flushed as the run goes, so a
 * run that is killed leaves a file whose whole frames can still be read.
 *
 * Units: m, s, N s (impulses); poses are (x, y, z, qw, qx, qy, qz) of the body frame.
 */
#ifndef FL_RECORD_H
#define FL_RECORD_H
// layer 6: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 6
#error "harness/fl_record.h is in harness/, layer 6: a lower layer may not include it (docs/layers.md)"
#endif

#include <stdio.h>

#include "../../sim/fl_world.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FL_RECORD_FILE "recording.flrec"
#define FL_VIEWER_FILE "viewer.html"

typedef struct fl_recorder fl_recorder;

/* Starts a recording on the open stream f (not owned; the caller closes it) of world w, whose
 * current state must be the initial state, for nsolver solvers named in solvers (copied):
 * writes the magic and the header. problem is the name or file the user gave; every and steps
 * are the recording interval and the run's planned steps (both stored for the viewer).
 * Returns FL_OK, FL_ERR_IO (write failed), FL_ERR_NOMEM; *out is NULL on error. */
int fl_record_begin(FILE *f, const fl_world *w, const char *problem, int nsolver,
                    const char *const *solvers, int every, long steps, fl_recorder **out);

/* Appends one frame: solver index (0 <= solver < nsolver), steps taken (0 for the initial
 * state), the world's current poses and deformable vertices, and, when info is not NULL, the
 * contacts of the step just taken (fl_world_problem and fl_world_solution, as the solver left
 * them) and its outcome. The stream is flushed, so the frame survives a killed process.
 * Returns FL_OK, FL_ERR_IO, FL_ERR_NOMEM. */
int fl_record_frame(fl_recorder *r, int solver, long step, fl_world *w, const fl_step_info *info);

/* A contact given by the caller, recorded like the world's own: point (m, world), normal (unit,
 * from side[0] to side[1]), impulse on side[1] (N s, world), phi (signed distance, m), side
 * (rigid body index, -1 the world, -2 - k deformable body k), sliding (0 or 1). */
typedef struct fl_record_contact {
  double point[3], normal[3], impulse[3], phi;
  int side[2], sliding;
} fl_record_contact;

/* fl_record_frame with the step's contacts given (nc >= 0 of them in c) instead of taken from
 * the world's problem: for a peer simulator, whose contacts are its own (fl_peer_contact). */
int fl_record_frame_contacts(fl_recorder *r, int solver, long step, fl_world *w,
                             const fl_step_info *info, long nc, const fl_record_contact *c);

/* fl_record_frame_contacts with peer simulator `peer`'s contacts of the step just taken
 * (fl_peer_contact: its points, normals, impulses, distances; peers/fl_peer.h). */
struct fl_peer;
int fl_record_peer_frame(fl_recorder *r, int solver, long step, fl_world *w,
                         const fl_step_info *info, const struct fl_peer *peer);

/* Frees the recorder (the stream stays open). NULL-safe. */
void fl_record_free(fl_recorder *r);

/* Bytes one frame of w takes with nc contacts (for choosing the default interval). */
size_t fl_record_frame_bytes(const fl_world *w, long nc);

/* The smallest recording interval (steps, >= 1) that keeps nsolver runs of `steps` steps of w
 * under budget bytes, estimating 3 contacts per rigid body, 100 per deformable body and one
 * per triangle of a hydroelastic patch. */
long fl_record_auto_every(const fl_world *w, long steps, int nsolver, double budget);

/* What a recording holds, read back without trusting it. */
typedef struct fl_record_info {
  long header_bytes;    /* magic, length and header */
  long frames;          /* whole frames */
  long bytes_whole;     /* bytes up to the end of the last whole frame */
  long bytes_file;      /* the file's size */
  int cut;              /* 1: bytes after the last whole frame (a run killed mid-write) */
  int nsolver, nbody;   /* from the header */
  int version;          /* the header's format version: 1 or 2 (docs/recording.md) */
  long frames_of[32];   /* whole frames of each of the first 32 solvers */
  char scene[64];       /* from the header */
} fl_record_info;

/* Reads the recording at path and checks it: the magic, the header (JSON with "format",
 * "version" 1 or 2, "solvers", "bodies"), and each frame's length, solver index and counts against
 * the header; stops at the first frame that does not fit (a cut-short file is not an error, it
 * sets info->cut). Returns FL_OK, FL_ERR_IO (cannot open or read; the message names the file)
 * or FL_ERR_FORMAT (the message names the file, the byte offset and what was expected). */
int fl_record_read_info(const char *path, fl_record_info *info);

/* The header of the recording at path as JSON text without its solvers and problem (malloc'd;
 * the caller frees it with free()), NULL when the file is no recording: two runs of the same
 * scene with the same settings and recording interval have the same key. */
char *fl_record_scene_key(const char *path);

/* Writes to out one recording of the n recordings at paths (same scene: fl_record_scene_key),
 * every solver side by side: the first one's header with every file's solvers in order (a
 * file of one solver named names[k] instead when names is not NULL), and
 * every whole frame of each file, its solver index moved past the solvers of the files before
 * it. Returns FL_OK, FL_ERR_IO, FL_ERR_FORMAT (a file is no recording) or FL_ERR_NOMEM. */
int fl_record_merge(const char *const *paths, const char *const *names, int n, const char *out);

/* 1 when this build holds the viewer's page and three.js (they are embedded at build time from
 * viewer/ and the three package installed by scripts/setup), else 0. */
int fl_viewer_available(void);

/* Writes html_path, a self-contained page (three.js, the viewer and the recording's whole
 * frames as base64) that opens from disk without a server. Written to a temporary name and
 * renamed. Returns FL_OK, FL_ERR_UNSUPPORTED (this build has no viewer: the message says how
 * to get one), FL_ERR_IO or FL_ERR_FORMAT (from fl_record_read_info); info (may be NULL)
 * receives what was read. */
int fl_viewer_write(const char *rec_path, const char *html_path, fl_record_info *info);

/* VTK PolyData of the rigid bodies at their current poses (surface triangles, cell data
 * body_id, point data velocity) at path_bodies, and of the last step's contacts (vertex cells
 * at the contact points, point data normal, impulse (N s, world), phi (m), slip (0/1)) at
 * path_contacts (NULL: not written). Returns FL_OK, FL_ERR_IO, FL_ERR_NOMEM. */
int fl_vtk_write_rigid(fl_world *w, const char *path_bodies, const char *path_contacts);

/* A run's VTK series for ParaView (vtk_series.c): each frame's files in <root>/vtk/<name>/
 * (bodies_<step>.vtp, after a step contacts_<step>.vtp, each deformable body's
 * <body>_<step>.vtu), and at the close one .pvd per series listing its frames and their times
 * (s). root and name are the caller's and must outlive the series. open returns NULL when out
 * of memory (error set); frame and close return FL_OK, FL_ERR_IO or FL_ERR_NOMEM; close frees
 * the series (NULL: nothing) and takes the same world. */
typedef struct fl_vtk_series fl_vtk_series;
fl_vtk_series *fl_vtk_series_open(const char *root, const char *name, const fl_world *w);
int fl_vtk_series_frame(fl_vtk_series *s, fl_world *w, long step);
int fl_vtk_series_close(fl_vtk_series *s, const fl_world *w);

#ifdef __cplusplus
}
#endif
#endif /* FL_RECORD_H */

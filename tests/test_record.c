// SPDX-License-Identifier: Apache-2.0
/* test_record.c: the drawing surfaces of shapes (closed, outward, the right volume), the
 * recording of a run read back (frames, poses and impulses as the world had them, a cut tail,
 * corrupt input named by its byte offset) and the viewer page built from it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/output/fl_record.h"
#include "../sim/fl_geometry.h"
#include "../sim/fl_world.h"
#include "../solvers/fl_solver.h"
#include "fl_test.h"

//---- tessellation ----

/* 0 when every directed edge of the triangles appears once and its reverse once (a closed,
 * consistently oriented surface); *vol receives the enclosed signed volume. */
static int closed_outward(fl_int nv, const double *v, fl_int nt, const fl_int *t, double *vol) {
  *vol = 0;
  for (fl_int k = 0; k < nt; k++) {
    const double *a = v + 3 * t[3 * k], *b = v + 3 * t[3 * k + 1], *c = v + 3 * t[3 * k + 2];
    double bc[3];
    fl_v3_cross(b, c, bc);
    *vol += fl_v3_dot(a, bc) / 6;
    for (int e = 0; e < 3; e++) {
      fl_int i = t[3 * k + e], j = t[3 * k + (e + 1) % 3], same = 0, rev = 0;
      if (i < 0 || i >= nv || j < 0 || j >= nv || i == j) return 1;
      for (fl_int q = 0; q < 3 * nt; q++) {
        fl_int qi = t[q], qj = t[q - q % 3 + (q % 3 + 1) % 3];
        same += qi == i && qj == j;
        rev += qi == j && qj == i;
      }
      if (same != 1 || rev != 1) return 1;
    }
  }
  return 0;
}


FL_TEST(tessellations_are_closed_outward_and_enclose_the_volume) {
  static const double pts[8][3] = {{0, 0, 0}, {1, 0, 0.1}, {0, 1, 0}, {0, 0, 1},
                                   {1, 1, 0.3}, {0.2, 0.9, 1}, {0.8, 0.1, 0.9}, {0.5, 0.5, 1.4}};
  struct { fl_shape s; double lo, hi; } c[5];
  memset(c, 0, sizeof c);
  ASSERT_OK(fl_shape_make_box(0.1, 0.2, 0.3, &c[0].s));
  ASSERT_OK(fl_shape_make_cylinder(0.2, 0.4, 16, &c[1].s));
  ASSERT_OK(fl_shape_make_convex(&pts[0][0], 8, &c[2].s));
  ASSERT_OK(fl_shape_make_sphere(0.3, &c[3].s));
  ASSERT_OK(fl_shape_make_capsule(0.2, 0.5, &c[4].s));
  // polyhedra: their own faces, so the volume to round-off; round shapes: an inscribed grid
  // of 24 x 12, whose volume is a few per cent short
  c[0].lo = c[0].hi = c[2].lo = c[2].hi = 1;
  double R = 0.2, n = 16, pi = 3.14159265358979323846;
  c[1].lo = c[1].hi = 0.5 * n * sin(2 * pi / n) * R * R * 0.8 / fl_shape_volume(&c[1].s);
  c[3].lo = c[4].lo = 0.95;
  c[3].hi = c[4].hi = 1;
  for (int k = 0; k < 5; k++) {
    fl_int nv, nt;
    double *v, vol;
    fl_int *t;
    ASSERT_OK(fl_shape_tessellate(&c[k].s, 0, NULL, &nv, &v, &nt, &t));
    int open = closed_outward(nv, v, nt, t, &vol);
    double ratio = vol / fl_shape_volume(&c[k].s);
    fl_free(v);
    fl_free(t);
    if (open) FL_FAIL_("shape %d: the surface is not closed and consistently oriented", k);
    if (!(ratio >= c[k].lo - 1e-12 && ratio <= c[k].hi + 1e-12))
      FL_FAIL_("shape %d: enclosed volume / volume = %.6f, expected [%g, %g]", k, ratio, c[k].lo, c[k].hi);
    fl_shape_free(&c[k].s);
  }
  // a plane: a square of the given half side about the given centre, facing +z
  fl_shape p;
  ASSERT_OK(fl_shape_make_plane(&p));
  fl_int nv, nt;
  double *v;
  fl_int *t;
  ASSERT(fl_shape_tessellate(&p, 0, NULL, &nv, &v, &nt, &t) == FL_ERR_INVAL);
  double ctr[2] = {2, -1};
  ASSERT_OK(fl_shape_tessellate(&p, 3, ctr, &nv, &v, &nt, &t));
  ASSERT_EQ(nv, 4);
  ASSERT_EQ(nt, 2);
  for (fl_int k = 0; k < nt; k++) {
    const double *a = v + 3 * t[3 * k], *b = v + 3 * t[3 * k + 1], *cc = v + 3 * t[3 * k + 2];
    double ab[3] = {b[0] - a[0], b[1] - a[1], 0}, ac[3] = {cc[0] - a[0], cc[1] - a[1], 0}, nn[3];
    fl_v3_cross(ab, ac, nn);
    ASSERT(nn[2] > 0);
  }
  ASSERT_NEAR(v[0], -1, 1e-15);
  ASSERT_NEAR(v[1], -4, 1e-15);
  ASSERT_NEAR(v[6], 5, 1e-15);
  ASSERT_NEAR(v[7], 2, 1e-15);
  fl_free(v);
  fl_free(t);
  fl_shape_free(&p);
  return 0;
}

//---- the recording ----

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static float getf(const unsigned char *p) {
  uint32_t u = get32(p);
  float f;
  memcpy(&f, &u, 4);
  return f;
}


/* Records `steps` steps of heavy_stack with PGS as solver 0 and as solver 1 into path; the
 * total normal impulse of solver 1's last step into *gn_sum and its contact count into *nc. */
static int record_stack(const char *path, int steps, double *gn_sum, long *nc, double *pos_last) {
  fl_register_all();
  FILE *f = fopen(path, "wb");
  if (!f) return FL_ERR_IO;
  const char *names[2] = {"pgs", "pgs-again"};
  fl_recorder *r = NULL;
  int rc = FL_OK;
  for (int s = 0; rc >= 0 && s < 2; s++) {
    fl_world *w = NULL;
    fl_solver *sv = NULL;
    rc = fl_scene_create("heavy_stack", 0, NULL, &w);
    if (rc >= 0 && s == 0) rc = fl_record_begin(f, w, "heavy_stack", 2, names, 1, steps, &r);
    if (rc >= 0) rc = fl_solver_create("pgs", &sv);
    if (rc >= 0) rc = fl_record_frame(r, s, 0, w, NULL);
    for (int k = 0; rc >= 0 && k < steps; k++) {
      fl_step_info info;
      rc = fl_world_step(w, sv, &info);
      if (rc >= 0) rc = fl_record_frame(r, s, k + 1, w, &info);
    }
    if (rc >= 0 && s == 1) {
      const fl_problem *p = fl_world_problem(w);
      const double *v, *g;
      fl_world_solution(w, &v, &g);
      *gn_sum = 0;
      for (fl_int c = 0; c < p->nc; c++) *gn_sum += g[3 * c];
      *nc = p->nc;
      memcpy(pos_last, w->body[w->nbody - 1].pos, 3 * sizeof(double));
    }
    fl_solver_destroy(sv);
    fl_world_free(w);
  }
  fl_record_free(r);
  fclose(f);
  return rc;
}


FL_TEST(recording_reads_back_what_the_world_had) {
  char path[] = "/tmp/fl-rec-XXXXXX";
  int fd = mkstemp(path);
  ASSERT(fd >= 0);
  close(fd);
  double gn = 0, pos[3];
  long nc = 0;
  ASSERT_OK(record_stack(path, 5, &gn, &nc, pos));
  fl_record_info info;
  ASSERT_OK(fl_record_read_info(path, &info));
  ASSERT_EQ(info.frames, 12);
  ASSERT_EQ(info.frames_of[0], 6);
  ASSERT_EQ(info.frames_of[1], 6);
  ASSERT_EQ(info.nsolver, 2);
  ASSERT_EQ(info.nbody, 6);
  ASSERT_EQ(info.cut, 0);
  ASSERT_EQ(info.bytes_whole, info.bytes_file);
  ASSERT(strcmp(info.scene, "heavy_stack") == 0);
  // the last frame: solver 1, step 5, the last body's position, the contacts' normal impulses
  FILE *f = fopen(path, "rb");
  ASSERT(f);
  static unsigned char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  ASSERT_EQ((long)n, info.bytes_file);
  long off = info.header_bytes, last = -1;
  while (off < (long)n) {
    last = off;
    off += 8 + (long)get32(buf + off + 4);
  }
  const unsigned char *fr = buf + last + 8;
  ASSERT_EQ((int32_t)get32(fr), 1);
  ASSERT_EQ((int32_t)get32(fr + 4), 5);
  ASSERT_EQ((int32_t)get32(fr + 48), nc);
  const unsigned char *pose = fr + 64 + 52 * 5; // version 2: 64 fixed bytes, 52 per body
  for (int c = 0; c < 3; c++) ASSERT_NEAR(getf(pose + 4 * c), pos[c], 1e-6 * (1 + fabs(pos[c])));
  double sum = 0;
  const unsigned char *ct = fr + 64 + 52 * 6;
  for (long c = 0; c < nc; c++) {
    const unsigned char *q = ct + 52 * c;
    double nn[3] = {getf(q + 12), getf(q + 16), getf(q + 20)}, im[3] = {getf(q + 24), getf(q + 28), getf(q + 32)};
    sum += fl_v3_dot(nn, im);
  }
  ASSERT(nc > 0);
  ASSERT_NEAR(sum, gn, 1e-5 * fabs(gn));

  // a cut tail (a killed run): the whole frames before it are read, the rest flagged
  ASSERT_EQ(truncate(path, info.bytes_file - 10), 0);
  ASSERT_OK(fl_record_read_info(path, &info));
  ASSERT_EQ(info.frames, 11);
  ASSERT_EQ(info.cut, 1);
  ASSERT_EQ(info.frames_of[1], 5);
  ASSERT_EQ(truncate(path, info.header_bytes), 0);
  ASSERT_OK(fl_record_read_info(path, &info));
  ASSERT_EQ(info.frames, 0);
  ASSERT_EQ(info.cut, 0);

  // a corrupt frame is an error naming its byte offset; a file that is no recording says so
  f = fopen(path, "wb");
  ASSERT(f);
  fwrite(buf, 1, n, f);
  fclose(f);
  f = fopen(path, "r+b");
  fseek(f, info.header_bytes + 8 + 48, SEEK_SET); // the first frame's body count
  fputc(99, f);
  fclose(f);
  ASSERT(fl_record_read_info(path, &info) == FL_ERR_FORMAT);
  char want[64];
  snprintf(want, sizeof want, "byte %ld (frame 0)", info.header_bytes);
  if (!strstr(fl_errmsg(), want)) FL_FAIL_("message '%s' does not name '%s'", fl_errmsg(), want);
  f = fopen(path, "wb");
  fputs("x,y\n1,2\n", f);
  fclose(f);
  ASSERT(fl_record_read_info(path, &info) == FL_ERR_FORMAT);
  ASSERT(strstr(fl_errmsg(), "magic"));
  remove(path);
  return 0;
}


FL_TEST(viewer_page_embeds_the_whole_frames) {
  if (!fl_viewer_available()) {
    printf("SKIP: this build has no viewer (three.js not installed when it was built)\n");
    return FL_TEST_SKIP_CODE;
  }
  char path[] = "/tmp/fl-rec-XXXXXX";
  int fd = mkstemp(path);
  ASSERT(fd >= 0);
  close(fd);
  double gn, pos[3];
  long nc;
  ASSERT_OK(record_stack(path, 3, &gn, &nc, pos));
  fl_record_info info;
  ASSERT_OK(fl_record_read_info(path, &info));
  ASSERT_EQ(truncate(path, info.bytes_file - 7), 0);
  char html[64];
  snprintf(html, sizeof html, "%s.html", path);
  ASSERT_OK(fl_viewer_write(path, html, &info));
  ASSERT_EQ(info.frames, 7);
  FILE *f = fopen(html, "rb");
  ASSERT(f);
  static char page[4 << 20];
  size_t n = fread(page, 1, sizeof page - 1, f);
  fclose(f);
  page[n] = 0;
  ASSERT(strstr(page, "/*FL:") == NULL);          // every marker replaced
  ASSERT(strstr(page, "three.js") || strstr(page, "Three.js"));
  const char *d = strstr(page, "<script id=\"fl-data\" type=\"application/octet-stream\">");
  ASSERT(d);
  d = strchr(d, '>') + 1;
  const char *e = strstr(d, "</script>");
  ASSERT(e);
  long chars = 0;
  for (const char *q = d; q < e; q++) chars += (*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') ||
                                              (*q >= '0' && *q <= '9') || *q == '+' || *q == '/' || *q == '=';
  ASSERT_EQ(chars, 4 * ((info.bytes_whole + 2) / 3)); // the whole frames, not the cut tail
  ASSERT(strncmp(d + strspn(d, "\n"), "RkxSRUMwMQ", 10) == 0); // "FLREC01" in base64
  remove(path);
  remove(html);
  return 0;
}


/* writes a recording header of the given version with one solver, one body, no vertices */
static void write_header(FILE *f, int version) {
  char h[200];
  int n = snprintf(h, sizeof h, "{\"format\":\"frictionlab-recording\",\"version\":%d,\"scene\":\"s\","
                                "\"solvers\":[\"a\"],\"bodies\":[{}],\"nvert\":0}", version);
  unsigned char l4[4] = {(unsigned char)n, 0, 0, 0};
  fwrite("FLREC01\n", 1, 8, f);
  fwrite(l4, 1, 4, f);
  fwrite(h, 1, (size_t)n, f);
}


FL_TEST(version_1_recordings_still_read) {
  // a version 1 frame: 56 fixed bytes and 28 per body (no energy, no velocities)
  unsigned char fr[8 + 56 + 28];
  memset(fr, 0, sizeof fr);
  uint32_t tag = 0x314d5246u, len = 56 + 28;
  memcpy(fr, &tag, 4); // the test machines are little-endian, like the format
  memcpy(fr + 4, &len, 4);
  fr[8 + 40] = 1; // nbody
  char path[] = "/tmp/fl-rec-XXXXXX";
  int fd = mkstemp(path);
  ASSERT(fd >= 0);
  close(fd);
  for (int version = 1; version <= 2; version++) {
    FILE *f = fopen(path, "wb");
    ASSERT(f);
    write_header(f, version);
    fwrite(fr, 1, sizeof fr, f);
    fwrite(fr, 1, sizeof fr, f);
    fclose(f);
    fl_record_info info;
    int rc = fl_record_read_info(path, &info);
    if (version == 1) {
      ASSERT_OK(rc);
      ASSERT_EQ(info.version, 1);
      ASSERT_EQ(info.frames, 2);
      ASSERT_EQ(info.cut, 0);
    } else { // the same bytes under a version 2 header are too short by 24 per body and 8
      ASSERT(rc == FL_ERR_FORMAT);
      ASSERT(strstr(fl_errmsg(), "length 116"));
    }
  }
  remove(path);
  return 0;
}


FL_TEST(given_contacts_and_merged_recordings_read_back) {
  // a frame with the caller's contacts (a peer's): the bytes are the given numbers
  char a[] = "/tmp/fl-rec-XXXXXX", m[] = "/tmp/fl-rec-XXXXXX";
  int fd = mkstemp(a);
  ASSERT(fd >= 0);
  close(fd);
  fd = mkstemp(m);
  ASSERT(fd >= 0);
  close(fd);
  fl_register_all();
  fl_world *w = NULL;
  ASSERT_OK(fl_scene_create("heavy_stack", 0, NULL, &w));
  FILE *f = fopen(a, "wb");
  ASSERT(f);
  const char *names[1] = {"peer"};
  fl_recorder *r = NULL;
  ASSERT_OK(fl_record_begin(f, w, "heavy_stack", 1, names, 1, 1, &r));
  fl_record_contact c[2] = {{{1, 2, 3}, {0, 0, 1}, {0.5, 0, 7}, -0.25, {0, 1}, 1},
                            {{4, 5, 6}, {0, 1, 0}, {0, 3, 0}, 0.125, {-1, 2}, 0}};
  ASSERT_OK(fl_record_frame_contacts(r, 0, 0, w, NULL, 0, NULL));
  ASSERT_OK(fl_record_frame_contacts(r, 0, 1, w, NULL, 2, c));
  fl_record_free(r);
  fclose(f);
  fl_world_free(w);
  fl_record_info info;
  ASSERT_OK(fl_record_read_info(a, &info));
  ASSERT_EQ(info.frames, 2);
  ASSERT_EQ(info.version, 2);
  static unsigned char buf[1 << 16];
  f = fopen(a, "rb");
  ASSERT(f);
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  long off = info.header_bytes;
  off += 8 + (long)get32(buf + off + 4); // the second frame
  const unsigned char *fr = buf + off + 8;
  ASSERT_EQ((int32_t)get32(fr + 48), 2);
  const unsigned char *ct = fr + 64 + 52 * info.nbody;
  ASSERT_EQ((long)(ct + 2 * 52 - buf), (long)n);
  ASSERT_NEAR(getf(ct + 0), 1, 0);
  ASSERT_NEAR(getf(ct + 32), 7, 0);
  ASSERT_NEAR(getf(ct + 36), -0.25, 0);
  ASSERT_EQ((int32_t)get32(ct + 44), 1);
  ASSERT_EQ(get32(ct + 48), 1u);
  ASSERT_NEAR(getf(ct + 52 + 28), 3, 0);
  ASSERT_EQ((int32_t)get32(ct + 52 + 40), -1);
  ASSERT_EQ(get32(ct + 52 + 48), 0u);

  // two recordings of one scene joined: 2 solvers, each file's frames, renamed
  char *k1 = fl_record_scene_key(a);
  ASSERT(k1);
  const char *paths[2] = {a, a}, *as[2] = {"left", "right"};
  ASSERT_OK(fl_record_merge(paths, as, 2, m));
  ASSERT_OK(fl_record_read_info(m, &info));
  ASSERT_EQ(info.nsolver, 2);
  ASSERT_EQ(info.frames_of[0], 2);
  ASSERT_EQ(info.frames_of[1], 2);
  char *k2 = fl_record_scene_key(m);
  ASSERT(k2 && strcmp(k1, k2) == 0); // the same scene, whatever the solvers
  free(k1);
  free(k2);
  ASSERT(fl_record_scene_key("/nonexistent/x.flrec") == NULL);
  remove(a);
  remove(m);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
/* viewer.c: viewer.html from a recording: the page template of viewer/ with three.js, the
 * viewer's script and the recording (base64) put in place of its three markers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fl_record.h"

/* generated at build time by scripts/embed_viewer.py (CMakeLists.txt) */
extern const int fl_viewer_embedded;
extern const unsigned char fl_viewer_template[], fl_viewer_js[], fl_viewer_three[];
extern const size_t fl_viewer_template_len, fl_viewer_js_len, fl_viewer_three_len;

int fl_viewer_available(void) { return fl_viewer_embedded && fl_viewer_three_len > 0; }


/* Writes n bytes of in as base64, 76 characters per line. */
static void base64(FILE *f, const unsigned char *in, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char line[80];
  int k = 0;
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
                 (i + 2 < n ? in[i + 2] : 0);
    line[k++] = tab[v >> 18 & 63];
    line[k++] = tab[v >> 12 & 63];
    line[k++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
    line[k++] = i + 2 < n ? tab[v & 63] : '=';
    if (k == 76) {
      line[k++] = '\n';
      fwrite(line, 1, (size_t)k, f);
      k = 0;
    }
  }
  if (k) {
    line[k++] = '\n';
    fwrite(line, 1, (size_t)k, f);
  }
}


int fl_viewer_write(const char *rec_path, const char *html_path, fl_record_info *info) {
  fl_record_info own;
  if (!info) info = &own;
  // the recording first: a bad one says so whether or not this build has a viewer
  FL_TRY(fl_record_read_info(rec_path, info));
  if (!fl_viewer_available())
    return fl_seterr(FL_ERR_UNSUPPORTED, "this build has no viewer: three.js was not found when "
                                         "it was built (scripts/setup installs it into "
                                         "viewer/node_modules with npm; then rebuild)");
  // (a malformed frame is an error; a cut tail is not: its whole frames are shown)
  // the recording is held whole, then base64 (4/3) into the page: sized before it is read
  FL_TRY(fl_mem_check(rec_path, "the recording embedded in viewer.html",
                      (double)info->bytes_whole * (1 + 4.0 / 3)));
  FILE *in = fopen(rec_path, "rb");
  unsigned char *data = in ? fl_malloc((size_t)info->bytes_whole + 1) : NULL;
  if (!in || !data || fread(data, 1, (size_t)info->bytes_whole, in) != (size_t)info->bytes_whole) {
    if (in) fclose(in);
    fl_free(data);
    return fl_seterr(FL_ERR_IO, "%s: cannot read", rec_path);
  }
  fclose(in);
  fl_outfile o;
  if (fl_outfile_open(&o, html_path, "viewer page") < 0) {
    fl_free(data);
    return fl_errcode();
  }
  FILE *f = o.f;
  static const char *const marker[3] = {"/*FL:THREE*/", "/*FL:DATA*/", "/*FL:VIEWER*/"};
  const char *t = (const char *)fl_viewer_template, *end = t + fl_viewer_template_len;
  int rc = FL_OK;
  for (int m = 0; m < 3; m++) {
    const char *at = strstr(t, marker[m]);
    if (!at || at > end) {
      rc = fl_seterr(FL_ERR_FORMAT, "viewer template: marker %s missing (viewer/viewer.html)",
                     marker[m]);
      break;
    }
    fwrite(t, 1, (size_t)(at - t), f);
    if (m == 0) fwrite(fl_viewer_three, 1, fl_viewer_three_len, f);
    if (m == 1) base64(f, data, (size_t)info->bytes_whole);
    if (m == 2) fwrite(fl_viewer_js, 1, fl_viewer_js_len, f);
    t = at + strlen(marker[m]);
  }
  if (rc >= 0) fwrite(t, 1, (size_t)(end - t), f);
  fl_free(data);
  if (rc < 0) fl_outfile_abort(&o);
  else rc = fl_outfile_commit(&o);
  return rc;
}

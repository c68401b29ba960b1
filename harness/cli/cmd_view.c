// SPDX-License-Identifier: Apache-2.0
/* cmd_view.c: `frictionlab view RESULTS_DIR [--print] [--rebuild]`: the viewer of a run.
 *
 * `run` writes viewer.html beside its recording; `view` rebuilds it when it is missing or older
 * than the recording (a run that was killed leaves a recording and no viewer; its whole frames
 * are shown), then opens it in a browser when one can be started, else prints its path.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fl_harness.h"
#include "fl_args.h"
#include "../output/fl_record.h"

typedef struct view_cli {
  fl_arg_multi pos;
  int print, rebuild;
} view_cli;

static const fl_arg_desc view_flags[] = {
  {"--print", FL_ARG_FLAG, offsetof(view_cli, print), 0, 0, NULL, NULL,
   "print the page's path instead of opening it"},
  {"--rebuild", FL_ARG_FLAG, offsetof(view_cli, rebuild), 0, 0, NULL, NULL,
   "rebuild viewer.html from recording.flrec"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};

static const fl_cmd_spec view_spec = {
  "view", "RESULTS_DIR", 1, offsetof(view_cli, pos),
  "Opens the viewer of a `frictionlab run` results folder: viewer.html, which plays the\n"
  "recorded run of every solver side by side (docs/recording.md). It is rebuilt from\n"
  "recording.flrec when missing or older than the recording (or with --rebuild), so the\n"
  "folder of a run that was killed (.NAME.staging-HOST-PID) opens too, with the steps it holds.\n"
  "The page is opened with $BROWSER or xdg-open when a display is there; otherwise (or\n"
  "with --print) its path is printed, to open in any browser: it needs no server.\n",
  NULL, view_flags};


int fl_cmd_view(int argc, char **argv) {
  view_cli c;
  memset(&c, 0, sizeof c);
  int prc = fl_args_parse(&view_spec, argc, argv, &c);
  if (prc) return prc == 1 ? 0 : 2;
  const char *dir = c.pos.n ? c.pos.v[0] : NULL;
  int print = c.print, rebuild = c.rebuild;
  if (!dir) {
    fprintf(stderr, "frictionlab view: no results folder given (expected the --out folder of "
                    "`frictionlab run`)\n");
    return 2;
  }
  char rp[1200], vp[1200];
  snprintf(rp, sizeof rp, "%s/%s", dir, FL_RECORD_FILE);
  snprintf(vp, sizeof vp, "%s/%s", dir, FL_VIEWER_FILE);
  struct stat sd, sr, sv;
  if (stat(dir, &sd) != 0 || !S_ISDIR(sd.st_mode)) {
    fprintf(stderr, "frictionlab view: %s: no such folder\n", dir);
    return 1;
  }
  if (stat(rp, &sr) != 0) {
    fprintf(stderr, "frictionlab view: %s: no recording (%s) in this folder. Recordings are made "
                    "by `frictionlab run SCENE --out %s` (on by default; `--record K` keeps every "
                    "K-th step, `--record 0` turns it off); `solve`, `profile` and `bench` "
                    "folders have none.\n", dir, FL_RECORD_FILE, dir);
    return 1;
  }
  fl_record_info info;
  int have = stat(vp, &sv) == 0 && sv.st_mtime >= sr.st_mtime;
  if (!have || rebuild) {
    if (fl_viewer_write(rp, vp, &info) < 0) {
      fprintf(stderr, "frictionlab view: %s\n", fl_errmsg());
      return 1;
    }
  } else if (fl_record_read_info(rp, &info) < 0) {
    fprintf(stderr, "frictionlab view: %s\n", fl_errmsg());
    return 1;
  }
  printf("%s: scene %s, %d solvers, %d bodies, %ld frames", dir, info.scene, info.nsolver,
         info.nbody, info.frames);
  if (info.cut)
    printf(" (recording cut short: %ld bytes after the last whole frame are ignored)",
           info.bytes_file - info.bytes_whole);
  printf("\n");
  const char *browser = getenv("BROWSER");
  int display = getenv("DISPLAY") || getenv("WAYLAND_DISPLAY");
  if (!print && (browser || display)) {
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "%s '%s' >/dev/null 2>&1 &", browser ? browser : "xdg-open", vp);
    if (!strchr(vp, '\'') && system(cmd) == 0) {
      printf("opened %s\n", vp);
      return 0;
    }
  }
  printf("%s\n", vp);
  return 0;
}

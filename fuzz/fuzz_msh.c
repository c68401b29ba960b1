// SPDX-License-Identifier: Apache-2.0
/* fuzz_msh.c: Gmsh 4.1 .msh files through fl_mesh_read. */
#include "../sim/fl_mesh.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[512];
  fz_write("in.msh", data, size, path, sizeof path);
  fl_mesh *m = NULL;
  int rc = fl_mesh_read(path, &m);
  fz_expect_message(rc);
  if (rc >= 0 && (!m || m->ntet < 1 || m->ntri < 4)) abort();
  fl_mesh_free(m);
  return 0;
}

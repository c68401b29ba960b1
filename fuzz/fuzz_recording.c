// SPDX-License-Identifier: Apache-2.0
/* fuzz_recording.c: recordings (recording.flrec) as `view` reads them back. */
#include "../harness/output/fl_record.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[512];
  fz_write("recording.flrec", data, size, path, sizeof path);
  fl_record_info info;
  int rc = fl_record_read_info(path, &info);
  fz_expect_message(rc);
  if (rc >= 0 && (info.frames < 0 || info.bytes_whole > info.bytes_file)) abort();
  return 0;
}

/* What the executor tests of the batch solver (src/cuda/pipeline.cuh: test_pipeline,
 * test_short_rows, test_wide_rows) share: their options and the CPU hull engine as reference. */
#ifndef GPUISO_CTEST_BATCH_H
#define GPUISO_CTEST_BATCH_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"
#include "host_fit.cuh"

extern "C" {
#include "compare.h"
#include "families.h"
}

#include "check.h"
#include "sim_test.h"

/* The offsets o (R + 1 entries) of rows of lens[r] elements one after another; returns o[R]. */
static int64_t offsets_of(const int64_t *lens, int R, int64_t *o) {
  o[0] = 0;
  for (int r = 0; r < R; r++) o[r + 1] = o[r] + lens[r];
  return o[R];
}

static gpuiso_opts options(int increasing, int64_t chunk, int64_t cap) {
  gpuiso_opts o = test_options(increasing, 1);
  o.hull_chunk = chunk;
  o.hull_walk_cap = cap;
  return o;
}

/* The CPU hull engine row by row, with the same chunks. */
static void reference(int64_t nrows, const int64_t *off, const double *y, const double *w,
                      const gpuiso_opts *o, double *ref) {
  for (int64_t r = 0; r < nrows; r++) {
    gpuiso_error e;
    int64_t o0 = off[r];
    gpuiso_hull(off[r + 1] - o0, y + o0, w ? w + o0 : NULL, o, ref + o0, NULL, NULL, &e);
  }
}

#endif

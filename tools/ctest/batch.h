/* What the executor tests of the batch solver (src/cuda/pipeline.cuh: test_pipeline,
 * test_short_rows, test_wide_rows) share: their options, the CPU hull engine as reference, the
 * kernels' names, and the run of their tests under the executor's schedule seeds. */
#ifndef GPUISO_CTEST_BATCH_H
#define GPUISO_CTEST_BATCH_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"
#include "pipeline.cuh"

extern "C" {
#include "compare.h"
#include "families.h"
}

#include "check.h"
#include "options.h"

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

static const char *const kernel_names[] = {"simple", "row PAV", "fast"};

/* Runs the tests under each schedule seed (sim_seeds) and prints the counts. */
static int run_under_seeds(void (*const *tests)(void), int ntests) {
  uint64_t seeds[3];
  for (int k = 0, n = sim_seeds(seeds); k < n; k++) {
    sim_seed = seeds[k];
    for (int t = 0; t < ntests; t++) tests[t]();
  }
  printf("ctest: %d passed, %d failed (the CUDA engine on the CPU)\n", passed, failed);
  return failed != 0;
}

#endif

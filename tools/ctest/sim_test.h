/* What the test programs of the CUDA code on the SIMT executor share: the solver options they
 * start from (zero but the direction, no bounds and the threads; each program sets the chunks,
 * kernels and flags its cases need), the kernels' names, and the run of their tests under the
 * executor's schedule seeds. */
#ifndef GPUISO_CTEST_SIM_TEST_H
#define GPUISO_CTEST_SIM_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpuiso.h"
#include "sim_exec.h"
#include "check.h"

static inline gpuiso_opts test_options(int increasing, int nthreads) {
  gpuiso_opts o;
  memset(&o, 0, sizeof o);
  o.increasing = increasing;
  o.lo = -INFINITY;
  o.hi = INFINITY;
  o.nthreads = nthreads;
  return o;
}

/* The SIMT executor counting the slices of staged transfers (src/cuda/staging.cuh) copied in and
 * out: that a path's host arrays went in pinned slices, and in many; and whether parts on the
 * two lanes overlapped. */
struct sim_sliced : sim_exec {
  int64_t slices_in, slices_out, overlaps; /* overlaps: copies in queued while another lane has work */
  gpuiso_status put_async(void *d, const void *pinned, size_t bytes, lane l) {
    slices_in++;
    for (const sim_lane *o : lanes)
      if (o != l && !o->queue.empty()) {
        overlaps++;
        break;
      }
    return sim_exec::put_async(d, pinned, bytes, l);
  }
  gpuiso_status get_async(void *pinned, const void *d, size_t bytes, lane l) {
    slices_out++;
    return sim_exec::get_async(pinned, d, bytes, l);
  }
};

/* By gpuiso_gpu_kernel. */
static const char *const kernel_names[] = {"simple", "row PAV", "fast"};

/* Runs the tests under each schedule seed (sim_seeds) and prints the counts, `what` ran. */
static inline int run_under_seeds(void (*const *tests)(void), int ntests, const char *what) {
  uint64_t seeds[3];
  for (int k = 0, n = sim_seeds(seeds); k < n; k++) {
    sim_seed = seeds[k];
    for (int t = 0; t < ntests; t++) tests[t]();
  }
  printf("ctest: %d passed, %d failed (%s)\n", passed, failed, what);
  return failed != 0;
}

#endif

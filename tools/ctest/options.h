/* The solver options the CUDA test programs start from: zero but the direction, no bounds and the
 * threads; each program sets the chunks, kernels and flags its cases need. */
#ifndef GPUISO_CTEST_OPTIONS_H
#define GPUISO_CTEST_OPTIONS_H

#include <math.h>
#include <string.h>

#include "gpuiso.h"

static inline gpuiso_opts test_options(int increasing, int nthreads) {
  gpuiso_opts o;
  memset(&o, 0, sizeof o);
  o.increasing = increasing;
  o.lo = -INFINITY;
  o.hi = INFINITY;
  o.nthreads = nthreads;
  return o;
}

#endif

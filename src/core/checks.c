/* The value checks of the R layer (finite values, non-negative weights) as one pass in parallel
 * slices: R's which(!is.finite(v)) allocates and fills two vectors of the data's length. */
#include <string.h>

#include "internal.h"

int64_t gpuiso_first_bad(int64_t n, const double *v, int nonnegative) {
  gpuiso_opts opt;
  memset(&opt, 0, sizeof opt);
  int nth = resolve_threads(&opt, n);
  if (nth > GPUISO_MAX_CHUNKS) nth = GPUISO_MAX_CHUNKS;
  int64_t first[GPUISO_MAX_CHUNKS];
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth)
#endif
  for (int t = 0; t < nth; t++) {
    int64_t i = n * t / nth, to = n * (t + 1) / nth;
    if (nonnegative) {
      while (i < to && v[i] >= 0 && v[i] < INFINITY) i++;
    } else {
      while (i < to && isfinite(v[i])) i++;
    }
    first[t] = i < to ? i : n;
  }
  int64_t bad = n;
  for (int t = 0; t < nth && bad == n; t++) bad = first[t];
  return bad;
}

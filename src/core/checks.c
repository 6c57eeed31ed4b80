/* The value checks of the R layer (finite values, non-negative weights) as one pass in parallel
 * slices: R's which(!is.finite(v)) allocates and fills two vectors of the data's length. */
#include "internal.h"

static int64_t first_not_finite(const void *ctx, int64_t i, int64_t to) {
  const double *v = ctx;
  while (i < to && isfinite(v[i])) i++;
  return i;
}

static int64_t first_not_weight(const void *ctx, int64_t i, int64_t to) {
  const double *v = ctx;
  while (i < to && v[i] >= 0 && v[i] < INFINITY) i++;
  return i;
}

int64_t gpuiso_first_bad(int64_t n, const double *v, int nonnegative) {
  return first_stop_in_slices(n, nonnegative ? first_not_weight : first_not_finite, v);
}

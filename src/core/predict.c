/* Predictions of step functions and their linear interpolation at new values.
 *
 * A fitted monotone function is constant on each block, so the first and last x of the blocks
 * say everything about it: a new value is found by binary search over the block starts (a few
 * hundred, where the knots may be millions), in cache, on all threads, with no sort of the new
 * values. The arithmetic is that of R's findInterval and interpolation over the knots, so the
 * values are the same bit for bit.
 */
#include <math.h>

#include "internal.h"
#include "predict_curve.h"

/* Interpolations between the knots of one block share its level; knots whose level is not
 * finite are blocks of their own (R's interpolation between two of them is not their level). */
static int same_block(double level_before, double level) {
  return level == level_before && isfinite(level);
}

int64_t gpuiso_knot_blocks(int64_t nk, const double *x, const double *level, double *lower,
                           double *upper, double *block_level) {
  int64_t nb = 0;
  for (int64_t i = 0; i < nk; i++) {
    if (isnan(x[i]) || (i > 0 && !(x[i - 1] <= x[i]))) return -1;
    if (i > 0 && same_block(level[i - 1], level[i])) {
      if (upper) upper[nb - 1] = x[i];
      continue;
    }
    if (lower) {
      lower[nb] = x[i];
      upper[nb] = x[i];
      block_level[nb] = level[i];
    }
    nb++;
  }
  return nb;
}

gpuiso_status gpuiso_predict(const gpuiso_curves *cv, int64_t n, const double *v,
                             const int *curve, int linear, int outside_missing, double missing,
                             const gpuiso_opts *opt, double *out, int64_t *beyond,
                             gpuiso_error *err) {
  int nth = resolve_threads(opt, n);
  int64_t outside = 0;
  for (int64_t r0 = 0; r0 < n; r0 += GPUISO_POLL_EVERY) {
    int64_t r1 = n - r0 < GPUISO_POLL_EVERY ? n : r0 + GPUISO_POLL_EVERY;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static) reduction(+ : outside)
#endif
    for (int64_t i = r0; i < r1; i++) {
      int beyond_i;
      out[i] = predict_at(cv, v, curve, i, linear, outside_missing, missing, &beyond_i);
      outside += beyond_i;
    }
    if (r1 < n && poll_interrupt(opt)) {
      set_error(err, GPUISO_E_INTERRUPT, -1, -1);
      return GPUISO_E_INTERRUPT;
    }
  }
  if (beyond) *beyond = outside;
  set_error(err, GPUISO_OK, -1, -1);
  return GPUISO_OK;
}

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

/* How many of the m sorted values a are at or below v (v not NaN): a binary search whose steps
 * are conditional moves, with no branch to mispredict. */
static inline int64_t count_at_or_below(const double *a, int64_t m, double v) {
  if (m == 0) return 0;
  const double *base = a;
  while (m > 1) {
    int64_t half = m / 2;
    base = base[half] <= v ? base + half : base;
    m -= half;
  }
  return (base - a) + (*base <= v);
}

/* The fraction of the way from x0 to x1 at which v lies; halved first where the width overflows
 * (as R's interp_fraction). */
static inline double fraction(double v, double x0, double x1) {
  double width = x1 - x0;
  if (isinf(width)) return (v / 2 - x0 / 2) / (x1 / 2 - x0 / 2);
  return (v - x0) / width;
}

/* The value of the curve of blocks [0, m) at v, which is not NaN. */
static inline double curve_value(const double *lower, const double *upper, const double *level,
                                 int64_t m, double v, int linear) {
  int64_t j = count_at_or_below(lower, m, v);
  if (j == 0) return level[0];
  int64_t b = j - 1;
  if (!linear || v >= upper[m - 1]) return level[b];
  /* Between two knots of block b: its level plus the fraction times a difference of 0. */
  if (v < upper[b]) return level[b] + 0.0;
  /* The product is rounded on its own, as R rounds it, never fused into a multiply-add. */
  volatile double step = fraction(v, upper[b], lower[b + 1]) * (level[b + 1] - level[b]);
  return level[b] + step;
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
      int c = curve ? curve[i] : 0;
      int64_t b0 = cv->first[c], m = cv->first[c + 1] - b0;
      double vi = v[i];
      if (isnan(vi) || m == 0) {
        out[i] = missing;
        continue;
      }
      const double *lower = cv->lower + b0, *upper = cv->upper + b0;
      int beyond_i = vi < lower[0] || vi > upper[m - 1];
      outside += beyond_i;
      out[i] = beyond_i && outside_missing
                   ? missing
                   : curve_value(lower, upper, cv->level + b0, m, vi, linear);
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

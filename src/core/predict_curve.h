/* The value of a curve of blocks at one new value: the element-level code of predictions, shared
 * by the CPU loop (predict.c) and the device kernel (src/cuda/predict.cuh), so that both give the
 * same doubles. The arithmetic is that of R's findInterval and interpolation over the knots.
 */
#ifndef GPUISO_PREDICT_CURVE_H
#define GPUISO_PREDICT_CURVE_H

#include <math.h>
#include <stdint.h>

#include "gpuiso.h"
#include "hull/geometry.h" /* GPUISO_HD */

/* How many of the m sorted values a are at or below v (v not NaN): a binary search whose steps
 * are conditional moves, with no branch to mispredict (or to diverge in a warp). */
static inline GPUISO_HD int64_t count_at_or_below(const double *a, int64_t m, double v) {
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
static inline GPUISO_HD double fraction(double v, double x0, double x1) {
  double width = x1 - x0;
  if (isinf(width)) return (v / 2 - x0 / 2) / (x1 / 2 - x0 / 2);
  return (v - x0) / width;
}

/* a * b rounded on its own, as R rounds it, never fused into a following add. */
static inline GPUISO_HD double rounded_product(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  volatile double p = a * b;
  return p;
#endif
}

/* The value of the curve of blocks [0, m) at v, which is not NaN. */
static inline GPUISO_HD double curve_value(const double *lower, const double *upper,
                                           const double *level, int64_t m, double v, int linear) {
  int64_t j = count_at_or_below(lower, m, v);
  if (j == 0) return level[0];
  int64_t b = j - 1;
  if (!linear || v >= upper[m - 1]) return level[b];
  /* Between two knots of block b: its level plus the fraction times a difference of 0. */
  if (v < upper[b]) return level[b] + 0.0;
  return level[b] + rounded_product(fraction(v, upper[b], lower[b + 1]), level[b + 1] - level[b]);
}

/* Prediction i of gpuiso_predict (curve: NULL for curve 0 throughout): its value, and in *beyond
 * whether v[i] lies outside its curve (0 for NaN and for an empty curve). */
static inline GPUISO_HD double predict_at(const gpuiso_curves *cv, const double *v, const int *curve,
                                          int64_t i, int linear, int outside_missing,
                                          double missing, int *beyond) {
  int c = curve ? curve[i] : 0;
  int64_t b0 = cv->first[c], m = cv->first[c + 1] - b0;
  double vi = v[i];
  *beyond = 0;
  if (isnan(vi) || m == 0) return missing;
  const double *lower = cv->lower + b0, *upper = cv->upper + b0;
  *beyond = vi < lower[0] || vi > upper[m - 1];
  return *beyond && outside_missing ? missing
                                    : curve_value(lower, upper, cv->level + b0, m, vi, linear);
}

#endif

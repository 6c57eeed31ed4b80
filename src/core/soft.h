/* The element formulas of the soft rank and soft sort (gpuiso_soft), shared by the CPU path
 * (soft.c) and the device's (src/cuda/soft.cuh). A row of n values is sorted decreasingly by its
 * key, soft_key; position k (0..n-1) of that order holds s_k, the row's element p_k. The
 * isotonic step fits v, non-increasing, to soft_target. Position k's value goes to
 * out[soft_slot] and its upstream gradient comes from g[soft_slot]; with a = the block means of
 * those gradients, element p_k's derivative is soft_grad.
 */
#ifndef GPUISO_SOFT_H
#define GPUISO_SOFT_H

#include "gpuiso.h"
#include "hull/geometry.h" /* GPUISO_HD */

/* rank: theta = x / epsilon, negated for ranks counted from the largest (the projection of -x
 * is n + 1 minus that of x); sort: x itself. */
static inline GPUISO_HD double soft_key(gpuiso_soft_kind kind, double x, double epsilon,
                                        int decreasing) {
  if (kind == GPUISO_SOFT_SORT) return x;
  return (decreasing ? -x : x) / epsilon;
}

/* rank: s_k - (n - k); sort: (n - k) / epsilon - s_k. */
static inline GPUISO_HD double soft_target(gpuiso_soft_kind kind, double s, int64_t k, int64_t n,
                                           double epsilon) {
  double r = (double)(n - k);
  return kind == GPUISO_SOFT_RANK ? s - r : r / epsilon - s;
}

/* rank: s_k - v_k; sort: (n - k) / epsilon - v_k. */
static inline GPUISO_HD double soft_value(gpuiso_soft_kind kind, double s, double v, int64_t k,
                                          int64_t n, double epsilon) {
  return kind == GPUISO_SOFT_RANK ? s - v : (double)(n - k) / epsilon - v;
}

/* rank: the element p_k; sort: position k from the end (increasing), or k (decreasing). */
static inline GPUISO_HD int64_t soft_slot(gpuiso_soft_kind kind, int64_t p, int64_t k, int64_t n,
                                          int decreasing) {
  if (kind == GPUISO_SOFT_RANK) return p;
  return decreasing ? k : n - 1 - k;
}

/* rank: d(s - v)/dtheta = I - A, times dtheta/dx; sort: d(r - v)/ds = A. */
static inline GPUISO_HD double soft_grad(gpuiso_soft_kind kind, double gs, double a,
                                         double epsilon, int decreasing) {
  if (kind == GPUISO_SOFT_SORT) return a;
  return (decreasing ? a - gs : gs - a) / epsilon;
}

/* ---- Host only: the sort order of the forward pass, reused by the backward pass ---- */

/* gpuiso_soft, with order (NULL: none) an nrow x ncol column-major matrix of 1-based indices:
 * each row's elements in the order of the sort (keys soft_key, decreasing, ties by index). With
 * g NULL the CPU path writes it; with g it reads it instead of sorting again, and sets
 * *order_wrong to the first row (0-based) for which it is not that order, or -1 (those rows'
 * results are not written). The device path (opt->engine GPUISO_GPU) sorts and leaves order
 * alone. */
gpuiso_status soft_with_order(gpuiso_soft_kind kind, int64_t nrow, int64_t ncol, const double *x,
                              const double *g, double epsilon, int decreasing,
                              const gpuiso_opts *opt, int32_t *order, double *out,
                              int64_t *order_wrong, gpuiso_error *err);

#endif

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

/* The targets s_k - (n - k) (rank) and (n - k) / epsilon - s_k (sort), less a constant for the
 * segment from position a on that k lies in, which moves the segment's fit by the same and
 * leaves the values: rank d - (n - k), with d = s_k - s_a, sort (a - k) / epsilon - d, with d =
 * s_k. So a segment keeps the digits of (n - k) where the keys are far larger (rank), and of s_k
 * where n / epsilon is (sort); soft.c cuts a row into segments that no block of the fit spans
 * (the device fits a row as one, a = 0 and s_a = 0). */
static inline GPUISO_HD double soft_target(gpuiso_soft_kind kind, double d, int64_t k, int64_t a,
                                           int64_t n, double epsilon) {
  return kind == GPUISO_SOFT_RANK ? d - (double)(n - k) : (double)(a - k) / epsilon - d;
}

/* From the fit v_k of those targets: rank d - v_k; sort (a - k) / epsilon - v_k. */
static inline GPUISO_HD double soft_value(gpuiso_soft_kind kind, double d, double v, int64_t k,
                                          int64_t a, double epsilon) {
  return kind == GPUISO_SOFT_RANK ? d - v : (double)(a - k) / epsilon - v;
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

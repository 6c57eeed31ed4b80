/* A fit of y on x in any order on the device (gpuiso_cuda_fit_xy), written over an executor
 * (host_fit.cuh, with the sort and lanes of sort_exec.cuh) so that the C tests run it on the CPU
 * (tools/ctest/test_sort_gpu.cpp). The input is checked on the host first (gpu_check_xy), so the
 * device sees only finite x and valid y and w. Then:
 *   1. x goes up in pinned slices straight into the key buffer, each slice turned into its
 *      order-preserving keys (-0 as 0) by a kernel on its lane while the next slice is copied;
 *      y and w follow;
 *   2. a radix sort of the keys with the input indices orders the elements by x, stably, as the
 *      CPU's sort does; y and w are gathered into that order;
 *   3. a knot starts where the key changes; each knot's w * y and w are summed (run_sums, in
 *      the CPU's order within a tile) and its mean taken as the CPU's knot_mean does, bringing
 *      tiny weights up by a power of two first; a knot whose sums overflow is an error, found at
 *      the element the CPU names by replaying that knot's sums on the host;
 *   4. the knots are one row of the CUDA solver, in opt->gpu_precision (float32 copies of the
 *      knots' means and weights in single precision, as gpu_fit_rows makes them);
 *   5. a thread per sorted element writes its knot's level at its input index, and the fit, the
 *      knots and (on request) the order and block flags come back in pinned slices.
 * Device memory: about 48 bytes per element at the sort (keys and indices twice, y and w), plus
 * the radix sort's scratch; buffers are released as soon as their stage is over. Where that does
 * not fit the memory free (xy_device_bytes), steps 1 to 3 and 5 run on the host instead (the CPU
 * engine's radix sort and pooling) and only the knots' row goes through the device, in slices
 * or segments as any row (fit_rows_host): a fit is never refused for its size.
 */
#ifndef GPUISO_CUDA_FIT_XY_CUH
#define GPUISO_CUDA_FIT_XY_CUH

#include <math.h>

#include "host_fit.cuh"
#include "runs.cuh"
#include "staging.cuh"

struct xy_view {
  uint64_t *key, *key_sorted;    /* n: x's bits, turned into their keys in place; sorted */
  int64_t *index, *by_x;         /* n: 0..n-1; the input index of each element in x order */
  double *y, *w;                 /* n: input order (w NULL: 1) */
  double *sy, *sw;               /* n: in x order */
  int64_t *knot_at, *knot_first; /* the knots (find_runs) */
  double *ksum;                  /* the knots' sums of w * y and w, interleaved */
  double *kx, *ky, *kw, *klevel; /* the knots: x, mean y, weight, fitted level */
  float *fy, *fw, *ffit;         /* single precision: the knots' float32 means, weights and fit */
  uint8_t *kstart;               /* 1 where a block starts */
  unsigned long long *overflow;  /* the first knot whose sums overflow, or NO_FAILED_ROW */
  double *fit;                   /* n: input order */
  uint8_t *estart;               /* n, in x order: the first element of a knot that starts a block */
};

/* Elements from..from + count - 1: x's bits into their key, and the element's index. */
struct xy_key_step {
  uint64_t *key;
  int64_t *index;
  int64_t from;
  SIMT_DEVICE void operator()(int64_t k) const {
    int64_t i = from + k;
    double x;
    memcpy(&x, &key[i], sizeof x);
    key[i] = double_key(x);
    index[i] = i;
  }
};

/* The keys of a slice of x as soon as it is on the device (stage_put). */
struct xy_key_slices {
  uint64_t *key;
  int64_t *index;
  template <class Exec>
  gpuiso_status operator()(Exec &ex, size_t offset, size_t bytes) const {
    return each(ex, xy_key_step{key, index, (int64_t)(offset / sizeof(double))}, (int64_t)(bytes / sizeof(double)));
  }
};

struct xy_gather_step {
  xy_view v;
  SIMT_DEVICE void operator()(int64_t p) const {
    int64_t i = v.by_x[p];
    v.sy[p] = v.y[i];
    if (v.sw) v.sw[p] = v.w[i];
  }
};

struct tie_starts {
  const uint64_t *key;
  SIMT_DEVICE int operator()(int64_t p) const { return p == 0 || key[p] != key[p - 1]; }
};

/* Per knot: its x, weight and weighted mean of y (0 for zero weight). Weights whose sum is below
 * 2^-900 are scaled up by a power of two and summed again, the knot walked by one thread (as the
 * CPU's knot_mean), so that the products w * y keep their digits. */
struct xy_knot_step {
  xy_view v;
  SIMT_DEVICE void operator()(int64_t d) const {
    double sum = v.ksum[2 * d], weight = v.ksum[2 * d + 1];
    int64_t from = v.knot_first[d], to = v.knot_first[d + 1];
    v.kx[d] = key_double(v.key_sorted[from]);
    v.kw[d] = weight;
    if (!isfinite(sum) || !isfinite(weight)) simt::atomic_min(v.overflow, (unsigned long long)d);
    double mean = 0;
    if (weight >= 0x1p-900) {
      mean = sum / weight;
    } else if (weight > 0) {
      int shift = -ilogb(weight);
      double a = 0, b = 0;
      for (int64_t p = from; p < to; p++) {
        double wi = ldexp(v.sw[p], shift);
        a += wi;
        b += wi * v.sy[p];
      }
      mean = b / a;
    }
    v.ky[d] = mean;
  }
};

struct xy_narrow_step {
  xy_view v;
  SIMT_DEVICE void operator()(int64_t d) const {
    v.fy[d] = (float)v.ky[d];
    v.fw[d] = (float)v.kw[d];
  }
};

struct xy_widen_step {
  xy_view v;
  SIMT_DEVICE void operator()(int64_t d) const { v.klevel[d] = v.ffit[d]; }
};

/* Per element in x order: its knot's level at its input index, and its block flag. */
struct xy_scatter_step {
  xy_view v;
  SIMT_DEVICE void operator()(int64_t p) const {
    int64_t d = v.knot_at[p + 1] - 1;
    v.fit[v.by_x[p]] = v.klevel[d];
    if (v.estart) v.estart[p] = (uint8_t)(v.knot_first[d] == p && v.kstart[d]);
  }
};

template <class Exec>
static void xy_release(Exec &ex, xy_view *v) {
  drop(ex, &v->key), drop(ex, &v->key_sorted), drop(ex, &v->index), drop(ex, &v->by_x);
  drop(ex, &v->y), drop(ex, &v->w), drop(ex, &v->sy), drop(ex, &v->sw);
  drop(ex, &v->knot_at), drop(ex, &v->knot_first), drop(ex, &v->ksum);
  drop(ex, &v->kx), drop(ex, &v->ky), drop(ex, &v->kw), drop(ex, &v->klevel);
  drop(ex, &v->fy), drop(ex, &v->fw), drop(ex, &v->ffit), drop(ex, &v->kstart);
  drop(ex, &v->overflow), drop(ex, &v->fit), drop(ex, &v->estart);
}

/* The overflow of knot d: its sums replayed on the host in the CPU's order, which names the
 * element where they first overflow (the knot's first element if the tiles' order overflowed
 * where the CPU's does not). */
template <class Exec>
static gpuiso_status xy_overflow(Exec &ex, const xy_view &v, int64_t d, gpuiso_error *err) {
  int64_t range[2];
  gpuiso_status s = ex.get(range, v.knot_first + d, sizeof range);
  int64_t len = range[1] - range[0];
  double *yw = s == GPUISO_OK ? (double *)malloc((size_t)len * 2 * sizeof(double)) : NULL;
  int64_t *at = yw ? (int64_t *)malloc((size_t)len * sizeof(int64_t)) : NULL;
  if (s == GPUISO_OK && !at) s = GPUISO_E_NOMEM, set_error(err, s, -1, -1);
  if (s == GPUISO_OK) s = ex.get(yw, v.sy + range[0], (size_t)len * sizeof(double));
  if (s == GPUISO_OK && v.sw) s = ex.get(yw + len, v.sw + range[0], (size_t)len * sizeof(double));
  for (int64_t p = 0; s == GPUISO_OK && !v.sw && p < len; p++) yw[len + p] = 1.0;
  if (s == GPUISO_OK) s = ex.get(at, v.by_x + range[0], (size_t)len * sizeof(int64_t));
  if (s == GPUISO_OK) {
    int64_t bad = 0;
    double sw = 0, swy = 0;
    for (int64_t p = 0; p < len; p++) {
      sw += yw[len + p];
      swy += yw[len + p] * yw[p];
      if (!isfinite(swy) || !isfinite(sw)) {
        bad = p;
        break;
      }
    }
    s = GPUISO_E_OVERFLOW;
    set_error(err, s, at[bad], -1);
  }
  free(yw);
  free(at);
  return s;
}

/* The knots' row through the solver, in the plan's precision: v.klevel and v.kstart. */
template <class Exec>
static gpuiso_status xy_fit_knots(Exec &ex, xy_view &v, int64_t nknots, const gpuiso_opts *opt,
                                  gpuiso_error *err) {
  int64_t offsets[2] = {0, nknots};
  gpuiso_opts capped = plan_options(opt, 1, offsets);
  gpuiso_precision type = opt->gpu_precision == GPUISO_SINGLE ? GPUISO_SINGLE : GPUISO_DOUBLE;
  gpuiso_cuda_plan plan;
  gpuiso_status s = plan_init(ex, &plan, 1, offsets, type, 1, &capped, err);
  if (s != GPUISO_OK) return s;
  s = make(ex, &v.klevel, nknots);
  if (s == GPUISO_OK) s = make(ex, &v.kstart, nknots);
  if (type == GPUISO_SINGLE) {
    if (s == GPUISO_OK) s = make(ex, &v.fy, nknots);
    if (s == GPUISO_OK) s = make(ex, &v.fw, nknots);
    if (s == GPUISO_OK) s = make(ex, &v.ffit, nknots);
    if (s == GPUISO_OK) s = each(ex, xy_narrow_step{v}, nknots);
    if (s == GPUISO_OK) s = plan_fit(ex, &plan, (const float *)v.fy, (const float *)v.fw, v.ffit, v.kstart, err);
    if (s == GPUISO_OK) s = each(ex, xy_widen_step{v}, nknots);
    drop(ex, &v.fy), drop(ex, &v.fw), drop(ex, &v.ffit);
  } else if (s == GPUISO_OK) {
    s = plan_fit(ex, &plan, (const double *)v.ky, (const double *)v.kw, v.klevel, v.kstart, err);
  }
  if (s != GPUISO_OK && err) err->index = err->row = -1; /* a knot of the one row, not an element */
  plan_release(ex, &plan);
  return s;
}

/* Device bytes an element at the device path's peak, weighted or not: step 3 with every x
 * distinct (the sorted keys and input indices, y and w in x order, each element's knot, and the
 * knots' sums, x, means and weights), above the sort's 64 (keys, indices, y, w, the sorted keys
 * and indices, CUB's copies); the knots' plan in chunks of 64 (the tests': a smaller chunk takes
 * more) and, in float32, the knots' float copies beside them (xy_fit_knots). On the SIMT
 * executor every x distinct peaked at 80.2 and 88.1 in float64, 88.2 and 92.8 in float32
 * (tools/ctest/test_sort_gpu.cpp). */
static inline double xy_device_bytes(int weighted, int single) { return (weighted ? 90 : 82) + (single ? 12 : 0); }

/* The knots of kn (their means in kn->level, weights in kn->weight) through the device as one
 * row of fit_rows_host, in opt->gpu_precision: their levels to kn->level, flags to kn->start. */
template <class Exec>
static gpuiso_status xy_fit_knots_host(Exec &ex, gpuiso_knots *kn, const gpuiso_opts *opt, gpuiso_error *err) {
  int64_t nk = kn->n, offsets[2] = {0, nk};
  gpuiso_opts capped = plan_options(opt, 1, offsets);
  int single = opt->gpu_precision == GPUISO_SINGLE;
  size_t value = single ? sizeof(float) : sizeof(double);
  void *buf = malloc((size_t)(nk > 0 ? nk : 1) * value * (single ? 3 : 1)); /* the fit (float: means, weights) */
  gpuiso_status s = buf ? GPUISO_OK : GPUISO_E_NOMEM;
  if (s != GPUISO_OK) set_error(err, s, -1, -1);
  if (s == GPUISO_OK && single) {
    float *fy = (float *)buf, *fw = fy + nk, *ffit = fw + nk;
    for (int64_t k = 0; k < nk; k++) fy[k] = (float)kn->level[k], fw[k] = (float)kn->weight[k];
    s = fit_rows_host(ex, 1, offsets, GPUISO_SINGLE, fy, fw, &capped, ffit, kn->start, err);
    for (int64_t k = 0; s == GPUISO_OK && k < nk; k++) kn->level[k] = (double)ffit[k];
  } else if (s == GPUISO_OK) {
    s = fit_rows_host(ex, 1, offsets, GPUISO_DOUBLE, kn->level, kn->weight, &capped, (double *)buf, kn->start, err);
    if (s == GPUISO_OK) memcpy(kn->level, buf, (size_t)nk * sizeof(double));
  }
  if (s != GPUISO_OK && err) err->index = err->row = -1; /* a knot of the one row, not an element */
  free(buf);
  return s;
}

/* fit_xy_device where the device cannot hold the sort: sorted and pooled on the host, the knots
 * fitted on the device (xy_fit_knots_host), the fit put back in input order on the host; the
 * same outputs (kn in one allocation, held by kn->x). */
template <class Exec>
static gpuiso_status fit_xy_host_sorted(Exec &ex, int64_t n, const double *x, const double *y, const double *w,
                                        const gpuiso_opts *opt, double *fit, gpuiso_knots *kn, int64_t *order,
                                        uint8_t *start, gpuiso_error *err) {
  gpuiso_sorted *sorted = NULL;
  int64_t nk = 0;
  gpuiso_status s = gpuiso_sort_xy(n, x, y, w, opt, &sorted, &nk, err);
  if (s == GPUISO_OK) {
    kn->x = (double *)malloc_dense((size_t)nk * (3 * sizeof(double) + 1) + 1);
    if (!kn->x) s = GPUISO_E_NOMEM, set_error(err, s, -1, -1);
  }
  if (s == GPUISO_OK) {
    kn->level = kn->x + nk;
    kn->weight = kn->level + nk;
    kn->start = (uint8_t *)(kn->weight + nk);
    s = gpuiso_pool_sorted(sorted, kn, err);
  }
  if (s == GPUISO_OK) s = xy_fit_knots_host(ex, kn, opt, err);
  if (s == GPUISO_OK) {
    gpuiso_sorted_fitted(sorted, kn->level, fit);
    if (order || start) gpuiso_sorted_order(sorted, kn->start, order, start);
    for (int64_t d = 0; d < nk; d++) kn->nblocks += kn->start[d];
  }
  gpuiso_sorted_free(sorted);
  if (s != GPUISO_OK) {
    free(kn->x);
    memset(kn, 0, sizeof *kn);
  }
  return s;
}

/* gpuiso_cuda_fit_xy over an executor. */
template <class Exec>
static gpuiso_status fit_xy_device(Exec &ex, int64_t n, const double *x, const double *y, const double *w,
                                   const gpuiso_opts *opt, double *fit, gpuiso_knots *kn, int64_t *order,
                                   uint8_t *start, gpuiso_error *err) {
  memset(kn, 0, sizeof *kn);
  gpuiso_status s = gpu_check_xy(n, x, y, w, opt, err);
  if (s != GPUISO_OK) return s;
  if (n == 0) { /* no knots */
    kn->x = (double *)malloc(1);
    if (kn->x) return GPUISO_OK;
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  size_t avail = 0;
  s = plan_available(ex, opt, &avail);
  if (s == GPUISO_OK && (double)n * xy_device_bytes(w != NULL, opt->gpu_precision == GPUISO_SINGLE) >
                             SLICE_SHARE * (double)avail)
    return fit_xy_host_sorted(ex, n, x, y, w, opt, fit, kn, order, start, err);
  if (s != GPUISO_OK) return s;
  xy_view v;
  memset(&v, 0, sizeof v);
  staging<Exec> st;
  size_t bytes = (size_t)n * sizeof(double);
  int64_t nknots = 0;
  s = stage_open(ex, &st, bytes, resolve_threads(opt, n));

  /* steps 1 and 2 */
  if (s == GPUISO_OK) s = make(ex, &v.key, n);
  if (s == GPUISO_OK) s = make(ex, &v.index, n);
  if (s == GPUISO_OK) s = make(ex, &v.y, n);
  if (s == GPUISO_OK && w) s = make(ex, &v.w, n);
  if (s == GPUISO_OK) s = stage_put(ex, &st, v.key, x, bytes, xy_key_slices{v.key, v.index});
  if (s == GPUISO_OK) s = stage_put(ex, &st, v.y, y, bytes, no_slice_work());
  if (s == GPUISO_OK && w) s = stage_put(ex, &st, v.w, w, bytes, no_slice_work());
  if (s == GPUISO_OK) s = make(ex, &v.key_sorted, n);
  if (s == GPUISO_OK) s = make(ex, &v.by_x, n);
  if (s == GPUISO_OK) s = ex.sort_pairs(v.key, v.key_sorted, v.index, v.by_x, n, 64);
  drop(ex, &v.key), drop(ex, &v.index);
  if (s == GPUISO_OK) s = make(ex, &v.sy, n);
  if (s == GPUISO_OK && w) s = make(ex, &v.sw, n);
  if (s == GPUISO_OK) s = each(ex, xy_gather_step{v}, n);
  drop(ex, &v.y), drop(ex, &v.w);
  if (s == GPUISO_OK) s = exec_poll(ex, opt, err);

  /* step 3 */
  if (s == GPUISO_OK) s = find_runs(ex, tie_starts{v.key_sorted}, n, &v.knot_at, &v.knot_first, &nknots);
  if (s == GPUISO_OK) s = make(ex, &v.ksum, 2 * nknots);
  if (s == GPUISO_OK) s = make(ex, &v.kx, nknots);
  if (s == GPUISO_OK) s = make(ex, &v.ky, nknots);
  if (s == GPUISO_OK) s = make(ex, &v.kw, nknots);
  if (s == GPUISO_OK) s = make(ex, &v.overflow, 1);
  unsigned long long first_overflow = NO_FAILED_ROW;
  if (s == GPUISO_OK) s = ex.put(v.overflow, &first_overflow, sizeof first_overflow);
  if (s == GPUISO_OK) s = run_sums<2>(ex, stream_values{v.sy, v.sw}, n, v.knot_at, v.knot_first, nknots, v.ksum);
  if (s == GPUISO_OK) s = each(ex, xy_knot_step{v}, nknots);
  if (s == GPUISO_OK) s = ex.get(&first_overflow, v.overflow, sizeof first_overflow);
  if (s == GPUISO_OK && first_overflow != NO_FAILED_ROW) s = xy_overflow(ex, v, (int64_t)first_overflow, err);
  drop(ex, &v.ksum), drop(ex, &v.sy), drop(ex, &v.sw), drop(ex, &v.key_sorted);
  if (s == GPUISO_OK) s = exec_poll(ex, opt, err);

  /* steps 4 and 5 */
  if (s == GPUISO_OK) s = xy_fit_knots(ex, v, nknots, opt, err);
  if (s == GPUISO_OK) s = make(ex, &v.fit, n);
  if (s == GPUISO_OK && start) s = make(ex, &v.estart, n);
  if (s == GPUISO_OK) s = each(ex, xy_scatter_step{v}, n);
  if (s == GPUISO_OK) {
    size_t kbytes = (size_t)nknots * (3 * sizeof(double) + 1);
    kn->x = (double *)malloc_dense(kbytes > 0 ? kbytes : 1);
    if (!kn->x) s = GPUISO_E_NOMEM, set_error(err, s, -1, -1);
  }
  if (s == GPUISO_OK) {
    kn->n = nknots;
    kn->level = kn->x + nknots;
    kn->weight = kn->level + nknots;
    kn->start = (uint8_t *)(kn->weight + nknots);
    s = stage_get(ex, &st, fit, v.fit, bytes);
  }
  if (s == GPUISO_OK) s = ex.get(kn->x, v.kx, (size_t)nknots * sizeof(double));
  if (s == GPUISO_OK) s = ex.get(kn->level, v.klevel, (size_t)nknots * sizeof(double));
  if (s == GPUISO_OK) s = ex.get(kn->weight, v.kw, (size_t)nknots * sizeof(double));
  if (s == GPUISO_OK) s = ex.get(kn->start, v.kstart, (size_t)nknots);
  if (s == GPUISO_OK && order) s = stage_get(ex, &st, order, v.by_x, (size_t)n * sizeof(int64_t));
  if (s == GPUISO_OK && start) s = stage_get(ex, &st, start, v.estart, (size_t)n);
  for (int64_t d = 0; s == GPUISO_OK && d < nknots; d++) kn->nblocks += kn->start[d];
  xy_release(ex, &v);
  stage_close(ex, &st);
  if (s != GPUISO_OK) {
    free(kn->x);
    memset(kn, 0, sizeof *kn);
  }
  return s;
}

#endif

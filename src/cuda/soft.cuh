/* Soft ranks and soft sorts on the device (gpuiso_cuda_soft), written over an executor
 * (pipeline.cuh) so that the C tests run it on the CPU (tools/ctest). The input was checked on
 * the host (gpuiso_soft). Then, for a matrix of nrow rows of n = ncol elements, element e = r * n
 * + j standing for x[r + j * nrow]:
 *   1. a radix sort by the keys of soft.h, decreasing, and, for several rows, a stable radix sort
 *      of those positions by row, order every row decreasingly as one stream;
 *   2. the stream's targets are fitted as one batch of the CUDA solver, rows of n, non-increasing,
 *      with the solver's block flags;
 *   3. forward: each position's value goes to its slot of the output; backward: the upstream
 *      gradient is gathered into stream order, averaged over the blocks (vjp.cuh), and each
 *      element's derivative written.
 * x and g go up, and only the output comes back, in pinned slices where they are large
 * (staging.cuh).
 */
#ifndef GPUISO_CUDA_SOFT_CUH
#define GPUISO_CUDA_SOFT_CUH

#include "pipeline.cuh"
#include "soft.h"
#include "staging.cuh"
#include "vjp.cuh"

struct soft_view {
  gpuiso_soft_kind kind;
  int64_t nrow, ncol, n;
  int decreasing;
  double epsilon;
  const double *x, *g;           /* column-major, as the caller's; g NULL: forward */
  uint64_t *key, *key_sorted;    /* n: the elements' keys, then sorted */
  int64_t *index, *by_key;       /* n: 0..n-1; the elements in key order */
  uint32_t *row, *row_sorted;    /* n: the rows in key order, then sorted */
  int64_t *by_row;               /* n: positions in key order, by row then key; NULL: one row */
  int64_t *perm;                 /* n: the element at each stream position */
  double *s, *z, *v, *gs, *a;    /* n, in stream order: key, target, fit, gradient, its mean */
  uint8_t *start;                /* n: the solver's block flags */
  double *out;                   /* column-major */
};

static SIMT_DEVICE double soft_x(const soft_view &v, int64_t e) {
  return v.x[e / v.ncol + (e % v.ncol) * v.nrow];
}

struct soft_key_step {
  soft_view v;
  SIMT_DEVICE void operator()(int64_t e) const {
    v.key[e] = ~double_key(soft_key(v.kind, soft_x(v, e), v.epsilon, v.decreasing));
    v.index[e] = e;
  }
};

struct soft_row_step {
  soft_view v;
  SIMT_DEVICE void operator()(int64_t p) const { v.row[p] = (uint32_t)(v.by_key[p] / v.ncol); }
};

struct soft_stream_step {
  soft_view v;
  SIMT_DEVICE void operator()(int64_t q) const {
    int64_t e = v.by_key[v.by_row ? v.by_row[q] : q];
    double s = soft_key(v.kind, soft_x(v, e), v.epsilon, v.decreasing);
    v.perm[q] = e;
    v.s[q] = s;
    v.z[q] = soft_target(v.kind, s, q % v.ncol, 0, v.ncol, v.epsilon); /* a row one segment */
  }
};

/* The output's index (column-major) of stream position q's slot, and of its element. */
static SIMT_DEVICE int64_t soft_out_slot(const soft_view &v, int64_t q) {
  int64_t e = v.perm[q], slot = soft_slot(v.kind, e % v.ncol, q % v.ncol, v.ncol, v.decreasing);
  return e / v.ncol + slot * v.nrow;
}

struct soft_value_step {
  soft_view v;
  SIMT_DEVICE void operator()(int64_t q) const {
    v.out[soft_out_slot(v, q)] = soft_value(v.kind, v.s[q], v.v[q], q % v.ncol, 0, v.epsilon);
  }
};

struct soft_gather_step {
  soft_view v;
  SIMT_DEVICE void operator()(int64_t q) const { v.gs[q] = v.g[soft_out_slot(v, q)]; }
};

struct soft_grad_step {
  soft_view v;
  SIMT_DEVICE void operator()(int64_t q) const {
    int64_t e = v.perm[q];
    v.out[e / v.ncol + (e % v.ncol) * v.nrow] =
        soft_grad(v.kind, v.gs[q], v.a[q], v.epsilon, v.decreasing);
  }
};

template <class Exec>
static void soft_release(Exec &ex, soft_view *v) {
  void *buf[] = {(void *)v->x, (void *)v->g, v->key, v->key_sorted, v->index, v->by_key, v->row,
                 v->row_sorted, v->by_row, v->perm, v->s, v->z, v->v, v->gs, v->a, v->start, v->out};
  for (size_t i = 0; i < sizeof buf / sizeof buf[0]; i++) ex.release(buf[i]);
}

/* Step 1: the stream order (perm) with keys and targets. */
template <class Exec>
static gpuiso_status soft_order(Exec &ex, soft_view &v) {
  int64_t n = v.n;
  gpuiso_status s = make(ex, &v.key, n);
  if (s == GPUISO_OK) s = make(ex, &v.key_sorted, n);
  if (s == GPUISO_OK) s = make(ex, &v.index, n);
  if (s == GPUISO_OK) s = make(ex, &v.by_key, n);
  if (s == GPUISO_OK) s = each(ex, soft_key_step{v}, n);
  if (s == GPUISO_OK) s = ex.sort_pairs(v.key, v.key_sorted, v.index, v.by_key, n, 64);
  if (v.nrow > 1) {
    int bits = 1;
    while (bits < 32 && ((int64_t)1 << bits) < v.nrow) bits++;
    if (s == GPUISO_OK) s = make(ex, &v.row, n);
    if (s == GPUISO_OK) s = make(ex, &v.row_sorted, n);
    if (s == GPUISO_OK) s = make(ex, &v.by_row, n);
    if (s == GPUISO_OK) s = each(ex, soft_row_step{v}, n);
    if (s == GPUISO_OK) s = ex.sort_pairs(v.row, v.row_sorted, v.index, v.by_row, n, bits);
  }
  if (s == GPUISO_OK) s = make(ex, &v.perm, n);
  if (s == GPUISO_OK) s = make(ex, &v.s, n);
  if (s == GPUISO_OK) s = make(ex, &v.z, n);
  if (s == GPUISO_OK) s = each(ex, soft_stream_step{v}, n);
  return s;
}

/* gpuiso_cuda_soft over an executor. */
template <class Exec>
static gpuiso_status soft_device(Exec &ex, gpuiso_soft_kind kind, int64_t nrow, int64_t ncol,
                                 const double *x, const double *g, double epsilon, int decreasing,
                                 const gpuiso_opts *opt, double *out, gpuiso_error *err) {
  set_error(err, GPUISO_OK, -1, -1);
  soft_view v;
  memset(&v, 0, sizeof v);
  v.kind = kind;
  v.nrow = nrow;
  v.ncol = ncol;
  v.n = nrow * ncol;
  v.decreasing = decreasing;
  v.epsilon = epsilon;
  if (v.n == 0) return GPUISO_OK;
  int64_t *offsets = (int64_t *)malloc(((size_t)nrow + 1) * sizeof *offsets);
  if (!offsets) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  for (int64_t r = 0; r <= nrow; r++) offsets[r] = r * ncol;
  gpuiso_opts solver = *opt;
  solver.increasing = 0;
  solver.lo = -INFINITY;
  solver.hi = INFINITY;
  solver.solver_blocks = 1;
  size_t bytes = (size_t)v.n * sizeof(double);
  gpuiso_cuda_plan plan;
  int planned = 0;
  vjp_layout L;
  memset(&L, 0, sizeof L);
  staging<Exec> st;

  gpuiso_status s = stage_open(ex, &st, bytes, resolve_threads(opt, v.n));
  if (s == GPUISO_OK) s = stage_upload(ex, &st, &v.x, x, v.n);
  if (s == GPUISO_OK) s = stage_upload(ex, &st, &v.g, g, v.n);
  if (s == GPUISO_OK) s = soft_order(ex, v);
  if (s == GPUISO_OK) s = exec_poll(ex, opt, err);

  /* step 2 */
  if (s == GPUISO_OK) s = plan_init(ex, &plan, nrow, offsets, GPUISO_DOUBLE, 1, &solver, err);
  planned = s == GPUISO_OK;
  if (s == GPUISO_OK) s = make(ex, &v.v, v.n);
  if (s == GPUISO_OK) s = make(ex, &v.start, v.n);
  if (s == GPUISO_OK) {
    s = plan_fit(ex, &plan, (const double *)v.z, (const double *)NULL, v.v, v.start, err);
    if (s == GPUISO_E_Y_NONFINITE || s == GPUISO_E_OVERFLOW) {
      s = GPUISO_E_OVERFLOW; /* targets or their sums that overflow: no element to name */
      set_error(err, s, -1, err ? err->row : -1);
    }
  }
  if (planned) plan_release(ex, &plan);

  /* step 3 */
  if (s == GPUISO_OK) s = make(ex, &v.out, v.n);
  if (s == GPUISO_OK && !g) s = each(ex, soft_value_step{v}, v.n);
  if (s == GPUISO_OK && g) {
    s = make(ex, &v.gs, v.n);
    if (s == GPUISO_OK) s = make(ex, &v.a, v.n);
    if (s == GPUISO_OK) s = each(ex, soft_gather_step{v}, v.n);
    if (s == GPUISO_OK) s = vjp_layout_init(ex, &L, nrow, offsets, err);
    if (s == GPUISO_OK) {
      vjp_view<double> b = {L, NULL, NULL, v.v, v.gs, v.start, -INFINITY, INFINITY, v.a, NULL};
      s = vjp_run(ex, b);
    }
    if (s == GPUISO_OK) s = each(ex, soft_grad_step{v}, v.n);
  }
  if (s == GPUISO_OK) s = stage_get(ex, &st, out, v.out, bytes);
  stage_close(ex, &st);
  vjp_layout_release(ex, &L);
  soft_release(ex, &v);
  free(offsets);
  return s;
}

#endif

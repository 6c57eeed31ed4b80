/* Soft ranks and soft sorts (gpuiso_soft), row by row and in parallel over rows: a stable radix
 * sort of the row decreasingly, one non-increasing PAV fit (or the hull engine's) that records
 * its blocks, and for the backward pass the fit's vector-Jacobian product between the two
 * permutations. The formulas per element are those of soft.h, which the device shares.
 */
#include <stdlib.h>

#include "internal.h"
#include "soft.h"

/* A thread's buffers for rows of n elements. Rows of a matrix are copied into xr and gr and
 * their results gathered in z before they go out: the sort orders' random accesses then stay in
 * one row (in cache), not in the whole matrix. */
typedef struct {
  sort_record *rec, *tmp;
  double *xr, *gr, *z, *v, *gs, *a;
  uint8_t *start;
  pav_work pav;
} soft_work;

static void soft_work_free(soft_work *wk) {
  free(wk->rec);
  free(wk->tmp);
  free(wk->xr);
  free(wk->gr);
  free(wk->z);
  free(wk->v);
  free(wk->gs);
  free(wk->a);
  free(wk->start);
  pav_work_free(&wk->pav);
}

static int soft_work_init(soft_work *wk, int64_t n) {
  size_t m = (size_t)(n > 0 ? n : 1);
  memset(wk, 0, sizeof *wk);
  wk->rec = malloc_dense(m * sizeof *wk->rec);
  wk->tmp = malloc_dense(m * sizeof *wk->tmp);
  wk->xr = malloc_dense(m * sizeof *wk->xr);
  wk->gr = malloc_dense(m * sizeof *wk->gr);
  wk->z = malloc_dense(m * sizeof *wk->z);
  wk->v = malloc_dense(m * sizeof *wk->v);
  wk->gs = malloc_dense(m * sizeof *wk->gs);
  wk->a = malloc_dense(m * sizeof *wk->a);
  wk->start = malloc_dense(m);
  int ok = pav_work_init(&wk->pav, n);
  if (ok && wk->rec && wk->tmp && wk->xr && wk->gr && wk->z && wk->v && wk->gs && wk->a &&
      wk->start)
    return 1;
  soft_work_free(wk);
  return 0;
}

/* Row r of a matrix of nrow rows and n columns (column-major): into buf, unless nrow is 1. */
static const double *row_of(const double *m, int64_t nrow, int64_t n, int64_t r, double *buf) {
  if (nrow == 1) return m;
  for (int64_t j = 0; j < n; j++) buf[j] = m[r + j * nrow];
  return buf;
}

/* The rank's key at sort position k less the one at position a: from the difference of their x
 * (the records' w), exact where they are close (the keys x / epsilon are rounded), unless that
 * overflows. */
static double key_step(const sort_record *rec, int64_t a, int64_t k, double epsilon, int decreasing) {
  double dx = rec[k].w - rec[a].w;
  return isfinite(dx) ? soft_key(GPUISO_SOFT_RANK, dx, epsilon, decreasing) : rec[k].y - rec[a].y;
}

/* A row is fitted in segments that no block of the fit spans, each from its own first position
 * a (soft_target), found from its keys s (decreasing). Rank: no block spans positions k - 1 and
 * k where s_{k-1} - s_k >= 2n, since every target before k is then above every one from k on
 * (the ranks n - k differ by less than n). Sort: the fit of the targets is, but for a constant,
 * minus the non-decreasing fit of u_k = s_k + k / epsilon, which is apart at k where every u
 * before k is below every u from k on by more than their rounding: sort_tails writes the minima
 * of u from each k on into tail and returns that margin. u is formed with step = 1 / epsilon,
 * within a few roundings of itself, which the margin covers. */
static double sort_tails(const sort_record *rec, int64_t n, double step, double *tail) {
  double top = 0, low = INFINITY;
  for (int64_t k = n - 1; k >= 0; k--) {
    double u = rec[k].y + (double)k * step;
    top = fmax(top, fabs(u));
    tail[k] = low = fmin(u, low);
  }
  return 0x1p-48 * top;
}

/* soft_target's d at position k of the segment from a: the rank's key less the segment's first,
 * the sort's key. */
static double segment_d(gpuiso_soft_kind kind, const sort_record *rec, int64_t a, int64_t k, double epsilon,
                        int decreasing) {
  return kind == GPUISO_SOFT_RANK ? key_step(rec, a, k, epsilon, decreasing) : rec[k].y;
}

/* Fits positions [a, b) of the row (its targets over z's, its fit and block flags into v and
 * start) and, where res is not NULL, writes their values into res. */
static gpuiso_status fit_segment(gpuiso_soft_kind kind, soft_work *wk, int64_t a, int64_t b, int64_t n,
                                 double epsilon, int decreasing, const gpuiso_opts *o, double *res,
                                 gpuiso_error *err) {
  for (int64_t k = a; k < b; k++) wk->z[k] = soft_target(kind, segment_d(kind, wk->rec, a, k, epsilon, decreasing), k, a, n, epsilon);
  if (b - a == 1 && isfinite(wk->z[a])) { /* apart from all others: its own block */
    wk->v[a] = wk->z[a];
    wk->start[a] = 1;
  } else {
    gpuiso_status s = fit_row(b - a, wk->z + a, NULL, o, &wk->pav, wk->v + a, wk->start + a, NULL, err);
    if (s != GPUISO_OK) return s;
  }
  for (int64_t k = a; res && k < b; k++)
    res[soft_slot(kind, wk->rec[k].tag, k, n, decreasing)] =
        soft_value(kind, segment_d(kind, wk->rec, a, k, epsilon, decreasing), wk->v[k], k, a, epsilon);
  return GPUISO_OK;
}

/* Row r of the matrix. The fit's options o are non-increasing, on one thread, with the solver's
 * blocks. order (NULL: none), in x's layout, 1-based: the row's sort order, which is written, or
 * when order_given read instead of sorting; *order_wrong is set, and nothing written, when it is
 * not the sort order (keys decreasing, equal ones by increasing index: so no index comes twice). */
static gpuiso_status soft_row(gpuiso_soft_kind kind, int64_t nrow, int64_t n, int64_t r,
                              const double *x, const double *g, double epsilon, int decreasing,
                              const gpuiso_opts *o, int32_t *order, int order_given,
                              int *order_wrong, soft_work *wk, double *out, gpuiso_error *err) {
  const double *xr = row_of(x, nrow, n, r, wk->xr);
  if (order && order_given) {
    uint64_t before = 0;
    for (int64_t k = 0; k < n; k++) {
      int64_t j = (int64_t)order[r + k * nrow] - 1;
      if (j < 0 || j >= n) {
        *order_wrong = 1;
        return GPUISO_OK;
      }
      double t = soft_key(kind, xr[j], epsilon, decreasing);
      uint64_t key = ~double_key(t);
      if (k > 0 && (key < before || (key == before && j <= wk->rec[k - 1].tag))) {
        *order_wrong = 1;
        return GPUISO_OK;
      }
      before = key;
      sort_record rec = {key, j, t, xr[j]};
      wk->rec[k] = rec;
    }
  } else {
    for (int64_t j = 0; j < n; j++) {
      double t = soft_key(kind, xr[j], epsilon, decreasing);
      sort_record rec = {~double_key(t), j, t, xr[j]}; /* w: x, for key_step */
      wk->rec[j] = rec;
    }
    sort_records_serial(wk->rec, wk->tmp, n);
    if (order)
      for (int64_t k = 0; k < n; k++) order[r + k * nrow] = (int32_t)(wk->rec[k].tag + 1);
  }
  /* the segments, each fitted once its end is found; the sort's tails in z, which each
   * segment's targets overwrite as it is fitted (the cuts read them further on). Forward: the
   * values as the segments are fitted, into gs for a row of a matrix */
  double step = 1 / epsilon, margin = kind == GPUISO_SOFT_SORT ? sort_tails(wk->rec, n, step, wk->z) : 0;
  double head = wk->rec[0].y, *res = nrow == 1 ? out : g ? wk->z : wk->gs;
  for (int64_t a = 0, k = 1; k <= n; k++) {
    int cut = k == n;
    if (!cut && kind == GPUISO_SOFT_RANK) cut = -key_step(wk->rec, k - 1, k, epsilon, decreasing) >= 2.0 * (double)n;
    if (!cut && kind == GPUISO_SOFT_SORT) cut = head + margin < wk->z[k];
    if (k < n && kind == GPUISO_SOFT_SORT) head = fmax(head, wk->rec[k].y + (double)k * step);
    if (!cut) continue;
    gpuiso_status s = fit_segment(kind, wk, a, k, n, epsilon, decreasing, o, g ? NULL : res, err);
    if (s != GPUISO_OK) { /* targets or their sums that overflow: no element to name */
      s = s == GPUISO_E_Y_NONFINITE ? GPUISO_E_OVERFLOW : s;
      set_error(err, s, -1, r);
      return s;
    }
    a = k;
  }
  if (g) {
    const double *gr = row_of(g, nrow, n, r, wk->gr);
    for (int64_t k = 0; k < n; k++) wk->gs[k] = gr[soft_slot(kind, wk->rec[k].tag, k, n, decreasing)];
    vjp_row(n, NULL, NULL, wk->v, wk->start, wk->gs, -INFINITY, INFINITY, wk->a, NULL);
    for (int64_t k = 0; k < n; k++)
      res[wk->rec[k].tag] = soft_grad(kind, wk->gs[k], wk->a[k], epsilon, decreasing);
  }
  if (nrow > 1)
    for (int64_t j = 0; j < n; j++) out[r + j * nrow] = res[j];
  return GPUISO_OK;
}

/* soft_check's scan of slice t of the slices of len: its first bad key and largest |x|. */
typedef struct {
  gpuiso_soft_kind kind;
  int64_t len;
  int nslices;
  const double *x;
  double epsilon, largest[GPUISO_MAX_CHUNKS];
  int64_t bad[GPUISO_MAX_CHUNKS];
} soft_scan;

static void soft_check_slice(void *ctx, int64_t t, int thread) {
  soft_scan *sc = ctx;
  const double *x = sc->x;
  int64_t from = slice_bound(sc->len, (int)t, sc->nslices);
  int64_t to = slice_bound(sc->len, (int)t + 1, sc->nslices), bad = sc->len;
  double largest = 0;
  for (int64_t i = from; i < to; i++) {
    if (bad == sc->len && !isfinite(soft_key(sc->kind, x[i], sc->epsilon, 0))) bad = i;
    largest = fmax(largest, fabs(x[i]));
  }
  sc->bad[t] = bad;
  sc->largest[t] = largest;
}

/* The first element whose key is not finite (x itself, or x / epsilon overflowing), in the
 * matrix's order; the soft sort's (n, ..., 1) / epsilon must be finite too. *top: the largest
 * |x|. */
static gpuiso_status soft_check(gpuiso_soft_kind kind, int64_t len, int64_t ncol, const double *x,
                                double epsilon, int nth, double *top, gpuiso_error *err) {
  soft_scan sc = {.kind = kind, .len = len, .x = x, .epsilon = epsilon,
                  .nslices = nth < GPUISO_MAX_CHUNKS ? nth : GPUISO_MAX_CHUNKS};
  for_each_piece(sc.nslices, nth, 1, soft_check_slice, &sc);
  int64_t bad = len;
  double largest = 0;
  for (int t = 0; t < sc.nslices; t++) {
    if (bad == len) bad = sc.bad[t]; /* the first slice with a bad key has the first */
    largest = fmax(largest, sc.largest[t]);
  }
  *top = largest;
  if (bad < len) {
    gpuiso_status s = isfinite(x[bad]) ? GPUISO_E_OVERFLOW : GPUISO_E_X_NONFINITE;
    set_error(err, s, bad, -1);
    return s;
  }
  if (kind == GPUISO_SOFT_SORT && !isfinite((double)ncol / epsilon)) {
    set_error(err, GPUISO_E_OVERFLOW, -1, -1);
    return GPUISO_E_OVERFLOW;
  }
  return GPUISO_OK;
}

/* A round of rows, r0 onwards (a piece_fn's index counts from 0), of soft_with_order. */
typedef struct {
  gpuiso_soft_kind kind;
  int64_t nrow, ncol, r0, wrong;
  const double *x, *g;
  double epsilon;
  int decreasing;
  const gpuiso_opts *o;
  int32_t *order;
  soft_work *work;
  double *out;
  gpuiso_error *first;
} soft_round;

static void soft_round_row(void *ctx, int64_t i, int thread) {
  soft_round *sr = ctx;
  int64_t r = sr->r0 + i;
  gpuiso_error e;
  int row_wrong = 0;
  if (soft_row(sr->kind, sr->nrow, sr->ncol, r, sr->x, sr->g, sr->epsilon, sr->decreasing, sr->o,
               sr->order, sr->g != NULL, &row_wrong, &sr->work[thread], sr->out, &e) != GPUISO_OK)
    keep_error(sr->first, &e);
  if (row_wrong) {
#ifdef _OPENMP
#pragma omp critical(gpuiso_soft_wrong)
#endif
    if (r < sr->wrong) sr->wrong = r;
  }
}

gpuiso_status gpuiso_soft(gpuiso_soft_kind kind, int64_t nrow, int64_t ncol, const double *x,
                          const double *g, double epsilon, int decreasing, const gpuiso_opts *opt,
                          double *out, gpuiso_error *err) {
  return soft_with_order(kind, nrow, ncol, x, g, epsilon, decreasing, opt, NULL, out, NULL, err);
}

gpuiso_status soft_with_order(gpuiso_soft_kind kind, int64_t nrow, int64_t ncol, const double *x,
                              const double *g, double epsilon, int decreasing,
                              const gpuiso_opts *opt, int32_t *order, double *out,
                              int64_t *order_wrong, gpuiso_error *err) {
  set_error(err, GPUISO_OK, -1, -1);
  if (order_wrong) *order_wrong = -1;
  int64_t len = nrow * ncol;
  int nth = resolve_threads(opt, len);
  double top;
  gpuiso_status s = soft_check(kind, len, ncol, x, epsilon, nth, &top, err);
  if (s != GPUISO_OK || len == 0) return s;
  /* The device fits each row as one segment, whose targets keep about 2^-29 of the outputs'
   * scale while the keys (rank: |x| / epsilon) or n / epsilon (sort: against |x|) stay under
   * 2^23 of it; beyond, the CPU's segments keep their digits. It sorts: it neither reads nor
   * writes order. */
  double reach = kind == GPUISO_SOFT_RANK ? top / epsilon : (double)ncol / epsilon / top;
  if (opt->engine == GPUISO_GPU && reach <= 0x1p23)
    return gpuiso_cuda_soft(kind, nrow, ncol, x, g, epsilon, decreasing, opt, out, err);
  if (nth > nrow) nth = (int)nrow;
  gpuiso_opts o = *opt;
  o.increasing = 0;
  o.lo = -INFINITY;
  o.hi = INFINITY;
  o.nthreads = 1;
  o.solver_blocks = 1;

  soft_work *work = calloc((size_t)nth, sizeof *work);
  int ok = work != NULL, made = 0;
  for (; ok && made < nth; made++) ok = soft_work_init(&work[made], ncol);
  if (!ok) {
    for (int t = 0; t < made - 1; t++) soft_work_free(&work[t]);
    free(work);
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  /* Rounds of about GPUISO_POLL_EVERY elements, with a poll of the interrupt between them. A
   * thread takes 16 neighbouring rows at a time where there are many: rows interleave in the
   * column-major matrix, and neighbours on two threads would share cache lines of out and order. */
  int64_t round = GPUISO_POLL_EVERY / ncol + 1;
  int chunk = nrow >= 64 * (int64_t)nth ? 16 : 1;
  gpuiso_error first = {GPUISO_OK, -1, -1, ""};
  soft_round sr = {.kind = kind, .nrow = nrow, .ncol = ncol, .wrong = nrow, .x = x, .g = g,
                   .epsilon = epsilon, .decreasing = decreasing, .o = &o, .order = order,
                   .work = work, .out = out, .first = &first};
  for (; sr.r0 < nrow && first.status == GPUISO_OK && sr.wrong == nrow; sr.r0 += round) {
    int64_t r1 = sr.r0 + round < nrow ? sr.r0 + round : nrow;
    for_each_piece(r1 - sr.r0, nth, chunk, soft_round_row, &sr);
    if (first.status == GPUISO_OK && r1 < nrow && poll_interrupt(opt))
      set_error(&first, GPUISO_E_INTERRUPT, -1, -1);
  }
  if (order_wrong && sr.wrong < nrow) *order_wrong = sr.wrong;
  for (int t = 0; t < nth; t++) soft_work_free(&work[t]);
  free(work);
  if (err) *err = first;
  return first.status;
}

/* IDR on the device (gpuiso_cuda_idr_fit), written over an executor (pipeline.cuh) so that the C
 * tests run it on the CPU (tools/ctest). The observations go up once, by position (each
 * position's thresholds in increasing order), with the weight of each position. The thresholds
 * are then taken in slices of as many rows as device memory holds; per slice:
 *   1. a thread per position counts its observations up to each threshold of the slice and
 *      writes its indicator mean into the slice's rows (and its weight, when rows are weighted);
 *   2. the CUDA solver fits the rows as one batch of antitonic rows, and a thread per row gives
 *      each block its weighted count over its weight, one division, as the CPU engine does;
 *   3. a thread per position raises each value to the one at the threshold before (rounding must
 *      not lower a CDF as the threshold rises), caps it at 1, and sets the last threshold to 1;
 *      a running maximum over thresholds keeps every row non-increasing in position;
 *   4. a thread per segment of a row counts the row's runs there (a run starts where the value
 *      changes), a thread per row scans its segments, the host scans the rows, and a thread per
 *      segment writes its runs: only the runs are copied back.
 * Each position's count and observations counted carry over from one slice to the next, so every
 * count is summed in the CPU engine's order and is the same double. The observations go up, and
 * the runs come back, in pinned slices where they are large (staging.cuh).
 */
#ifndef GPUISO_CUDA_IDR_CUH
#define GPUISO_CUDA_IDR_CUH

#include "pipeline.cuh"
#include "staging.cuh"

/* Positions of a row per thread when the rows are compressed into runs. */
#define IDR_SEGMENT 256

struct idr_view {
  int64_t npos, nthr, k0, rows, segs; /* the slice: thresholds k0 .. k0 + rows - 1; segs per row */
  const int64_t *first;  /* npos + 1: position j's observations are first[j] .. first[j + 1] - 1, */
  const int32_t *thr;    /* by threshold (then in input order) */
  const double *obs_w;   /* their weights; NULL: 1 */
  const double *total;   /* npos: the weight of each position */
  int64_t *counted;      /* npos: each position's observations counted (from its first) */
  double *count;         /* npos: its weighted count of the observations counted */
  double *cdf;           /* npos: its CDF value at the threshold before the slice */
  double *y, *w, *fit;   /* rows x npos, row r (threshold k0 + r) at r * npos; w NULL: 1 */
  double *cnt;           /* rows x npos: the weighted counts behind y */
  int64_t *seg_runs;     /* rows x segs: runs starting in each segment, then where they go in the row */
  int64_t *row_runs;     /* rows: runs of each row, then where they go in the slice's output */
  int32_t *run_start;    /* the slice's runs */
  double *run_value;
};

/* Per position: its indicator means at the slice's thresholds. */
struct idr_rows_step {
  idr_view v;
  SIMT_DEVICE void operator()(int64_t j) const {
    int64_t i = v.first[j] + v.counted[j], end = v.first[j + 1];
    double c = v.count[j], t = v.total[j];
    for (int64_t r = 0; r < v.rows; r++) {
      for (; i < end && v.thr[i] <= v.k0 + r; i++) c += v.obs_w ? v.obs_w[i] : 1.0;
      v.y[r * v.npos + j] = c / t;
      v.cnt[r * v.npos + j] = c;
      if (v.w) v.w[r * v.npos + j] = t;
    }
    v.counted[j] = i - v.first[j];
    v.count[j] = c;
  }
};

/* Per row: each block's value as its count over its weight, one division, as the CPU engine
 * forms it. The solver's weighted mean of the rounded means c / t can miss that ratio by an ulp,
 * and a CDF value of exactly 1/2 that comes out below it moves a median. A block is a run of
 * equal fitted values (runs of blocks of one level pool to a ratio of that level too). */
struct idr_exact_step {
  idr_view v;
  SIMT_DEVICE void operator()(int64_t r) const {
    double *fit = v.fit + r * v.npos;
    const double *cnt = v.cnt + r * v.npos;
    double before = INFINITY;
    for (int64_t from = 0, to; from < v.npos; from = to) {
      double c = 0, t = 0;
      for (to = from; to < v.npos && fit[to] == fit[from]; to++) c += cnt[to], t += v.total[to];
      double z = c / t < before ? c / t : before; /* rounded weighted counts may step up an ulp */
      for (int64_t j = from; j < to; j++) fit[j] = z;
      before = z;
    }
  }
};

/* Per position: the fitted values raised to the one before, capped at 1, and 1 at the last
 * threshold. (The CPU engine raises a block to the value before at its first position: the
 * same up to rounding.) */
struct idr_clamp_step {
  idr_view v;
  SIMT_DEVICE void operator()(int64_t j) const {
    double c = v.cdf[j];
    for (int64_t r = 0; r < v.rows; r++) {
      double f = v.fit[r * v.npos + j];
      if (v.k0 + r == v.nthr - 1) c = 1.0;
      else if (f > c) c = f < 1.0 ? f : 1.0;
      v.fit[r * v.npos + j] = c;
    }
    v.cdf[j] = c;
  }
};

/* Segment g of the slice: its row and positions [from, to). */
static inline GPUISO_HD int64_t idr_segment(const idr_view &v, int64_t g, int64_t *from, int64_t *to) {
  int64_t r = g / v.segs;
  *from = (g - r * v.segs) * IDR_SEGMENT;
  *to = *from + IDR_SEGMENT < v.npos ? *from + IDR_SEGMENT : v.npos;
  return r;
}

static inline GPUISO_HD int idr_run_starts(const idr_view &v, int64_t r, int64_t j) {
  const double *row = v.fit + r * v.npos;
  return j == 0 || row[j] != row[j - 1];
}

/* Per segment: the runs that start in it. */
struct idr_count_step {
  idr_view v;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t from, to, n = 0;
    int64_t r = idr_segment(v, g, &from, &to);
    for (int64_t j = from; j < to; j++) n += idr_run_starts(v, r, j);
    v.seg_runs[g] = n;
  }
};

/* Per row: where each segment's runs go in the row, and the row's runs. */
struct idr_scan_step {
  idr_view v;
  SIMT_DEVICE void operator()(int64_t r) const {
    int64_t at = 0;
    for (int64_t g = r * v.segs; g < (r + 1) * v.segs; g++) {
      int64_t n = v.seg_runs[g];
      v.seg_runs[g] = at;
      at += n;
    }
    v.row_runs[r] = at;
  }
};

/* Per segment: its runs, at their place in the slice's output. */
struct idr_write_step {
  idr_view v;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t from, to;
    int64_t r = idr_segment(v, g, &from, &to), at = v.row_runs[r] + v.seg_runs[g];
    for (int64_t j = from; j < to; j++) {
      if (!idr_run_starts(v, r, j)) continue;
      v.run_start[at] = (int32_t)j;
      v.run_value[at] = v.fit[r * v.npos + j];
      at++;
    }
  }
};

/* The fit's state on the host: the device memory (in v), the solver's plan for slices of
 * plan_rows rows, and host buffers of a slice. */
struct idr_state {
  idr_view v;
  gpuiso_opts solver;    /* antitonic, unclipped, in double precision */
  gpuiso_cuda_plan plan;
  int64_t plan_rows;     /* 0: no plan */
  int64_t max_rows;      /* rows of a full slice */
  int64_t run_cap;       /* runs the device's run buffers hold */
  int64_t out_cap;       /* runs out's arrays hold */
  int64_t *offsets;      /* max_rows + 1: the plan's row layout */
  int64_t *row_runs;     /* max_rows */
};

template <class Exec>
static void idr_release(Exec &ex, idr_state *st) {
  idr_view &v = st->v;
  void *buf[] = {(void *)v.first, (void *)v.thr, (void *)v.obs_w, (void *)v.total, v.counted,
                 v.count,         v.cdf,         v.y,             v.w,             v.fit,           v.cnt,
                 v.seg_runs,      v.row_runs,    v.run_start,     v.run_value};
  for (size_t i = 0; i < sizeof buf / sizeof buf[0]; i++) ex.release(buf[i]);
  if (st->plan_rows) plan_release(ex, &st->plan);
  free(st->offsets);
  free(st->row_runs);
}

/* The observations by position and, within one, by threshold (stable: in input order); total:
 * each position's weight, summed in input order as the CPU engine does. Returns 0 when out of
 * memory. */
static int idr_by_position(int64_t n, const int32_t *pos, const int32_t *thr, const double *w,
                           int64_t npos, int64_t nthr, int64_t *first, int32_t *obs_thr,
                           double *obs_w, double *total) {
  int64_t *order = (int64_t *)malloc_dense((size_t)(n > 0 ? n : 1) * sizeof *order);
  if (!order || !idr_order(n, pos, npos, thr, nthr, first, order)) {
    free(order);
    return 0;
  }
  for (int64_t o = 0; o < n; o++) {
    obs_thr[o] = thr[order[o]];
    if (obs_w) obs_w[o] = w[order[o]];
  }
  memset(total, 0, (size_t)npos * sizeof *total);
  for (int64_t i = 0; i < n; i++) total[pos[i]] += w ? w[i] : 1.0;
  free(order);
  return 1;
}

/* The observations by position to the device, none of them counted yet. */
template <class Exec>
static gpuiso_status idr_upload(Exec &ex, idr_view &v, int64_t n, const int64_t *first, const int32_t *obs_thr,
                                const double *obs_w, const double *total, int threads) {
  int64_t npos = v.npos, most = n > npos ? n : npos + 1; /* the weights, or first */
  staging<Exec> sg;
  gpuiso_status s = stage_open(ex, &sg, (size_t)most * sizeof(double), threads);
  if (s == GPUISO_OK) s = stage_upload(ex, &sg, &v.first, first, npos + 1);
  if (s == GPUISO_OK) s = stage_upload(ex, &sg, &v.thr, obs_thr, n);
  if (s == GPUISO_OK) s = stage_upload(ex, &sg, &v.obs_w, obs_w, n);
  if (s == GPUISO_OK) s = stage_upload(ex, &sg, &v.total, total, npos);
  if (s == GPUISO_OK) s = make(ex, &v.counted, npos);
  stage_close(ex, &sg);
  return s == GPUISO_OK ? ex.fill(v.counted, 0, (size_t)npos * sizeof *v.counted) : s;
}

/* Uploads the observations, sizes the slices to the memory free and allocates their rows. */
template <class Exec>
static gpuiso_status idr_setup(Exec &ex, idr_state *st, int64_t n, const int32_t *pos,
                               const int32_t *thr, const double *w, gpuiso_error *err) {
  idr_view &v = st->v;
  int64_t npos = v.npos;
  int64_t *first = (int64_t *)malloc((size_t)(npos + 1) * sizeof *first);
  int32_t *obs_thr = (int32_t *)malloc_dense((size_t)n * sizeof *obs_thr);
  double *obs_w = w ? (double *)malloc_dense((size_t)n * sizeof *obs_w) : NULL;
  double *total = (double *)malloc((size_t)npos * sizeof *total);
  gpuiso_status s = GPUISO_OK;
  if (!first || !obs_thr || (w && !obs_w) || !total ||
      !idr_by_position(n, pos, thr, w, npos, v.nthr, first, obs_thr, obs_w, total)) {
    s = GPUISO_E_NOMEM;
    set_error(err, s, -1, -1);
  }
  /* Positions of equal weight fit as unweighted rows: no rows of weights. */
  int weighted = 0;
  for (int64_t j = 1; s == GPUISO_OK && j < npos; j++) weighted |= total[j] != total[0];
  if (s == GPUISO_OK) s = idr_upload(ex, v, n, first, obs_thr, obs_w, total, resolve_threads(&st->solver, n));
  if (s == GPUISO_OK) s = ex.alloc((void **)&v.count, (size_t)npos * sizeof *v.count);
  if (s == GPUISO_OK) s = ex.alloc((void **)&v.cdf, (size_t)npos * sizeof *v.cdf);
  if (s == GPUISO_OK) s = ex.fill(v.count, 0, (size_t)npos * sizeof *v.count);
  if (s == GPUISO_OK) s = ex.fill(v.cdf, 0, (size_t)npos * sizeof *v.cdf);
  free(first);
  free(obs_thr);
  free(obs_w);
  free(total);

  /* A row costs its values, fit, weights, runs (at most one per position) and segment counts,
   * and the solver's scratch; slices take half the memory free, leaving room for others, or all
   * of it where half holds no row; the solver's plan takes its fixed parts beside them. */
  size_t avail = 0;
  if (s == GPUISO_OK) s = device_options(ex, &st->solver, 1, &st->solver); /* the bytes of its plans */
  if (s == GPUISO_OK) s = plan_available(ex, &st->solver, &avail);
  v.segs = (npos + IDR_SEGMENT - 1) / IDR_SEGMENT;
  double row_bytes = (double)npos * ((weighted ? 4 : 3) * sizeof(double) + sizeof(int32_t) + sizeof(double)) +
                     (double)(v.segs + 1) * sizeof(int64_t) + plan_row_bytes(&st->solver, npos, npos, 1);
  double room = (double)avail - ARENA_FIXED_BYTES;
  double rows = (0.5 * (double)avail < room ? 0.5 * (double)avail : room) / row_bytes;
  if (rows < 1 && room >= row_bytes) rows = 1;
  if (s == GPUISO_OK && rows < 1) s = device_too_small(err, avail);
  st->max_rows = rows < 1 ? 1 : (rows > (double)v.nthr ? v.nthr : (int64_t)rows);
  int64_t cells = st->max_rows * npos;
  if (s == GPUISO_OK) s = ex.alloc((void **)&v.y, (size_t)cells * sizeof(double));
  if (s == GPUISO_OK && weighted) s = ex.alloc((void **)&v.w, (size_t)cells * sizeof(double));
  if (s == GPUISO_OK) s = ex.alloc((void **)&v.fit, (size_t)cells * sizeof(double));
  if (s == GPUISO_OK) s = ex.alloc((void **)&v.cnt, (size_t)cells * sizeof(double));
  if (s == GPUISO_OK) s = ex.alloc((void **)&v.seg_runs, (size_t)(st->max_rows * v.segs) * sizeof(int64_t));
  if (s == GPUISO_OK) s = ex.alloc((void **)&v.row_runs, (size_t)st->max_rows * sizeof(int64_t));
  st->offsets = (int64_t *)malloc((size_t)(st->max_rows + 1) * sizeof *st->offsets);
  st->row_runs = (int64_t *)malloc((size_t)st->max_rows * sizeof *st->row_runs);
  if (s == GPUISO_OK && (!st->offsets || !st->row_runs)) {
    s = GPUISO_E_NOMEM;
    set_error(err, s, -1, -1);
  }
  return s;
}

/* Room for a slice's runs on the device and for all runs so far in out. */
template <class Exec>
static gpuiso_status idr_reserve(Exec &ex, idr_state *st, int64_t slice_runs, gpuiso_cdf_runs *out,
                                 int64_t all_runs, gpuiso_error *err) {
  idr_view &v = st->v;
  gpuiso_status s = GPUISO_OK;
  if (slice_runs > st->run_cap) {
    ex.release(v.run_start);
    ex.release(v.run_value);
    v.run_value = NULL;
    st->run_cap = 0;
    s = ex.alloc((void **)&v.run_start, (size_t)slice_runs * sizeof *v.run_start);
    if (s == GPUISO_OK) s = ex.alloc((void **)&v.run_value, (size_t)slice_runs * sizeof *v.run_value);
    if (s == GPUISO_OK) st->run_cap = slice_runs;
  }
  if (s == GPUISO_OK && all_runs > st->out_cap) {
    int64_t cap = all_runs > 2 * st->out_cap ? all_runs : 2 * st->out_cap;
    int32_t *start = (int32_t *)realloc(out->start, (size_t)cap * sizeof *start);
    if (start) out->start = start;
    double *value = start ? (double *)realloc(out->value, (size_t)cap * sizeof *value) : NULL;
    if (value) out->value = value;
    if (value) {
      st->out_cap = cap;
    } else {
      s = GPUISO_E_NOMEM;
      set_error(err, s, -1, -1);
    }
  }
  return s;
}

/* The slice of thresholds v.k0 .. v.k0 + v.rows - 1: rows, fit, runs into out (through sg). */
template <class Exec>
static gpuiso_status idr_slice(Exec &ex, idr_state *st, staging<Exec> *sg, gpuiso_cdf_runs *out,
                               gpuiso_error *err) {
  idr_view &v = st->v;
  gpuiso_status s = GPUISO_OK;
  if (v.rows != st->plan_rows) { /* the first slice, or a shorter last one */
    if (st->plan_rows) plan_release(ex, &st->plan);
    st->plan_rows = 0;
    for (int64_t r = 0; r <= v.rows; r++) st->offsets[r] = r * v.npos;
    s = plan_init(ex, &st->plan, v.rows, st->offsets, GPUISO_DOUBLE, 1, &st->solver, err);
    if (s == GPUISO_OK) st->plan_rows = v.rows;
  }
  if (s == GPUISO_OK) s = each(ex, idr_rows_step{v}, v.npos);
  if (s == GPUISO_OK) s = plan_fit(ex, &st->plan, (const double *)v.y, (const double *)v.w, v.fit, (uint8_t *)NULL, err);
  if (s == GPUISO_OK) s = each(ex, idr_exact_step{v}, v.rows);
  if (s == GPUISO_OK) s = each(ex, idr_clamp_step{v}, v.npos);
  if (s == GPUISO_OK) s = each(ex, idr_count_step{v}, v.rows * v.segs);
  if (s == GPUISO_OK) s = each(ex, idr_scan_step{v}, v.rows);
  if (s == GPUISO_OK) s = ex.get(st->row_runs, v.row_runs, (size_t)v.rows * sizeof(int64_t));
  if (s != GPUISO_OK) return s;
  int64_t base = out->offset[v.k0], at = 0;
  for (int64_t r = 0; r < v.rows; r++) {
    int64_t runs = st->row_runs[r];
    st->row_runs[r] = at;
    at += runs;
    out->offset[v.k0 + r + 1] = base + at;
  }
  s = ex.put(v.row_runs, st->row_runs, (size_t)v.rows * sizeof(int64_t));
  if (s == GPUISO_OK) s = idr_reserve(ex, st, at, out, base + at, err);
  if (s == GPUISO_OK) s = each(ex, idr_write_step{v}, v.rows * v.segs);
  if (s == GPUISO_OK) s = stage_get(ex, sg, out->start + base, v.run_start, (size_t)at * sizeof(int32_t));
  if (s == GPUISO_OK) s = stage_get(ex, sg, out->value + base, v.run_value, (size_t)at * sizeof(double));
  return s;
}

/* The slices of thresholds in turn, their runs back through one staging sized to a slice's runs
 * at most (one a position of a row). */
template <class Exec>
static gpuiso_status idr_slices(Exec &ex, idr_state *st, gpuiso_cdf_runs *out, gpuiso_error *err) {
  idr_view &v = st->v;
  int64_t cells = st->max_rows * v.npos;
  staging<Exec> sg;
  gpuiso_status s = stage_open(ex, &sg, (size_t)cells * sizeof(double), resolve_threads(&st->solver, cells));
  for (int64_t k0 = 0; s == GPUISO_OK && k0 < v.nthr; k0 += v.rows) {
    v.k0 = k0;
    v.rows = v.nthr - k0 < st->max_rows ? v.nthr - k0 : st->max_rows;
    s = idr_slice(ex, st, &sg, out, err);
    if (s == GPUISO_OK && k0 + v.rows < v.nthr) s = exec_poll(ex, &st->plan.opt, err);
  }
  stage_close(ex, &sg);
  return s;
}

/* gpuiso_cuda_idr_fit over an executor. */
template <class Exec>
static gpuiso_status idr_fit_device(Exec &ex, int64_t n, const int32_t *pos, const int32_t *thr,
                                    const double *w, int64_t npos, int64_t nthr,
                                    const gpuiso_opts *opt, gpuiso_cdf_runs *out,
                                    gpuiso_error *err) {
  memset(out, 0, sizeof *out);
  out->npos = npos;
  out->nthr = nthr;
  set_error(err, GPUISO_OK, -1, -1);
  if (npos < 1 || nthr < 1 || npos > INT32_MAX || n < 1) {
    set_error(err, GPUISO_E_INTERNAL, -1, -1);
    return GPUISO_E_INTERNAL;
  }
  idr_state st;
  memset(&st, 0, sizeof st);
  st.v.npos = npos;
  st.v.nthr = nthr;
  st.solver = *opt;
  st.solver.increasing = 0;
  st.solver.lo = -INFINITY;
  st.solver.hi = INFINITY;
  gpuiso_status s = idr_setup(ex, &st, n, pos, thr, w, err);
  out->offset = (int64_t *)malloc((size_t)(nthr + 1) * sizeof *out->offset);
  if (s == GPUISO_OK && !out->offset) {
    s = GPUISO_E_NOMEM;
    set_error(err, s, -1, -1);
  }
  if (s == GPUISO_OK) out->offset[0] = 0;
  if (s == GPUISO_OK) s = idr_slices(ex, &st, out, err);
  idr_release(ex, &st);
  if (s != GPUISO_OK) gpuiso_cdf_runs_free(out);
  return s;
}

#endif

/* Batches: rows of an R matrix, and ragged groups, fitted in parallel over rows.
 *
 * Work runs in rounds of about GPUISO_POLL_EVERY elements; each round is one parallel loop and
 * the interrupt callback is polled between rounds, on the calling thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"


/* Rows of the column-major matrix are gathered in tiles of up to TILE_ROWS rows into a
 * row-major buffer, so that PAV reads contiguous memory and the matrix is read by cache lines:
 * as many rows as TILE_ELEMENTS allows. Longer rows take whole cache lines' worth of rows, up to
 * TILE_LONG_ROWS while every thread still gets two tiles and a tile stays under
 * TILE_MAX_ELEMENTS: the lines a tile loads hold a column's next rows too, which a tile of few
 * rows would load again for the next tile (a tile of 32 rows of 1e5 is 8% faster than one of 16,
 * and that 10% faster than one of 8). Tiles never take more memory than the matrix: there are no
 * more threads than tiles. */
#define LINE 8 /* doubles in a cache line */
#define TILE_ROWS 256
#define TILE_LONG_ROWS (4 * LINE)
#define TILE_ELEMENTS ((int64_t)1 << 17)
#define TILE_MAX_ELEMENTS ((int64_t)1 << 22)

/* A thread's workspace for rows of up to a given length: the PAV stack and, for rows on x, a
 * row's records and their scratch, and its knots' levels, weights and flags. */
typedef struct {
  pav_work pav;
  sort_record *rec;
  double *level, *weight;
  uint8_t *knot_start;
} row_work;

static void row_work_free(row_work *t) {
  pav_work_free(&t->pav);
  free(t->rec);
  free(t->level);
  free(t->weight);
  free(t->knot_start);
}

static int row_work_init(row_work *t, int64_t len, int on_x) {
  size_t c = (size_t)(len > 0 ? len : 1);
  memset(t, 0, sizeof *t);
  int ok = pav_work_init(&t->pav, len);
  if (!on_x) return ok;
  t->rec = malloc_dense(2 * c * sizeof *t->rec);
  t->level = malloc_dense(c * sizeof *t->level);
  t->weight = malloc_dense(c * sizeof *t->weight);
  t->knot_start = malloc_dense(c);
  return ok && t->rec && t->level && t->weight && t->knot_start;
}

/* A tile's rows, gathered row-major; each row's fit is written over its y (an engine reads a
 * row's y before writing its fit), so the tile takes half the cache a separate fit would. */
typedef struct {
  row_work row;
  double *y, *w, *x;
  uint8_t *start;
} tile_work;

static void tile_free(tile_work *t) {
  row_work_free(&t->row);
  free(t->y);
  free(t->w);
  free(t->x);
  free(t->start);
}

static int tile_init(tile_work *t, int64_t rows, int64_t ncol, int gather_w, int gather_x,
                     int on_x, int want_start) {
  size_t m = (size_t)(rows * ncol > 0 ? rows * ncol : 1);
  memset(t, 0, sizeof *t);
  int ok = row_work_init(&t->row, ncol, on_x);
  t->y = malloc(m * sizeof *t->y);
  if (gather_w) t->w = malloc(m * sizeof *t->w);
  if (gather_x) t->x = malloc(m * sizeof *t->x);
  if (want_start) t->start = malloc(m);
  /* on failure the caller frees what was allocated, with every other tile */
  return ok && t->y && (!gather_w || t->w) && (!gather_x || t->x) && (!want_start || t->start);
}

/* The fit of a row of n elements in the order of its x, as isoreg_batch fits it: the elements
 * sorted stably by x, tied x pooled into knots (the weighted mean of their y, 0 for weight 0;
 * sums in x order), the knots fitted and each element given its knot's level. start (NULL for
 * none) flags the first element, in x order, of each block. */
static gpuiso_status fit_row_on_x(int64_t n, const double *x, const double *y, const double *w,
                                  const gpuiso_opts *opt, row_work *t, double *fit,
                                  uint8_t *start, gpuiso_error *err) {
  sort_record *r = t->rec;
  for (int64_t j = 0; j < n; j++) {
    gpuiso_status s = isfinite(x[j]) ? value_status(y[j], w ? w[j] : 1.0) : GPUISO_E_X_NONFINITE;
    if (s != GPUISO_OK) {
      set_error(err, s, j, -1);
      return s;
    }
    sort_record e = {double_key(x[j]), j, y[j], w ? w[j] : 1.0};
    r[j] = e;
  }
  sort_records_serial(r, r + n, n);
  int64_t d = -1;
  for (int64_t p = 0; p < n; p++) {
    if (p == 0 || r[p].key != r[p - 1].key) {
      d++;
      t->level[d] = t->weight[d] = 0;
    }
    t->level[d] += r[p].w * r[p].y;
    t->weight[d] += r[p].w;
  }
  int64_t nk = d + 1;
  for (d = 0; d < nk; d++) {
    double sum = t->level[d], weight = t->weight[d];
    if (!isfinite(sum) || !isfinite(weight)) {
      set_error(err, GPUISO_E_OVERFLOW, -1, -1);
      return GPUISO_E_OVERFLOW;
    }
    t->level[d] = weight > 0 ? sum / weight : 0;
  }
  gpuiso_status s = fit_row(nk, t->level, t->weight, opt, &t->pav, t->level, t->knot_start, NULL, err);
  if (s != GPUISO_OK) {
    err->index = -1; /* a knot, not an element */
    return s;
  }
  d = -1;
  for (int64_t p = 0; p < n; p++) {
    int first = p == 0 || r[p].key != r[p - 1].key;
    d += first;
    fit[r[p].tag] = t->level[d];
    if (start) start[r[p].tag] = (uint8_t)(first && t->knot_start[d]);
  }
  return GPUISO_OK;
}

void keep_error(gpuiso_error *first, const gpuiso_error *e) {
#ifdef _OPENMP
#pragma omp critical(gpuiso_batch_error)
#endif
  if (first->status == GPUISO_OK || e->row < first->row) *first = *e;
}

static gpuiso_status fit_tile(int64_t r0, int64_t rows, int64_t nrow, int64_t ncol,
                              const double *y, const double *w, int64_t w_len, const double *x,
                              const gpuiso_opts *opt, double *fit, uint8_t *start, tile_work *t,
                              gpuiso_error *err) {
  int shared_w = w && w_len == ncol && w_len != nrow * ncol;
  /* Transposed in strips of LINE columns: each row of the tile gets a cache line at a time, while
   * the strip's columns are read down in parallel streams. */
  for (int64_t j0 = 0; j0 < ncol; j0 += LINE) {
    int64_t j1 = ncol - j0 < LINE ? ncol : j0 + LINE;
    for (int64_t r = 0; r < rows; r++) {
      const double *src = y + r0 + r;
      double *dst = t->y + r * ncol;
      for (int64_t j = j0; j < j1; j++) dst[j] = src[j * nrow];
      if (t->w)
        for (int64_t j = j0; j < j1; j++) t->w[r * ncol + j] = w[r0 + r + j * nrow];
      if (t->x)
        for (int64_t j = j0; j < j1; j++) t->x[r * ncol + j] = x[r0 + r + j * nrow];
    }
  }
  for (int64_t r = 0; r < rows; r++) {
    const double *wr = t->w ? t->w + r * ncol : (shared_w ? w : NULL);
    uint8_t *sr = start ? t->start + r * ncol : NULL;
    gpuiso_status s =
        x ? fit_row_on_x(ncol, t->x ? t->x + r * ncol : x, t->y + r * ncol, wr, opt, &t->row,
                         t->y + r * ncol, sr, err)
          : fit_row(ncol, t->y + r * ncol, wr, opt, &t->row.pav, t->y + r * ncol, sr, NULL, err);
    if (s != GPUISO_OK) {
      int64_t row = r0 + r;
      err->index = err->index >= 0 ? row + err->index * nrow : -1;
      err->row = row;
      return s;
    }
  }
  for (int64_t j0 = 0; j0 < ncol; j0 += LINE) {
    int64_t j1 = ncol - j0 < LINE ? ncol : j0 + LINE;
    for (int64_t r = 0; r < rows; r++) {
      double *dst = fit + r0 + r;
      const double *src = t->y + r * ncol;
      for (int64_t j = j0; j < j1; j++) dst[j * nrow] = src[j];
      if (start)
        for (int64_t j = j0; j < j1; j++) start[r0 + r + j * nrow] = t->start[r * ncol + j];
    }
  }
  return GPUISO_OK;
}

/* The rows of the matrix in tiles, each row in its own order (x NULL) or in that of its x (x_len
 * nrow * ncol: a matrix of y's shape; ncol: shared by the rows). */
static gpuiso_status batch_tiles(int64_t nrow, int64_t ncol, const double *y, const double *w,
                                 int64_t w_len, const double *x, int64_t x_len,
                                 const gpuiso_opts *opt, double *fit, uint8_t *start,
                                 gpuiso_error *err);

gpuiso_status gpuiso_batch_matrix(int64_t nrow, int64_t ncol, const double *y, const double *w,
                                  int64_t w_len, const gpuiso_opts *opt, double *fit,
                                  uint8_t *start, gpuiso_error *err) {
  if (opt->engine == GPUISO_GPU) return gpu_batch_matrix(nrow, ncol, y, w, w_len, opt, fit, start, err);
  return batch_tiles(nrow, ncol, y, w, w_len, NULL, 0, opt, fit, start, err);
}

gpuiso_status gpuiso_batch_matrix_xy(int64_t nrow, int64_t ncol, const double *y, const double *w,
                                     int64_t w_len, const double *x, int64_t x_len,
                                     const gpuiso_opts *opt, double *fit, uint8_t *start,
                                     gpuiso_error *err) {
  return batch_tiles(nrow, ncol, y, w, w_len, x, x_len, opt, fit, start, err);
}

/* Rows long enough to be split (pav_row_is_long), LINE of them at a time: gathered by whole
 * cache lines into contiguous rows, each fitted alone on all threads in the chunks that pav_row
 * would use (so the same bits as beside other rows), and scattered back. */
static gpuiso_status batch_long_rows(int64_t nrow, int64_t ncol, const double *y, const double *w,
                                     int64_t w_len, const gpuiso_opts *opt, double *fit,
                                     uint8_t *start, gpuiso_error *err) {
  int64_t strip = nrow < LINE ? nrow : LINE;
  size_t m = (size_t)(strip * ncol);
  int gather_w = w && w_len == nrow * ncol;
  double *ys = malloc_dense(m * sizeof *ys), *ws = gather_w ? malloc_dense(m * sizeof *ws) : NULL;
  uint8_t *ss = start ? malloc_dense(m) : NULL;
  int nth = resolve_threads(opt, nrow * ncol);
  gpuiso_status s = GPUISO_OK;
  if (!ys || (gather_w && !ws) || (start && !ss)) {
    s = GPUISO_E_NOMEM;
    set_error(err, s, -1, -1);
  }
  for (int64_t r0 = 0; s == GPUISO_OK && r0 < nrow; r0 += strip) {
    int64_t rows = nrow - r0 < strip ? nrow - r0 : strip;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth)
#endif
    for (int64_t j = 0; j < ncol; j++) {
      for (int64_t r = 0; r < rows; r++) ys[r * ncol + j] = y[r0 + r + j * nrow];
      if (ws)
        for (int64_t r = 0; r < rows; r++) ws[r * ncol + j] = w[r0 + r + j * nrow];
    }
    /* Enough rows for every thread to take whole ones: each row's chunks on one thread, which
     * leaves no thread idle at a row's last chunk (a row of 1e6 has 3). Else each row on all. */
    int by_row = rows >= 2 * (int64_t)nth;
    gpuiso_opts row_opt = *opt;
    if (by_row) {
      row_opt.nthreads = 1;
      row_opt.interrupt = NULL; /* only the calling thread polls, between strips */
    }
    gpuiso_error first = {GPUISO_OK, -1, -1, ""};
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic) if (by_row)
#endif
    for (int64_t r = 0; r < rows; r++) {
      if (!by_row && first.status != GPUISO_OK) continue;
      const double *wr = ws ? ws + r * ncol : w; /* else none, or shared by the rows */
      gpuiso_error e;
      gpuiso_status sr = pav_long_row(ncol, ys + r * ncol, wr, &row_opt, ys + r * ncol,
                                      ss ? ss + r * ncol : NULL, &e);
      if (sr == GPUISO_OK) continue;
      if (sr != GPUISO_E_INTERRUPT && sr != GPUISO_E_NOMEM) {
        e.index = e.index >= 0 ? r0 + r + e.index * nrow : -1;
        e.row = r0 + r;
      }
      keep_error(&first, &e);
    }
    if (first.status != GPUISO_OK) {
      s = first.status;
      if (err) *err = first;
      break;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth)
#endif
    for (int64_t j = 0; j < ncol; j++) {
      for (int64_t r = 0; r < rows; r++) fit[r0 + r + j * nrow] = ys[r * ncol + j];
      if (ss)
        for (int64_t r = 0; r < rows; r++) start[r0 + r + j * nrow] = ss[r * ncol + j];
    }
    if (r0 + rows < nrow && poll_interrupt(opt)) {
      s = GPUISO_E_INTERRUPT;
      set_error(err, s, -1, -1);
    }
  }
  free(ys);
  free(ws);
  free(ss);
  return s;
}

/* A round of tiles, t0 onwards (a piece_fn's index counts from 0), and what fit_tile reads. */
typedef struct {
  int64_t nrow, ncol, tile_rows, t0;
  const double *y, *w;
  int64_t w_len;
  const double *x;
  const gpuiso_opts *worker;
  double *fit;
  uint8_t *start;
  tile_work *work;
  gpuiso_error *first;
} tile_round;

static void fit_round_tile(void *ctx, int64_t i, int thread) {
  const tile_round *tr = ctx;
  int64_t r0 = (tr->t0 + i) * tr->tile_rows;
  int64_t rows = tr->nrow - r0 < tr->tile_rows ? tr->nrow - r0 : tr->tile_rows;
  gpuiso_error e;
  if (fit_tile(r0, rows, tr->nrow, tr->ncol, tr->y, tr->w, tr->w_len, tr->x, tr->worker, tr->fit,
               tr->start, &tr->work[thread], &e) != GPUISO_OK)
    keep_error(tr->first, &e);
}

static gpuiso_status batch_tiles(int64_t nrow, int64_t ncol, const double *y, const double *w,
                                 int64_t w_len, const double *x, int64_t x_len,
                                 const gpuiso_opts *opt, double *fit, uint8_t *start,
                                 gpuiso_error *err) {
  if (!x && nrow == 1 && opt->engine == GPUISO_PAV && pav_row_is_long(ncol)) {
    /* one long row: in place, split over the threads (as pav_row splits it, so the same bits) */
    gpuiso_status s = pav_long_row(ncol, y, w, opt, fit, start, err);
    if (s != GPUISO_OK && s != GPUISO_E_INTERRUPT && s != GPUISO_E_NOMEM && err) err->row = 0;
    return s;
  }
  if (!x && opt->engine == GPUISO_PAV && pav_row_is_long(ncol))
    return batch_long_rows(nrow, ncol, y, w, w_len, opt, fit, start, err);
  gpuiso_opts worker = *opt;
  worker.interrupt = NULL; /* only the calling thread may poll */
  worker.nthreads = 1;     /* the rows share the threads out */
  int64_t width = ncol > 0 ? ncol : 1;
  int nth = resolve_threads(opt, nrow * ncol);
  int64_t tile_rows = TILE_ELEMENTS / width;
  if (tile_rows < TILE_LONG_ROWS) {
    int64_t share = nrow / (2 * (int64_t)nth) / LINE * LINE, most_rows = TILE_MAX_ELEMENTS / width;
    tile_rows = share < LINE ? LINE : (share > TILE_LONG_ROWS ? TILE_LONG_ROWS : share);
    if (tile_rows > most_rows) tile_rows = most_rows;
  }
  tile_rows = tile_rows < 1 ? 1 : (tile_rows > TILE_ROWS ? TILE_ROWS : tile_rows);
  if (tile_rows > nrow) tile_rows = nrow > 0 ? nrow : 1;
  int64_t ntiles = (nrow + tile_rows - 1) / tile_rows;
  int gather_w = w && w_len == nrow * ncol, gather_x = x && x_len == nrow * ncol;
  if (nth > ntiles) nth = ntiles > 0 ? (int)ntiles : 1;
  /* rounds of about GPUISO_POLL_EVERY elements, in whole tiles for every thread */
  int64_t tiles_per_round = (GPUISO_POLL_EVERY / (tile_rows * width) / nth + 1) * nth;

  gpuiso_error first = {GPUISO_OK, -1, -1, ""};
  tile_work *work = calloc((size_t)nth, sizeof *work);
  int ok = work != NULL;
  for (int t = 0; ok && t < nth; t++) ok = tile_init(&work[t], tile_rows, ncol, gather_w, gather_x, x != NULL, start != NULL);
  if (!ok) first.status = GPUISO_E_NOMEM;

  tile_round tr = {.nrow = nrow, .ncol = ncol, .tile_rows = tile_rows, .y = y, .w = w,
                   .w_len = w_len, .x = x, .worker = &worker, .fit = fit, .start = start,
                   .work = work, .first = &first};
  for (; ok && tr.t0 < ntiles && first.status == GPUISO_OK; tr.t0 += tiles_per_round) {
    int64_t t1 = tr.t0 + tiles_per_round < ntiles ? tr.t0 + tiles_per_round : ntiles;
    for_each_piece(t1 - tr.t0, nth, 1, fit_round_tile, &tr);
    if (first.status == GPUISO_OK && t1 < ntiles && poll_interrupt(opt)) first.status = GPUISO_E_INTERRUPT;
  }
  for (int t = 0; work && t < nth; t++) tile_free(&work[t]);
  free(work);
  if (err) *err = first;
  return first.status;
}

/* ---- Ragged groups ---- */

void group_slots(int64_t *count, int nth, int64_t ngroups, int64_t *offset) {
  int64_t sum = 0;
  for (int64_t k = 0; k < ngroups; k++) {
    offset[k] = sum;
    for (int t = 0; t < nth; t++) {
      int64_t c = count[(size_t)t * (size_t)ngroups + (size_t)k];
      count[(size_t)t * (size_t)ngroups + (size_t)k] = sum;
      sum += c;
    }
  }
  offset[ngroups] = sum;
}

/* The state of a counting sort by group (group_by), shared by its passes over slices. */
typedef struct {
  int64_t n, ngroups;
  const int *g;
  int nth;
  int64_t *count, *perm;
} group_sort;

static void count_slice(void *ctx, int64_t t, int thread) {
  const group_sort *gs = ctx;
  const int *g = gs->g;
  int64_t *mine = gs->count + t * gs->ngroups;
  int64_t from = slice_bound(gs->n, (int)t, gs->nth), to = slice_bound(gs->n, (int)t + 1, gs->nth);
  for (int64_t i = from; i < to; i++) mine[g[i]]++;
}

static void place_slice(void *ctx, int64_t t, int thread) {
  const group_sort *gs = ctx;
  const int *g = gs->g;
  int64_t *next = gs->count + t * gs->ngroups, *perm = gs->perm;
  int64_t from = slice_bound(gs->n, (int)t, gs->nth), to = slice_bound(gs->n, (int)t + 1, gs->nth);
  for (int64_t i = from; i < to; i++) perm[next[g[i]]++] = i;
}

/* Stable counting sort of elements by group on nth threads: offset (ngroups + 1) gets where each
 * group starts, perm the elements group by group in their order of appearance. */
static int group_by(int64_t n, const int *g, int64_t ngroups, int nth, int64_t *offset,
                    int64_t *perm) {
  group_sort gs = {.n = n, .ngroups = ngroups, .g = g, .nth = nth, .perm = perm};
  gs.count = calloc((size_t)nth * (size_t)ngroups, sizeof *gs.count);
  if (!gs.count) return 0;
  for_each_piece(nth, nth, 1, count_slice, &gs);
  group_slots(gs.count, nth, ngroups, offset);
  for_each_piece(nth, nth, 1, place_slice, &gs);
  free(gs.count);
  return 1;
}

/* Whether group k is fitted alone on all threads (see pav_long_row). */
static int long_group(const gpuiso_opts *opt, const int64_t *offset, int64_t k) {
  return opt->engine == GPUISO_PAV && pav_row_is_long(offset[k + 1] - offset[k]);
}

/* The state of batch_groups, shared by its passes: over slices of the elements (gathering them
 * by group, scattering the fits back) and over a round of groups, k0 onwards (fitting them). */
typedef struct {
  int64_t n, k0;
  int nth;
  const int64_t *perm, *offset;
  const double *y, *w, *x;
  double *yg, *wg, *xg, *fg, *fit;
  uint8_t *sg, *start;
  const gpuiso_opts *worker;
  row_work *work;
  gpuiso_error first;
} group_pass;

static void gather_slice(void *ctx, int64_t t, int thread) {
  const group_pass *gp = ctx;
  const int64_t *perm = gp->perm;
  int64_t from = slice_bound(gp->n, (int)t, gp->nth), to = slice_bound(gp->n, (int)t + 1, gp->nth);
  for (int64_t p = from; p < to; p++) {
    gp->yg[p] = gp->y[perm[p]];
    if (gp->wg) gp->wg[p] = gp->w[perm[p]];
    if (gp->xg) gp->xg[p] = gp->x[perm[p]];
  }
}

static void scatter_slice(void *ctx, int64_t t, int thread) {
  const group_pass *gp = ctx;
  const int64_t *perm = gp->perm;
  int64_t from = slice_bound(gp->n, (int)t, gp->nth), to = slice_bound(gp->n, (int)t + 1, gp->nth);
  for (int64_t p = from; p < to; p++) {
    gp->fit[perm[p]] = gp->fg[p];
    if (gp->start) gp->start[perm[p]] = gp->sg[p];
  }
}

/* Group k0 + i, in its order of appearance or, with x, in the order of its x. */
static void fit_group(void *ctx, int64_t i, int thread) {
  group_pass *gp = ctx;
  int64_t k = gp->k0 + i;
  row_work *mine = &gp->work[thread];
  int64_t o = gp->offset[k], len = gp->offset[k + 1] - o;
  const double *wk = gp->wg ? gp->wg + o : NULL;
  uint8_t *sk = gp->sg ? gp->sg + o : NULL;
  gpuiso_error e;
  if ((gp->xg ? fit_row_on_x(len, gp->xg + o, gp->yg + o, wk, gp->worker, mine, gp->fg + o, sk, &e)
              : fit_row(len, gp->yg + o, wk, gp->worker, &mine->pav, gp->fg + o, sk, NULL, &e)) !=
      GPUISO_OK) {
    e.index = e.index >= 0 ? gp->perm[o + e.index] : -1;
    e.row = k;
    keep_error(&gp->first, &e);
  }
}

/* The groups gathered by a counting sort, fitted in parallel over groups (a long one alone on
 * all threads) and scattered back; each group in its order of appearance (x NULL) or, on the CPU
 * engines and when no group is long, in the order of its x (fit_row_on_x). */
static gpuiso_status batch_groups(int64_t n, const int *g, int64_t ngroups, const double *x,
                                  const double *y, const double *w, const gpuiso_opts *opt,
                                  double *fit, uint8_t *start, gpuiso_error *err) {
  gpuiso_opts worker = *opt;
  worker.interrupt = NULL;
  worker.nthreads = 1;
  int nth = resolve_threads(opt, n);
  size_t m = (size_t)(n > 0 ? n : 1);
  int64_t *offset = malloc(((size_t)ngroups + 1) * sizeof *offset);
  int64_t *perm = malloc_dense(m * sizeof *perm);
  group_pass gp = {.n = n, .nth = nth, .perm = perm, .offset = offset, .y = y, .w = w, .x = x,
                   .fit = fit, .start = start, .worker = &worker,
                   .first = {GPUISO_OK, -1, -1, ""}};
  gp.yg = malloc_dense(m * sizeof *gp.yg);
  gp.fg = malloc_dense(m * sizeof *gp.fg);
  gp.wg = w ? malloc_dense(m * sizeof *gp.wg) : NULL;
  gp.xg = x ? malloc_dense(m * sizeof *gp.xg) : NULL;
  gp.sg = start ? malloc_dense(m) : NULL;
  gp.work = calloc((size_t)nth, sizeof *gp.work);
  /* the counting sort keeps a count per group and thread: one thread when groups are many */
  int sort_threads = ngroups * nth > n ? 1 : nth;
  int ok = offset && perm && gp.yg && gp.fg && (!w || gp.wg) && (!x || gp.xg) &&
           (!start || gp.sg) && gp.work && group_by(n, g, ngroups, sort_threads, offset, perm);
  int64_t maxlen = 0;
  for (int64_t k = 0; ok && k < ngroups; k++)
    if (offset[k + 1] - offset[k] > maxlen) maxlen = offset[k + 1] - offset[k];
  for (int t = 0; ok && t < nth; t++) ok = row_work_init(&gp.work[t], maxlen, x != NULL);
  if (!ok) gp.first.status = GPUISO_E_NOMEM;

  if (ok) for_each_piece(nth, nth, 1, gather_slice, &gp);
  if (ok && opt->engine == GPUISO_GPU) { /* every group in one call */
    if (gpu_fit_rows(ngroups, offset, gp.yg, gp.wg, opt, gp.fg, gp.sg, &gp.first) != GPUISO_OK &&
        gp.first.index >= 0)
      gp.first.index = perm[gp.first.index];
  }
  int64_t k0 = opt->engine == GPUISO_GPU ? ngroups : 0;
  while (ok && k0 < ngroups && gp.first.status == GPUISO_OK) {
    int64_t k1 = k0 + 1;
    if (long_group(opt, offset, k0)) { /* alone, split over the threads as pav_row splits it */
      int64_t o = offset[k0];
      gpuiso_error e;
      if (pav_long_row(offset[k0 + 1] - o, gp.yg + o, gp.wg ? gp.wg + o : NULL, opt, gp.fg + o,
                       gp.sg ? gp.sg + o : NULL, &e) != GPUISO_OK) {
        e.index = e.index >= 0 ? perm[o + e.index] : -1;
        e.row = e.status == GPUISO_E_INTERRUPT ? -1 : k0;
        gp.first = e;
      }
    } else {
      /* short groups of this round: about GPUISO_POLL_EVERY elements */
      while (k1 < ngroups && offset[k1] - offset[k0] < GPUISO_POLL_EVERY && !long_group(opt, offset, k1))
        k1++;
      gp.k0 = k0;
      for_each_piece(k1 - k0, nth, 1, fit_group, &gp);
    }
    k0 = k1;
    if (gp.first.status == GPUISO_OK && k0 < ngroups && poll_interrupt(opt))
      gp.first.status = GPUISO_E_INTERRUPT;
  }
  if (ok && gp.first.status == GPUISO_OK) for_each_piece(nth, nth, 1, scatter_slice, &gp);
  for (int t = 0; gp.work && t < nth; t++) row_work_free(&gp.work[t]);
  free(gp.work);
  free(offset);
  free(perm);
  free(gp.yg);
  free(gp.fg);
  free(gp.wg);
  free(gp.xg);
  free(gp.sg);
  if (err) *err = gp.first;
  return gp.first.status;
}

gpuiso_status gpuiso_batch_groups(int64_t n, const int *g, int64_t ngroups, const double *y,
                                  const double *w, const gpuiso_opts *opt, double *fit,
                                  uint8_t *start, gpuiso_error *err) {
  return batch_groups(n, g, ngroups, NULL, y, w, opt, fit, start, err);
}

/* Groups on x from one sort by x for all groups: tied x pooled into each group's knots, the knots
 * fitted (a long group alone on all threads, or on the GPU) and the fit written in input order. */
static gpuiso_status groups_xy_sorted(int64_t n, const int *g, int64_t ngroups, const double *x,
                                      const double *y, const double *w, const gpuiso_opts *opt,
                                      double *fit, uint8_t *start, gpuiso_error *err) {
  gpuiso_sorted *sorted = NULL;
  gpuiso_grouped *grouped = NULL;
  int64_t nk;
  gpuiso_knots kn = {0, NULL, NULL, NULL, NULL, 0};
  int64_t *offset = NULL;
  gpuiso_status s = gpuiso_sort_groups_xy(n, x, y, w, g, ngroups, opt, &sorted, &nk, err);
  if (s == GPUISO_OK) s = gpuiso_group_sorted(sorted, opt, &grouped, &nk, err);
  if (s == GPUISO_OK) {
    size_t m = (size_t)(nk > 0 ? nk : 1);
    kn.n = nk;
    int have_knots = knots_alloc(&kn, m);
    offset = malloc(((size_t)ngroups + 1) * sizeof *offset);
    if (!have_knots || !offset) {
      s = GPUISO_E_NOMEM;
      set_error(err, s, -1, -1);
    }
  }
  if (s == GPUISO_OK) s = gpuiso_fit_grouped(grouped, opt, offset, &kn, err);
  if (s == GPUISO_OK) s = gpuiso_grouped_fitted(grouped, &kn, fit, start, err);
  knots_release(&kn);
  free(offset);
  gpuiso_grouped_free(grouped);
  gpuiso_sorted_free(sorted);
  return s;
}

gpuiso_status gpuiso_batch_groups_xy(int64_t n, const int *g, int64_t ngroups, const double *x,
                                     const double *y, const double *w, const gpuiso_opts *opt,
                                     double *fit, uint8_t *start, gpuiso_error *err) {
  /* Short groups are sorted and fitted each in its own workspace, in cache; a long one (or the
   * GPU) needs the knots of all groups at once. Both give the same bits. */
  int64_t *count = calloc((size_t)(ngroups > 0 ? ngroups : 1), sizeof *count);
  if (!count) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  for (int64_t i = 0; i < n; i++) count[g[i]]++;
  int any_long = 0;
  for (int64_t k = 0; k < ngroups; k++) any_long |= pav_row_is_long(count[k]);
  free(count);
  if (any_long || opt->engine == GPUISO_GPU)
    return groups_xy_sorted(n, g, ngroups, x, y, w, opt, fit, start, err);
  return batch_groups(n, g, ngroups, x, y, w, opt, fit, start, err);
}

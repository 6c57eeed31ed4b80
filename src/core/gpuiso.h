/* gpuiso core: exact weighted least-squares isotonic regression.
 *
 * Plain C99, no R. Serves the R glue (src/r_*.c), standalone C tests and the GPU harness.
 * Functions return a status and never print, exit or abort. Sizes and indices are 64-bit.
 */
#ifndef GPUISO_H
#define GPUISO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  GPUISO_OK = 0,
  GPUISO_E_NOMEM,        /* allocation failed */
  GPUISO_E_Y_NONFINITE,  /* y has NA, NaN or +-Inf at error.index */
  GPUISO_E_X_NONFINITE,  /* x has NA, NaN or +-Inf at error.index */
  GPUISO_E_W_NONFINITE,  /* w has NA, NaN or Inf at error.index */
  GPUISO_E_W_NEGATIVE,   /* w < 0 at error.index */
  GPUISO_E_W_ALLZERO,    /* every weight of a row (error.row) is zero */
  GPUISO_E_OVERFLOW,     /* sum of w * |y| (or of w) of a row is not finite in double */
  GPUISO_E_INTERRUPT,    /* the interrupt callback asked to stop */
  GPUISO_E_CUDA,         /* a CUDA call failed, the device is still usable; error.message has
                            the runtime's text */
  GPUISO_E_NO_CUDA,      /* the package was built without CUDA */
  GPUISO_E_INTERNAL,     /* a debug build found a broken invariant */
  GPUISO_E_CUDA_LOST,    /* a CUDA error after which the device is unusable in this process
                            (gpuiso_cuda_lost); error.message has the runtime's text */
  GPUISO_E_W_UNPLANNED,  /* w given to a device plan made for unweighted rows */
  GPUISO_E_W_SPAN        /* the hull solver (CPU or GPU): a row's largest weight is more than
                            about 2^1022 times its smallest positive one (hull_span_beyond) */
} gpuiso_status;

typedef struct {
  gpuiso_status status;
  int64_t index;         /* element (0-based, in the caller's layout) that caused it, or -1 */
  int64_t row;           /* row or group (0-based) that caused it, or -1 */
  char message[256];     /* extra text (CUDA errors), empty otherwise */
} gpuiso_error;

/* Polled from the calling thread between pieces of long work; a non-zero return stops the work
 * with GPUISO_E_INTERRUPT. poll may be NULL. */
typedef struct {
  int (*poll)(void *ctx);
  void *ctx;
} gpuiso_interrupt;

/* The engine of a fit: pool adjacent violators, the hull-merge solver of the GPU run on the
 * CPU (the same fit; see gpuiso_hull), or the CUDA solver (gpuiso_cuda_fit_rows; GPUISO_E_NO_CUDA
 * when the package was built without CUDA). */
typedef enum { GPUISO_PAV = 0, GPUISO_HULL = 1, GPUISO_GPU = 2 } gpuiso_engine;

/* The kernels of the CUDA engine. GPUISO_GPU_SIMPLE is the hull-merge solver at its plainest (a
 * thread builds each chunk's hull, a thread runs each merge, a thread reconstructs each chunk):
 * the reference that faster variants are checked against and the control of their ablations.
 * GPUISO_GPU_ROW_PAV is the control of the benchmarks: pool adjacent violators, one thread per
 * row (the design of torchsort); it does not check its input. GPUISO_GPU_FAST is the paper's
 * solver as far as it is built: batches of rows of up to 4096 elements on the lane kernels (rows
 * of up to 1024 packed several to a warp, longer ones a block of up to four warps each;
 * src/cuda/short_rows.cuh), device memory in proportion to the elements; other batches run the
 * simple path. */
typedef enum { GPUISO_GPU_SIMPLE = 0, GPUISO_GPU_ROW_PAV = 1, GPUISO_GPU_FAST = 2 } gpuiso_gpu_kernel;

/* Element type of the data the CUDA engine reads and writes. */
typedef enum { GPUISO_DOUBLE = 0, GPUISO_SINGLE = 1 } gpuiso_precision;

/* Options shared by every fit. lo/hi clip the fitted values (use -INFINITY/INFINITY for none). */
typedef struct {
  int increasing;        /* 1: non-decreasing fit, 0: non-increasing */
  double lo, hi;
  int nthreads;          /* <= 0: the package default (gpuiso_get_threads) */
  int chunks;            /* a single row split into this many chunks, fitted in parallel and
                            merged; <= 0: one chunk per thread for long rows */
  gpuiso_engine engine;  /* for rows, batches and the knots of a fit on x */
  int64_t hull_chunk;    /* hull engine: points per chunk (<= 0: 1024) */
  int64_t hull_walk_cap; /* hull engine: walk steps before a merge searches (<= 0: 64; of each
                           end where the CUDA solver walks both at once) */
  gpuiso_gpu_kernel gpu_kernel; /* CUDA engine: which kernels */
  gpuiso_precision gpu_precision; /* CUDA engine through the double API (gpuiso_fit, batches):
                            SINGLE fits float32 copies of y and w (see gpuiso_cuda_fit_rows) */
  int gpu_plain_sums;    /* CUDA engine's fast path, float32: the lanes sum their points in plain
                            float32 instead of double-double pairs (R's exact = FALSE; see
                            src/cuda/lane_sums.cuh); no effect on float64 or the other kernels */
  double gpu_memory;     /* CUDA engine: the most device bytes a fit takes (<= 0: what is free);
                            larger work runs in slices of rows and a row in segments */
  int gpu_block_rows;    /* CUDA engine's fast path: the longest row of the lane kernels, 1024,
                            2048 or 4096 (others round down to one of them, 1024 at least; <= 0:
                            4096); the engine lowers it to what the device's blocks hold in
                            shared memory (weighted rows on a 64 KB Turing block: 2048) */
  int solver_blocks;     /* start flags mark the solver's own blocks (see "Blocks for
                            gradients" below) instead of the changes of level */
  const gpuiso_interrupt *interrupt;
} gpuiso_opts;

/* ---- One row ------------------------------------------------------------------------------
 * Zero weights: an element of weight 0 does not influence the fit; it joins the block before it
 * (the first block when it comes before every positive weight), so its fitted value is the level
 * of the nearest positive-weight element on its left. A row with no positive weight is an error.
 * Blocks are maximal: neighbouring blocks never share a level, after clipping too.
 *
 * Blocks for gradients: with opt->solver_blocks set, the start flags (and *nblocks) are instead
 * the partition that the engine pooled the row into: PAV's pooled blocks and the elements it
 * left alone, the edges of the hull (an element starts a block where its point is a vertex of the
 * row's hull). The fit is differentiable on these blocks (gpuiso_vjp); levels of neighbouring
 * ones may coincide where clipping or rounding made them equal, and where two exact means are
 * equal the engines may split differently (the fit is not differentiable there). The fitted
 * values are the same bit for bit with either setting.
 */

/* Fit y (in the given order) with weights w (NULL: all 1). Writes n fitted values to fit (which
 * may be y itself) and, when start is not NULL, n flags (1 at the first element of each block).
 * *nblocks gets the number of blocks. */
gpuiso_status gpuiso_pav(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                         double *fit, uint8_t *start, int64_t *nblocks, gpuiso_error *err);

/* The same fit by the hull-merge engine: the slopes of the lower convex hull of the cumulative sum
 * diagram, from chunk hulls merged along bridges as segment lists (paper, sections 3 to 6). */
gpuiso_status gpuiso_hull(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                          double *fit, uint8_t *start, int64_t *nblocks, gpuiso_error *err);

/* gpuiso_pav or gpuiso_hull, as opt->engine says. */
gpuiso_status gpuiso_fit(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                         double *fit, uint8_t *start, int64_t *nblocks, gpuiso_error *err);

/* Sets *strict to whether x is strictly increasing, in which case a fit of y on x is gpuiso_pav
 * of y, and then checks that x is finite; a non-finite x before the first step down is an error
 * here, any other one an error of gpuiso_sort_xy. */
gpuiso_status gpuiso_scan_x(int64_t n, const double *x, int *strict, gpuiso_error *err);

/* The fitted step function at the distinct x values (knots), in arrays the caller provides. */
typedef struct {
  int64_t n;        /* number of knots */
  double *x;        /* distinct x, increasing */
  double *level;    /* fitted value at each knot */
  double *weight;   /* summed weight at each knot */
  uint8_t *start;   /* 1 where a block starts */
  int64_t nblocks;
} gpuiso_knots;

/* A fit of y on x in any order (x must be finite), in two steps so that the caller can size the
 * knot arrays: gpuiso_sort_xy sorts (x, y, w) by x (stably) and counts the distinct x;
 * gpuiso_fit_sorted pools tied x (weighted mean of y, weights summed; -0 and 0 are one value),
 * fits the knots, and writes the fit in input order. Release with gpuiso_sorted_free. */
typedef struct gpuiso_sorted gpuiso_sorted;

gpuiso_status gpuiso_sort_xy(int64_t n, const double *x, const double *y, const double *w,
                             const gpuiso_opts *opt, gpuiso_sorted **sorted, int64_t *nknots,
                             gpuiso_error *err);
/* kn->x, kn->level, kn->weight and kn->start need room for nknots. fit may be NULL when only the
 * knots are wanted. */
gpuiso_status gpuiso_fit_sorted(const gpuiso_sorted *sorted, const gpuiso_opts *opt, double *fit,
                                gpuiso_knots *kn, gpuiso_error *err);
/* Its two halves around the fit of the knots, for a caller that fits them elsewhere (the device):
 * the knots pooled (kn->n, kn->x, their means in kn->level, kn->weight; the input checked), and
 * each element's fitted value (fit, n, in input order) from the knots' levels. */
gpuiso_status gpuiso_pool_sorted(const gpuiso_sorted *sorted, gpuiso_knots *kn, gpuiso_error *err);
void gpuiso_sorted_fitted(const gpuiso_sorted *sorted, const double *level, double *fit);
void gpuiso_sorted_free(gpuiso_sorted *sorted);
/* The elements of the sorted records in x order, for the gradients of a fit on x: order (n, or
 * NULL) gets their input indices, start (n, or NULL) whether each begins a block of knot_start
 * (the knot flags of gpuiso_fit_sorted): it is the first element of a knot whose flag is set. */
void gpuiso_sorted_order(const gpuiso_sorted *sorted, const uint8_t *knot_start, int64_t *order,
                         uint8_t *start);

/* The fit of sorted records as its blocks only: the first and last x of each block, its level
 * and its summed weight (zero-weight x join the block before them, or the first block). One pass:
 * each distinct x goes onto the PAV stack as it is pooled, so no knot arrays are written, for
 * callers that need only the curve. *blocks is allocated here; release it with free(). */
typedef struct {
  double lower, upper, level, weight;
} gpuiso_block;

gpuiso_status gpuiso_curve_sorted(const gpuiso_sorted *sorted, const gpuiso_opts *opt,
                                  gpuiso_block **blocks, int64_t *nblocks, gpuiso_error *err);

/* ---- Fits of y on x per group -------------------------------------------------------------
 * One curve per group (element i in group g[i], 0..ngroups-1) and the curve of all groups pooled,
 * from one sort. gpuiso_sort_groups_xy is gpuiso_sort_xy that also remembers each element's
 * group (index and group share 63 bits: larger inputs fail as out of memory); gpuiso_fit_sorted
 * then fits the pooled curve. gpuiso_group_sorted counts the distinct (group, x) pairs, *nknots,
 * so that the caller can size the knot arrays; gpuiso_fit_grouped reads the records in x order
 * and pools each into its group's knots, so each group comes out sorted by x without a second
 * sort (checking y and w as gpuiso_fit_sorted does), then fits each group's knots, in parallel
 * over groups. A group without elements has no knots. Records of gpuiso_sort_xy form one group.
 * sorted must outlive grouped. Release with gpuiso_grouped_free. */
typedef struct gpuiso_grouped gpuiso_grouped;

gpuiso_status gpuiso_sort_groups_xy(int64_t n, const double *x, const double *y, const double *w,
                                    const int *g, int64_t ngroups, const gpuiso_opts *opt,
                                    gpuiso_sorted **sorted, int64_t *nknots, gpuiso_error *err);
gpuiso_status gpuiso_group_sorted(const gpuiso_sorted *sorted, const gpuiso_opts *opt,
                                  gpuiso_grouped **grouped, int64_t *nknots, gpuiso_error *err);
/* offset (ngroups + 1) gets where each group's knots start in kn, then nknots; kn->x, kn->level,
 * kn->weight and kn->start need room for nknots, and kn->nblocks counts the blocks of all
 * groups. err->row is the group of an error. */
gpuiso_status gpuiso_fit_grouped(const gpuiso_grouped *grouped, const gpuiso_opts *opt,
                                 int64_t *offset, gpuiso_knots *kn, gpuiso_error *err);
/* After gpuiso_fit_grouped: fit (n) gets each element's fitted value in input order, start (n,
 * or NULL) 1 at the first element in x order (ties in input order) of each knot whose flag in
 * kn->start is set. Fails only when out of memory. */
gpuiso_status gpuiso_grouped_fitted(const gpuiso_grouped *grouped, const gpuiso_knots *kn,
                                    double *fit, uint8_t *start, gpuiso_error *err);
void gpuiso_grouped_free(gpuiso_grouped *grouped);

/* ---- Calibration ---------------------------------------------------------------------------
 * The curves of calibrate_isotonic(): the fit of label on score (in any order; opt->increasing,
 * lo and hi apply) of all scores pooled and, when g is not NULL, of each group g[i] in
 * 0..ngroups-1, as blocks. ncurves = 1 + (g ? ngroups : 0): curve 0 is the pooled curve, curve
 * k + 1 that of group k (no blocks when the group has no element). first (ncurves + 1) gets where
 * each curve's blocks start in *blocks, then their number; *blocks is allocated here, release
 * it with free(). Errors: a non-finite score (X_NONFINITE), label (Y_NONFINITE) or weight, a
 * negative weight, at error.index; a curve with no positive weight (W_ALLZERO; error.row is the
 * group, -1 for the pooled curve); sums that overflow. gpuiso_calibrate runs on the CPU (sort,
 * pooling of tied scores, fit: gpuiso_sort_groups_xy, gpuiso_curve_sorted, gpuiso_fit_grouped);
 * gpuiso_cuda_calibrate on the GPU. */
gpuiso_status gpuiso_calibrate(int64_t n, const double *score, const double *label,
                               const double *w, const int *g, int64_t ngroups,
                               const gpuiso_opts *opt, gpuiso_block **blocks, int64_t *first,
                               gpuiso_error *err);

/* ---- Predictions -----------------------------------------------------------------------------
 * Curves of blocks: curve c has blocks first[c] .. first[c + 1] - 1, block b the knots from lower[b]
 * to upper[b] at level[b], blocks in increasing order (lower[b] <= upper[b] <= lower[b + 1]). */
typedef struct {
  const int64_t *first;
  const double *lower, *upper, *level;
} gpuiso_curves;

/* The blocks of a fit's knots (x non-decreasing, level at each): runs of one finite level, of one
 * sign (-0 apart from 0), that do not start at -Inf: a search of them gives what a search of
 * the knots gives, bit for bit. Writes
 * their first and last x and their level when lower is not NULL (room for nk); returns their
 * number, or -1 when x is not sorted or has NaN. */
int64_t gpuiso_knot_blocks(int64_t nk, const double *x, const double *level, double *lower,
                           double *upper, double *block_level);
/* Whether the nk knots x are non-decreasing, without NaN. */
int gpuiso_knots_sorted(int64_t nk, const double *x);

/* The curves at v[0 .. n - 1], v[i] on curve curve[i] (curve NULL: curve 0), on opt's threads:
 * the level of the last block that starts at or below v[i], the first block's below the curve;
 * linear: interpolated between a block's last knot and the next block's first, as R's
 * findInterval over the knots and interpolation between them compute it. NaN v[i], or a curve
 * without blocks, gives missing; so does a v[i] outside its curve when outside_missing. *beyond
 * (may be NULL) gets the number of non-NaN v outside their curves. Fails only when interrupted. */
gpuiso_status gpuiso_predict(const gpuiso_curves *cv, int64_t n, const double *v,
                             const int *curve, int linear, int outside_missing, double missing,
                             const gpuiso_opts *opt, double *out, int64_t *beyond,
                             gpuiso_error *err);

/* ---- Batches ------------------------------------------------------------------------------ */

/* nrow independent rows of length ncol, stored column-major (as an R matrix: element (i, j) at
 * i + j * nrow). w: NULL, the same shape (w_len == nrow * ncol), or one weight per column shared
 * by all rows (w_len == ncol). fit has the shape of y; start (optional) too. */
gpuiso_status gpuiso_batch_matrix(int64_t nrow, int64_t ncol, const double *y, const double *w,
                                  int64_t w_len, const gpuiso_opts *opt, double *fit,
                                  uint8_t *start, gpuiso_error *err);
/* The same rows, each fitted in the order of its x (on the CPU engines): x of y's shape (x_len ==
 * nrow * ncol) or shared by all rows (x_len == ncol), finite. Each row's elements are sorted
 * stably by x and tied x pooled (the weighted mean of y, weights summed) as gpuiso_fit_sorted
 * pools them; start flags the first element, in x order, of each block. */
gpuiso_status gpuiso_batch_matrix_xy(int64_t nrow, int64_t ncol, const double *y, const double *w,
                                     int64_t w_len, const double *x, int64_t x_len,
                                     const gpuiso_opts *opt, double *fit, uint8_t *start,
                                     gpuiso_error *err);

/* Groups: element i belongs to group g[i] in 0..ngroups-1; groups may be ragged and interleaved.
 * Each group is fitted in its order of appearance; fit and start are in input order. */
gpuiso_status gpuiso_batch_groups(int64_t n, const int *g, int64_t ngroups, const double *y,
                                  const double *w, const gpuiso_opts *opt, double *fit,
                                  uint8_t *start, gpuiso_error *err);
/* The same groups, each fitted in the order of its x (finite): its elements sorted stably by x
 * and tied x pooled as gpuiso_fit_sorted pools them; start flags the first element, in x order,
 * of each block. */
gpuiso_status gpuiso_batch_groups_xy(int64_t n, const int *g, int64_t ngroups, const double *x,
                                     const double *y, const double *w, const gpuiso_opts *opt,
                                     double *fit, uint8_t *start, gpuiso_error *err);

/* ---- Gradients ------------------------------------------------------------------------------
 * The fit is the weighted mean of y over blocks, so its Jacobian averages over them. For rows laid
 * out one after another (offsets as for gpuiso_cuda_fit_rows) with their fits and solver block
 * flags (opt->solver_blocks), and an upstream gradient g with respect to the fit:
 *   dy[i] = w[i] G / W,  dw[i] = (y[i] - fit[i]) G / W,
 * G and W the sums of g and w over i's block. A fitted value clipped to opt->lo or opt->hi does
 * not move with the data, so its g counts 0. dy or dw may be NULL (dw needs y); w NULL: all 1.
 * Sums are double-double. g is not checked: non-finite values give non-finite sums. */
gpuiso_status gpuiso_vjp(int64_t nrows, const int64_t *offsets, const double *y, const double *w,
                         const double *fit, const uint8_t *start, const double *g,
                         const gpuiso_opts *opt, double *dy, double *dw, gpuiso_error *err);

/* Soft ranks and soft sorts with L2 regularisation (Blondel, Teboul, Berthet and Djolonga,
 * 2020), of each row of a column-major nrow x ncol matrix x, strength epsilon > 0 (n = ncol):
 *   rank: the projection of x / epsilon onto the permutahedron of (n, n - 1, ..., 1): with s
 *     the row sorted decreasingly and v the non-increasing isotonic regression of s - (n, ..., 1),
 *     s - v in the row's order (the largest value ranks n; decreasing: n + 1 minus that);
 *   sort: the projection of (n, ..., 1) / epsilon onto the permutahedron of the row: with r that
 *     vector, s the row sorted decreasingly and v the non-increasing isotonic regression of
 *     r - s, r - v reversed (increasing, as sort(); decreasing: as it is).
 * g NULL: out gets the values; otherwise out gets their vector-Jacobian product with the upstream
 * gradient g (same shape), for which the values are computed again. opt->engine fits the rows
 * (GPUISO_GPU: gpuiso_cuda_soft), opt->nthreads threads them. x must be finite
 * (GPUISO_E_X_NONFINITE, error.index in the matrix's layout). */
typedef enum { GPUISO_SOFT_RANK = 0, GPUISO_SOFT_SORT = 1 } gpuiso_soft_kind;

gpuiso_status gpuiso_soft(gpuiso_soft_kind kind, int64_t nrow, int64_t ncol, const double *x,
                          const double *g, double epsilon, int decreasing, const gpuiso_opts *opt,
                          double *out, gpuiso_error *err);

/* ---- Isotonic distributional regression (one covariate) ---------------------------------- */

/* Step CDFs stored by threshold. For threshold k (0..nthr-1), runs offset[k] .. offset[k+1]-1
 * cover the positions 0..npos-1 in order: run r holds value[r] from position start[r] to the
 * next run's start (or npos). IDR stores its fit at the distinct x this way (few runs per
 * threshold: the blocks of its antitonic fit); a dense set of CDFs is the same with one position
 * per CDF. */
typedef struct {
  int64_t nthr, npos;
  int64_t *offset;  /* nthr + 1 */
  int32_t *start;
  double *value;
} gpuiso_cdf_runs;

/* The distinct values of v (n finite doubles; -0 and 0 one value) increasing, into distinct
 * (room for n), their number into *ndistinct, and each element's 0-based rank among them into
 * code (input order): what IDR's positions and thresholds are; R's sort(unique(v)) and
 * match(v, that) - 1 in one sort. A non-finite value fails, GPUISO_E_X_NONFINITE at its index. */
gpuiso_status gpuiso_distinct_codes(int64_t n, const double *v, double *distinct, int32_t *code,
                                    int64_t *ndistinct, gpuiso_error *err);

/* IDR: n observations at positions pos[i] (0..npos-1, the rank of x among the distinct x) with
 * thresholds thr[i] (0..nthr-1, the rank of y among the distinct y) and weights w (NULL: 1; all
 * must be positive, and every position and threshold must have an observation). For each
 * threshold k the antitonic fit of the indicators 1{thr <= k}: non-decreasing in k, in [0, 1],
 * exactly 1 at the last threshold. Allocates out's arrays; release with gpuiso_cdf_runs_free. */
gpuiso_status gpuiso_idr_fit(int64_t n, const int32_t *pos, const int32_t *thr, const double *w,
                             int64_t npos, int64_t nthr, const gpuiso_opts *opt,
                             gpuiso_cdf_runs *out, gpuiso_error *err);
void gpuiso_cdf_runs_free(gpuiso_cdf_runs *runs);

/* The runs of nrow dense CDFs (matrix nrow x nthr, column-major): one position per row. */
gpuiso_status gpuiso_cdf_runs_dense(int64_t nrow, int64_t nthr, const double *cdf,
                                    gpuiso_cdf_runs *out, gpuiso_error *err);

/* Predictive CDFs to evaluate: query i is the CDF at position pos[i], moved a fraction lambda[i]
 * of the way to position pos[i] + 1 (linear interpolation; lambda 0 for a position itself). */
typedef struct {
  int64_t n;
  const int32_t *pos;
  const double *lambda;
} gpuiso_cdf_query;

/* CDF values at threshold indices kidx (-1: below the first threshold, where the CDF is 0).
 * paired: out[i] = F_i(kidx[i]) (nk == q->n); otherwise out[i + j * q->n] = F_i(kidx[j]). */
gpuiso_status gpuiso_cdf_eval(const gpuiso_cdf_runs *r, const gpuiso_cdf_query *q, int64_t nk,
                              const int64_t *kidx, int paired, const gpuiso_opts *opt, double *out,
                              gpuiso_error *err);

/* Lower quantiles: kout[i + j * q->n] = the smallest k with F_i(k) >= level[j] (F_i(k) > 0 for
 * a level of 0; the last threshold when there is none). */
gpuiso_status gpuiso_cdf_quantile(const gpuiso_cdf_runs *r, const gpuiso_cdf_query *q,
                                  int64_t nlev, const double *level, const gpuiso_opts *opt,
                                  int64_t *kout, gpuiso_error *err);

/* Progress of long work: report(ctx, fraction done) is called between rounds, from the calling
 * thread; a nonzero return stops the work as an interrupt does (GPUISO_E_INTERRUPT), so that a
 * report that catches the user's interrupt can pass it on. NULL: none. */
typedef struct {
  int (*report)(void *ctx, double done);
  void *ctx;
} gpuiso_progress;

/* CRPS of each query's step CDF (values at the increasing thresholds thr, 1 from the last on)
 * against the observation y[i]: the integral of (F_i(t) - 1{t >= y[i]})^2 over t. */
gpuiso_status gpuiso_cdf_crps(const gpuiso_cdf_runs *r, const double *thr,
                              const gpuiso_cdf_query *q, const double *y, const gpuiso_opts *opt,
                              const gpuiso_progress *progress, double *out, gpuiso_error *err);

/* ---- IDR with several covariates (a partial order) ----------------------------------------
 * The covariate vectors are points of R^d compared componentwise (the orders "sd" and "icx" of
 * ensemble groups are componentwise orders of transformed members, made in R). A poset holds the
 * transitive reduction of the order of npos distinct points, sorted lexicographically (so that
 * p <= q componentwise implies p <= q as indices): the points that cover point p (greater, with
 * no point between) are cover[first[p] .. first[p + 1]). */
typedef struct {
  int64_t npos;
  int64_t *first; /* npos + 1 */
  int32_t *cover;
} gpuiso_poset;

/* The poset of npos distinct points, the rows of the npos x d column-major matrix x, sorted
 * lexicographically (increasing in the first column, then the second, ...). out->first and
 * out->cover are malloc'ed (gpuiso_poset_free). */
gpuiso_status gpuiso_poset_reduce(int64_t npos, int64_t d, const double *x, const gpuiso_opts *opt,
                                  gpuiso_poset *out, gpuiso_error *err);
void gpuiso_poset_free(gpuiso_poset *g);

/* The weighted least-squares fit f on the poset of the means sum[p] / weight[p] (weights
 * positive), antitonic (p <= q implies f[p] >= f[q]); opt->increasing is ignored. Exact, by
 * recursive partitioning with minimum cuts (see idr_mincut.c). */
gpuiso_status gpuiso_poset_antitonic(const gpuiso_poset *g, const double *sum, const double *weight,
                                     const gpuiso_opts *opt, double *fit, gpuiso_error *err);

/* IDR on a poset: n observations at points pos[i] (0..npos-1) with thresholds thr[i]
 * (0..nthr-1) and positive weights w (NULL: 1); every point and threshold has an observation. For
 * each threshold k the antitonic fit of the indicators 1{thr <= k}, stored as runs over the
 * positions slot[p] (a permutation of the points: an order in which neighbouring CDFs are alike
 * makes fewer runs). progress may be NULL. */
gpuiso_status gpuiso_idr_poset_fit(const gpuiso_poset *g, int64_t n, const int32_t *pos,
                                   const int32_t *thr, const double *w, int64_t nthr,
                                   const int32_t *slot, const gpuiso_opts *opt,
                                   const gpuiso_progress *progress, gpuiso_cdf_runs *out,
                                   gpuiso_error *err);

/* Predictions at m new points xnew (m x d, column-major) from a fit on the npos points x (as for
 * gpuiso_poset_reduce, stored at slot[p]): out gets runs over 2m positions, the upper bound of
 * new point i at 2i (the least CDF of the greatest fitted points below it, 1 when there is none)
 * and its lower bound at 2i + 1 (the greatest CDF of the least fitted points above it, 0 when
 * none); both are clim, the CDF of all observations, for a point comparable to none. lambda[i]
 * gets the weight of the lower bound in the prediction: 0.5 with both bounds, 0 (the upper bound)
 * with points below only, 1 with points above only, 0 with none. */
gpuiso_status gpuiso_idr_poset_predict(const gpuiso_cdf_runs *fit, int64_t d, const double *x,
                                       const int32_t *slot, int64_t m, const double *xnew,
                                       const double *clim, const gpuiso_opts *opt,
                                       gpuiso_cdf_runs *out, double *lambda, gpuiso_error *err);

/* ---- Threads ------------------------------------------------------------------------------ */

int gpuiso_get_threads(void);
/* Sets the default thread count (clamped to [1, gpuiso_max_threads()]); returns the old one. */
int gpuiso_set_threads(int n);
/* Records the process that loaded the library: a process forked from it (where OpenMP's threads
 * would hang) runs on one thread. */
void gpuiso_threads_init(void);
/* Upper limit: processors, OMP_THREAD_LIMIT; 1 without OpenMP or in a forked child. */
int gpuiso_max_threads(void);
/* Default at load: gpuiso_max_threads(), further capped by OMP_NUM_THREADS when set. */
int gpuiso_default_threads(void);

/* Asks the system to back a large, not yet written output with huge pages (src/core/pages.c);
 * does nothing where it cannot. */
void gpuiso_advise_huge_pages(void *p, size_t bytes);
/* The 1-based positions of the set flags among n (src/core/flags.c), into as_int, or as_real
 * when as_int is NULL (n beyond int), which have room for as many as are set. */
void gpuiso_flag_positions(const uint8_t *flag, int64_t n, int *as_int, double *as_real);
/* The first of v[0 .. n - 1] that is not finite (nonnegative: not finite or negative), or n
 * (src/core/checks.c). */
int64_t gpuiso_first_bad(int64_t n, const double *v, int nonnegative);

/* increasing = "auto": up[p] gets whether y rises with x in problem p (problem[i] in 0..k-1; NULL:
 * one problem), by the sign of Spearman's rank covariance over the elements of positive weight (w
 * NULL: all), exactly; a problem without such elements gets 0. x and y finite, else
 * GPUISO_E_X_NONFINITE (src/core/rank_direction.c). */
gpuiso_status gpuiso_rank_direction(int64_t n, const double *x, const double *y, const double *w,
                                    const int *problem, int64_t k, int *up, gpuiso_error *err);

/* ---- Devices ------------------------------------------------------------------------------ */

typedef struct {
  char name[256];
  int major, minor;      /* compute capability */
  double memory_bytes;
} gpuiso_device_info;

/* 1 when built with CUDA. */
int gpuiso_cuda_built(void);
/* Fills up to max entries of info and sets *count to the number of devices the runtime sees.
 * Without CUDA returns GPUISO_E_NO_CUDA; when the runtime reports an error (no driver, no device)
 * returns its status (gpuiso_cuda_failure) with the runtime's text in err->message and
 * *count = 0; in a process forked from one that started CUDA (gpuiso_cuda_forked) it returns
 * GPUISO_E_CUDA, saying so, without a runtime call. */
gpuiso_status gpuiso_cuda_probe(gpuiso_device_info *info, int max, int *count, gpuiso_error *err);
/* Frees what the CUDA engine keeps from one fit to the next (pinned staging buffers); called when
 * the package is unloaded. */
void gpuiso_cuda_release(void);

/* ---- A lost device ----------------------------------------------------------------------
 * After some CUDA errors (the sticky ones: a kernel's illegal address, failed launch or assert,
 * ...) the CUDA context of the process is unusable: every later CUDA call fails the same way
 * until the process ends. Every CUDA error of the engine goes through gpuiso_cuda_failure, which
 * records the first sticky one, process-wide, so that callers stop using the device instead of
 * failing on it again. The record is a plain static: CUDA errors are reported from the thread
 * that called the engine, and callers are expected to use the engine from one thread. */

/* The sticky errors as X(code, name of the cudaError_t): by number, so that the core compiles
 * without CUDA headers (src/cuda/check.cuh checks the numbers against the names). See
 * src/core/cuda_lost.c for why these. */
#define GPUISO_CUDA_STICKY_ERRORS(X)                                                           \
  X(214, cudaErrorECCUncorrectable)                                                          \
  X(226, cudaErrorContained)                                                                 \
  X(700, cudaErrorIllegalAddress)                                                            \
  X(702, cudaErrorLaunchTimeout)                                                             \
  X(710, cudaErrorAssert)                                                                    \
  X(714, cudaErrorHardwareStackError)                                                        \
  X(715, cudaErrorIllegalInstruction)                                                        \
  X(716, cudaErrorMisalignedAddress)                                                         \
  X(717, cudaErrorInvalidAddressSpace)                                                       \
  X(718, cudaErrorInvalidPc)                                                                 \
  X(719, cudaErrorLaunchFailure)                                                             \
  X(721, cudaErrorTensorMemoryLeak)                                                          \
  X(810, cudaErrorMpsClientTerminated)                                                       \
  X(911, cudaErrorExternalDevice)

/* Reports a failed CUDA call: code is its cudaError_t, message the text for err->message.
 * Returns (and sets in err, which may be NULL) GPUISO_E_CUDA_LOST for a sticky code, recording
 * the device as lost with message unless it already is, and GPUISO_E_CUDA for any other code
 * (out of memory, a bad launch configuration: the device stays usable). */
gpuiso_status gpuiso_cuda_failure(int code, const char *message, gpuiso_error *err);
/* NULL while the device is usable; once lost, the message of the first sticky error. Never
 * lost in a build without CUDA, unless a test calls gpuiso_cuda_failure. */
const char *gpuiso_cuda_lost(void);
/* For tests only: forgets the lost state. It does not repair the CUDA context. */
void gpuiso_cuda_lost_reset(void);
/* CUDA does not survive fork(): a process forked from one that has started it (the workers of
 * parallel::mclapply, say) gets errors from every call, or with some drivers waits for ever.
 * gpuiso_cuda_started records the process that started it (the probe, before any other CUDA
 * work); gpuiso_cuda_forked is 1 in a process forked from that one, 0 elsewhere. */
void gpuiso_cuda_started(void);
int gpuiso_cuda_forked(void);

/* Device bytes a CUDA fit of nrows rows of row_length elements each asks for: y, w (weighted),
 * the fit, the block flags and the solver's scratch, as gpu_fit_rows plans them (opt->gpu_kernel
 * and hull_chunk apply, the chunk capped at the row), and the fixed parts of its plan and its
 * arrays (about 25 KB). Computed on the host, with or without a device, for a device whose blocks
 * hold a weighted block of four warps (Ampere and later; on Turing, weighted rows of 2,049 to
 * 4,096 elements take chunks, which take more); a batch over the memory free runs in slices. */
double gpuiso_gpu_workspace_bytes(int64_t nrows, int64_t row_length, gpuiso_precision type, int weighted,
                                  const gpuiso_opts *opt);

/* ---- The CUDA engine ------------------------------------------------------------------------
 * Rows of a batch lie one after another in y: row r is elements offsets[r] .. offsets[r + 1] - 1
 * (offsets: nrows + 1 values on the host, from 0, non-decreasing; rows may be empty). y, w (NULL:
 * all 1) and fit hold elements of the given precision; start (optional) gets a flag per element.
 * The fit is that of gpuiso_hull on each row, zero weights and clipping included. In single
 * precision the data are float32, every sum and slope is computed in double or double-double as
 * in double precision, and each fitted value is rounded to float32 once, so the output never
 * steps against its direction. On failure err->row is the first row that failed and err->index
 * the element (an index into y), or -1; GPUISO_E_CUDA and GPUISO_E_CUDA_LOST carry the CUDA
 * runtime's message, with the size asked for when an allocation failed. Device memory is freed on every path. The
 * interrupt of opt is polled between stages. */
gpuiso_status gpuiso_cuda_fit_rows(int64_t nrows, const int64_t *offsets, gpuiso_precision type,
                                   const void *y, const void *w, const gpuiso_opts *opt,
                                   void *fit, uint8_t *start, gpuiso_error *err);

/* The same on data already on the device, for callers that keep their data there and for timing
 * the kernels alone: a plan holds the row layout and the scratch memory of the kernels of
 * opt->gpu_kernel; gpuiso_cuda_plan_run takes device pointers and transfers nothing but its
 * error report. A plan made with weighted 0 has no room for weights (12 bytes a vertex of the
 * hull's slots instead of 20, as gpuiso_gpu_workspace_bytes counts them): its runs take w NULL,
 * and fail with GPUISO_E_W_UNPLANNED, touching nothing, when given w. */
typedef struct gpuiso_cuda_plan gpuiso_cuda_plan;

gpuiso_status gpuiso_cuda_plan_create(int64_t nrows, const int64_t *offsets,
                                      gpuiso_precision type, int weighted, const gpuiso_opts *opt,
                                      gpuiso_cuda_plan **plan, gpuiso_error *err);
gpuiso_status gpuiso_cuda_plan_run(gpuiso_cuda_plan *plan, const void *y, const void *w,
                                   void *fit, uint8_t *start, gpuiso_error *err);
void gpuiso_cuda_plan_free(gpuiso_cuda_plan *plan);

/* gpuiso_cuda_plan_run with the device time of each stage (tools/gpu-check): stage i is the
 * kernels launched as name[i] (a step of the pipeline), in milliseconds summed over its launches
 * (the merge levels are one stage), from CUDA events between the launches; and each launch, copy
 * or wait in order (the first GPUISO_MAX_STEPS): step_stage[k] its stage (-1 past the stages
 * kept), step_ms[k] its milliseconds (a merge level's launch, say). */
#define GPUISO_MAX_STAGES 24
#define GPUISO_MAX_STEPS 96
typedef struct {
  int count;
  char name[GPUISO_MAX_STAGES][48];
  double ms[GPUISO_MAX_STAGES];
  int steps;
  int step_stage[GPUISO_MAX_STEPS];
  double step_ms[GPUISO_MAX_STEPS];
} gpuiso_stage_times;
gpuiso_status gpuiso_cuda_plan_stages(gpuiso_cuda_plan *plan, const void *y, const void *w,
                                      void *fit, uint8_t *start, gpuiso_stage_times *times,
                                      gpuiso_error *err);

/* gpuiso_idr_fit on the device, with the same arguments and output. The indicator rows are made
 * on the device from the observations, never as an npos x nthr matrix on the host: the
 * thresholds are solved in slices, as many as device memory holds, each a batch of antitonic rows
 * of the CUDA solver (opt->gpu_kernel, hull_chunk and hull_walk_cap apply), and only the runs of
 * each threshold come back. The values agree with gpuiso_idr_fit up to rounding (bit for bit with
 * unit weights and one observation per position); rounding is kept from lowering a CDF as the
 * threshold rises position by position, where the CPU engine does it block by block. opt's
 * interrupt is polled between slices. */
gpuiso_status gpuiso_cuda_idr_fit(int64_t n, const int32_t *pos, const int32_t *thr,
                                  const double *w, int64_t npos, int64_t nthr,
                                  const gpuiso_opts *opt, gpuiso_cdf_runs *out,
                                  gpuiso_error *err);

/* gpuiso_calibrate on the device, with the same arguments and output. The input is checked on
 * the host (one pass; the element reported is the first bad one in input order, where the CPU
 * reports the first in score order); then the scores are sorted on the device (by score, then
 * stably by group), tied scores pooled per curve into knots, every curve's knots fitted as one
 * batch of the CUDA solver (opt->gpu_kernel, hull_chunk and hull_walk_cap apply; always in
 * double precision), and the fits compressed into blocks there: only the blocks come back. The
 * values agree with gpuiso_calibrate up to rounding (a knot's sums are the CPU's, summed in the
 * same order, unless its tied scores span more than one tile of 256 elements).
 * opt's interrupt is polled between stages. */
gpuiso_status gpuiso_cuda_calibrate(int64_t n, const double *score, const double *label,
                                    const double *w, const int *g, int64_t ngroups,
                                    const gpuiso_opts *opt, gpuiso_block **blocks,
                                    int64_t *first, gpuiso_error *err);

/* A fit of y on x in any order on the device: gpuiso_sort_xy and gpuiso_fit_sorted with the
 * knots fitted by the CUDA solver (as opt->engine GPUISO_GPU does on the CPU's knots), with x, y
 * and w (NULL: all 1) on the host. x, y and w are checked on the host (one pass; errors as the CPU
 * path's), sent in pinned slices whose copies overlap the kernels, sorted there by a radix sort of
 * x's order-preserving keys, tied x pooled into knots (the weighted mean of y, weights summed, in
 * the CPU's order unless a knot spans more than one tile of 256 elements), the knots fitted in
 * opt->gpu_precision, and the fit scattered back to input order there. fit (n) gets the fit in
 * input order; kn gets the knots, in one allocation from kn->x (the caller frees kn->x; level,
 * weight and start point into it) with kn->nblocks the start flags set; order (NULL, or n) the
 * elements' indices in x order and start (NULL, or n) the flags of gpuiso_sorted_order. Errors
 * of the knots' fit have err->index -1 and err->row -1. opt's interrupt is polled between stages.
 * Where the device cannot hold the sort, it is done on the host (gpuiso_sort_xy,
 * gpuiso_pool_sorted) and only the knots go through the device, in slices: the same outputs. */
gpuiso_status gpuiso_cuda_fit_xy(int64_t n, const double *x, const double *y, const double *w,
                                 const gpuiso_opts *opt, double *fit, gpuiso_knots *kn,
                                 int64_t *order, uint8_t *start, gpuiso_error *err);

/* gpuiso_predict on the GPU, for curves 0 .. ncurves - 1 of cv (host memory): the same values, bit
 * for bit. The blocks go up once, the values in slices; opt's interrupt is polled between slices.
 * Fails on an interrupt or a CUDA error (GPUISO_E_NO_CUDA without CUDA). */
gpuiso_status gpuiso_cuda_predict(const gpuiso_curves *cv, int64_t ncurves, int64_t n,
                                  const double *v, const int *curve, int linear,
                                  int outside_missing, double missing, const gpuiso_opts *opt,
                                  double *out, int64_t *beyond, gpuiso_error *err);

/* gpuiso_vjp on the device, for rows in the given precision (y, w, fit, g, dy, dw), with the
 * same arguments: a warp per tile of a row sums each block's part in the tile, blocks that cross
 * tiles add the tiles' boundary sums by a scan, without atomics. */
gpuiso_status gpuiso_cuda_vjp(int64_t nrows, const int64_t *offsets, gpuiso_precision type,
                              const void *y, const void *w, const void *fit,
                              const uint8_t *start, const void *g, const gpuiso_opts *opt,
                              void *dy, void *dw, gpuiso_error *err);

/* gpuiso_soft on the device, with the same arguments and output (in double precision): the rows
 * are sorted there, fitted as one batch of the CUDA solver with solver block flags, and the
 * backward pass is the device's gpuiso_cuda_vjp. */
gpuiso_status gpuiso_cuda_soft(gpuiso_soft_kind kind, int64_t nrow, int64_t ncol, const double *x,
                               const double *g, double epsilon, int decreasing,
                               const gpuiso_opts *opt, double *out, gpuiso_error *err);

#ifdef __cplusplus
}
#endif

#endif

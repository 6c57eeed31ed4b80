/* Internals shared by the core's files; not part of the public API. */
#ifndef GPUISO_INTERNAL_H
#define GPUISO_INTERNAL_H

#include <math.h>
#include <string.h>

#include "gpuiso.h"
#include "hull/geometry.h" /* GPUISO_HD */

#ifdef __cplusplus
extern "C" { /* for the CUDA engine (src/cuda), compiled as C++ */
#endif

/* For functions whose flag arguments are constants at each call: inlining specialises them. */
#if defined(__GNUC__)
#define GPUISO_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define GPUISO_ALWAYS_INLINE inline
#endif

/* Elements between two polls of the interrupt callback. */
#define GPUISO_POLL_EVERY ((int64_t)1 << 22)
/* Most chunks a single row is split into for threads. */
#define GPUISO_MAX_CHUNKS 64
/* Below this many elements in total, batches run on one thread. */
#define GPUISO_MIN_PARALLEL ((int64_t)1 << 15)

/* An entry of the PAV stack: a pooled block, or (weight 0) a run of untouched elements. */
typedef struct {
  double sum, weight; /* sum of w * y and of w; weight 0 marks a run */
  int64_t start;
} pav_block;

/* Workspace of the PAV stack for rows of up to cap elements (pav_work_init). Pages of the stack
 * that a row does not reach are never touched. */
typedef struct {
  pav_block *stack;
} pav_work;

int pav_work_init(pav_work *wk, int64_t cap);
void pav_work_free(pav_work *wk);

/* PAV of one row of a batch with a prepared workspace, on the calling thread (a long row in the
 * chunks of pav_long_row); see gpuiso_pav. err->index is relative to the row. */
gpuiso_status pav_row(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                      pav_work *wk, double *fit, uint8_t *start, int64_t *nblocks,
                      gpuiso_error *err);

/* A row of a batch long enough to be fitted in chunks (pav_row does so on the calling thread),
 * and its fit on opt's threads in the same chunks, with the same bits. */
int pav_row_is_long(int64_t n);
gpuiso_status pav_long_row(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                           double *fit, uint8_t *start, gpuiso_error *err);

/* An element of a fit of y on x, as the sort moves it: x's key, its tag, y and w. The tag is the
 * element's index, shifted left by gbits with the element's group in the low bits when the sort
 * is for fits per group (gpuiso_sort_groups_xy): the group rides through the sort in bits that
 * would otherwise be zero, instead of being gathered by index afterwards. */
typedef struct {
  uint64_t key;
  int64_t tag;
  double y, w;
} sort_record;

/* Order-preserving map of finite doubles to unsigned keys (-0 == 0), and its inverse: flip all
 * bits of negatives, the sign bit of the rest. (The CUDA calibration sorts by these keys too.) */
static inline GPUISO_HD uint64_t double_key(double v) {
  uint64_t u;
  if (v == 0) v = 0; /* -0 -> +0 */
  memcpy(&u, &v, sizeof u);
  return (u >> 63) ? ~u : (u | ((uint64_t)1 << 63));
}

static inline GPUISO_HD double key_double(uint64_t k) {
  uint64_t u = (k >> 63) ? (k & ~((uint64_t)1 << 63)) : ~k;
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* Whether a y and its weight may enter a fit: y finite, w finite and non-negative. */
static inline gpuiso_status value_status(double y, double w) {
  if (!isfinite(y)) return GPUISO_E_Y_NONFINITE;
  if (!(w >= 0 && w < INFINITY)) return w < 0 ? GPUISO_E_W_NEGATIVE : GPUISO_E_W_NONFINITE;
  return GPUISO_OK;
}

/* Records sorted by x, in buckets of disjoint key ranges. */
typedef struct {
  int64_t n;
  int gbits;       /* bits of a tag that hold the group */
  sort_record *r;
  int64_t nbuckets;
  int64_t *start;  /* nbuckets + 1: where each bucket starts, then n */
  int64_t *knots;  /* nbuckets + 1: distinct x in the buckets before each, then in all */
} sorted_records;

/* Sorts the n records of (x, y, w) (w NULL: 1) stably by x on nth threads, tagged with their
 * index and, when g is not NULL, their group in gbits bits. Fails when out of memory, or on a
 * non-finite x (the first at *bad). */
gpuiso_status sort_records(int64_t n, const double *x, const double *y, const double *w,
                           const int *g, int gbits, int nth, sorted_records *out, int64_t *bad);

/* A ranking's element as the sort moves it: the key and the tag of a sort_record alone. */
typedef struct {
  uint64_t key;
  int64_t tag;
} key_tag;

/* sort_records for key_tag records: *keys gets the n records sorted (free them), NULL on failure. */
gpuiso_status sort_keys(int64_t n, const double *x, const int *g, int gbits, int nth, key_tag **keys,
                        int64_t *bad);

/* Sorts len records by key on the calling thread, stably (tmp: scratch for len records). */
void sort_records_serial(sort_record *r, sort_record *tmp, int64_t len);
/* sort_records_serial for key_tag records. */
void sort_keys_serial(key_tag *r, key_tag *tmp, int64_t len);

static inline int64_t tag_index(int64_t tag, int gbits) { return tag >> gbits; }
static inline int tag_group(int64_t tag, int gbits) {
  return (int)(tag & (((int64_t)1 << gbits) - 1));
}

/* The records of gpuiso_sort_xy or gpuiso_sort_groups_xy, their number of groups (1 without
 * groups) and the threads that sorted them. */
struct gpuiso_sorted {
  sorted_records s;
  int64_t ngroups;
  int nth;
};

/* The knot arrays of gpuiso_fit_grouped for m knots (m >= 1): 0 when one cannot be allocated;
 * knots_release frees them either way. */
int knots_alloc(gpuiso_knots *kn, size_t m);
void knots_release(gpuiso_knots *kn);

/* Counting sort by group, shared by the batches and the fits per group: count holds nth rows of
 * ngroups counts (thread t's part of the input); they become each thread's next slot, so that
 * thread t's elements of a group land after those of the threads before it (stable), and
 * offset (ngroups + 1) gets where each group starts. */
void group_slots(int64_t *count, int nth, int64_t ngroups, int64_t *offset);

/* Keeps in *first the error of the lowest row (so the report does not depend on timing); safe
 * inside a parallel loop. */
void keep_error(gpuiso_error *first, const gpuiso_error *e);

/* One row by the engine of opt: pav_row with wk, or gpuiso_hull (never the CUDA engine, which
 * the batches call for all their rows at once). */
gpuiso_status fit_row(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                      pav_work *wk, double *fit, uint8_t *start, int64_t *nblocks,
                      gpuiso_error *err);

/* The CUDA engine (gpu.c) for the double-precision API: rows of offsets (see
 * gpuiso_cuda_fit_rows), in single precision when opt->gpu_precision says so; one row (err->row
 * -1 on failure, *nblocks counted from the fit); and the rows of a column-major matrix. */
gpuiso_status gpu_fit_rows(int64_t nrows, const int64_t *offsets, const double *y, const double *w,
                           const gpuiso_opts *opt, double *fit, uint8_t *start, gpuiso_error *err);
gpuiso_status gpu_fit(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                      double *fit, uint8_t *start, int64_t *nblocks, gpuiso_error *err);
gpuiso_status gpu_batch_matrix(int64_t nrow, int64_t ncol, const double *y, const double *w,
                               int64_t w_len, const gpuiso_opts *opt, double *fit, uint8_t *start,
                               gpuiso_error *err);

/* The checks of a fit of y on x that the device path (gpuiso_cuda_fit_xy) makes on the host, in
 * the CPU path's order of precedence: a non-finite x (the first in input order), then y and w
 * (the first bad element in input order). */
gpuiso_status gpu_check_xy(int64_t n, const double *x, const double *y, const double *w,
                           const gpuiso_opts *opt, gpuiso_error *err);

int resolve_threads(const gpuiso_opts *opt, int64_t work);

/* fn(ctx, i, thread) for every i in [0, count), on up to nth threads that take grain pieces at a
 * time; thread (0 .. nth - 1) numbers the one running it, for scratch of its own. Work for one
 * thread runs on the calling one without a parallel region, as thread 0: a region costs a system
 * call (the futex wake at its end) even for a team of one, a good part of a small fit's time. */
typedef void (*piece_fn)(void *ctx, int64_t i, int thread);
void for_each_piece(int64_t count, int nth, int64_t grain, piece_fn fn, void *ctx);

/* The most bytes of up-set bit rows that gpuiso_poset_reduce takes (poset.c): 256 MB, up to some
 * 64,000 points (whose covers can take as much: 21 million at 5e4 sorted ensembles of 10); more
 * are reduced by comparisons with the covers found instead, about ten times slower. */
#define POSET_BITS_MAX ((double)((int64_t)1 << 28))

/* gpuiso_poset_reduce with the bit rows' limit max_bits in bytes (0: by comparisons alone). */
gpuiso_status poset_reduce_within(int64_t npos, int64_t d, const double *x, const gpuiso_opts *opt,
                                  double max_bits, gpuiso_poset *out, gpuiso_error *err);

/* memcpy on up to nth threads, in pieces of whole cache lines: one thread copies at about a
 * third of what a device's host link moves (src/cuda/staging.cuh). */
void copy_parallel(void *dst, const void *src, size_t bytes, int nth);

/* dst, n elements of size bytes (4 or 8), from nruns runs: run k's value (value[k], of size bytes)
 * over elements first[k] .. first[k + 1] - 1 (first[0] = 0, first[nruns] = n); on nth threads. */
void fill_runs_parallel(void *dst, size_t size, const int64_t *first, const void *value, int64_t nruns, int64_t n,
                        int nth);

/* The flags of the level starts of rows (nrows, offsets; n elements) of such a fit: 1 at each
 * row's first element and where the value differs from the one before (-0 and 0 alike, a NaN
 * from any), else 0; first[nruns] = n. */
void level_starts_from_runs(uint8_t *start, int64_t n, int64_t nrows, const int64_t *offsets, size_t size,
                            const int64_t *first, const void *value, int64_t nruns, int nth);

/* Parallel slices of a scan of n elements (slices.c): as many as the default threads for that
 * work, at most GPUISO_MAX_CHUNKS; slice t of nth covers [slice_bound(n, t, nth),
 * slice_bound(n, t + 1, nth)). */
int slice_count(int64_t n);
static inline int64_t slice_bound(int64_t n, int t, int nth) { return n * t / nth; }

/* A scan of the slice [from, to) of the data of ctx: the first element at which it stops, or
 * to. first_stop_in_slices runs it on every slice (in parallel where there are several) and
 * returns the first stop of all, or n. */
typedef int64_t (*slice_scan)(const void *ctx, int64_t from, int64_t to);
int64_t first_stop_in_slices(int64_t n, slice_scan scan, const void *ctx);

/* gpuiso_vjp of one row of n elements (start[0] is taken as set; y NULL when dw is). */
void vjp_row(int64_t n, const double *y, const double *w, const double *fit,
             const uint8_t *start, const double *g, double lo, double hi, double *dy,
             double *dw);

/* IDR's observations ordered by a major key (0..nmajor-1) and, within one, by a minor key
 * (0..nminor-1), stably: two counting sorts. first (nmajor + 1) gets where each major key starts
 * in order (n). Returns 0 when out of memory. */
int idr_order(int64_t n, const int32_t *major, int64_t nmajor, const int32_t *minor,
              int64_t nminor, int64_t *first, int64_t *order);

/* The checks of gpuiso_calibrate's input that its device path makes on the host, in the CPU
 * path's order of precedence: scores, labels and weights (the first bad element in input order),
 * overflow of the sums, a curve without positive weight (the pooled one first). count (ngroups,
 * when g is not NULL) gets each group's number of elements. */
gpuiso_status calibrate_check(int64_t n, const double *score, const double *label, const double *w,
                              const int *g, int64_t ngroups, const gpuiso_opts *opt, int64_t *count,
                              gpuiso_error *err);

/* Of runs starting at start[0] = 0 < start[1] < ... (n of them): the one that covers position p. */
int64_t run_at(const int32_t *start, int64_t n, int32_t p);

/* The value of the step CDFs r at threshold k and position p, and that of query i of q
 * (k = -1: below the first threshold, 0). */
double cdf_run_value(const gpuiso_cdf_runs *r, int64_t k, int32_t p);
double cdf_query_value(const gpuiso_cdf_runs *r, const gpuiso_cdf_query *q, int64_t i, int64_t k);

/* v clipped to [lo, hi]. */
static inline GPUISO_HD double clip(double v, double lo, double hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}
/* The calling thread's number in its OpenMP team (0 without OpenMP). */
int thread_num(void);

/* malloc for a buffer about to be written in full: on huge pages where offered (pages.c). Not
 * for buffers touched sparsely, such as PAV's stacks, whose huge pages would be zeroed whole. */
void *malloc_dense(size_t bytes);
int poll_interrupt(const gpuiso_opts *opt);
void set_error(gpuiso_error *err, gpuiso_status s, int64_t index, int64_t row);

#ifdef __cplusplus
}
#endif

#endif

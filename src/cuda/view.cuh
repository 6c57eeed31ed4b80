/* The CUDA engine's data as each step of its kernels sees it.
 *
 * A step is a functor called once per index (a chunk, a row) by a kernel with a thread per index
 * (launch.cuh): on the GPU, and in the C tests on the SIMT executor (tools/simt). Pointers are
 * device pointers. Every index is an element's position in y, over all rows.
 */
#ifndef GPUISO_CUDA_VIEW_CUH
#define GPUISO_CUDA_VIEW_CUH

#include "gpu_plan.h"
#include "internal.h"
#include "simt.cuh"

/* No row has failed: the value the first failing row's index is lowered from. */
#define NO_FAILED_ROW (~0ull)

template <typename T>
struct solver_view {
  int64_t nrows, nchunks, chunk, cap; /* chunk: points per chunk; cap: the merges' walk cap */
  const int64_t *offsets;             /* nrows + 1: where each row starts in y */
  const int64_t *chunk_base;          /* nrows + 1: each row's first chunk */
  const int64_t *chunk_row;           /* nchunks: the row of each chunk */
  const T *y, *w;                     /* w NULL: all 1 */
  T *fit;
  uint8_t *start;                     /* NULL: not wanted */
  uint8_t *edge_start;                /* start when the solver's blocks are wanted, else NULL */
  double sign, lo, hi;                /* sign -1: a decreasing fit, as an increasing one of -y */
  int plain_sums;                     /* exact = FALSE: float32's lanes sum as plain_sums */
  /* the simple path's scratch */
  chunk_total *tot;
  hull_point *starts;                 /* nchunks: each chunk's first point */
  double *vd;                         /* nchunks slots of chunk + 1 vertices (hull/slots.h): */
  int weighted;                       /* (W, S), S alone unweighted, */
  int32_t *vi;                        /* and the point index */
  hull_segment *seg;                  /* the merge tree's segment lists */
  int64_t *nseg;
  row_state *rows;
  unsigned long long *failed_row;     /* the first failing row, or NO_FAILED_ROW */
  /* the fast path's tiles of chunks (row_scans.cuh) */
  int64_t ntiles;
  const int64_t *tile_base;           /* nrows + 1: each row's first tile */
  const int64_t *tile_row;            /* ntiles: the row of each tile */
  row_tile *tiles;
  /* the row-PAV control's stacks, an entry per element at most */
  double *pav_sum, *pav_weight;
  int64_t *pav_start;
};

/* The elements of T in 16 bytes: what a thread loads or stores at once (element_group, store_group). */
#define ELEMENT_GROUP(T) (16 / (int)sizeof(T))

/* The elements before p in its 16-byte group aligned in memory: groups of p aligned in memory
 * start at its elements k ELEMENT_GROUP(T) - group_lead(p). */
template <typename T>
static SIMT_DEVICE int group_lead(const T *p) {
  return (int)((uintptr_t)p % 16 / sizeof(T));
}

/* Whether the group of elements [k, k + ELEMENT_GROUP(T)) of p lies within [0, end) and p + k
 * is aligned to 16 bytes: one 16-byte access (a float4, a double2). */
template <typename T>
static SIMT_DEVICE int whole_group(const T *p, int64_t k, int64_t end) {
  return k >= 0 && k + ELEMENT_GROUP(T) <= end && ((uintptr_t)(p + k) & 15u) == 0;
}

/* Elements [k, k + ELEMENT_GROUP(T)) of p, those within [0, end), into out (the others 0): in one
 * 16-byte load where the group is whole, else one by one. A thread that sums a run of elements (a
 * chunk) so waits on a load every 4 floats or 2 doubles, where a load an element waited on each in
 * turn (the next sum needs it). */
template <typename T>
static SIMT_DEVICE void element_group(const T *p, int64_t k, int64_t end, T *out) {
  if (whole_group(p, k, end)) {
    simt::load16(p + k, out);
  } else {
    for (int h = 0; h < ELEMENT_GROUP(T); h++) out[h] = k + h >= 0 && k + h < end ? p[k + h] : (T)0;
  }
}

/* in to elements [k, k + ELEMENT_GROUP(T)) of p, those within [0, end): element_group's store. */
template <typename T>
static SIMT_DEVICE void store_group(T *p, int64_t k, int64_t end, const T *in) {
  if (whole_group(p, k, end)) {
    simt::store16(p + k, in);
  } else {
    for (int h = 0; h < ELEMENT_GROUP(T); h++)
      if (k + h >= 0 && k + h < end) p[k + h] = in[h];
  }
}

/* Chunk g: its row and its elements [from, to). */
template <typename T>
static inline GPUISO_HD int64_t chunk_range(const solver_view<T> &v, int64_t g, int64_t *from,
                                            int64_t *to) {
  int64_t r = v.chunk_row[g];
  int64_t end = v.offsets[r + 1];
  *from = v.offsets[r] + (g - v.chunk_base[r]) * v.chunk;
  *to = *from + v.chunk < end ? *from + v.chunk : end;
  return r;
}

/* Piece k of `piece` elements of chunk g, for index g * parts + k (parts pieces a chunk): its row,
 * and its elements [from, to), empty past the chunk's end. */
template <typename T>
static inline GPUISO_HD int64_t piece_range(const solver_view<T> &v, int64_t idx, int64_t piece,
                                            int64_t *from, int64_t *to) {
  int64_t parts = (v.chunk + piece - 1) / piece, g = idx / parts, k = idx % parts, end;
  int64_t r = chunk_range(v, g, from, &end);
  *from += k * piece;
  *to = *from + piece < end ? *from + piece : end;
  if (*from > *to) *from = *to;
  return r;
}

/* The slots of the view's chunk hulls, as the shared merge code reads them, for row r. */
template <typename T>
static inline GPUISO_HD hull_slots view_slots(const solver_view<T> &v, int64_t r) {
  hull_slots s = {v.starts, v.vd, v.weighted, v.vi, v.chunk + 1, v.chunk, v.chunk_base[r], v.offsets[r],
                  v.y, v.w, sizeof(T) == sizeof(float), v.rows[r].scale, v.sign};
  return s;
}

/* Whether row r failed its checks: the stages after them pass it by (its values may not be finite,
 * its sums may overflow), so that the host need not wait for the checks before queueing them.
 * The row-PAV control checks nothing and has no states. */
template <typename T>
static inline GPUISO_HD int row_failed(const solver_view<T> &v, int64_t r) {
  return v.rows && v.rows[r].status != GPUISO_OK;
}

static SIMT_DEVICE void lower_failed_row(unsigned long long *failed, int64_t r) {
  simt::atomic_min(failed, (unsigned long long)r);
}

static SIMT_DEVICE void raise_flag(int *flag) { simt::atomic_exch(flag, 1); }

template <typename T>
static inline GPUISO_HD int steps_against(const solver_view<T> &v, T before, T after) {
  return v.sign > 0 ? after < before : after > before;
}

#endif

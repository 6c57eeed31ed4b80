/* The rows over BLOCK_ROW_MAX that the chunk hulls flag wide (hull_is_wide: their points may not
 * hold their steps), fitted as the CPU engine fits them (hull/wide.h), to the same bits: a thread
 * per chunk builds the chunk's chain on the steps in the row's slots; the merge levels
 * (merge_level.cuh) merge a wide row's chains, a thread per merge, each merge's record kept in
 * the row's segment descriptors (which its chunks' hulls no longer need); then a thread per chunk
 * finds the block that holds its first element from those records and gives each of its elements
 * its block's level. The reconstruction (fit_step) passes these rows by.
 */
#ifndef GPUISO_CUDA_WIDE_ROWS_CUH
#define GPUISO_CUDA_WIDE_ROWS_CUH

#include "view.cuh"

/* Row r's merge records, an entry a chunk (in the 24 bytes of its segment descriptor). */
template <typename T>
static inline GPUISO_HD hull_wide_cross *wide_cross(const solver_view<T> &v, int64_t r) {
  return (hull_wide_cross *)(v.seg + v.chunk_base[r]);
}

/* Per chunk of a wide row: its chain. */
template <typename T>
struct wide_chain_step {
  solver_view<T> v;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t from, to, r = chunk_range(v, g, &from, &to);
    if (!v.rows[r].wide) return;
    hull_slots slots = view_slots(v, r);
    hull_wide_chain(&slots, from - v.offsets[r], to - v.offsets[r]);
  }
};

/* The merge at span of wide row r's chains at chunks g and g + span (chunk j of the row). */
template <typename T>
static SIMT_DEVICE void wide_merge(const solver_view<T> &v, int64_t r, int64_t j, int64_t span) {
  int64_t len = v.offsets[r + 1] - v.offsets[r], to = (j + 2 * span) * v.chunk;
  hull_slots slots = view_slots(v, r);
  hull_wide_merge(&slots, j * v.chunk, (j + span) * v.chunk, to < len ? to : len, wide_cross(v, r) + j + span);
}

/* Per chunk of a wide row: the levels of its elements, and the solver's blocks. */
template <typename T>
struct wide_level_step {
  solver_view<T> v;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t from, to, r = chunk_range(v, g, &from, &to);
    if (!v.rows[r].wide) return;
    hull_slots slots = view_slots(v, r);
    int64_t o = v.offsets[r], m = v.chunk_base[r + 1] - v.chunk_base[r];
    for (int64_t b = hull_wide_first(wide_cross(v, r), g - v.chunk_base[r], m, v.chunk), e; o + b < to; b = e) {
      e = hull_wide_end(&slots, b);
      T z = (T)clip(hull_wide_level(&slots, b, e), v.lo, v.hi);
      int64_t i = o + b > from ? o + b : from, stop = o + e < to ? o + e : to;
      for (int64_t k = i; k < stop; k++) v.fit[k] = z;
      if (v.edge_start)
        for (int64_t k = i; k < stop; k++) v.edge_start[k] = k == o + b;
    }
  }
};

#endif

/* The reconstruction: a thread per piece of a chunk (the whole chunk on the simple path, 32
 * elements on the fast path, a warp's threads for a chunk of 1024) finds its row's root hull
 * vertex at or before its first element and gives every element the level of the edge above it
 * (as hull.c); the solver's blocks (solver_blocks) are those edges, flagged here. Then, as in the
 * CPU engine, a level that rounding put on the wrong side of the one before takes that one (rare:
 * for each flagged row), and otherwise block starts are where the level changes.
 */
#ifndef GPUISO_CUDA_RECONSTRUCT_CUH
#define GPUISO_CUDA_RECONSTRUCT_CUH

#include "view.cuh"

template <typename T>
struct fit_step {
  solver_view<T> v;
  int64_t piece;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t i, end;
    int64_t r = piece_range(v, g, piece, &i, &end);
    if (i == end || v.rows[r].wide) return; /* a wide row's levels are wide_level_step's */
    const hull_segment *root = v.seg + v.chunk_base[r];
    hull_slots slots = view_slots(v, r);
    hull_pos q = hull_locate(&slots, root, v.nseg[v.chunk_base[r]], i);
    while (i < end) {
      int64_t ri;
      int head = hull_block_start(&slots, root, q, i, v.offsets[r]);
      T z = (T)clip(hull_edge(&slots, root, q, v.sign, &q, &ri), v.lo, v.hi);
      int64_t stop = ri < end ? ri : end;
      if (v.edge_start)
        for (int64_t k = i; k < stop; k++) v.edge_start[k] = k == i && head;
      for (; i < stop; i++) v.fit[i] = z;
    }
  }
};

/* Per piece: flags its row when a level steps against the direction, the element before the
 * piece included. */
template <typename T>
struct steps_step {
  solver_view<T> v;
  int64_t piece;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t from, to;
    int64_t r = piece_range(v, g, piece, &from, &to);
    for (int64_t i = from > v.offsets[r] ? from : from + 1; i < to; i++) {
      if (steps_against(v, v.fit[i - 1], v.fit[i])) {
        raise_flag(&v.rows[r].stepped);
        return;
      }
    }
  }
};

/* Per flagged row: a running maximum (minimum, decreasing). */
template <typename T>
struct unstep_step {
  solver_view<T> v;
  SIMT_DEVICE void operator()(int64_t r) const {
    if (!v.rows[r].stepped) return;
    for (int64_t i = v.offsets[r] + 1; i < v.offsets[r + 1]; i++)
      if (steps_against(v, v.fit[i - 1], v.fit[i])) v.fit[i] = v.fit[i - 1];
  }
};

/* Per piece: 1 at the first element of each block. */
template <typename T>
struct block_start_step {
  solver_view<T> v;
  int64_t piece;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t from, to;
    int64_t r = piece_range(v, g, piece, &from, &to);
    for (int64_t i = from; i < to; i++) v.start[i] = i == v.offsets[r] || v.fit[i] != v.fit[i - 1];
  }
};

#endif

/* The simple path's merge levels: a thread per merge runs the shared segment-list merge
 * (hull/merge.h). At span s, the node at a row's chunk j (a multiple of 2s) takes in the node at
 * chunk j + s, as in the CPU engine; one launch serves every row, its threads indexed by chunk.
 */
#ifndef GPUISO_CUDA_MERGE_LEVEL_CUH
#define GPUISO_CUDA_MERGE_LEVEL_CUH

#include "view.cuh"

template <typename T>
struct merge_step {
  solver_view<T> v;
  int64_t span;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t r = v.chunk_row[g], j = g - v.chunk_base[r], m = v.chunk_base[r + 1] - v.chunk_base[r];
    if (j % (2 * span) != 0 || j + span >= m) return;
    hull_slots slots = {v.vert, v.index, v.chunk + 1};
    v.nseg[g] = hull_merge(&slots, v.seg + g, v.nseg[g], v.seg + g + span, v.nseg[g + span], v.cap);
  }
};

#endif

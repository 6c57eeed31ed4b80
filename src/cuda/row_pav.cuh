/* The benchmarks' control: pool adjacent violators with one thread per row and its stack in
 * global memory, the design of torchsort. Same fit (zero weights and clipping included), sums in
 * double; the input is not checked. Its blocks are the stack's (solver_blocks).
 */
#ifndef GPUISO_CUDA_ROW_PAV_CUH
#define GPUISO_CUDA_ROW_PAV_CUH

#include "view.cuh"

template <typename T>
struct row_pav_step {
  solver_view<T> v;
  SIMT_DEVICE void operator()(int64_t r) const {
    int64_t from = v.offsets[r], to = v.offsets[r + 1], k = from - 1;
    for (int64_t i = from; i < to; i++) {
      double wi = v.w ? (double)v.w[i] : 1.0, sum = wi * (v.sign * (double)v.y[i]), weight = wi;
      int64_t s = i;
      /* pool while the block below is not below this one (cross products: a zero weight pools) */
      while (k >= from && v.pav_sum[k] * weight >= sum * v.pav_weight[k]) {
        sum += v.pav_sum[k];
        weight += v.pav_weight[k];
        s = v.pav_start[k--];
      }
      k++;
      v.pav_sum[k] = sum;
      v.pav_weight[k] = weight;
      v.pav_start[k] = s;
    }
    for (int64_t b = from; b <= k; b++) {
      T z = (T)clip(v.sign * (v.pav_sum[b] / v.pav_weight[b]), v.lo, v.hi);
      for (int64_t i = v.pav_start[b], end = b < k ? v.pav_start[b + 1] : to; i < end; i++) {
        v.fit[i] = z;
        if (v.edge_start) v.edge_start[i] = i == v.pav_start[b];
      }
    }
  }
};

#endif

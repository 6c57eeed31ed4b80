/* The executor of exec.cuh with the device-wide radix sort and scan of CUB, for the host sides
 * that sort (calibrate.cuh, soft.cuh, fit_xy.cuh; pipeline.cuh lists the calls), and the lanes
 * of staged transfers (staging.cuh), for every entry point whose host arrays go through the
 * device (all but the plans of plan_handle.cuh): pinned host buffers, non-blocking streams,
 * asynchronous copies on them, and launches on a lane (use_lane) so that a slice's kernel runs
 * while the next slice is copied. CUB's calls are made twice: to size their scratch memory, then
 * to run. */
#ifndef GPUISO_CUDA_SORT_EXEC_CUH
#define GPUISO_CUDA_SORT_EXEC_CUH

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "exec.cuh"
#include "pinned.cuh"

struct cuda_sort_exec : cuda_exec {
  typedef cudaStream_t lane;

  gpuiso_status lane_open(lane *l) {
    *l = NULL;
    gpuiso_status s = check(cudaStreamCreateWithFlags(l, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    if (s != GPUISO_OK) *l = NULL;
    return s;
  }
  void lane_close(lane l) {
    if (l) (void)cudaStreamDestroy(l); /* a failure here leaves nothing to undo */
  }
  /* Launches go to lane l from now on (NULL: the default stream). */
  void use_lane(lane l) { stream = l; }
  gpuiso_status lane_sync(lane l) { return check(cudaStreamSynchronize(l), "cudaStreamSynchronize"); }
  /* Pinned buffers are kept for the next fit (pinned.cu). */
  gpuiso_status pin(void **p, size_t bytes) {
    if ((*p = pinned_take(bytes))) return GPUISO_OK;
    cudaError_t e = cudaHostAlloc(p, bytes, cudaHostAllocDefault);
    if (e == cudaSuccess) {
      pinned_made(*p, bytes);
      return GPUISO_OK;
    }
    *p = NULL;
    char what[64];
    snprintf(what, sizeof what, "cudaHostAlloc of %zu bytes", bytes);
    return check(e, what);
  }
  void unpin(void *p) {
    if (p && !pinned_give(p)) (void)cudaFreeHost(p);
  }
  gpuiso_status put_async(void *dev, const void *pinned, size_t bytes, lane l) {
    return check(cudaMemcpyAsync(dev, pinned, bytes, cudaMemcpyHostToDevice, l), "cudaMemcpyAsync to the device");
  }
  gpuiso_status get_async(void *pinned, const void *dev, size_t bytes, lane l) {
    return check(cudaMemcpyAsync(pinned, dev, bytes, cudaMemcpyDeviceToHost, l), "cudaMemcpyAsync from the device");
  }
  template <typename K>
  gpuiso_status sort_pairs(const K *keys_in, K *keys_out, const int64_t *values_in,
                           int64_t *values_out, int64_t count, int end_bit) {
    size_t bytes = 0;
    void *temp = NULL;
    const char *what = "cub::DeviceRadixSort::SortPairs";
    gpuiso_status s = check(cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, values_in,
                                                            values_out, count, 0, end_bit, stream), what);
    if (s == GPUISO_OK) s = alloc(&temp, bytes > 0 ? bytes : 1);
    if (s == GPUISO_OK)
      s = check(cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, values_in, values_out,
                                                count, 0, end_bit, stream), what);
    release(temp);
    return timed(s, what);
  }
  /* A template, as sort_pairs, so that CUB's kernels are compiled only where they are called. */
  template <typename V>
  gpuiso_status exclusive_sum(V *data, int64_t count) {
    size_t bytes = 0;
    void *temp = NULL;
    const char *what = "cub::DeviceScan::ExclusiveSum";
    gpuiso_status s = check(cub::DeviceScan::ExclusiveSum(temp, bytes, data, count, stream), what);
    if (s == GPUISO_OK) s = alloc(&temp, bytes > 0 ? bytes : 1);
    if (s == GPUISO_OK) s = check(cub::DeviceScan::ExclusiveSum(temp, bytes, data, count, stream), what);
    release(temp);
    return timed(s, what);
  }
};

/* The solver's plan on this executor: the one of exec.cuh (a template would match this type more
 * closely than the base's functions, and be compiled again here). */
static inline gpuiso_status plan_init(cuda_sort_exec &ex, gpuiso_cuda_plan *p, int64_t nrows,
                                      const int64_t *offsets, gpuiso_precision type, int weighted,
                                      const gpuiso_opts *opt, gpuiso_error *err) {
  return plan_init(static_cast<cuda_exec &>(ex), p, nrows, offsets, type, weighted, opt, err);
}
static inline gpuiso_status plan_fit(cuda_sort_exec &ex, const gpuiso_cuda_plan *p, const double *y,
                                     const double *w, double *fit, uint8_t *start, gpuiso_error *err) {
  return plan_fit(static_cast<cuda_exec &>(ex), p, y, w, fit, start, err);
}
static inline void plan_release(cuda_sort_exec &ex, gpuiso_cuda_plan *p) {
  plan_release(static_cast<cuda_exec &>(ex), p);
}

#endif

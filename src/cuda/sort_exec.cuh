/* The executor of exec.cuh with the device-wide radix sort and scan of CUB, for the host sides
 * that sort (calibrate.cuh, soft.cuh; pipeline.cuh lists the calls). CUB's calls are made twice:
 * to size their scratch memory, then to run. */
#ifndef GPUISO_CUDA_SORT_EXEC_CUH
#define GPUISO_CUDA_SORT_EXEC_CUH

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "exec.cuh"

struct cuda_sort_exec : cuda_exec {
  template <typename K>
  gpuiso_status sort_pairs(const K *keys_in, K *keys_out, const int64_t *values_in,
                           int64_t *values_out, int64_t count, int end_bit) {
    size_t bytes = 0;
    void *temp = NULL;
    const char *what = "cub::DeviceRadixSort::SortPairs";
    gpuiso_status s = check(cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, values_in,
                                                            values_out, count, 0, end_bit), what);
    if (s == GPUISO_OK) s = alloc(&temp, bytes > 0 ? bytes : 1);
    if (s == GPUISO_OK)
      s = check(cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, values_in, values_out,
                                                count, 0, end_bit), what);
    release(temp);
    return s;
  }
  gpuiso_status exclusive_sum(int64_t *data, int64_t count) {
    size_t bytes = 0;
    void *temp = NULL;
    const char *what = "cub::DeviceScan::ExclusiveSum";
    gpuiso_status s = check(cub::DeviceScan::ExclusiveSum(temp, bytes, data, count), what);
    if (s == GPUISO_OK) s = alloc(&temp, bytes > 0 ? bytes : 1);
    if (s == GPUISO_OK) s = check(cub::DeviceScan::ExclusiveSum(temp, bytes, data, count), what);
    release(temp);
    return s;
  }
};

#endif

/* The calibration's entry point on the device (declared in gpuiso.h): the steps of calibrate.cuh
 * run by the executor of exec.cuh, with CUB's radix sort and scan. CPU-only twin:
 * src/core/cuda_none.c.
 */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "exec.cuh"
#include "calibrate.cuh"

/* CUB's calls are made twice: to size their scratch memory, then to run. */
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

extern "C" gpuiso_status gpuiso_cuda_calibrate(int64_t n, const double *score, const double *label,
                                               const double *w, const int *g, int64_t ngroups,
                                               const gpuiso_opts *opt, gpuiso_block **blocks,
                                               int64_t *first, gpuiso_error *err) {
  cuda_sort_exec ex = {{err, NULL}};
  return calibrate_device(ex, n, score, label, w, g, ngroups, opt, blocks, first, err);
}

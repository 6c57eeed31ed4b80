/* The executor of the CUDA engine's host sides (src/cuda/pipeline.cuh, idr.cuh, calibrate.cuh) on
 * the CPU: malloc for device memory, plain loops for the steps, a stable sort for the radix sort.
 * It counts the buffers held, fails the allocation numbered fail_at (from 1) when set, and
 * reports `memory` bytes free (to size IDR's slices). */
#ifndef GPUISO_CTEST_HOST_EXEC_H
#define GPUISO_CTEST_HOST_EXEC_H

#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "internal.h"

struct host_exec {
  gpuiso_error *err;
  int64_t held, allocs, fail_at;
  size_t memory;
  gpuiso_status alloc(void **p, size_t bytes) {
    *p = NULL;
    if (bytes == 0) return GPUISO_OK;
    if (++allocs == fail_at || !(*p = malloc(bytes))) {
      set_error(err, GPUISO_E_NOMEM, -1, -1);
      return GPUISO_E_NOMEM;
    }
    held++;
    return GPUISO_OK;
  }
  void release(void *p) {
    if (p) held--, free(p);
  }
  gpuiso_status available(size_t *bytes) {
    *bytes = memory;
    return GPUISO_OK;
  }
  gpuiso_status put(void *d, const void *h, size_t bytes) {
    if (bytes) memcpy(d, h, bytes);
    return GPUISO_OK;
  }
  gpuiso_status get(void *h, const void *d, size_t bytes) { return put(h, d, bytes); }
  gpuiso_status fill(void *d, int byte, size_t bytes) {
    if (bytes) memset(d, byte, bytes);
    return GPUISO_OK;
  }
  template <class Step>
  gpuiso_status each(const Step &step, int64_t count) {
    for (int64_t i = 0; i < count; i++) step(i);
    return GPUISO_OK;
  }
  gpuiso_status sync() { return GPUISO_OK; }
  template <typename K>
  gpuiso_status sort_pairs(const K *keys_in, K *keys_out, const int64_t *values_in,
                           int64_t *values_out, int64_t count, int end_bit) {
    K mask = end_bit >= (int)(8 * sizeof(K)) ? (K)~(K)0 : (K)(((K)1 << end_bit) - 1);
    std::vector<int64_t> order((size_t)count);
    for (int64_t i = 0; i < count; i++) order[(size_t)i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return (keys_in[a] & mask) < (keys_in[b] & mask); });
    for (int64_t i = 0; i < count; i++) {
      keys_out[i] = keys_in[order[(size_t)i]];
      values_out[i] = values_in[order[(size_t)i]];
    }
    return GPUISO_OK;
  }
  gpuiso_status exclusive_sum(int64_t *data, int64_t count) {
    int64_t at = 0;
    for (int64_t i = 0; i < count; i++) {
      int64_t v = data[i];
      data[i] = at;
      at += v;
    }
    return GPUISO_OK;
  }
};

#endif

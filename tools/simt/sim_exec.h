/* The executor of the CUDA engine's host sides (src/cuda/pipeline.cuh, idr.cuh, calibrate.cuh) on
 * the CPU: device memory and kernel launches of the SIMT executor (executor.cpp), and host
 * stand-ins for the CUB calls (a stable sort, a scan) that copy through the device memory as CUB
 * would read and write it. It counts the buffers held, fails the allocation numbered fail_at
 * (from 1) when set, reports `memory` bytes free (to size the slices of batches and of IDR;
 * 0: SIM_DEFAULT_MEMORY) and schedules its
 * launches from `seed`. A defect (a launch's, or host code touching device memory) is a CUDA
 * error, as a failed kernel is on a device. */
#ifndef GPUISO_SIMT_SIM_EXEC_H
#define GPUISO_SIMT_SIM_EXEC_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "internal.h"
#include "simt.cuh"

/* The memory free when `memory` is 0: room for any test's batch in one slice. */
#define SIM_DEFAULT_MEMORY ((size_t)1 << 40)

struct sim_exec {
  gpuiso_error *err;
  int64_t held, allocs, fail_at;
  size_t memory;
  uint64_t seed;
  uint64_t launches;
  size_t defects_seen; /* the defects of the process when this executor began (1 + count) */

  gpuiso_status defect(const char *what) {
    if (err) {
      err->status = GPUISO_E_CUDA;
      err->index = err->row = -1;
      snprintf(err->message, sizeof err->message, "%s", what);
    }
    return GPUISO_E_CUDA;
  }
  /* A defect that host code or a copy left since the last look (an executor made after a
   * defect does not report it again). */
  gpuiso_status news() {
    if (defects_seen == 0) defects_seen = 1 + sim_defects();
    if (1 + sim_defects() == defects_seen) return GPUISO_OK;
    defects_seen = 1 + sim_defects();
    return defect(sim_defect(defects_seen - 2));
  }
  gpuiso_status alloc(void **p, size_t bytes) {
    *p = NULL;
    if (defects_seen == 0) defects_seen = 1 + sim_defects();
    if (bytes == 0) return GPUISO_OK;
    if (++allocs == fail_at || !(*p = sim_alloc(bytes))) {
      set_error(err, GPUISO_E_NOMEM, -1, -1);
      return GPUISO_E_NOMEM;
    }
    held++;
    return GPUISO_OK;
  }
  void release(void *p) {
    if (p) held--, sim_free(p);
  }
  gpuiso_status available(size_t *bytes) {
    *bytes = memory ? memory : SIM_DEFAULT_MEMORY;
    return GPUISO_OK;
  }
  gpuiso_status put(void *d, const void *h, size_t bytes) {
    sim_put(d, h, bytes);
    return news();
  }
  gpuiso_status get(void *h, const void *d, size_t bytes) {
    sim_get(h, d, bytes);
    return news();
  }
  gpuiso_status fill(void *d, int byte, size_t bytes) {
    sim_fill(d, byte, bytes);
    return news();
  }
  template <class... P, class... A>
  gpuiso_status launch(const char *name, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared,
                       A... args) {
    gpuiso_status s = news();
    if (s != GPUISO_OK) return s;
    typedef simt_cpu::entry_of<P...> entry;
    typename entry::pack pack = {kernel, std::tuple<P...>(args...)};
    simt_cpu::launch_config c = {grid, block, shared, (const void *)kernel, name, &entry::run, &pack};
    char message[sizeof err->message];
    if (simt_cpu::run(c, seed, launches++, message, sizeof message)) {
      defects_seen = 1 + sim_defects();
      return defect(message);
    }
    return GPUISO_OK;
  }
  template <class... P>
  gpuiso_status allow_shared(void (*kernel)(P...), size_t bytes) {
    char message[sizeof err->message];
    return simt_cpu::allow_shared((const void *)kernel, bytes, message, sizeof message) ? defect(message)
                                                                                        : GPUISO_OK;
  }
  gpuiso_status sync() { return news(); }
  /* The lanes of staged transfers (src/cuda/staging.cuh), run in order: an asynchronous copy is
   * done when it returns. Lanes and pinned buffers count as held, and fail_at counts them. */
  typedef int *lane;
  gpuiso_status lane_open(lane *l) {
    void *p;
    gpuiso_status s = pin(&p, sizeof(int));
    *l = (int *)p;
    return s;
  }
  void lane_close(lane l) { unpin(l); }
  void use_lane(lane) {}
  gpuiso_status lane_sync(lane) { return news(); }
  gpuiso_status pin(void **p, size_t bytes) {
    *p = NULL;
    if (++allocs == fail_at || !(*p = malloc(bytes))) {
      set_error(err, GPUISO_E_NOMEM, -1, -1);
      return GPUISO_E_NOMEM;
    }
    held++;
    return GPUISO_OK;
  }
  void unpin(void *p) {
    if (p) held--, free(p);
  }
  gpuiso_status put_async(void *d, const void *pinned, size_t bytes, lane) { return put(d, pinned, bytes); }
  gpuiso_status get_async(void *pinned, const void *d, size_t bytes, lane) { return get(pinned, d, bytes); }
  template <typename K>
  gpuiso_status sort_pairs(const K *keys_in, K *keys_out, const int64_t *values_in,
                           int64_t *values_out, int64_t count, int end_bit) {
    K mask = end_bit >= (int)(8 * sizeof(K)) ? (K)~(K)0 : (K)(((K)1 << end_bit) - 1);
    std::vector<K> keys((size_t)count), sorted_keys((size_t)count);
    std::vector<int64_t> values((size_t)count), sorted_values((size_t)count), order((size_t)count);
    gpuiso_status s = get(keys.data(), keys_in, (size_t)count * sizeof(K));
    if (s == GPUISO_OK) s = get(values.data(), values_in, (size_t)count * sizeof(int64_t));
    if (s != GPUISO_OK) return s;
    for (int64_t i = 0; i < count; i++) order[(size_t)i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return (keys[a] & mask) < (keys[b] & mask); });
    for (int64_t i = 0; i < count; i++) {
      sorted_keys[(size_t)i] = keys[(size_t)order[(size_t)i]];
      sorted_values[(size_t)i] = values[(size_t)order[(size_t)i]];
    }
    s = put(keys_out, sorted_keys.data(), (size_t)count * sizeof(K));
    return s == GPUISO_OK ? put(values_out, sorted_values.data(), (size_t)count * sizeof(int64_t)) : s;
  }
  gpuiso_status exclusive_sum(int64_t *data, int64_t count) {
    std::vector<int64_t> v((size_t)count);
    gpuiso_status s = get(v.data(), data, (size_t)count * sizeof(int64_t));
    if (s != GPUISO_OK) return s;
    int64_t at = 0;
    for (int64_t &x : v) {
      int64_t next = at + x;
      x = at;
      at = next;
    }
    return put(data, v.data(), (size_t)count * sizeof(int64_t));
  }
};

/* The schedule seed of the executors a test makes now. */
static uint64_t sim_seed __attribute__((unused));

/* The schedule seeds a test runs under: GPUISO_SIMT_SEED alone when set, else 1, 2 and 3. */
static inline int sim_seeds(uint64_t seeds[3]) {
  const char *e = getenv("GPUISO_SIMT_SEED");
  if (e && *e) {
    seeds[0] = strtoull(e, NULL, 10);
    return 1;
  }
  for (int i = 0; i < 3; i++) seeds[i] = (uint64_t)i + 1;
  return 3;
}

#endif

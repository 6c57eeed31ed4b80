/* A fit out to the host as its runs of equal values where they are few (host_fit.cuh): a fit is
 * constant over its blocks, which in most data are far fewer than its elements (noise: one in
 * thousands), so that each run's first element and value cross instead of every value, and the
 * host writes the values out of them (fill_runs_parallel). The runs are of equal bits, so the
 * host's values are the device's to the bit. They are found in the fit's input array, free once
 * the fit is made: no memory beyond the slice's but the scan's scratch. */
#ifndef GPUISO_CUDA_FIT_RUNS_CUH
#define GPUISO_CUDA_FIT_RUNS_CUH

#include <stdlib.h>
#include <string.h>

#include "reconstruct.cuh"
#include "staging.cuh"

/* Elements a warp of the runs' kernels takes: 32 loads of 32 consecutive elements. */
#define RUN_TILE (SIMT_WARP * SIMT_WARP)

/* The bits of a value, to compare (-0 and 0 apart). */
static SIMT_DEVICE uint32_t value_bits(float v) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

static SIMT_DEVICE uint64_t value_bits(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

/* Whether element i of x starts a run of equal bits. */
template <typename T>
static SIMT_DEVICE int run_starts_at(const T *x, int64_t i) {
  return i == 0 || value_bits(x[i - 1]) != value_bits(x[i]);
}

/* count[t]: the runs that start in tile t of the n elements of x. */
template <typename T>
SIMT_KERNEL void run_counts_kernel(const T *x, int64_t n, int64_t *count) {
  int64_t t = (int64_t)simt::block_idx().x * FIT_WARPS + simt::warp(), from = t * RUN_TILE;
  if (from >= n) return; /* the whole warp */
  int64_t to = from + RUN_TILE < n ? from + RUN_TILE : n, mine = 0;
  for (int64_t i = from + simt::lane(); i < to; i += SIMT_WARP) mine += run_starts_at(x, i);
  warp_team warp = {0, SIMT_WARP};
  mine = warp.reduce(mine, [](int64_t a, int64_t b) { return a + b; });
  if (simt::lane() == 0) count[t] = mine;
}

/* The runs of tile t, from run at[t] on (the exclusive sum of run_counts_kernel's counts), in
 * order: each run's first element and its value. */
template <typename T>
SIMT_KERNEL void run_scatter_kernel(const T *x, int64_t n, const int64_t *at, int64_t *first, T *value) {
  int64_t t = (int64_t)simt::block_idx().x * FIT_WARPS + simt::warp(), from = t * RUN_TILE;
  if (from >= n) return; /* the whole warp */
  int64_t to = from + RUN_TILE < n ? from + RUN_TILE : n, r = at[t];
  unsigned lane = simt::lane();
  for (int64_t i0 = from; i0 < to; i0 += SIMT_WARP) {
    int64_t i = i0 + lane;
    int starts = i < to && run_starts_at(x, i);
    unsigned mask = simt::ballot(SIMT_FULL_MASK, starts);
    if (starts) {
      int64_t k = r + simt::popc(mask & ((1u << lane) - 1u));
      first[k] = i;
      value[k] = x[i];
    }
    r += simt::popc(mask);
  }
}

/* The n values at dev (made by the work on the default stream) to host: as runs where their
 * firsts and values take at most a quarter of the values' bytes, found in spare (n values'
 * bytes of device memory, free), else as they are (stage_get). Runs only where st stages the
 * values (a plain copy of a small array is cheaper than the kernels and the wait for the count).
 * Where they came as runs and starts is not NULL, it gets the flags of the level starts of the
 * rows (nrows, offsets), and *flagged is set. */
template <class Exec, typename T>
static gpuiso_status stage_get_values(Exec &ex, staging<Exec> *st, T *host, const T *dev, int64_t n, void *spare,
                                      uint8_t *starts, int64_t nrows, const int64_t *offsets, int *flagged) {
  *flagged = 0;
  size_t bytes = (size_t)n * sizeof(T);
  int64_t tiles = (n + RUN_TILE - 1) / RUN_TILE, most = (int64_t)(bytes / 4 / (sizeof(int64_t) + sizeof(T)));
  size_t counts = (size_t)(tiles + 1) * sizeof(int64_t);
  if (!st->buf[0] || most < 1 || counts + (size_t)(most + 1) * sizeof(int64_t) + (size_t)most * sizeof(T) > bytes)
    return stage_get(ex, st, host, dev, bytes);
  int64_t *at = (int64_t *)spare, *first = at + tiles + 1, nruns = 0;
  dim3 grid = grid_of((tiles + FIT_WARPS - 1) / FIT_WARPS), block(FIT_WARPS * SIMT_WARP);
  gpuiso_status s = ex.fill(at + tiles, 0, sizeof *at);
  if (s == GPUISO_OK) s = ex.launch("run_counts_kernel", run_counts_kernel<T>, grid, block, 0, dev, n, at);
  if (s == GPUISO_OK) s = ex.exclusive_sum(at, tiles + 1);
  if (s == GPUISO_OK) s = ex.get(&nruns, at + tiles, sizeof nruns);
  if (s != GPUISO_OK || nruns > most) return s == GPUISO_OK ? stage_get(ex, st, host, dev, bytes) : s;
  /* the firsts, a word for the host's sentinel first[nruns] = n, then the values: one copy */
  size_t runs_bytes = (size_t)(nruns + 1) * sizeof(int64_t) + (size_t)nruns * sizeof(T);
  s = ex.launch("run_scatter_kernel", run_scatter_kernel<T>, grid, block, 0, dev, n, (const int64_t *)at, first,
                (T *)(first + nruns + 1));
  int64_t *hfirst = (int64_t *)malloc(runs_bytes);
  if (s == GPUISO_OK && !hfirst) {
    s = GPUISO_E_NOMEM;
    set_error(ex.err, s, -1, -1);
  }
  if (s == GPUISO_OK) s = ex.get(hfirst, first, runs_bytes);
  if (s == GPUISO_OK) hfirst[nruns] = n;
  const T *hvalue = s == GPUISO_OK ? (const T *)(hfirst + nruns + 1) : NULL;
  if (s == GPUISO_OK) fill_runs_parallel(host, sizeof(T), hfirst, hvalue, nruns, n, st->threads);
  if (s == GPUISO_OK && starts) {
    level_starts_from_runs(starts, n, nrows, offsets, sizeof(T), hfirst, hvalue, nruns, st->threads);
    *flagged = 1;
  }
  free(hfirst);
  return s;
}

#endif

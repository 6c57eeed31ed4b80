/* Runs of sorted items on the device, for the host sides that pool what a sort brought together
 * (calibrate.cuh: tied scores and blocks; fit_xy.cuh: tied x): find_runs numbers the runs and
 * finds where each starts, run_sums sums values over each run. Over an executor (pipeline.cuh)
 * that also has exclusive_sum. */
#ifndef GPUISO_CUDA_RUNS_CUH
#define GPUISO_CUDA_RUNS_CUH

#include "launch.cuh"

/* Runs of len items where item i starts a run when starts(i): an exclusive scan of the flags
 * gives each item's run (at, len + 1, the number of runs last), and first (runs + 1) where each
 * run starts, then len. */
template <class Starts>
struct run_flag_step {
  Starts starts;
  int64_t len;
  int64_t *at;
  SIMT_DEVICE void operator()(int64_t i) const { at[i] = i < len && starts(i); }
};

template <class Starts>
struct run_first_step {
  Starts starts;
  int64_t len;
  const int64_t *at;
  int64_t *first;
  SIMT_DEVICE void operator()(int64_t i) const {
    if (i == len) first[at[len]] = len;
    else if (starts(i)) first[at[i]] = i;
  }
};

/* Allocates *at and *first (released by the caller, on failure too) and sets *nruns. */
template <class Exec, class Starts>
static gpuiso_status find_runs(Exec &ex, Starts starts, int64_t len, int64_t **at, int64_t **first,
                               int64_t *nruns) {
  gpuiso_status s = ex.alloc((void **)at, (size_t)(len + 1) * sizeof(int64_t));
  if (s == GPUISO_OK) s = each(ex, run_flag_step<Starts>{starts, len, *at}, len + 1);
  if (s == GPUISO_OK) s = ex.exclusive_sum(*at, len + 1);
  if (s == GPUISO_OK) s = ex.get(nruns, *at + len, sizeof *nruns);
  if (s == GPUISO_OK) s = ex.alloc((void **)first, (size_t)(*nruns + 1) * sizeof(int64_t));
  if (s == GPUISO_OK) s = each(ex, run_first_step<Starts>{starts, len, *at, *first}, len + 1);
  return s;
}

/* Sums of K values per item over the runs of find_runs, in tiles of RUN_SUM_TILE items so that
 * no thread walks a long run (a knot of many tied scores, a long block) alone: a thread per tile
 * sums each run's part in the tile, into the run's sum when the run starts there and into the
 * tile's head otherwise; then a thread per run adds the heads of the tiles it reaches into. A run
 * within one tile is summed in item order, as the CPU does. */
#define RUN_SUM_TILE 256

template <int K>
struct item_values {
  double v[K];
};

template <int K, class Value>
struct tile_sums_step {
  Value value; /* item_values<K> value(i) */
  int64_t len;
  const int64_t *at, *first;
  double *sum, *head; /* runs x K, tiles x K */
  SIMT_DEVICE void operator()(int64_t t) const {
    int64_t from = t * RUN_SUM_TILE, to = from + RUN_SUM_TILE < len ? from + RUN_SUM_TILE : len;
    int64_t r = at[from + 1] - 1; /* the run of item i is at[i + 1] - 1 */
    double acc[K];
    for (int j = 0; j < K; j++) head[t * K + j] = acc[j] = 0;
    for (int64_t i = from; i <= to; i++) {
      int64_t ri = i < to ? at[i + 1] - 1 : -1;
      if (ri != r) {
        double *part = first[r] >= from ? sum + r * K : head + t * K;
        for (int j = 0; j < K; j++) part[j] = acc[j], acc[j] = 0;
        r = ri;
      }
      if (i == to) break;
      item_values<K> x = value(i);
      for (int j = 0; j < K; j++) acc[j] += x.v[j];
    }
  }
};

template <int K>
struct run_sums_step {
  const int64_t *first;
  double *sum;
  const double *head;
  SIMT_DEVICE void operator()(int64_t r) const {
    for (int64_t t = first[r] / RUN_SUM_TILE + 1; t <= (first[r + 1] - 1) / RUN_SUM_TILE; t++)
      for (int j = 0; j < K; j++) sum[r * K + j] += head[t * K + j];
  }
};

/* sum (nruns x K) gets the sums of value over the runs of find_runs (at, first). */
template <int K, class Exec, class Value>
static gpuiso_status run_sums(Exec &ex, Value value, int64_t len, const int64_t *at,
                              const int64_t *first, int64_t nruns, double *sum) {
  int64_t tiles = (len + RUN_SUM_TILE - 1) / RUN_SUM_TILE;
  double *head = NULL;
  gpuiso_status s = ex.alloc((void **)&head, (size_t)(tiles * K) * sizeof(double));
  if (s == GPUISO_OK) s = each(ex, tile_sums_step<K, Value>{value, len, at, first, sum, head}, tiles);
  if (s == GPUISO_OK) s = each(ex, run_sums_step<K>{first, sum, head}, nruns);
  ex.release(head);
  return s;
}

/* A sorted item's w * y and w, the sums that pool tied items into a weighted mean. */
struct stream_values {
  const double *y, *w; /* w NULL: 1 */
  SIMT_DEVICE item_values<2> operator()(int64_t s) const {
    double ws = w ? w[s] : 1.0;
    return item_values<2>{{ws * y[s], ws}};
  }
};

#endif

/* Scans of one long array in parallel slices: the value checks (checks.c), the scan of x
 * (fit_xy.c) and the block-start positions (flags.c). */
#include <string.h>

#include "internal.h"

int slice_count(int64_t n) {
  gpuiso_opts opt;
  memset(&opt, 0, sizeof opt); /* the package's default threads */
  int nth = resolve_threads(&opt, n);
  return nth < GPUISO_MAX_CHUNKS ? nth : GPUISO_MAX_CHUNKS;
}

int64_t first_stop_in_slices(int64_t n, slice_scan scan, const void *ctx) {
  int nth = slice_count(n);
  int64_t stop[GPUISO_MAX_CHUNKS];
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static, 1)
#endif
  for (int t = 0; t < nth; t++) {
    int64_t to = slice_bound(n, t + 1, nth), first = scan(ctx, slice_bound(n, t, nth), to);
    stop[t] = first < to ? first : n;
  }
  /* The first stop of the first slice that has one is the first of all. */
  int64_t first = n;
  for (int t = 0; t < nth && first == n; t++) first = stop[t];
  return first;
}

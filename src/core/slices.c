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

typedef struct {
  int64_t n;
  int nth;
  slice_scan scan;
  const void *ctx;
  int64_t stop[GPUISO_MAX_CHUNKS];
} slice_stops;

static void scan_slice(void *ctx, int64_t t, int thread) {
  slice_stops *ss = ctx;
  int64_t to = slice_bound(ss->n, (int)t + 1, ss->nth);
  int64_t first = ss->scan(ss->ctx, slice_bound(ss->n, (int)t, ss->nth), to);
  ss->stop[t] = first < to ? first : ss->n;
}

int64_t first_stop_in_slices(int64_t n, slice_scan scan, const void *ctx) {
  slice_stops ss; /* stop[] unset: each slice writes its own */
  ss.n = n;
  ss.nth = slice_count(n);
  ss.scan = scan;
  ss.ctx = ctx;
  for_each_piece(ss.nth, ss.nth, 1, scan_slice, &ss);
  /* The first stop of the first slice that has one is the first of all. */
  int64_t first = n;
  for (int t = 0; t < ss.nth && first == n; t++) first = ss.stop[t];
  return first;
}

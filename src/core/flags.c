/* Block-start flags as the positions R returns (block_start): in parallel slices, each counted
 * and then written at its offset, since a fit with a block at every element (increasing data)
 * writes as many positions as fitted values. */
#include <string.h>

#include "internal.h"

static void write_positions(const uint8_t *flag, int64_t from, int64_t to, int64_t b, int *as_int,
                            double *as_real) {
  for (int64_t i = from; i < to; i++) {
    uint64_t eight;
    if (i % 8 == 0 && to - i >= 8 && (memcpy(&eight, flag + i, 8), eight == 0)) {
      i += 7; /* blocks are mostly long: eight flags at a time */
      continue;
    }
    if (!flag[i]) continue;
    if (as_int) as_int[b++] = (int)(i + 1);
    else as_real[b++] = (double)(i + 1);
  }
}

void gpuiso_flag_positions(const uint8_t *flag, int64_t n, int *as_int, double *as_real) {
  int nth = slice_count(n);
  if (nth == 1) { /* no counting pass, nor a parallel region (a system call even on one thread) */
    write_positions(flag, 0, n, 0, as_int, as_real);
    return;
  }
  int64_t offset[GPUISO_MAX_CHUNKS + 1];
  offset[0] = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth)
#endif
  for (int t = 0; t < nth; t++) {
    int64_t count = 0;
    for (int64_t i = slice_bound(n, t, nth); i < slice_bound(n, t + 1, nth); i++) count += flag[i] != 0;
    offset[t + 1] = count;
  }
  for (int t = 0; t < nth; t++) offset[t + 1] += offset[t];
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth)
#endif
  for (int t = 0; t < nth; t++)
    write_positions(flag, slice_bound(n, t, nth), slice_bound(n, t + 1, nth), offset[t], as_int, as_real);
}

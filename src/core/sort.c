/* Stable argsort of doubles: LSD radix sort on the keys' bits, 11 bits a pass.
 *
 * A double maps to an unsigned key with the same order (flip all bits of negatives, the sign bit
 * of the rest); -0 is made +0 first so that the two compare equal, as they do in R. All digit
 * histograms come from one read of the input, and a pass whose digit is the same for every key
 * is skipped, so data with a narrow range of exponents costs fewer passes.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RADIX_BITS 11
#define RADIX_SIZE (1 << RADIX_BITS)
#define RADIX_PASSES 6 /* ceil(64 / 11) */

static inline uint64_t double_key(double v) {
  uint64_t u;
  if (v == 0) v = 0; /* -0 -> +0 */
  memcpy(&u, &v, sizeof u);
  return (u >> 63) ? ~u : (u | ((uint64_t)1 << 63));
}

keyed_index *radix_argsort(int64_t n, const double *x) {
  keyed_index *a = malloc((size_t)(n > 0 ? n : 1) * sizeof *a);
  keyed_index *b = malloc((size_t)(n > 0 ? n : 1) * sizeof *b);
  int64_t (*hist)[RADIX_SIZE] = calloc(RADIX_PASSES, sizeof *hist);
  if (!a || !b || !hist) {
    free(a);
    free(b);
    free(hist);
    return NULL;
  }
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = double_key(x[i]);
    a[i].key = k;
    a[i].index = i;
    for (int p = 0; p < RADIX_PASSES; p++) hist[p][(k >> (p * RADIX_BITS)) & (RADIX_SIZE - 1)]++;
  }
  for (int p = 0; p < RADIX_PASSES; p++) {
    int shift = p * RADIX_BITS;
    if (n == 0 || hist[p][(a[0].key >> shift) & (RADIX_SIZE - 1)] == n) continue;
    int64_t sum = 0;
    for (int d = 0; d < RADIX_SIZE; d++) {
      int64_t c = hist[p][d];
      hist[p][d] = sum;
      sum += c;
    }
    for (int64_t i = 0; i < n; i++) {
      int d = (int)((a[i].key >> shift) & (RADIX_SIZE - 1));
      b[hist[p][d]++] = a[i];
    }
    keyed_index *t = a;
    a = b;
    b = t;
  }
  free(b);
  free(hist);
  return a;
}

gpuiso_status gpuiso_argsort(int64_t n, const double *x, int64_t *order) {
  keyed_index *s = radix_argsort(n, x);
  if (!s) return GPUISO_E_NOMEM;
  for (int64_t i = 0; i < n; i++) order[i] = s[i].index;
  free(s);
  return GPUISO_OK;
}

/* The distinct values of a vector and each element's place among them: R's sort(unique(v)) and
 * match(v, that) in one sort of keys, for IDR's covariate and thresholds. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

gpuiso_status gpuiso_distinct_codes(int64_t n, const double *v, double *distinct, int32_t *code,
                                    int64_t *ndistinct, gpuiso_error *err) {
  gpuiso_opts opt;
  memset(&opt, 0, sizeof opt);
  key_tag *sorted = NULL;
  int64_t bad = -1, k = -1;
  gpuiso_status st = n > 0 ? sort_keys(n, v, NULL, 0, resolve_threads(&opt, n), &sorted, &bad)
                           : GPUISO_OK;
  for (int64_t i = 0; st == GPUISO_OK && i < n; i++) {
    if (i == 0 || sorted[i].key != sorted[i - 1].key) distinct[++k] = key_double(sorted[i].key);
    code[sorted[i].tag] = (int32_t)k;
  }
  free(sorted);
  *ndistinct = k + 1;
  set_error(err, st, st == GPUISO_OK ? -1 : bad, -1);
  return st;
}

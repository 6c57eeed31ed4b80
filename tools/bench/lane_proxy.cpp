/* The driver of tools/bench/lane_proxy: one fit of the fast path on the SIMT executor, float32,
 * of one of tools/harness's families (noise unless named), unweighted unless a weight kind is named
 * (tools/harness/families.c: uniform, extreme, zeros), for callgrind to count the
 * instructions of the lane kernels' phases. Shapes: "row" (one row of 65,536: 64 chunks of
 * chunk_hulls_kernel) and "short" (64 rows of 1,000: short_rows_kernel, a warp each). Prints the
 * fit's status and a hash of its values, so that two builds are seen to fit the same, and its
 * number of elements.
 * Usage: lane_proxy row|short [family [weights]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"

int main(int argc, char **argv) {
  int row = argc > 1 && !strcmp(argv[1], "row");
  int f = 0, wk = 0;
  while (argc > 2 && f < FAM_COUNT && strcmp(argv[2], family_names[f])) f++;
  while (argc > 3 && wk < W_COUNT && strcmp(argv[3], weight_names[wk])) wk++;
  if (argc < 2 || (!row && strcmp(argv[1], "short")) || f == FAM_COUNT || wk == W_COUNT) {
    fprintf(stderr, "usage: lane_proxy row|short [family [weights]]\n");
    return 2;
  }
  int64_t R = row ? 1 : 64, len = row ? 65536 : 1000, o[65];
  for (int64_t r = 0; r <= R; r++) o[r] = r * len;
  int64_t n = o[R];
  double *y = (double *)malloc(n * sizeof *y), *w = wk ? (double *)malloc(n * sizeof *w) : NULL;
  float *yf = (float *)malloc(n * sizeof *yf), *zf = (float *)malloc(n * sizeof *zf);
  float *wf = wk ? (float *)malloc(n * sizeof *wf) : NULL;
  gen_rows((family_kind)f, (weight_kind)wk, R, o, 5, 1, y, w);
  for (int64_t i = 0; i < n; i++) {
    yf[i] = (float)y[i];
    if (wf) wf[i] = (float)w[i];
  }
  gpuiso_opts opt = options(1, 0, 0);
  opt.gpu_kernel = GPUISO_GPU_FAST;
  gpuiso_error e;
  sim_exec ex = {&e, 0, 0, 0, 0, 1};
  gpuiso_status s = fit_rows_host(ex, R, o, GPUISO_SINGLE, yf, wf, &opt, zf, NULL, &e);
  uint64_t hash = 1469598103934665603ull; /* FNV-1a of the fit's bytes */
  for (size_t i = 0; i < n * sizeof *zf; i++) hash = (hash ^ ((const unsigned char *)zf)[i]) * 1099511628211ull;
  printf("lane_proxy %s: status %d, %lld elements, fit hash %016llx\n", argv[1], (int)s, (long long)n,
         (unsigned long long)hash);
  free(y), free(w), free(yf), free(wf), free(zf);
  return s != GPUISO_OK;
}

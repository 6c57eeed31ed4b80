/* float32 with exact = FALSE (opt.gpu_plain_sums, src/cuda/lane_sums.cuh): the fast path's lane
 * kernels summing each lane's points in plain float32, run on the SIMT executor under the
 * schedule seeds, against the CPU hull engine's fit of the same float32 data in double. On the
 * families of tools/gpu-check (noise, increasing, sawtooth, cliff, cancellation, consecutive
 * floats), unweighted, uniform and extreme weights (e^-8..e^8), both directions, rows of 1 to
 * 4096 packed in warps and blocks and a row of several chunks (chunk_hulls_kernel): the fit never
 * steps against its direction and stays within the bounds that isoreg_gpu()'s help states; the
 * exact mode stays within 2^-24. Prints the measured deviations (tools/bench/RESULTS.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"
#include "host_fit.cuh"

extern "C" {
#include "compare.h"
#include "families.h"
}

#include "check.h"
#include "sim_test.h"

/* The bounds of exact = FALSE that isoreg_gpu()'s help states, relative to the row's largest
 * |y|: weights within a factor of 100 of each other (none, uniform; measured up to 6e-5), and
 * extreme weights (e^-8..e^8; measured up to 0.3: a lane's float32 sum of weights loses the
 * smallest ones whole). */
#define FAST_BOUND 2e-4
#define FAST_BOUND_EXTREME 0.5

static const family_kind families[] = {FAM_NOISE, FAM_INCREASING, FAM_SAWTOOTH, FAM_CLIFF,
                                       FAM_CANCELLATION, FAM_ULP};
static const weight_kind weightings[] = {W_NONE, W_UNIFORM, W_EXTREME};

struct worst {
  double by_y, by_z; /* max |z - ref| / max |y| of the row, / (1 + |ref|) */
  int64_t step_downs;
};

static void fit_case(const char *layout, int64_t R, const int64_t *o, family_kind f, weight_kind wk,
                     int increasing, worst *fast, worst *exact, uint64_t seed) {
  int64_t N = o[R];
  double *y = (double *)malloc(N * sizeof *y), *w = (double *)malloc(N * sizeof *w);
  double *ref = (double *)malloc(N * sizeof *ref);
  float *yf = (float *)malloc(N * sizeof *yf), *wf = (float *)malloc(N * sizeof *wf);
  float *zf = (float *)malloc(N * sizeof *zf);
  gen_rows(f, wk, R, o, seed, 1, y, w);
  const double *wp = wk == W_NONE ? NULL : w;
  for (int64_t i = 0; i < N; i++) yf[i] = (float)y[i], wf[i] = (float)w[i];
  gpuiso_opts opt = test_options(increasing, 1);
  opt.gpu_kernel = GPUISO_GPU_FAST;
  for (int64_t r = 0; r < R; r++) {
    gpuiso_error e;
    gpuiso_hull(o[r + 1] - o[r], y + o[r], wp ? wp + o[r] : NULL, &opt, ref + o[r], NULL, NULL, &e);
  }
  for (int plain = 0; plain <= 1; plain++) {
    opt.gpu_plain_sums = plain;
    gpuiso_error e;
    sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
    gpuiso_status s = fit_rows_host(ex, R, o, GPUISO_SINGLE, yf, wp ? wf : NULL, &opt, zf, NULL, &e);
    comparison by_y = compare_rows(R, o, y, ref, GPUISO_SINGLE, zf, increasing, 1);
    comparison by_z = compare_rows(R, o, y, ref, GPUISO_SINGLE, zf, increasing, 0);
    double bound = !plain ? 0x1p-24 : wk == W_EXTREME ? FAST_BOUND_EXTREME : FAST_BOUND;
    double dev = plain ? by_y.max_dev : by_z.max_dev; /* exact: within 2^-24 of 1 + |z| */
    CHECK(s == GPUISO_OK && dev <= bound && by_y.step_downs == 0 && ex.held == 0,
          "float32, exact %s, %s, %s weights, %s, %s: status %d (%s), deviation %g (bound %g), "
          "%lld step downs, %lld held",
          plain ? "FALSE" : "TRUE", family_names[f], weight_names[wk], layout,
          increasing ? "increasing" : "decreasing", (int)s, e.message, dev, bound,
          (long long)by_y.step_downs, (long long)ex.held);
    worst *acc = plain ? fast : exact;
    acc->by_y = by_y.max_dev > acc->by_y ? by_y.max_dev : acc->by_y;
    acc->by_z = by_z.max_dev > acc->by_z ? by_z.max_dev : acc->by_z;
    acc->step_downs += by_y.step_downs;
  }
  free(y), free(w), free(ref), free(yf), free(wf), free(zf);
}

static void test_fast_mode(int report) {
  const int64_t lens[] = {1, 2, 31, 32, 33, 100, 512, 513, 1000, 2049, 4096};
  const int nlens = (int)(sizeof lens / sizeof lens[0]);
  int64_t packed[2 * nlens + 1];
  packed[0] = 0;
  for (int k = 0; k < 2 * nlens; k++) packed[k + 1] = packed[k] + lens[(3 * k) % nlens];
  int64_t chunked[2] = {0, 4097 + 3 * 1024}; /* over BLOCK_ROW_MAX: chunks of 1024, a warp each */
  if (report) printf("exact = FALSE against the exact fit (max |z - ref| / max |y| of the row; / (1 + |ref|)):\n");
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (size_t k = 0; k < sizeof weightings / sizeof weightings[0]; k++) {
      worst fast = {0, 0, 0}, exact = {0, 0, 0};
      for (int increasing = 0; increasing <= 1; increasing++) {
        fit_case("short rows", 2 * nlens, packed, families[f], weightings[k], increasing, &fast, &exact, 40 + f);
        fit_case("one row of chunks", 1, chunked, families[f], weightings[k], increasing, &fast, &exact, 50 + f);
      }
      /* the plain sums did run: their rounding shows against the exact mode's */
      CHECK(fast.by_y > exact.by_y, "exact = FALSE, %s, %s weights: deviation %g, not above exact = TRUE's %g",
            family_names[families[f]], weight_names[weightings[k]], fast.by_y, exact.by_y);
      if (report)
        printf("  %-13s %-8s exact=FALSE %.2e %.2e, steps down %lld; exact=TRUE %.2e %.2e\n",
               family_names[families[f]], weight_names[weightings[k]], fast.by_y, fast.by_z,
               (long long)fast.step_downs, exact.by_y, exact.by_z);
    }
}

int main(void) {
  uint64_t seeds[3];
  for (int k = 0, n = sim_seeds(seeds); k < n; k++) {
    sim_seed = seeds[k];
    test_fast_mode(k == 0);
  }
  printf("ctest: %d passed, %d failed (float32 exact = FALSE on the CUDA engine, on the CPU)\n", passed, failed);
  return failed != 0;
}

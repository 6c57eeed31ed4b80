/* The fast path's lane kernels (src/cuda/short_rows.cuh) through the batch solver's host side,
 * run on the CPU by the SIMT executor under three schedule seeds, against the CPU hull engine. */
#include "batch.h"

/* The executor, keeping the dynamic shared bytes and threads of the lane kernels' launches. */
#define LANE_KERNELS 3
static const char *const lane_kernels[LANE_KERNELS] = {"short_rows_kernel", "block_rows_kernel", "chunk_hulls_kernel"};

struct shared_log : sim_exec {
  size_t bytes[LANE_KERNELS], threads[LANE_KERNELS];
  template <class... P, class... A>
  gpuiso_status launch(const char *name, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, A... args) {
    for (int k = 0; k < LANE_KERNELS; k++)
      if (!strcmp(name, lane_kernels[k])) bytes[k] = shared, threads[k] = block.x;
    return sim_exec::launch(name, kernel, grid, block, shared, args...);
  }
};

/* The fast path's lane kernels at the lengths around a lane, a warp, two and four warps, in one
 * batch (short rows of 1 to 32 lanes side by side in warps, longer ones a block each, between
 * them), against the CPU hull engine; a row over the limit sends the batch to the simple path. */
static void test_short_rows(void) {
  const int64_t lens[] = {1,   2,    31,  32,   33,   0,    63,   64,   65,   100, 1,    255,  256, 257,
                          3,   511,  512, 5,    1,    40,   513,  1000, 1023, 1024, 7,   1025, 2047, 2048,
                          2049, 3000, 4095, 4096};
  const int nlens = (int)(sizeof lens / sizeof lens[0]);
  int64_t off[3 * nlens + 2];
  int64_t R = 0;
  off[0] = 0;
  for (int rep = 0; rep < 3; rep++)
    for (int k = 0; k < nlens; k++, R++) off[R + 1] = off[R] + lens[(k + 7 * rep) % nlens];
  int64_t n = off[R] + BLOCK_ROW_MAX + 1;
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *ref = (double *)malloc(n * sizeof *ref), *z = (double *)malloc(n * sizeof *z);
  uint8_t *start = (uint8_t *)malloc(n), *ref_start = (uint8_t *)malloc(n);
  size_t bytes[W_COUNT][LANE_KERNELS] = {{0}}, threads[LANE_KERNELS] = {0};
  for (int f = 0; f < FAM_COUNT; f++) {
    for (int wk = 0; wk < W_COUNT; wk++) {
      for (int over = 0; over <= 1; over++) {
        int64_t rows = over ? R + 1 : R, *o = off;
        if (over) off[R + 1] = off[R] + BLOCK_ROW_MAX + 1;
        int increasing = (f + wk) % 2;
        gen_rows((family_kind)f, (weight_kind)wk, rows, o, 5 + f, 0, y, w);
        const double *wp = wk == W_NONE ? NULL : w;
        gpuiso_opts opt = options(increasing, 0, 0);
        opt.hull_chunk = 1024;
        reference(rows, o, y, wp, &opt, ref);
        opt.gpu_kernel = GPUISO_GPU_FAST;
        gpuiso_error e;
        shared_log ex = {{&e, 0, 0, 0, 0, sim_seed}, {0}, {0}};
        gpuiso_status s = fit_rows_host(ex, rows, o, GPUISO_DOUBLE, y, wp, &opt, z, start, &e);
        for (int k = 0; k < LANE_KERNELS; k++)
          if (ex.bytes[k]) bytes[wk][k] = ex.bytes[k], threads[k] = ex.threads[k];
        comparison c = compare_rows(rows, o, y, ref, GPUISO_DOUBLE, z, increasing, f == FAM_CANCELLATION);
        int flags_ok = 1;
        for (int64_t r = 0; r < rows; r++)
          for (int64_t i = o[r]; i < o[r + 1]; i++) flags_ok = flags_ok && start[i] == (i == o[r] || z[i] != z[i - 1]);
        /* the solver's blocks, against the hull engine's */
        opt.solver_blocks = 1;
        sim_exec ex2 = {&e, 0, 0, 0, 0, sim_seed};
        gpuiso_status s2 = fit_rows_host(ex2, rows, o, GPUISO_DOUBLE, y, wp, &opt, z, start, &e);
        for (int64_t r = 0; r < rows; r++) {
          gpuiso_error er;
          gpuiso_hull(o[r + 1] - o[r], y + o[r], wp ? wp + o[r] : NULL, &opt, ref + o[r], ref_start + o[r], NULL, &er);
        }
        int64_t blocks_differ = 0;
        for (int64_t i = 0; i < o[rows]; i++) blocks_differ += start[i] != ref_start[i];
        CHECK(s == GPUISO_OK && s2 == GPUISO_OK && c.max_dev <= (over ? 0 : 1e-12) && c.step_downs == 0 &&
                  flags_ok && blocks_differ == 0 && ex.held == 0 && ex2.held == 0,
              "short rows, %s, %s weights%s: status %d, %d (%s), deviation %g at %lld, %lld step downs, "
              "%lld solver block flags differ, %lld buffers held", family_names[f], weight_names[wk],
              over ? ", one row over the limit" : "", (int)s, (int)s2, e.message, c.max_dev, (long long)c.worst,
              (long long)c.step_downs, (long long)blocks_differ, (long long)ex.held);
      }
    }
  }
  /* unweighted, the points keep no W: the launch takes at least 8 bytes a point (32 a thread) less
   * shared memory than the weighted one (and the executor holds each kernel to its bytes) */
  for (int k = 0; k < LANE_KERNELS; k++)
    CHECK(bytes[W_NONE][k] > 0 && bytes[W_NONE][k] + 8 * SIMT_WARP * threads[k] <= bytes[W_UNIFORM][k],
          "%s: %zu bytes of shared memory unweighted, %zu weighted, %zu threads", lane_kernels[k],
          bytes[W_NONE][k], bytes[W_UNIFORM][k], threads[k]);
  free(y); free(w); free(ref); free(z); free(start); free(ref_start);
}

int main(void) {
  static void (*const tests[])(void) = {test_short_rows};
  return run_under_seeds(tests, (int)(sizeof tests / sizeof tests[0]));
}

/* The plans of data already on the device (src/cuda/plan_handle.cuh, behind
 * gpuiso_cuda_plan_create and gpuiso_cuda_plan_run), run on the SIMT executor (tools/simt): a
 * plan made unweighted leaves out the slots' weights (plan_row_bytes counts what it allocates),
 * fits unweighted rows as a weighted plan does, and refuses w before it launches anything; a
 * weighted plan fits both. Against the CPU hull engine, for each of the solver's kernels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"
#include "plan_handle.cuh"

extern "C" {
#include "compare.h"
#include "families.h"
}

#include "check.h"
#include "sim_test.h"

/* The SIMT executor, counting the bytes it allocates. */
struct counting_exec : sim_exec {
  size_t bytes;
  gpuiso_status alloc(void **p, size_t b) {
    gpuiso_status s = sim_exec::alloc(p, b);
    if (s == GPUISO_OK) bytes += b;
    return s;
  }
};

/* A fit on the device by a plan: y and w (NULL: none) put there, the fit (first filled with the
 * bytes 0xff) brought back into fit. */
static gpuiso_status run_on_device(counting_exec &ex, gpuiso_cuda_plan *plan, int64_t n, const double *y,
                                   const double *w, double *fit, gpuiso_error *err) {
  size_t bytes = (size_t)n * sizeof(double);
  void *dy = NULL, *dw = NULL, *dfit = NULL;
  gpuiso_status s = ex.alloc(&dy, bytes);
  if (s == GPUISO_OK && w) s = ex.alloc(&dw, bytes);
  if (s == GPUISO_OK) s = ex.alloc(&dfit, bytes);
  if (s == GPUISO_OK) s = ex.put(dy, y, bytes);
  if (s == GPUISO_OK && w) s = ex.put(dw, w, bytes);
  if (s == GPUISO_OK) s = ex.fill(dfit, 0xff, bytes);
  if (s == GPUISO_OK) s = handle_run(ex, plan, dy, dw, dfit, NULL, err);
  gpuiso_error ignored;
  gpuiso_error *keep = ex.err;
  ex.err = &ignored; /* the run's error stays in err */
  if (dfit) (void)ex.get(fit, dfit, bytes);
  ex.err = keep;
  ex.release(dy);
  ex.release(dw);
  ex.release(dfit);
  return s;
}

static void test_weighted_or_not(void) {
  /* a row longer than the lane kernels take, so that the fast kernel plans slots too */
  const int64_t off[5] = {0, 700, 700, 700 + BLOCK_ROW_MAX + 300, 700 + BLOCK_ROW_MAX + 303};
  const int64_t nrows = 4, n = off[nrows], longest = BLOCK_ROW_MAX + 300;
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *ref = (double *)malloc(n * sizeof *ref), *ref_w = (double *)malloc(n * sizeof *ref_w);
  double *z = (double *)malloc(n * sizeof *z), *zw = (double *)malloc(n * sizeof *zw);
  gen_rows(FAM_SAWTOOTH, W_EXTREME, nrows, off, 11, 0, y, w);
  for (int kernel = 0; kernel <= 2; kernel++) {
    gpuiso_opts opt = test_options(1, 1);
    opt.gpu_kernel = (gpuiso_gpu_kernel)kernel;
    for (int64_t r = 0; r < nrows; r++) {
      gpuiso_error e;
      int64_t o = off[r];
      gpuiso_hull(off[r + 1] - o, y + o, NULL, &opt, ref + o, NULL, NULL, &e);
      gpuiso_hull(off[r + 1] - o, y + o, w + o, &opt, ref_w + o, NULL, NULL, &e);
    }
    gpuiso_error e;
    counting_exec ex = {{&e, 0, 0, 0, 0, sim_seed}, 0};
    gpuiso_cuda_plan *plain = NULL, *weighted = NULL;
    gpuiso_status s = handle_create(ex, nrows, off, GPUISO_DOUBLE, 0, &opt, &plain, &e);
    size_t plain_bytes = ex.bytes;
    int64_t plain_held = ex.held;
    if (s == GPUISO_OK) s = handle_create(ex, nrows, off, GPUISO_DOUBLE, 1, &opt, &weighted, &e);
    size_t weighted_bytes = ex.bytes - plain_bytes;
    CHECK(s == GPUISO_OK, "%s kernel: plans: status %d (%s)", kernel_names[kernel], (int)s, e.message);
    if (s != GPUISO_OK) continue;
    CHECK(plain_held == 1 && ex.held == 2, "%s kernel: the plans hold %lld and %lld allocations, want one each",
          kernel_names[kernel], (long long)plain_held, (long long)(ex.held - plain_held));

    /* The gap after each part is guarded: a copy reaching one word past the rows' offsets is a
     * defect of the SIMT executor. */
    const gpuiso_cuda_plan *pp = &handle_of(plain)->plan;
    int64_t got_off[nrows + 2];
    gpuiso_status read = ex.get(got_off, pp->offsets, sizeof(int64_t) * (nrows + 1));
    CHECK(read == GPUISO_OK && memcmp(got_off, off, sizeof(int64_t) * (nrows + 1)) == 0,
          "%s kernel: the plan's offsets read back: status %d", kernel_names[kernel], (int)read);
    read = ex.get(got_off, pp->offsets, sizeof(int64_t) * (nrows + 2));
    CHECK(read != GPUISO_OK && strstr(e.message, "device allocation"),
          "%s kernel: a copy past the plan's offsets: status %d (%s)", kernel_names[kernel], (int)read, e.message);

    /* Only the slots' weights differ: a double a vertex, hull_chunk + 1 vertices a chunk. */
    int64_t chunk = plan_chunk(&opt), chunks = 0;
    double modeled[2] = {0, 0};
    for (int64_t r = 0; r < nrows; r++) {
      chunks += plan_on_lanes(&opt, off[r + 1] - off[r]) ? 0 : (off[r + 1] - off[r] + chunk - 1) / chunk;
      for (int wt = 0; wt <= 1; wt++) modeled[wt] += plan_row_bytes(&opt, longest, off[r + 1] - off[r], wt);
    }
    size_t slots_w = kernel == GPUISO_GPU_ROW_PAV ? 0 : (size_t)chunks * (size_t)(chunk + 1) * sizeof(double);
    CHECK(weighted_bytes - plain_bytes + ARENA_ALIGN > slots_w && weighted_bytes - plain_bytes < slots_w + ARENA_ALIGN &&
              modeled[1] - modeled[0] == (double)slots_w,
          "%s kernel: the weighted plan takes %zu bytes more than the unweighted, plan_row_bytes %g, want %zu",
          kernel_names[kernel], weighted_bytes - plain_bytes, modeled[1] - modeled[0], slots_w);
    /* plan_row_bytes counts what a plan allocates, up to a few words a plan (the merges it
     * bounds from above, and the ends of the per-row arrays) and the parts' alignment and gaps. */
    for (int wt = 0; wt <= 1; wt++) {
      double got = (double)(wt ? weighted_bytes : plain_bytes);
      CHECK(got <= modeled[wt] + 64 + ARENA_PARTS * 2 * ARENA_ALIGN && got >= modeled[wt] - (double)chunks * sizeof(int64_t),
            "%s kernel, %s plan: %g bytes allocated, plan_row_bytes %g", kernel_names[kernel],
            wt ? "weighted" : "unweighted", got, modeled[wt]);
    }

    /* Unweighted rows: the same fit from either plan, the CPU engine's. */
    s = run_on_device(ex, plain, n, y, NULL, z, &e);
    gpuiso_status s2 = run_on_device(ex, weighted, n, y, NULL, zw, &e);
    comparison c = compare_rows(nrows, off, y, ref, GPUISO_DOUBLE, z, 1, 0);
    CHECK(s == GPUISO_OK && s2 == GPUISO_OK && memcmp(z, zw, n * sizeof *z) == 0 && c.max_dev <= 1e-12 &&
              c.step_downs == 0,
          "%s kernel, unweighted rows: status %d, %d (%s), the plans' fits %s, deviation %g",
          kernel_names[kernel], (int)s, (int)s2, e.message, memcmp(z, zw, n * sizeof *z) ? "differ" : "agree",
          c.max_dev);

    /* Weights to the unweighted plan: refused before any launch, nothing written. */
    uint64_t launches = ex.launches;
    s = run_on_device(ex, plain, n, y, w, z, &e);
    int64_t written = 0;
    for (int64_t i = 0; i < n; i++) {
      uint64_t bits;
      memcpy(&bits, z + i, sizeof bits);
      written += bits != ~(uint64_t)0;
    }
    CHECK(s == GPUISO_E_W_UNPLANNED && e.status == s && e.index == -1 && e.row == -1 &&
              ex.launches == launches && written == 0,
          "%s kernel, w to an unweighted plan: status %d, error %d, %llu launches, %lld elements written",
          kernel_names[kernel], (int)s, (int)e.status, (unsigned long long)(ex.launches - launches),
          (long long)written);

    /* ... and to the weighted plan: the weighted fit. */
    s = run_on_device(ex, weighted, n, y, w, zw, &e);
    c = compare_rows(nrows, off, y, ref_w, GPUISO_DOUBLE, zw, 1, 0);
    CHECK(s == GPUISO_OK && c.max_dev <= 1e-12 && c.step_downs == 0,
          "%s kernel, weighted rows: status %d (%s), deviation %g", kernel_names[kernel], (int)s, e.message,
          c.max_dev);

    handle_free(ex, plain);
    handle_free(ex, weighted);
    CHECK(ex.held == 0, "%s kernel: %lld buffers held after the plans are freed", kernel_names[kernel],
          (long long)ex.held);
  }
  free(y); free(w); free(ref); free(ref_w); free(z); free(zw);
}

int main(void) {
  static void (*const tests[])(void) = {test_weighted_or_not};
  return run_under_seeds(tests, (int)(sizeof tests / sizeof tests[0]), "the device plans on the CPU");
}

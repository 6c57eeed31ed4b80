/* The calibration's device steps and host side (src/cuda/calibrate.cuh), run on the CPU by the
 * SIMT executor (tools/simt) under three schedule seeds, against the CPU path (gpuiso_calibrate): continuous scores and ties,
 * weights (zero weights included), many groups (empty ones too), groups of one score, no groups,
 * negative scores and -0, a decreasing clipped fit, each solver kernel; the error reports,
 * interrupts, and that every buffer is released on every path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"
#include "calibrate.cuh"

extern "C" {
#include "compare.h"
#include "families.h"
}

#include "check.h"

static gpuiso_opts options(gpuiso_gpu_kernel kernel, int64_t chunk) {
  gpuiso_opts o;
  memset(&o, 0, sizeof o);
  o.increasing = 1;
  o.lo = -INFINITY;
  o.hi = INFINITY;
  o.nthreads = 2; /* the CPU path's threaded pooling too */
  o.gpu_kernel = kernel;
  o.hull_chunk = chunk;
  return o;
}

typedef struct {
  int64_t n;
  double *score, *label, *w;
  int *g;
  int64_t ngroups;
} traffic;

static traffic make_traffic(int64_t n, int64_t ngroups, uint64_t seed, int ties, weight_kind wk) {
  traffic t = {n, (double *)malloc(n * sizeof(double)), (double *)malloc(n * sizeof(double)),
               wk == W_NONE ? NULL : (double *)malloc(n * sizeof(double)), (int *)malloc(n * sizeof(int)),
               ngroups};
  double *w = t.w ? t.w : (double *)malloc(n * sizeof(double));
  gen_calibration(n, ngroups, seed, ties, wk, t.score, t.label, w, t.g);
  if (!t.w) free(w);
  return t;
}

static void free_traffic(traffic *t) {
  free(t->score);
  free(t->label);
  free(t->w);
  free(t->g);
}

/* The device path against the CPU path on t (without groups when grouped is 0). */
static void check_equal(const char *name, const traffic &t, int grouped, const gpuiso_opts &o) {
  int64_t ncurves = 1 + (grouped ? t.ngroups : 0);
  int64_t *ref_first = (int64_t *)malloc((ncurves + 1) * sizeof(int64_t));
  int64_t *first = (int64_t *)malloc((ncurves + 1) * sizeof(int64_t));
  const int *g = grouped ? t.g : NULL;
  gpuiso_block *ref, *got;
  gpuiso_error e;
  gpuiso_status s = gpuiso_calibrate(t.n, t.score, t.label, t.w, g, t.ngroups, &o, &ref, ref_first, &e);
  CHECK(s == GPUISO_OK, "%s: the CPU path failed (%d)", name, (int)s);
  sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
  gpuiso_status sg = calibrate_device(ex, t.n, t.score, t.label, t.w, g, t.ngroups, &o, &got, first, &e);
  blocks_comparison c = {INFINITY, INFINITY, -1};
  if (s == GPUISO_OK && sg == GPUISO_OK) c = compare_blocks(ncurves, ref_first, ref, first, got);
  CHECK(sg == GPUISO_OK && c.curves_differ == 0 && c.max_dev <= 1e-10 && c.max_weight_dev <= 1e-12 &&
            ex.held == 0,
        "%s (n %lld, %lld curves, %s kernel, chunk %lld): status %d, %lld curves differ, level "
        "deviation %g, weight deviation %g, %lld buffers held",
        name, (long long)t.n, (long long)ncurves,
        o.gpu_kernel == GPUISO_GPU_SIMPLE ? "simple" : "row PAV", (long long)o.hull_chunk, (int)sg,
        (long long)c.curves_differ, c.max_dev, c.max_weight_dev, (long long)ex.held);
  if (s == GPUISO_OK) free(ref);
  if (sg == GPUISO_OK) free(got);
  free(ref_first);
  free(first);
}

static void test_against_cpu(void) {
  const struct {
    gpuiso_gpu_kernel kernel;
    int64_t chunk;
  } solvers[] = {{GPUISO_GPU_SIMPLE, 0}, {GPUISO_GPU_SIMPLE, 16}, {GPUISO_GPU_ROW_PAV, 0}};
  const struct {
    const char *name;
    int64_t n, ngroups;
    int ties;
    weight_kind wk;
  } cases[] = {{"continuous, 300 groups", 20000, 300, 0, W_NONE},
               {"ties, weights", 20000, 300, 1, W_UNIFORM},
               {"ties, zero weights", 20000, 50, 1, W_ZEROS},
               {"extreme weights", 5000, 7, 0, W_EXTREME},
               {"many small groups", 6000, 5000, 1, W_NONE},
               {"one group", 3000, 1, 1, W_UNIFORM},
               {"one score", 1, 1, 0, W_NONE}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    traffic t = make_traffic(cases[c].n, cases[c].ngroups, 60 + c, cases[c].ties, cases[c].wk);
    for (size_t v = 0; v < sizeof solvers / sizeof solvers[0]; v++) {
      gpuiso_opts o = options(solvers[v].kernel, solvers[v].chunk);
      check_equal(cases[c].name, t, 1, o);
      check_equal(cases[c].name, t, 0, o);
    }
    free_traffic(&t);
  }

  /* groups of one score and of one tied score, an empty group, leading and trailing zero
   * weights, negative scores, -0 and 0 */
  double score[] = {0.5, -0.0, 0.0, -2, 3, 3, 3, 1e-300, -1e-300, 0.25, 0.25, 7, -7};
  double label[] = {1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0};
  double w[] = {0, 1, 2, 0.5, 0, 1, 1, 3, 0, 1, 1, 2, 0};
  int g[] = {0, 0, 0, 0, 0, 2, 2, 3, 3, 3, 3, 4, 0};
  traffic t = {13, score, label, w, g, 5};
  gpuiso_opts o = options(GPUISO_GPU_SIMPLE, 0);
  check_equal("hand-made", t, 1, o);
  t.w = NULL;
  check_equal("hand-made, unweighted", t, 1, o);

  /* decreasing and clipped: blocks that clipping makes equal are one */
  traffic d = make_traffic(8000, 20, 71, 1, W_UNIFORM);
  for (int64_t i = 0; i < d.n; i++) d.label[i] = 3 * d.score[i] + sin(40 * d.score[i]) - 1.5 * d.label[i];
  o.increasing = 0;
  o.lo = -0.5;
  o.hi = 2;
  check_equal("decreasing, clipped, real labels", d, 1, o);
  free_traffic(&d);
}

static int stop_now(void *ctx) { return --*(int *)ctx < 0; }

/* The error of one bad input: the status, index and row the CPU path reports too. */
static void check_error(const char *name, const traffic &t, gpuiso_status want, int64_t index,
                        int64_t row) {
  gpuiso_opts o = options(GPUISO_GPU_SIMPLE, 0);
  int64_t first[16];
  gpuiso_block *blocks = NULL;
  gpuiso_error e, ec;
  sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
  gpuiso_status s = calibrate_device(ex, t.n, t.score, t.label, t.w, t.g, t.ngroups, &o, &blocks, first, &e);
  gpuiso_status sc = gpuiso_calibrate(t.n, t.score, t.label, t.w, t.g, t.ngroups, &o, &blocks, first, &ec);
  CHECK(s == want && e.index == index && e.row == row && ex.held == 0 && sc == want && ec.row == row,
        "%s: status %d (CPU %d), index %lld, row %lld (CPU %lld), %lld held", name, (int)s, (int)sc,
        (long long)e.index, (long long)e.row, (long long)ec.row, (long long)ex.held);
}

static void test_errors(void) {
  double score[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
  double label[] = {0, 1, 0, 1, 1, 0};
  double w[] = {1, 1, 0, 0, 1, 1};
  int g[] = {0, 0, 1, 1, 2, 2};
  traffic t = {6, score, label, w, g, 3};
  check_error("all weights of group 1 zero", t, GPUISO_E_W_ALLZERO, -1, 1);
  w[0] = w[1] = w[4] = w[5] = 0;
  t.g = NULL;
  check_error("all weights zero", t, GPUISO_E_W_ALLZERO, -1, -1);
  w[0] = w[1] = w[2] = w[3] = w[4] = w[5] = 1;
  t.g = g;
  w[4] = -1;
  check_error("negative weight", t, GPUISO_E_W_NEGATIVE, 4, -1);
  w[4] = 1;
  label[3] = NAN;
  check_error("NaN label", t, GPUISO_E_Y_NONFINITE, 3, -1);
  score[5] = INFINITY;
  check_error("infinite score before a bad label", t, GPUISO_E_X_NONFINITE, 5, -1);
  score[5] = 0.6;
  label[3] = 1;
  score[3] = score[2]; /* one knot whose weights add up past the largest double */
  w[2] = w[3] = 1e308;
  check_error("overflow", t, GPUISO_E_OVERFLOW, -1, -1);

  /* interrupts at each poll, and a failure at each allocation */
  traffic d = make_traffic(5000, 30, 80, 1, W_UNIFORM);
  gpuiso_opts o = options(GPUISO_GPU_SIMPLE, 64);
  int64_t first[32];
  gpuiso_block *blocks;
  gpuiso_error e;
  int total = 1000, left = total;
  gpuiso_interrupt intr = {stop_now, &left};
  o.interrupt = &intr;
  sim_exec counter = {&e, 0, 0, 0, 0, sim_seed};
  gpuiso_status s = calibrate_device(counter, d.n, d.score, d.label, d.w, d.g, d.ngroups, &o, &blocks, first, &e);
  int polls = total - left;
  CHECK(s == GPUISO_OK && polls >= 3, "polls: status %d, %d polls", (int)s, polls);
  if (s == GPUISO_OK) free(blocks);
  for (int p = 0; p < polls; p++) {
    left = p;
    sim_exec ix = {&e, 0, 0, 0, 0, sim_seed};
    s = calibrate_device(ix, d.n, d.score, d.label, d.w, d.g, d.ngroups, &o, &blocks, first, &e);
    CHECK(s == GPUISO_E_INTERRUPT && ix.held == 0 && blocks == NULL,
          "interrupt at poll %d of %d: status %d, %lld held", p, polls, (int)s, (long long)ix.held);
  }
  o.interrupt = NULL;
  for (int64_t k = 1; k <= counter.allocs; k++) {
    sim_exec fx = {&e, 0, 0, k, 0, sim_seed};
    s = calibrate_device(fx, d.n, d.score, d.label, d.w, d.g, d.ngroups, &o, &blocks, first, &e);
    CHECK(s == GPUISO_E_NOMEM && e.status == s && fx.held == 0 && blocks == NULL,
          "allocation %lld of %lld failing: status %d, %lld held", (long long)k,
          (long long)counter.allocs, (int)s, (long long)fx.held);
  }
  free_traffic(&d);
}

int main(void) {
  uint64_t seeds[3];
  for (int k = 0, n = sim_seeds(seeds); k < n; k++) {
    sim_seed = seeds[k];
    test_against_cpu();
    test_errors();
  }
  printf("ctest: %d passed, %d failed (calibration on the CUDA engine, on the CPU)\n", passed, failed);
  return failed != 0;
}

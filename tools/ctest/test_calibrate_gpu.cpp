/* The calibration's device steps and host side (src/cuda/calibrate.cuh), run on the CPU by the
 * SIMT executor (tools/simt) under three schedule seeds, against the CPU path (gpuiso_calibrate):
 * continuous scores and ties, weights (zero weights included), many groups (empty ones too),
 * groups of one score, no groups, negative scores and -0, falling curves (zero weights included),
 * a decreasing clipped fit, each solver kernel; the error reports, interrupts, and that every
 * buffer is released on every path. Then the predictions on the device (src/cuda/predict.cuh)
 * against gpuiso_predict, bit for bit: the calibrators' curves and hand-made ones (empty curves,
 * widths that overflow, infinite levels) at random scores, block ends, NaN, -0 and infinities,
 * step and linear, in one slice and in several; interrupts and failed allocations. The host arrays
 * of both in many pinned slices (staging.cuh), the last one short. */
#define STAGE_SLICE ((size_t)8 * 999) /* 999 doubles a slice: many slices, the last one short */
#define STAGE_DIRECT ((size_t)0)       /* staged however small */

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"
#include "calibrate.cuh"
#include "predict.cuh"

extern "C" {
#include "compare.h"
#include "families.h"
}

#include "check.h"
#include "sim_test.h"

static gpuiso_opts options(gpuiso_gpu_kernel kernel, int64_t chunk) {
  gpuiso_opts o = test_options(1, 2); /* the CPU path's threaded pooling too */
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
  sim_sliced ex = {{&e, 0, 0, 0, 0, sim_seed}, 0, 0};
  gpuiso_status sg = calibrate_device(ex, t.n, t.score, t.label, t.w, g, t.ngroups, &o, &got, first, &e);
  blocks_comparison c = {INFINITY, INFINITY, -1};
  if (s == GPUISO_OK && sg == GPUISO_OK) c = compare_blocks(ncurves, ref_first, ref, first, got);
  /* blocks of more than a slice came back in many */
  int staged = sg != GPUISO_OK || first[ncurves] * sizeof(gpuiso_block) <= STAGE_SLICE || ex.slices_out > 1;
  CHECK(sg == GPUISO_OK && c.curves_differ == 0 && c.max_dev <= 1e-10 && c.max_weight_dev <= 1e-12 &&
            ex.held == 0 && staged,
        "%s (n %lld, %lld curves, %s kernel, chunk %lld): status %d, %lld curves differ, level "
        "deviation %g, weight deviation %g, %lld buffers held, %lld slices out",
        name, (long long)t.n, (long long)ncurves,
        o.gpu_kernel == GPUISO_GPU_SIMPLE ? "simple" : "row PAV", (long long)o.hull_chunk, (int)sg,
        (long long)c.curves_differ, c.max_dev, c.max_weight_dev, (long long)ex.held, (long long)ex.slices_out);
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

  /* falling curves of labels that fall with the score: the same blocks in score order, a score of
   * weight zero in the block below it */
  traffic f = make_traffic(20000, 50, 67, 1, W_ZEROS);
  for (int64_t i = 0; i < f.n; i++) f.score[i] = -f.score[i];
  for (size_t v = 0; v < sizeof solvers / sizeof solvers[0]; v++) {
    gpuiso_opts o = options(solvers[v].kernel, solvers[v].chunk);
    o.increasing = 0;
    check_equal("falling, ties, zero weights", f, 1, o);
    check_equal("falling, ties, zero weights", f, 0, o);
  }
  free_traffic(&f);

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
  t.w = w;
  o.increasing = 0;
  check_equal("hand-made, falling", t, 1, o);
  check_equal("hand-made, falling", t, 0, o);

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
  sim_sliced counter = {{&e, 0, 0, 0, 0, sim_seed}, 0, 0};
  gpuiso_status s = calibrate_device(counter, d.n, d.score, d.label, d.w, d.g, d.ngroups, &o, &blocks, first, &e);
  int polls = total - left;
  CHECK(s == GPUISO_OK && polls >= 2 && counter.slices_in > 1, "polls: status %d, %d polls, %lld slices in", (int)s,
        polls, (long long)counter.slices_in);
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

/* Curves of blocks, owned. */
struct curves {
  int64_t ncurves;
  int64_t *first;
  double *lower, *upper, *level;
  gpuiso_curves cv() const { return gpuiso_curves{first, lower, upper, level}; }
};

static curves curves_of(const gpuiso_block *b, const int64_t *first, int64_t ncurves) {
  int64_t nb = first[ncurves];
  curves c = {ncurves, (int64_t *)malloc((ncurves + 1) * sizeof(int64_t)),
              (double *)malloc((nb + 1) * sizeof(double)), (double *)malloc((nb + 1) * sizeof(double)),
              (double *)malloc((nb + 1) * sizeof(double))};
  memcpy(c.first, first, (ncurves + 1) * sizeof(int64_t));
  for (int64_t k = 0; k < nb; k++) c.lower[k] = b[k].lower, c.upper[k] = b[k].upper, c.level[k] = b[k].level;
  return c;
}

static void free_curves(curves *c) {
  free(c->first), free(c->lower), free(c->upper), free(c->level);
}

static uint64_t mix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* n new values for the curves c, and their curves: uniform over the curves' range and beyond,
 * each block's ends and their neighbouring doubles, midpoints between blocks, NaN (R's NA among
 * them), -0 and 0, infinities and the largest doubles. */
static void make_queries(const curves &c, int64_t n, uint64_t seed, double *v, int *curve) {
  uint64_t st = seed;
  int64_t nb = c.first[c.ncurves];
  double lo = nb ? c.lower[0] : 0, hi = nb ? c.upper[nb - 1] : 1;
  for (int64_t k = 0; k < nb; k++) lo = c.lower[k] < lo ? c.lower[k] : lo, hi = c.upper[k] > hi ? c.upper[k] : hi;
  if (!isfinite(lo) || !isfinite(hi) || hi - lo > 1e300) lo = -1, hi = 1;
  double na;
  uint64_t na_bits = 0x7ff00000000007a2ull; /* R's NA_real_ */
  memcpy(&na, &na_bits, sizeof na);
  const double special[] = {NAN, na, -0.0, 0.0, INFINITY, -INFINITY, DBL_MAX, -DBL_MAX, 5e-324};
  for (int64_t i = 0; i < n; i++) {
    curve[i] = (int)(mix(&st) % (uint64_t)c.ncurves);
    int64_t b0 = c.first[curve[i]], m = c.first[curve[i] + 1] - b0;
    uint64_t kind = mix(&st) % 8, r = mix(&st);
    double u = (double)(r >> 11) * 0x1p-53;
    if (kind == 0) {
      v[i] = special[r % (sizeof special / sizeof special[0])];
    } else if (kind <= 2 || m == 0) {
      v[i] = lo - 0.1 * (hi - lo) + 1.2 * (hi - lo) * u;
    } else {
      int64_t b = b0 + (int64_t)(r % (uint64_t)m);
      double at = kind == 3 ? c.lower[b] : kind == 4 ? c.upper[b]
                  : kind == 5 && b + 1 < b0 + m ? c.upper[b] + (c.lower[b + 1] - c.upper[b]) * u
                                                : c.lower[b];
      v[i] = kind == 6 ? nextafter(at, -INFINITY) : kind == 7 ? nextafter(at, INFINITY) : at;
    }
  }
}

/* The device's predictions against gpuiso_predict on n values, bitwise, with and without the
 * values' curves, step and linear, outside values kept or missing, in slices of `slice`. */
static void check_predict(const char *name, const curves &c, int64_t n, uint64_t seed, int64_t slice) {
  double *v = (double *)malloc((n + 1) * sizeof(double));
  double *want = (double *)malloc((n + 1) * sizeof(double)), *got = (double *)malloc((n + 1) * sizeof(double));
  int *curve = (int *)malloc((n + 1) * sizeof(int));
  make_queries(c, n, seed, v, curve);
  gpuiso_opts o = options(GPUISO_GPU_SIMPLE, 0);
  gpuiso_curves cv = c.cv();
  const double missing = -12345.0;
  for (int grouped = 0; grouped <= 1; grouped++)
    for (int linear = 0; linear <= 1; linear++)
      for (int outside = 0; outside <= 1; outside++) {
        const int *cu = grouped ? curve : NULL;
        int64_t ncurves = grouped ? c.ncurves : 1, want_beyond = -1, got_beyond = -2;
        gpuiso_error e;
        gpuiso_status sc = gpuiso_predict(&cv, n, v, cu, linear, outside, missing, &o, want, &want_beyond, &e);
        sim_sliced ex = {{&e, 0, 0, 0, 0, sim_seed}, 0, 0};
        gpuiso_status sg = predict_device(ex, &cv, ncurves, n, v, cu, linear, outside, missing, &o, got,
                                          &got_beyond, &e, slice);
        int64_t differ = 0, at = -1;
        for (int64_t i = 0; sc == GPUISO_OK && sg == GPUISO_OK && i < n; i++)
          if (memcmp(&want[i], &got[i], sizeof want[i]) != 0) differ++, at = at < 0 ? i : at;
        /* the values in one slice: its arrays in many staged ones */
        int staged = slice < n || (ex.slices_in > 1 && ex.slices_out > 1);
        int overlapped = ex.overlaps > 0; /* the parts on both lanes at once */
        CHECK(sc == GPUISO_OK && sg == GPUISO_OK && differ == 0 && want_beyond == got_beyond && ex.held == 0 &&
                  staged && overlapped,
              "predict %s (n %lld, slice %lld, curves %d, linear %d, outside missing %d): status %d, "
              "%lld differ (first at %lld: v %.17g, %.17g against %.17g), beyond %lld against %lld, "
              "%lld held, %lld slices in, %lld out, %lld overlapping",
              name, (long long)n, (long long)slice, grouped, linear, outside, (int)sg, (long long)differ,
              (long long)at, at >= 0 ? v[at] : 0.0, at >= 0 ? got[at] : 0.0, at >= 0 ? want[at] : 0.0,
              (long long)got_beyond, (long long)want_beyond, (long long)ex.held, (long long)ex.slices_in,
              (long long)ex.slices_out, (long long)ex.overlaps);
      }
  free(v), free(want), free(got), free(curve);
}

static void test_predict(void) {
  const struct {
    const char *name;
    int64_t n, ngroups;
    int ties;
    weight_kind wk;
  } cases[] = {{"300 groups", 20000, 300, 0, W_UNIFORM}, {"ties, zero weights", 5000, 40, 1, W_ZEROS},
               {"one score", 1, 1, 0, W_NONE}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    traffic t = make_traffic(cases[k].n, cases[k].ngroups, 90 + k, cases[k].ties, cases[k].wk);
    gpuiso_opts o = options(GPUISO_GPU_SIMPLE, 0);
    int64_t *first = (int64_t *)malloc((t.ngroups + 2) * sizeof(int64_t));
    gpuiso_block *b;
    gpuiso_error e;
    gpuiso_status s = gpuiso_calibrate(t.n, t.score, t.label, t.w, t.g, t.ngroups, &o, &b, first, &e);
    CHECK(s == GPUISO_OK, "predict %s: the calibration failed (%d)", cases[k].name, (int)s);
    if (s == GPUISO_OK) {
      curves c = curves_of(b, first, t.ngroups + 1);
      check_predict(cases[k].name, c, 6000, 200 + k, 1 << 20);
      check_predict(cases[k].name, c, 6000, 300 + k, 777);
      free_curves(&c);
      free(b);
    }
    free(first);
    free_traffic(&t);
  }

  /* hand-made: an empty curve, a one-block curve, blocks spanning the doubles (widths that
   * overflow), infinite and tied levels, -0 and 0 as block ends */
  int64_t first[] = {0, 3, 3, 4, 6, 11};
  double lower[] = {-1, 0.5, 2, 7, -DBL_MAX, 1e308, -DBL_MAX, -1e300, -0.0, 1e300, DBL_MAX};
  double upper[] = {0, 1, 3, 7, -1e308, DBL_MAX, -1e308, -0.0, 0.0, 1e301, DBL_MAX};
  double level[] = {0.1, 0.1, 0.9, 4, 0.25, 0.75, -INFINITY, -1e308, 0.0, 1e308, INFINITY};
  curves hand = {5, first, lower, upper, level};
  check_predict("hand-made", hand, 3000, 400, 1 << 20);
  check_predict("hand-made", hand, 3000, 401, 64);

  /* interrupts at each poll between slices, and a failure at each allocation */
  int64_t n = 3000;
  double *v = (double *)malloc(n * sizeof(double)), *out = (double *)malloc(n * sizeof(double));
  int *curve = (int *)malloc(n * sizeof(int));
  make_queries(hand, n, 402, v, curve);
  gpuiso_curves cv = hand.cv();
  gpuiso_opts o = options(GPUISO_GPU_SIMPLE, 0);
  gpuiso_error e;
  int64_t beyond;
  int left;
  gpuiso_interrupt intr = {stop_now, &left};
  o.interrupt = &intr;
  const int64_t slice = 500; /* 6 slices: 5 polls */
  for (int p = 0; p <= 5; p++) {
    left = p;
    sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
    gpuiso_status s = predict_device(ex, &cv, 5, n, v, curve, 1, 0, 0.0, &o, out, &beyond, &e, slice);
    gpuiso_status want = p < 5 ? GPUISO_E_INTERRUPT : GPUISO_OK;
    CHECK(s == want && ex.held == 0, "predict, interrupt at poll %d of 5: status %d, %lld held", p,
          (int)s, (long long)ex.held);
  }
  o.interrupt = NULL;
  sim_exec counter = {&e, 0, 0, 0, 0, sim_seed};
  gpuiso_status s = predict_device(counter, &cv, 5, n, v, curve, 0, 0, 0.0, &o, out, &beyond, &e, slice);
  CHECK(s == GPUISO_OK && counter.allocs >= 8, "predict: status %d, %lld allocations", (int)s,
        (long long)counter.allocs);
  for (int64_t k = 1; k <= counter.allocs; k++) {
    sim_exec fx = {&e, 0, 0, k, 0, sim_seed};
    s = predict_device(fx, &cv, 5, n, v, curve, 0, 0, 0.0, &o, out, &beyond, &e, slice);
    CHECK(s == GPUISO_E_NOMEM && e.status == s && fx.held == 0,
          "predict, allocation %lld of %lld failing: status %d, %lld held", (long long)k,
          (long long)counter.allocs, (int)s, (long long)fx.held);
  }
  free(v), free(out), free(curve);
}

int main(void) {
  static void (*const tests[])(void) = {test_against_cpu, test_errors, test_predict};
  return run_under_seeds(tests, (int)(sizeof tests / sizeof tests[0]), "calibration on the CUDA engine, on the CPU");
}

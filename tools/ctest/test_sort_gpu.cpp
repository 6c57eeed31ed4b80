/* The fit on unsorted x on the device (src/cuda/fit_xy.cuh: pinned slices, radix sort, pooling
 * of ties, the solver, the scatter back), run on the CPU by the SIMT executor (tools/simt) under
 * three schedule seeds, against the CPU path (gpuiso_sort_xy and gpuiso_fit_sorted with the hull
 * engine, the CUDA solver's CPU twin): x with ties in random order, negative x and -0, ties that
 * span tiles of run_sums, every weighting, tiny weights, both directions, both kernels, both
 * precisions, the order and block flags for gradients, transfers in many slices (of a host batch
 * through fit_rows_host too); the error reports, interrupts, and that every buffer, pinned buffer
 * and lane is released on every path. */
#define STAGE_SLICE ((size_t)8 * 1000) /* 1000 elements a slice: many slices, the last one short */
#define STAGE_DIRECT ((size_t)0)        /* staged however small */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"
#include "fit_xy.cuh"

extern "C" {
#include "compare.h"
#include "families.h"
}

#include "check.h"
#include "sim_test.h"

static gpuiso_opts options(int increasing, gpuiso_gpu_kernel kernel, int single) {
  gpuiso_opts o = test_options(increasing, 2);
  o.hull_chunk = 64; /* several chunks, and merge levels, on rows of a few thousand knots */
  o.gpu_kernel = kernel;
  o.gpu_precision = single ? GPUISO_SINGLE : GPUISO_DOUBLE;
  return o;
}

/* The CPU path: fit (n), knots (their own arrays, freed by the caller from kn->x), and with
 * opt->solver_blocks the order and flags of gpuiso_sorted_order. */
static gpuiso_status cpu_fit_xy(int64_t n, const double *x, const double *y, const double *w,
                                const gpuiso_opts *opt, double *fit, gpuiso_knots *kn, int64_t *order,
                                uint8_t *start, gpuiso_error *e) {
  gpuiso_opts o = *opt;
  o.engine = GPUISO_HULL;
  gpuiso_sorted *sorted;
  int64_t nk = 0;
  memset(kn, 0, sizeof *kn);
  gpuiso_status s = gpuiso_sort_xy(n, x, y, w, &o, &sorted, &nk, e);
  if (s != GPUISO_OK) return s;
  kn->x = (double *)malloc((size_t)(nk + 1) * 3 * sizeof(double) + (size_t)nk + 1);
  kn->level = kn->x + nk;
  kn->weight = kn->level + nk;
  kn->start = (uint8_t *)(kn->weight + nk);
  s = gpuiso_fit_sorted(sorted, &o, fit, kn, e);
  if (s == GPUISO_OK && order) gpuiso_sorted_order(sorted, kn->start, order, start);
  gpuiso_sorted_free(sorted);
  return s;
}

typedef struct {
  int64_t n;
  double *x, *y, *w;
} xy_data;

/* y of family f, x with about n / ties distinct values in random order (shifted to negative and
 * with -0 and 0 among them); wk as gen_rows's weightings. */
static xy_data make_data(int64_t n, int64_t ties, family_kind f, weight_kind wk, uint64_t seed) {
  xy_data d = {n, (double *)malloc(n * sizeof(double)), (double *)malloc(n * sizeof(double)),
               (double *)malloc(n * sizeof(double))};
  int64_t off[2] = {0, n};
  gen_rows(f, wk == W_NONE ? W_UNIFORM : wk, 1, off, seed, 0, d.y, d.w);
  gen_x_ties(n, seed, d.x);
  double distinct = (double)(n / ties > 0 ? n / ties : 1);
  for (int64_t i = 0; i < n; i++) {
    if (ties == 1) d.x[i] = (double)((i * 7919) % n) - (double)(n / 2); /* a permutation */
    else d.x[i] = floor(d.x[i] * 4 * distinct / (n / 4 > 0 ? n / 4 : 1)) - floor(distinct / 2);
    if (d.x[i] == 0 && i % 2) d.x[i] = -0.0;
  }
  if (wk == W_NONE) {
    free(d.w);
    d.w = NULL;
  }
  return d;
}

static void free_data(xy_data *d) {
  free(d->x);
  free(d->y);
  free(d->w);
}

/* The executor, counting the device's sorts. */
struct sort_log : sim_exec {
  int sorts;
  template <typename K>
  gpuiso_status sort_pairs(const K *keys_in, K *keys_out, const int64_t *values_in, int64_t *values_out,
                           int64_t count, int end_bit) {
    sorts++;
    return sim_exec::sort_pairs(keys_in, keys_out, values_in, values_out, count, end_bit);
  }
};

/* The device path against the CPU path on d, with `memory` bytes of device memory free (0: room
 * for all; too little for the device's sort: sorted on the host, only the knots on the device).
 * exact: every sum of the pooling is exact, so the knots' weights must be the CPU's bit for bit. */
static void check_fit(const char *name, const xy_data &d, const gpuiso_opts &o, int exact, size_t memory = 0) {
  int64_t n = d.n;
  double *ref = (double *)malloc(n * sizeof(double)), *fit = (double *)malloc(n * sizeof(double));
  int64_t *ref_order = (int64_t *)malloc(n * sizeof(int64_t)), *order = (int64_t *)malloc(n * sizeof(int64_t));
  uint8_t *ref_start = (uint8_t *)malloc(n), *start = (uint8_t *)malloc(n);
  int grad = o.solver_blocks;
  gpuiso_knots rk, kn;
  gpuiso_error e;
  gpuiso_status s = cpu_fit_xy(n, d.x, d.y, d.w, &o, ref, &rk, grad ? ref_order : NULL, ref_start, &e);
  CHECK(s == GPUISO_OK, "%s: the CPU path failed (%d)", name, (int)s);
  sort_log ex = {{&e, 0, 0, 0, memory, sim_seed}, 0};
  gpuiso_status sg = fit_xy_device(ex, n, d.x, d.y, d.w, &o, fit, &kn, grad ? order : NULL, grad ? start : NULL, &e);
  int single = o.gpu_precision == GPUISO_SINGLE;
  int on_host = (double)n * xy_device_bytes(d.w != NULL, single) > SLICE_SHARE * (double)(memory ? memory : SIM_DEFAULT_MEMORY);
  int64_t off[2] = {0, n};
  comparison c = {INFINITY, -1, -1, -1, -1};
  int64_t knots_differ = -1, weight_differ = -1, flags_wrong = -1, order_differ = 0, start_differ = 0;
  double weight_dev = INFINITY;
  if (s == GPUISO_OK && sg == GPUISO_OK && kn.n == rk.n) {
    /* the fits in input order, compared as one row: each element against the CPU's */
    c = compare_rows(1, off, d.y, ref, GPUISO_DOUBLE, fit, 1, 0);
    knots_differ = weight_differ = flags_wrong = 0;
    weight_dev = 0;
    int64_t blocks = 0;
    for (int64_t k = 0; k < kn.n; k++) {
      knots_differ += memcmp(&kn.x[k], &rk.x[k], sizeof(double)) != 0;
      weight_differ += kn.weight[k] != rk.weight[k];
      double dev = fabs(kn.weight[k] - rk.weight[k]) / (rk.weight[k] > 0 ? rk.weight[k] : 1);
      weight_dev = dev > weight_dev ? dev : weight_dev;
      blocks += kn.start[k];
      if (!grad) flags_wrong += kn.start[k] != (k == 0 || kn.level[k] != kn.level[k - 1]);
      /* knots are increasing in x, steps in the direction */
      if (k > 0) flags_wrong += !(kn.x[k - 1] < kn.x[k]) || (o.increasing ? kn.level[k] < kn.level[k - 1] : kn.level[k] > kn.level[k - 1]);
    }
    flags_wrong += blocks != kn.nblocks;
    if (grad && !single)
      for (int64_t i = 0; i < n; i++) order_differ += order[i] != ref_order[i], start_differ += start[i] != ref_start[i];
  }
  /* the fit is the levels of its knots: c.step_downs is not used (input order) */
  double tol = single ? 1e-6 : 1e-12;
  CHECK(sg == GPUISO_OK && c.max_dev <= tol && knots_differ == 0 && (!exact || weight_differ == 0) &&
            weight_dev <= 1e-14 && flags_wrong == 0 && order_differ == 0 && start_differ == 0 && ex.held == 0 &&
            (ex.sorts == 0) == on_host,
        "%s (n %lld, %s, %s kernel, %s%s%s): status %d (%s), %lld knots (CPU %lld), deviation %g at %lld, "
        "%lld knots' x differ, %lld weights differ (by %g), %lld bad flags, %lld order, %lld gradient flags "
        "differ, %lld buffers held, %d device sorts",
        name, (long long)n, o.increasing ? "increasing" : "decreasing", kernel_names[o.gpu_kernel],
        single ? "single" : "double", grad ? ", solver blocks" : "", on_host ? ", sorted on the host" : "", (int)sg,
        e.message, (long long)kn.n, (long long)rk.n, c.max_dev, (long long)c.worst, (long long)knots_differ,
        (long long)weight_differ, weight_dev, (long long)flags_wrong, (long long)order_differ,
        (long long)start_differ, (long long)ex.held, ex.sorts);
  free(rk.x);
  free(kn.x);
  free(ref);
  free(fit);
  free(ref_order);
  free(order);
  free(ref_start);
  free(start);
}

static void test_fits(void) {
  const int64_t sizes[] = {1, 2, 33, 700, 6000};
  const int64_t ties[] = {1, 2, 4, 3, 4};
  int k = 0;
  for (int si = 0; si < 5; si++) {
    for (int wk = 0; wk < W_COUNT; wk++, k++) {
      family_kind f = (family_kind)(k % 4); /* noise, increasing, sawtooth, cliff */
      xy_data d = make_data(sizes[si], ties[si], f, (weight_kind)wk, 11 + k);
      char name[64];
      snprintf(name, sizeof name, "%s, %s weights", family_names[f], weight_names[wk]);
      for (int variant = 0; variant < 4; variant++) {
        gpuiso_opts o = options((k + variant) % 2, variant < 2 ? GPUISO_GPU_FAST : GPUISO_GPU_SIMPLE, variant == 3);
        o.solver_blocks = variant == 1;
        check_fit(name, d, o, 0);
      }
      free_data(&d);
    }
  }
  /* ties of hundreds of elements that cross tiles of run_sums, and knots of one element each; y
   * and w small integers, so that every sum is exact in any order */
  for (int variant = 0; variant < 4; variant++) {
    int64_t n = 5000;
    xy_data d = make_data(n, variant % 2 ? 600 : 1, FAM_NOISE, variant < 2 ? W_NONE : W_UNIFORM, 40 + variant);
    for (int64_t i = 0; i < n; i++) {
      d.y[i] = (double)((i * 7919) % 13) - 6;
      if (d.w) d.w[i] = (double)(i % 5);
    }
    gpuiso_opts o = options(variant % 2, variant == 2 ? GPUISO_GPU_SIMPLE : GPUISO_GPU_FAST, 0);
    check_fit(variant % 2 ? "long ties, exact sums" : "distinct x, exact sums", d, o, 1);
    free_data(&d);
  }
  /* a device too small for the sort (xy_device_bytes an element): sorted and pooled on the host,
   * the knots' row through the device (in one plan here, 200 KB holding it), both precisions,
   * both kernels, with and without the solver's blocks */
  for (int variant = 0; variant < 4; variant++) {
    xy_data d = make_data(6000, 4, (family_kind)variant, variant % 2 ? W_EXTREME : W_NONE, 60 + variant);
    gpuiso_opts o = options(variant % 2, variant < 2 ? GPUISO_GPU_FAST : GPUISO_GPU_SIMPLE, variant == 2);
    o.solver_blocks = variant == 1;
    check_fit("too little device memory for the sort", d, o, 0, 200000);
    free_data(&d);
  }
  /* the least device memory for the device's sort (the SIMT executor fails an allocation beyond
   * it): xy_device_bytes an element is all the device path holds; in float32 with every x
   * distinct too (variants 4 and 5), the knots' float copies beside their double arrays */
  for (int variant = 0; variant < 6; variant++) {
    xy_data d = make_data(6000, variant % 2 && variant < 4 ? 700 : 1, (family_kind)(variant % 4 + 1),
                          variant < 2 || variant == 5 ? W_UNIFORM : W_NONE, 70 + variant);
    gpuiso_opts o = options(variant % 2, variant % 2 ? GPUISO_GPU_FAST : GPUISO_GPU_SIMPLE, variant >= 3);
    o.solver_blocks = variant == 2;
    size_t least = (size_t)ceil((double)d.n * xy_device_bytes(d.w != NULL, o.gpu_precision == GPUISO_SINGLE) / SLICE_SHARE) + 1;
    check_fit("the least device memory for the sort", d, o, 0, least);
    free_data(&d);
  }
  /* weights near the subnormals: the knots' means brought up by a power of two, as the CPU */
  xy_data d = make_data(3000, 5, FAM_NOISE, W_UNIFORM, 50);
  for (int64_t i = 0; i < d.n; i++) d.w[i] *= 1e-318; /* subnormal: w * y loses digits unscaled */
  check_fit("tiny weights", d, options(1, GPUISO_GPU_FAST, 0), 0);
  free_data(&d);
}

/* A host batch through fit_rows_host, whose data go in and come back in pinned slices here
 * (STAGE_DIRECT 0): against the CPU hull engine row by row, then with each allocation failing. */
static void test_staged_rows(void) {
  int64_t off[200];
  int64_t nrows = gen_ragged(9000, 200, 71, 190, off), n = off[nrows];
  double *y = (double *)malloc(n * sizeof(double)), *w = (double *)malloc(n * sizeof(double));
  double *ref = (double *)malloc(n * sizeof(double)), *z = (double *)malloc(n * sizeof(double));
  uint8_t *start = (uint8_t *)malloc(n);
  gen_rows(FAM_SAWTOOTH, W_EXTREME, nrows, off, 72, 0, y, w);
  for (int kernel = 0; kernel <= 2; kernel += 2) {
    gpuiso_opts o = options(kernel == 0, (gpuiso_gpu_kernel)kernel, 0);
    o.hull_chunk = 32;
    for (int64_t r = 0; r < nrows; r++) {
      gpuiso_error er;
      gpuiso_hull(off[r + 1] - off[r], y + off[r], w + off[r], &o, ref + off[r], NULL, NULL, &er);
    }
    gpuiso_error e;
    sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
    gpuiso_status s = fit_rows_host(ex, nrows, off, GPUISO_DOUBLE, y, w, &o, z, start, &e);
    comparison c = compare_rows(nrows, off, y, ref, GPUISO_DOUBLE, z, o.increasing, 0);
    int64_t flags_wrong = 0;
    for (int64_t r = 0; r < nrows; r++)
      for (int64_t i = off[r]; i < off[r + 1]; i++) flags_wrong += start[i] != (i == off[r] || z[i] != z[i - 1]);
    /* staged: a plan, the slice's arrays, two lanes and their buffers at least */
    CHECK(s == GPUISO_OK && c.max_dev <= 1e-12 && c.step_downs == 0 && flags_wrong == 0 && ex.held == 0 &&
              ex.allocs >= 6,
          "staged batch, %s kernel: status %d, deviation %g, %lld step downs, %lld flags wrong, %lld held, "
          "%lld allocations",
          kernel_names[kernel], (int)s, c.max_dev, (long long)c.step_downs, (long long)flags_wrong,
          (long long)ex.held, (long long)ex.allocs);
    for (int64_t k = 1; kernel == 2 && k <= ex.allocs; k++) {
      sim_exec fx = {&e, 0, 0, k, 0, sim_seed};
      s = fit_rows_host(fx, nrows, off, GPUISO_DOUBLE, y, w, &o, z, start, &e);
      CHECK(s == GPUISO_E_NOMEM && fx.held == 0, "staged batch, allocation %lld failing: status %d, %lld held",
            (long long)k, (int)s, (long long)fx.held);
    }
  }
  free(y); free(w); free(ref); free(z); free(start);
}

static int stop_now(void *ctx) { return --*(int *)ctx < 0; }

/* Errors reported as the CPU path reports them (the status and the element), then interrupts
 * and allocation failures, with nothing held; with `memory` bytes of device memory free (0: room
 * for all; too little for the device's sort: the host's sort and the knots' fit on the device). */
static void check_errors(size_t memory) {
  const int64_t n = 3000;
  xy_data d = make_data(n, 4, FAM_NOISE, W_UNIFORM, 60);
  double *fit = (double *)malloc(n * sizeof(double)), *ref = (double *)malloc(n * sizeof(double));
  xy_data keep = make_data(n, 4, FAM_NOISE, W_UNIFORM, 60);
  gpuiso_opts o = options(1, GPUISO_GPU_FAST, 0);
  for (int c = 0; c < 6; c++) {
    if (c == 0) d.x[2500] = NAN, d.y[1200] = NAN;  /* x first, though y is bad before */
    if (c == 1) d.y[1200] = INFINITY, d.w[700] = -1; /* the first in input order, w */
    if (c == 2) d.y[1200] = NAN, d.y[40] = -INFINITY;
    if (c == 3) d.w[700] = INFINITY;
    if (c == 4) /* one knot whose sums overflow */
      for (int64_t i = 0; i < n; i++)
        if (d.x[i] == d.x[100]) d.y[i] = 1.5e308, d.w[i] = 1;
    if (c == 5)
      for (int64_t i = 0; i < n; i++) d.w[i] = 0;
    gpuiso_knots rk, kn;
    gpuiso_error er, eg;
    gpuiso_status sr = cpu_fit_xy(n, d.x, d.y, d.w, &o, ref, &rk, NULL, NULL, &er);
    sim_exec ex = {&eg, 0, 0, 0, memory, sim_seed};
    gpuiso_status sg = fit_xy_device(ex, n, d.x, d.y, d.w, &o, fit, &kn, NULL, NULL, &eg);
    gpuiso_status want[] = {GPUISO_E_X_NONFINITE, GPUISO_E_W_NEGATIVE, GPUISO_E_Y_NONFINITE,
                            GPUISO_E_W_NONFINITE, GPUISO_E_OVERFLOW,    GPUISO_E_W_ALLZERO};
    int64_t want_index = c == 5 ? -1 : er.index;
    CHECK(sr == want[c] && sg == sr && eg.index == want_index && ex.held == 0 && kn.x == NULL,
          "error %d%s: device status %d index %lld, CPU status %d index %lld, %lld held", c,
          memory ? ", sorted on the host" : "", (int)sg, (long long)eg.index, (int)sr, (long long)er.index,
          (long long)ex.held);
    if (sr == GPUISO_OK) free(rk.x);
    memcpy(d.x, keep.x, n * sizeof(double));
    memcpy(d.y, keep.y, n * sizeof(double));
    memcpy(d.w, keep.w, n * sizeof(double));
  }
  free_data(&keep);

  gpuiso_error e;
  gpuiso_knots kn;
  int64_t *order = (int64_t *)malloc(n * sizeof(int64_t));
  uint8_t *start = (uint8_t *)malloc(n);
  for (int polls = 0; polls < 2; polls++) {
    int left = polls;
    gpuiso_interrupt intr = {stop_now, &left};
    o.interrupt = &intr;
    sim_exec ex = {&e, 0, 0, 0, memory, sim_seed};
    gpuiso_status s = fit_xy_device(ex, n, d.x, d.y, d.w, &o, fit, &kn, order, start, &e);
    CHECK(s == GPUISO_E_INTERRUPT && ex.held == 0 && kn.x == NULL, "interrupt at poll %d: status %d, %lld held",
          polls, (int)s, (long long)ex.held);
  }
  o.interrupt = NULL;
  o.solver_blocks = 1;
  sim_exec counter = {&e, 0, 0, 0, memory, sim_seed};
  gpuiso_status s = fit_xy_device(counter, n, d.x, d.y, d.w, &o, fit, &kn, order, start, &e);
  CHECK(s == GPUISO_OK && counter.held == 0, "fit after errors: status %d", (int)s);
  if (s == GPUISO_OK) free(kn.x);
  for (int64_t k = 1; k <= counter.allocs; k++) {
    sim_exec fx = {&e, 0, 0, k, memory, sim_seed};
    s = fit_xy_device(fx, n, d.x, d.y, d.w, &o, fit, &kn, order, start, &e);
    CHECK(s == GPUISO_E_NOMEM && fx.held == 0 && kn.x == NULL, "allocation %lld failing: status %d, %lld held",
          (long long)k, (int)s, (long long)fx.held);
  }
  free(order);
  free(start);
  free(fit);
  free(ref);
  free_data(&d);
}

static void test_errors(void) { check_errors(0); }
static void test_errors_host_sorted(void) { check_errors(100000); }

int main(void) {
  static void (*const tests[])(void) = {test_fits, test_staged_rows, test_errors, test_errors_host_sorted};
  return run_under_seeds(tests, (int)(sizeof tests / sizeof tests[0]), "the fit on unsorted x on the CPU");
}

/* A row larger than the device memory free (src/cuda/pipeline.cuh fit_row_segments, row_join.cuh),
 * on the SIMT executor with little memory: its segments fitted on the device one after another and
 * joined on the host, against the CPU hull engine on the whole row; beside rows that fit, in one
 * batch; every family and weighting, both directions and precisions, the three kernels, segments
 * of the lane kernels and of the chunked path; zero weights around the cuts, bounds, the solver's
 * blocks, and errors named by the batch's row and element. */
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

static gpuiso_opts options(int increasing, int64_t chunk, gpuiso_gpu_kernel kernel) {
  gpuiso_opts o = test_options(increasing, 1);
  o.hull_chunk = chunk;
  o.gpu_kernel = kernel;
  return o;
}

/* The batch: a short row, the long one, a row of 5. */
#define LONG_ROW 12000
static const int64_t batch[4] = {0, 300, 300 + LONG_ROW, 305 + LONG_ROW};

static void reference(const int64_t *off, int64_t nrows, const double *y, const double *w, const gpuiso_opts *o,
                      double *ref, uint8_t *ref_start) {
  for (int64_t r = 0; r < nrows; r++) {
    gpuiso_error e;
    gpuiso_hull(off[r + 1] - off[r], y + off[r], w ? w + off[r] : NULL, o, ref + off[r],
                ref_start ? ref_start + off[r] : NULL, NULL, &e);
  }
}

/* Memory for the long row's plan divided by `parts`: segments of about LONG_ROW / parts. */
static size_t memory_for(const gpuiso_opts *o, gpuiso_precision type, int weighted, double parts) {
  return (size_t)(plan_slice_row_bytes(o, LONG_ROW, LONG_ROW, type, weighted, 1) / parts);
}

static void test_families(void) {
  int64_t n = batch[3];
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *ref = (double *)malloc(n * sizeof *ref), *z = (double *)malloc(n * sizeof *z);
  float *yf = (float *)malloc(n * sizeof *yf), *wf = (float *)malloc(n * sizeof *wf), *zf = (float *)malloc(n * sizeof *zf);
  uint8_t *start = (uint8_t *)malloc(n), *start2 = (uint8_t *)malloc(n), *ref_start = (uint8_t *)malloc(n);
  for (int f = 0; f < FAM_COUNT; f++) {
    for (int wk = 0; wk < W_COUNT; wk++) {
      for (int single = 0; single <= 1; single++) {
        int increasing = (f + wk + single) % 2;
        gen_rows((family_kind)f, (weight_kind)wk, 3, batch, 31 + f, single, y, w);
        const double *wp = wk == W_NONE ? NULL : w;
        for (int64_t i = 0; i < n; i++) yf[i] = (float)y[i], wf[i] = (float)w[i];
        gpuiso_opts opt = options(increasing, 256, GPUISO_GPU_SIMPLE);
        reference(batch, 3, y, wp, &opt, ref, NULL);
        for (int kernel = 0; kernel <= 2; kernel++) {
          /* lane-kernel segments (under BLOCK_ROW_MAX) and chunked ones, for the fast kernel */
          for (double parts = kernel == GPUISO_GPU_FAST ? 2.5 : 5; parts <= 5; parts += 2.5) {
            opt.gpu_kernel = (gpuiso_gpu_kernel)kernel;
            gpuiso_precision type = single ? GPUISO_SINGLE : GPUISO_DOUBLE;
            gpuiso_error e;
            sim_exec ex = {&e, 0, 0, 0, memory_for(&opt, type, wp != NULL, parts), sim_seed};
            gpuiso_status s = single ? fit_rows_host(ex, 3, batch, type, yf, wp ? wf : NULL, &opt, zf, start, &e)
                                     : fit_rows_host(ex, 3, batch, type, y, wp, &opt, z, start, &e), s2 = GPUISO_OK;
            const void *got = single ? (const void *)zf : (const void *)z;
            /* the row-PAV control's plain double sums on the cancellation family: on the scale of
             * the data (test_pipeline); the rest relative to 1 + |z| */
            comparison c = compare_rows(3, batch, y, ref, type, got, increasing,
                                        f == FAM_CANCELLATION && kernel == GPUISO_GPU_ROW_PAV);
            int flags_ok = 1;
            for (int64_t r = 0; r < 3; r++)
              for (int64_t i = batch[r]; i < batch[r + 1]; i++)
                flags_ok = flags_ok && start[i] == (i == batch[r] || (single ? zf[i] != zf[i - 1] : z[i] != z[i - 1]));
            double tol = (single ? 0x1p-24 : 0) + 1e-12;
            /* the solver's blocks: the hull engine's, except between blocks of equal means, which
             * the engines may split differently (gpuiso.h): the hull engine decides on rounded
             * points, the join on exact steps */
            int64_t blocks_differ = 0;
            if (!single && kernel != GPUISO_GPU_ROW_PAV) {
              gpuiso_opts ob = opt;
              ob.solver_blocks = 1;
              reference(batch, 3, y, wp, &ob, z, ref_start);
              sim_exec ex2 = {&e, 0, 0, 0, ex.memory, sim_seed};
              s2 = fit_rows_host(ex2, 3, batch, type, y, wp, &ob, z, start2, &e);
              for (int64_t i = 0; i < n; i++)
                blocks_differ += start2[i] != ref_start[i] && !(i > 0 && fabs(ref[i] - ref[i - 1]) <= 1e-12 * (1 + fabs(ref[i])));
            }
            /* in segments: a slice's arrays and a plan each, at least */
            CHECK(s == GPUISO_OK && s2 == GPUISO_OK && c.max_dev <= tol && (kernel == GPUISO_GPU_ROW_PAV || c.step_downs == 0) &&
                      flags_ok && blocks_differ == 0 && ex.held == 0 && ex.allocs >= 2 * (int64_t)ceil(parts),
                  "segments, %s, %s weights, %s, %s kernel, %g parts: status %d (%s), deviation %g at %lld, "
                  "%lld step downs, flags %s, %lld solver block flags differ, %lld held, %lld allocations",
                  family_names[f], weight_names[wk], single ? "single" : "double", kernel_names[kernel], parts,
                  (int)s, e.message, c.max_dev, (long long)c.worst, (long long)c.step_downs,
                  flags_ok ? "ok" : "wrong", (long long)blocks_differ, (long long)ex.held, (long long)ex.allocs);
          }
        }
      }
    }
  }
  free(y); free(w); free(ref); free(z); free(yf); free(wf); free(zf); free(start); free(start2); free(ref_start);
}

/* Zero weights across the cuts (a run longer than a segment, and a row whose first segment has
 * none), bounds, and the solver's blocks against the hull engine's. */
static void test_zeros_bounds_blocks(void) {
  int64_t n = batch[3];
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *ref = (double *)malloc(n * sizeof *ref), *z = (double *)malloc(n * sizeof *z);
  uint8_t *start = (uint8_t *)malloc(n), *ref_start = (uint8_t *)malloc(n);
  const char *const cases[] = {"a zero run over two cuts", "zeros leading for a segment", "bounds", "solver blocks",
                               "zeros leading the row past a segment", "zeros to the row's end",
                               "zeros leading the row past a segment, solver blocks",
                               "zeros to the row's end, solver blocks"};
  for (int k = 0; k < 8; k++) {
    for (int increasing = 0; increasing <= 1; increasing++) {
      gen_rows(k == 3 ? FAM_SAWTOOTH : FAM_NOISE, W_UNIFORM, 3, batch, 41 + k, 0, y, w);
      if (k == 0)
        for (int64_t i = 300 + 3000; i < 300 + 8000; i++) w[i] = 0;
      if (k == 1)
        for (int64_t i = 300; i < 300 + 3000; i++) w[i] = 0;
      if (k == 4 || k == 6)
        for (int64_t i = 300; i < 300 + 5000; i++) w[i] = 0;
      if (k == 5 || k == 7)
        for (int64_t i = 300 + 7000; i < 300 + LONG_ROW; i++) w[i] = 0;
      gpuiso_opts opt = options(increasing, 256, GPUISO_GPU_FAST);
      if (k == 2) opt.lo = 0.5, opt.hi = 2.2;
      opt.solver_blocks = k == 3 || k >= 6;
      reference(batch, 3, y, w, &opt, ref, ref_start);
      gpuiso_error e;
      sim_exec ex = {&e, 0, 0, 0, memory_for(&opt, GPUISO_DOUBLE, 1, 5), sim_seed};
      gpuiso_status s = fit_rows_host(ex, 3, batch, GPUISO_DOUBLE, y, w, &opt, z, start, &e);
      comparison c = compare_rows(3, batch, y, ref, GPUISO_DOUBLE, z, increasing, 0);
      int64_t flags = 0;
      for (int64_t i = 0; i < n; i++) flags += start[i] != ref_start[i];
      /* a zero run longer than a segment takes no more device memory than one */
      CHECK(s == GPUISO_OK && c.max_dev <= 1e-12 && c.step_downs == 0 && flags == 0 && ex.held == 0 &&
                ex.peak <= ex.memory,
            "segments, %s, %s: status %d (%s), deviation %g at %lld, %lld flags differ, %zu bytes held at most of %zu",
            cases[k], increasing ? "increasing" : "decreasing", (int)s, e.message, c.max_dev, (long long)c.worst,
            (long long)flags, ex.peak, ex.memory);
    }
  }
  free(y); free(w); free(ref); free(z); free(start); free(ref_start);
}

/* Errors in a later segment of the long row, by the batch's element, also among zero weights
 * fitted on the host (fit_segment); a long row with no positive weight; nothing held. */
static void test_errors(void) {
  int64_t n = batch[3];
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w), *z = (double *)malloc(n * sizeof *z);
  for (int kernel = 0; kernel <= 2; kernel += 2) {
    gpuiso_opts opt = options(1, 256, (gpuiso_gpu_kernel)kernel);
    size_t memory = memory_for(&opt, GPUISO_DOUBLE, 1, 5);
    const int64_t bad = 300 + 9000;
    /* then within a zero run longer than a segment (k 6: its one positive weight, at 2299 with
     * these segments, overflowing: the element error first, as in one plan), in a row of no
     * positive weight, and sums that overflow only when pooled across the cuts (k 7: a falling
     * row, one block); then an element error after a segment whose sums overflow (k 8) and in a row
     * of no positive weight (k 9), reported first, as in one plan; then weights that span past
     * 2^1022 over the row, though no segment's do (k 10: the join's error, hull_span_beyond) */
    for (int k = 0; k < 11; k++) {
      gen_rows(FAM_NOISE, W_UNIFORM, 3, batch, 51, 0, y, w);
      int nan = k == 0 || k == 3 || k == 6 || k == 8 || k == 9;
      gpuiso_status want = nan      ? GPUISO_E_Y_NONFINITE
                           : k == 2 ? GPUISO_E_W_ALLZERO
                           : k == 7 ? GPUISO_E_OVERFLOW
                           : k == 10 ? GPUISO_E_W_SPAN
                                     : GPUISO_E_W_NEGATIVE;
      if (k == 2 || k == 4 || k == 9)
        for (int64_t i = batch[1]; i < batch[2]; i++) w[i] = 0;
      if (k == 3 || k == 5 || k == 6)
        for (int64_t i = 300 + 2000; i < 300 + 11000; i++) w[i] = 0;
      if (k == 6) y[300 + 1999] = 1e300, w[300 + 1999] = 1e10;
      if (k == 7)
        for (int64_t i = batch[1]; i < batch[2]; i++) y[i] = 2.4e304 * (2 - (double)(i - batch[1]) / LONG_ROW), w[i] = 1;
      if (k == 8) y[300 + 10] = 1e300, w[300 + 10] = 1e10;
      if (k == 10) w[300 + 10] = 0x1p500, w[300 + LONG_ROW - 10] = 0x1p-530;
      if (nan) y[bad] = NAN;
      if (k == 1 || k == 4 || k == 5) w[bad] = -1;
      gpuiso_error e, e1;
      sim_exec ex = {&e, 0, 0, 0, memory, sim_seed}, whole = {&e1, 0, 0, 0, 0, sim_seed};
      gpuiso_status s = fit_rows_host(ex, 3, batch, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
      gpuiso_status s1 = fit_rows_host(whole, 3, batch, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e1);
      CHECK(s == want && e.row == 1 && e.index == (k != 2 && k != 7 && k != 10 ? bad : -1) && ex.held == 0 && s1 == s &&
                e1.row == e.row && e1.index == e.index,
            "segments, %s kernel, case %d: status %d, row %lld, index %lld, %lld held; in one plan status %d, "
            "index %lld", kernel_names[kernel], k, (int)s, (long long)e.row, (long long)e.index, (long long)ex.held,
            (int)s1, (long long)e1.index);
    }
    /* a device too small for a plan of one element: out of memory, before anything is made */
    gen_rows(FAM_NOISE, W_UNIFORM, 3, batch, 52, 0, y, w);
    gpuiso_error e;
    sim_exec tiny = {&e, 0, 0, 0, 1000, sim_seed};
    gpuiso_status s = fit_rows_host(tiny, 3, batch, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
    CHECK(s == GPUISO_E_NOMEM && e.status == s && strstr(e.message, "device's free memory (1000 bytes)") &&
              tiny.allocs == 0 && tiny.held == 0,
          "segments, %s kernel, 1000 bytes of device memory: status %d (%s), %lld allocations", kernel_names[kernel],
          (int)s, e.message, (long long)tiny.allocs);
  }
  free(y); free(w); free(z);
}

/* opt.gpu_memory below the memory free: the same fit as on a device with only that much free. */
static void test_memory_option(void) {
  int64_t n = batch[3];
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *a = (double *)malloc(n * sizeof *a), *b = (double *)malloc(n * sizeof *b);
  gen_rows(FAM_SAWTOOTH, W_EXTREME, 3, batch, 61, 0, y, w);
  gpuiso_opts opt = options(0, 256, GPUISO_GPU_FAST);
  size_t memory = memory_for(&opt, GPUISO_DOUBLE, 1, 5);
  gpuiso_error e;
  sim_exec small = {&e, 0, 0, 0, memory, sim_seed}, large = {&e, 0, 0, 0, 0, sim_seed};
  gpuiso_status s = fit_rows_host(small, 3, batch, GPUISO_DOUBLE, y, w, &opt, a, NULL, &e);
  opt.gpu_memory = (double)memory;
  gpuiso_status s2 = fit_rows_host(large, 3, batch, GPUISO_DOUBLE, y, w, &opt, b, NULL, &e);
  CHECK(s == GPUISO_OK && s2 == GPUISO_OK && memcmp(a, b, n * sizeof *a) == 0 && large.allocs == small.allocs,
        "gpu_memory: status %d, %d, %s, %lld and %lld allocations", (int)s, (int)s2,
        memcmp(a, b, n * sizeof *a) ? "other fits" : "the same fits", (long long)small.allocs, (long long)large.allocs);
  free(y); free(w); free(a); free(b);
}

/* A fit in place (fit the same array as y, as groups_xy.c fits its knots): the same fit as into
 * another array, whose segments' joins sum the row's y, not the fits written over it. */
static void test_in_place(void) {
  int64_t n = batch[3];
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *apart = (double *)malloc(n * sizeof *apart), *in = (double *)malloc(n * sizeof *in);
  for (int kernel = GPUISO_GPU_SIMPLE; kernel <= GPUISO_GPU_FAST; kernel += GPUISO_GPU_FAST - GPUISO_GPU_SIMPLE)
    for (int weighted = 0; weighted <= 1; weighted++) {
      gen_rows(FAM_SAWTOOTH, weighted ? W_UNIFORM : W_NONE, 3, batch, 67 + weighted, 0, y, w);
      gpuiso_opts opt = options(weighted, 256, (gpuiso_gpu_kernel)kernel);
      const double *wp = weighted ? w : NULL;
      gpuiso_error e;
      size_t memory = memory_for(&opt, GPUISO_DOUBLE, weighted, 5);
      sim_exec a = {&e, 0, 0, 0, memory, sim_seed}, b = {&e, 0, 0, 0, memory, sim_seed};
      gpuiso_status s = fit_rows_host(a, 3, batch, GPUISO_DOUBLE, y, wp, &opt, apart, NULL, &e);
      memcpy(in, y, n * sizeof *in);
      gpuiso_status s2 = fit_rows_host(b, 3, batch, GPUISO_DOUBLE, in, wp, &opt, in, NULL, &e);
      CHECK(s == GPUISO_OK && s2 == GPUISO_OK && memcmp(apart, in, n * sizeof *in) == 0 && b.allocs >= 4,
            "in place, %s kernel, %s: status %d, %d, %s, %lld allocations", kernel_names[kernel],
            weighted ? "weighted" : "unweighted", (int)s, (int)s2,
            memcmp(apart, in, n * sizeof *in) ? "other fits" : "the same fits", (long long)b.allocs);
    }
  free(y); free(w); free(apart); free(in);
}

int main(void) {
  static void (*const tests[])(void) = {test_families, test_zeros_bounds_blocks, test_errors, test_memory_option,
                                        test_in_place};
  return run_under_seeds(tests, (int)(sizeof tests / sizeof tests[0]), "rows in segments on the CPU");
}

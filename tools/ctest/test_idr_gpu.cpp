/* IDR's device steps and host side (src/cuda/idr.cuh), run on the CPU by the SIMT executor
 * (tools/simt) under three schedule seeds, against the CPU engine (gpuiso_idr_fit): continuous data and ties, weights, both solver
 * kernels, slices of one row, of a few rows and of all thresholds; the error reports, interrupts,
 * and that every buffer is released on every path; the observations and runs in many pinned
 * slices (staging.cuh), the last one short. */
#define STAGE_SLICE ((size_t)8 * 37) /* 37 doubles a slice: many slices, the last one short */
#define STAGE_DIRECT ((size_t)0)      /* staged however small */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"
#include "idr.cuh"

extern "C" {
#include "compare.h"
#include "families.h"
}

#include "check.h"
#include "sim_test.h"

static gpuiso_opts options(gpuiso_gpu_kernel kernel, int64_t chunk) {
  gpuiso_opts o = test_options(1, 1); /* IDR's own direction is antitonic whatever is asked */
  o.gpu_kernel = kernel;
  o.hull_chunk = chunk;
  return o;
}

typedef struct {
  const char *name;
  int64_t n;
  int ties;
  weight_kind wk;
} idr_case;

/* The least device memory, in steps of 256 bytes, in which idr_setup succeeds (the SIMT executor
 * fails an allocation beyond the memory it reports), which must give slices of one row. */
static size_t least_memory(int64_t n, const int32_t *pos, const int32_t *thr, const double *w, int64_t npos,
                           int64_t nthr, const gpuiso_opts *o) {
  gpuiso_error e;
  for (size_t memory = 256;; memory += 256) {
    sim_exec probe = {&e, 0, 0, 0, memory, sim_seed};
    idr_state st;
    memset(&st, 0, sizeof st);
    st.v.npos = npos;
    st.v.nthr = nthr;
    st.solver = *o;
    gpuiso_status s = idr_setup(probe, &st, n, pos, thr, w, &e);
    int64_t rows = st.max_rows;
    idr_release(probe, &st);
    if (s == GPUISO_OK) {
      CHECK(rows == 1, "the least memory, %zu bytes: slices of %lld rows", memory, (long long)rows);
      return memory;
    }
  }
}

static void test_against_cpu(void) {
  /* continuous data make n thresholds of n positions: the sizes keep the executor's time down */
  const idr_case cases[] = {{"continuous", 700, 0, W_NONE},  {"ties", 3000, 1, W_NONE},
                            {"ties, weights", 2000, 1, W_UNIFORM},
                            {"continuous, extreme weights", 600, 0, W_EXTREME},
                            {"one observation", 1, 0, W_NONE}, {"three", 3, 1, W_UNIFORM}};
  /* device memory: the least that suffices (slices of one row), slices of a few rows, of every
   * threshold */
  size_t memory[] = {0, (size_t)1 << 21, (size_t)1 << 40};
  const struct {
    gpuiso_gpu_kernel kernel;
    int64_t chunk;
  } solvers[] = {{GPUISO_GPU_SIMPLE, 0}, {GPUISO_GPU_SIMPLE, 16}, {GPUISO_GPU_ROW_PAV, 0}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    idr_case ic = cases[c];
    int32_t *pos = (int32_t *)malloc(ic.n * sizeof *pos), *thr = (int32_t *)malloc(ic.n * sizeof *thr);
    double *w = (double *)malloc(ic.n * sizeof *w);
    int64_t npos, nthr;
    gen_idr(ic.n, 40 + c, ic.ties, ic.wk, pos, thr, w, &npos, &nthr);
    const double *wp = ic.wk == W_NONE ? NULL : w;
    gpuiso_opts cpu = options(GPUISO_GPU_SIMPLE, 0);
    gpuiso_cdf_runs ref;
    gpuiso_error e;
    gpuiso_status s = gpuiso_idr_fit(ic.n, pos, thr, wp, npos, nthr, &cpu, &ref, &e);
    CHECK(s == GPUISO_OK, "%s: the CPU engine failed (%d)", ic.name, (int)s);
    for (size_t m = 0; s == GPUISO_OK && m < sizeof memory / sizeof memory[0]; m++) {
      for (size_t v = 0; v < sizeof solvers / sizeof solvers[0]; v++) {
        gpuiso_opts o = options(solvers[v].kernel, solvers[v].chunk);
        if (m == 0) memory[0] = least_memory(ic.n, pos, thr, wp, npos, nthr, &o);
        sim_exec ex = {&e, 0, 0, 0, memory[m], sim_seed};
        gpuiso_cdf_runs got;
        gpuiso_status sg = idr_fit_device(ex, ic.n, pos, thr, wp, npos, nthr, &o, &got, &e);
        runs_comparison r = {INFINITY, -1, -1, -1};
        if (sg == GPUISO_OK) r = compare_cdf_runs(&ref, &got, 1e-10);
        /* unit weights: counts and sizes are whole numbers, each block one division of them */
        int exact = !wp;
        CHECK(sg == GPUISO_OK && r.max_dev <= (exact ? 0 : 1e-10) && r.steps_differ == 0 &&
                  (!exact || r.starts_differ == 0) && r.bad == 0 && ex.held == 0 &&
                  got.npos == npos && got.nthr == nthr,
              "%s (n %lld, %lld positions, %lld thresholds), memory %zu, %s kernel, chunk %lld: "
              "status %d, deviation %g, %lld thresholds of other runs (%lld past 1e-10), %lld "
              "misshapen, %lld buffers held",
              ic.name, (long long)ic.n, (long long)npos, (long long)nthr, memory[m],
              solvers[v].kernel == GPUISO_GPU_SIMPLE ? "simple" : "row PAV",
              (long long)solvers[v].chunk, (int)sg, r.max_dev, (long long)r.starts_differ,
              (long long)r.steps_differ, (long long)r.bad, (long long)ex.held);
        if (sg == GPUISO_OK) gpuiso_cdf_runs_free(&got);
      }
    }
    if (s == GPUISO_OK) gpuiso_cdf_runs_free(&ref);
    free(pos);
    free(thr);
    free(w);
  }
}

static int stop_now(void *ctx) { return --*(int *)ctx < 0; }

static void test_errors(void) {
  int64_t n = 600, npos, nthr;
  int32_t pos[600], thr[600];
  double w[600];
  gen_idr(n, 5, 1, W_UNIFORM, pos, thr, w, &npos, &nthr);
  gpuiso_opts o = options(GPUISO_GPU_SIMPLE, 0);
  gpuiso_error e;
  gpuiso_cdf_runs out;
  sim_exec bad_input = {&e, 0, 0, 0, 0, sim_seed};
  gpuiso_status s = idr_fit_device(bad_input, n, pos, thr, w, 0, nthr, &o, &out, &e);
  CHECK(s == GPUISO_E_INTERNAL && out.offset == NULL && bad_input.held == 0,
        "no positions: status %d", (int)s);

  /* three slices: interrupts at each poll between them, and a failure at each allocation */
  size_t memory = 4096;
  for (;; memory += 4096) {
    sim_exec probe = {&e, 0, 0, 0, memory, sim_seed};
    idr_state st;
    memset(&st, 0, sizeof st);
    st.v.npos = npos;
    st.v.nthr = nthr;
    st.solver = o;
    idr_setup(probe, &st, n, pos, thr, w, &e);
    idr_release(probe, &st);
    if (st.max_rows * 3 >= nthr) break;
  }
  int total = 1000, left = total;
  gpuiso_interrupt intr = {stop_now, &left};
  o.interrupt = &intr;
  sim_exec ex = {&e, 0, 0, 0, memory, sim_seed};
  s = idr_fit_device(ex, n, pos, thr, w, npos, nthr, &o, &out, &e);
  int polls = total - left;
  CHECK(s == GPUISO_OK && polls >= 2, "polls of three slices: status %d, %d polls", (int)s, polls);
  if (s == GPUISO_OK) gpuiso_cdf_runs_free(&out);
  for (int p = 0; p < polls; p++) {
    left = p;
    sim_exec ix = {&e, 0, 0, 0, memory, sim_seed};
    s = idr_fit_device(ix, n, pos, thr, w, npos, nthr, &o, &out, &e);
    CHECK(s == GPUISO_E_INTERRUPT && ix.held == 0 && out.offset == NULL,
          "interrupt at poll %d of %d: status %d, %lld held", p, polls, (int)s, (long long)ix.held);
  }
  o.interrupt = NULL;
  sim_sliced counter = {{&e, 0, 0, 0, memory, sim_seed}, 0, 0};
  s = idr_fit_device(counter, n, pos, thr, w, npos, nthr, &o, &out, &e);
  CHECK(s == GPUISO_OK && counter.slices_in > 1 && counter.slices_out > 1,
        "fit after errors: status %d, %lld slices in, %lld out", (int)s, (long long)counter.slices_in,
        (long long)counter.slices_out);
  if (s == GPUISO_OK) gpuiso_cdf_runs_free(&out);
  for (int64_t k = 1; k <= counter.allocs; k++) {
    sim_exec fx = {&e, 0, 0, k, memory, sim_seed};
    s = idr_fit_device(fx, n, pos, thr, w, npos, nthr, &o, &out, &e);
    CHECK(s == GPUISO_E_NOMEM && e.status == s && fx.held == 0 && out.offset == NULL,
          "allocation %lld of %lld failing: status %d, %lld held", (long long)k,
          (long long)counter.allocs, (int)s, (long long)fx.held);
  }
}

int main(void) {
  static void (*const tests[])(void) = {test_against_cpu, test_errors};
  return run_under_seeds(tests, (int)(sizeof tests / sizeof tests[0]), "IDR on the CUDA engine, on the CPU");
}

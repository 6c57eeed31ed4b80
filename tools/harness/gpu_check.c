/* tools/gpu-check's harness: every CUDA kernel against the CPU hull engine (its twin) on the data
 * families, shapes, precisions, weightings and directions of the paper, then one timing table,
 * then IDR on the GPU against the CPU engine and its time at n = 1e5, then calibration
 * (calibrate_isotonic()'s pipeline) against the CPU path and its time at n = 1e7 in 300 groups.
 * Prints a PASS/FAIL line per check and exits 1 on any accuracy failure (2 without a device).
 *
 *   gpu_check [small]   small: a few small cases, for compute-sanitizer
 * GPUISO_CHECK_DEADLINE (seconds since the epoch) makes it skip what would run late, saying so.
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare.h"
#include "families.h"
#include "gpuiso.h"
#include "internal.h" /* calibrate_check, to time the calibration's input check alone */

static int accuracy_failed, accuracy_passed, skipped;
static double deadline = INFINITY;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int late(double reserve) { return now() + reserve > deadline; }

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    printf("FAIL harness: out of host memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

#define CUDA_OK(call)                                                                 \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      printf("FAIL harness: %s: %s\n", #call, cudaGetErrorString(e_));                \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

typedef struct {
  const char *name;
  int64_t nrows, len; /* len 0: ragged rows of about nrows elements in all */
} shape;

static int64_t *layout(shape s, int64_t *nrows) {
  if (s.len == 0) {
    int64_t cap = s.nrows / 1000 + 2, *off = xmalloc((cap + 1) * sizeof *off);
    *nrows = gen_ragged(s.nrows, 2000, 99, cap, off);
    return off;
  }
  int64_t *off = xmalloc((s.nrows + 1) * sizeof *off);
  for (int64_t r = 0; r <= s.nrows; r++) off[r] = r * s.len;
  *nrows = s.nrows;
  return off;
}

static gpuiso_opts options(int increasing, gpuiso_gpu_kernel kernel, int64_t chunk, int64_t cap) {
  gpuiso_opts o;
  memset(&o, 0, sizeof o);
  o.increasing = increasing;
  o.lo = -INFINITY;
  o.hi = INFINITY;
  o.gpu_kernel = kernel;
  o.hull_chunk = chunk;
  o.hull_walk_cap = cap;
  return o;
}

/* The CPU engine on every row: in parallel over rows, or one row on every thread. */
static void cpu_rows(gpuiso_engine engine, int64_t nrows, const int64_t *off, const double *y,
                     const double *w, gpuiso_opts o, double *z) {
  o.engine = engine;
  o.nthreads = nrows > 1 ? 1 : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) if (nrows > 1)
  for (int64_t r = 0; r < nrows; r++) {
    gpuiso_error e;
    gpuiso_fit(off[r + 1] - off[r], y + off[r], w ? w + off[r] : NULL, &o, z + off[r], NULL, NULL, &e);
  }
}

static float *to_float(const double *v, int64_t n) {
  float *f = xmalloc(n * sizeof *f);
#pragma omp parallel for
  for (int64_t i = 0; i < n; i++) f[i] = (float)v[i];
  return f;
}

/* One accuracy case: the kernel on the GPU against the CPU hull engine on the same data. */
static void check_case(const char *shape_name, int64_t nrows, const int64_t *off, family_kind f,
                       weight_kind wk, int increasing, int single, gpuiso_gpu_kernel kernel,
                       int64_t chunk, int64_t cap, const double *y, const double *w,
                       const double *ref) {
  int64_t n = off[nrows];
  gpuiso_opts o = options(increasing, kernel, chunk, cap);
  gpuiso_precision type = single ? GPUISO_SINGLE : GPUISO_DOUBLE;
  float *yf = single ? to_float(y, n) : NULL, *wf = single && w ? to_float(w, n) : NULL;
  void *z = xmalloc(n * (single ? sizeof(float) : sizeof(double)));
  gpuiso_error e;
  double t0 = now();
  gpuiso_status s = gpuiso_cuda_fit_rows(nrows, off, type, single ? (const void *)yf : y,
                                         single ? (const void *)wf : w, &o, z, NULL, &e);
  double t = now() - t0;
  comparison c = {0, -1, 0, 0, 0};
  if (s == GPUISO_OK) c = compare_rows(nrows, off, y, ref, type, z, increasing, f == FAM_CANCELLATION);
  int ok = s == GPUISO_OK &&
           (single ? c.max_dev <= 2e-7 && c.step_downs == 0
                   : c.max_dev <= 1e-10 && (kernel != GPUISO_GPU_SIMPLE || c.block_rows == 0));
  ok ? accuracy_passed++ : accuracy_failed++;
  printf("%s accuracy %-10s %-12s %-8s %-4s %s %-6s dev %.2e steps %lld blocks-differ-rows %lld "
         "not-bitwise %lld (%.2f s)%s%s\n",
         ok ? "PASS" : "FAIL", shape_name, family_names[f], weight_names[wk], increasing ? "inc" : "dec",
         single ? "f32" : "f64", kernel == GPUISO_GPU_SIMPLE ? "simple" : "rowpav", c.max_dev,
         (long long)c.step_downs, (long long)c.block_rows, (long long)c.differ, t,
         s == GPUISO_OK ? "" : " error: ", s == GPUISO_OK ? "" : e.message);
  free(yf);
  free(wf);
  free(z);
}

/* Families [f0, f1) and weightings [w0, w1) in both precisions on a shape (directions
 * alternate), on the simple kernel and, where rows are short enough for it, the row-PAV control.
 * Cases that would leave less than reserve seconds are skipped. */
static void check_shape(shape sh, int f0, int f1, int w0, int w1, int64_t chunk, int64_t cap,
                        double reserve) {
  int64_t nrows, *off = layout(sh, &nrows), n = off[nrows];
  double *y = xmalloc(n * sizeof *y), *w = xmalloc(n * sizeof *w), *ref = xmalloc(n * sizeof *ref);
  int64_t longest = 0;
  for (int64_t r = 0; r < nrows; r++) longest = off[r + 1] - off[r] > longest ? off[r + 1] - off[r] : longest;
  for (int f = f0; f < f1; f++) {
    for (int wk = w0; wk < w1; wk++) {
      for (int single = 0; single <= 1; single++) {
        if (late(reserve)) {
          skipped++;
          continue;
        }
        int increasing = (f + wk + single) % 2;
        gen_rows((family_kind)f, (weight_kind)wk, nrows, off, 1000 * f + 10 * wk + single, single, y, w);
        const double *wp = wk == W_NONE ? NULL : w;
        cpu_rows(GPUISO_HULL, nrows, off, y, wp, options(increasing, GPUISO_GPU_SIMPLE, chunk, cap), ref);
        check_case(sh.name, nrows, off, (family_kind)f, (weight_kind)wk, increasing, single,
                   GPUISO_GPU_SIMPLE, chunk, cap, y, wp, ref);
        if (longest <= 100000)
          check_case(sh.name, nrows, off, (family_kind)f, (weight_kind)wk, increasing, single,
                     GPUISO_GPU_ROW_PAV, chunk, cap, y, wp, ref);
      }
    }
  }
  free(off);
  free(y);
  free(w);
  free(ref);
}

/* A fit on unsorted x with ties: sorted and pooled on the CPU, the knots fitted on the GPU. */
static void check_unsorted_x(int64_t n) {
  double *x = xmalloc(n * sizeof *x), *y = xmalloc(n * sizeof *y), *w = xmalloc(n * sizeof *w);
  double *z[2], *kx = xmalloc(n * sizeof *kx), *kl = xmalloc(n * sizeof *kl), *kw = xmalloc(n * sizeof *kw);
  uint8_t *ks = xmalloc(n);
  int64_t off[2] = {0, n};
  gen_x_ties(n, 5, x);
  gen_rows(FAM_NOISE, W_UNIFORM, 1, off, 6, 0, y, w);
  for (int single = 0; single <= 1; single++) {
    int64_t nk = 0, nb[2] = {0, 0};
    gpuiso_status s = GPUISO_OK;
    gpuiso_error e = {GPUISO_OK, -1, -1, ""};
    for (int gpu = 0; gpu <= 1 && s == GPUISO_OK; gpu++) {
      gpuiso_opts o = options(!single, GPUISO_GPU_SIMPLE, 0, 0);
      o.engine = gpu ? GPUISO_GPU : GPUISO_HULL;
      o.gpu_precision = single ? GPUISO_SINGLE : GPUISO_DOUBLE;
      gpuiso_sorted *sorted;
      z[gpu] = xmalloc(n * sizeof *z[gpu]);
      s = gpuiso_sort_xy(n, x, y, w, &o, &sorted, &nk, &e);
      gpuiso_knots kn = {nk, kx, kl, kw, ks, 0};
      if (s == GPUISO_OK) s = gpuiso_fit_sorted(sorted, &o, z[gpu], &kn, &e);
      gpuiso_sorted_free(sorted);
      nb[gpu] = kn.nblocks;
    }
    double dev = 0;
    for (int64_t i = 0; s == GPUISO_OK && i < n; i++) {
      double d = fabs(z[1][i] - z[0][i]) / (1 + fabs(z[0][i]));
      dev = d > dev ? d : dev;
    }
    /* single: the knots' pooled means are rounded to float32 before the fit */
    int ok = s == GPUISO_OK && (single ? dev <= 2e-7 : dev <= 1e-10 && nb[0] == nb[1]);
    ok ? accuracy_passed++ : accuracy_failed++;
    printf("%s accuracy unsorted-x n %lld, %lld knots, %s: dev %.2e blocks %lld vs CPU %lld%s%s\n",
           ok ? "PASS" : "FAIL", (long long)n, (long long)nk, single ? "f32 dec" : "f64 inc", dev,
           (long long)nb[1], (long long)nb[0], s == GPUISO_OK ? "" : " error: ", e.message);
    free(z[0]);
    free(z[1]);
  }
  free(x); free(y); free(w); free(kx); free(kl); free(kw); free(ks);
}

/* ---- Timing ---- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int k) {
  qsort(v, k, sizeof *v, cmp_double);
  return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

/* Median ms of reps runs of a plan on device data, by CUDA events (after a warm-up unless a
 * single run is asked for: the slow control). */
static double time_plan(gpuiso_cuda_plan *plan, const void *dy, void *dfit, int reps) {
  cudaEvent_t a, b;
  double t[16];
  gpuiso_error e;
  CUDA_OK(cudaEventCreate(&a));
  CUDA_OK(cudaEventCreate(&b));
  if (reps > 1 && gpuiso_cuda_plan_run(plan, dy, NULL, dfit, NULL, &e) != GPUISO_OK) {
    printf("FAIL timing: %s\n", e.message);
    return NAN;
  }
  for (int k = 0; k < reps; k++) {
    float ms;
    CUDA_OK(cudaEventRecord(a, 0));
    gpuiso_cuda_plan_run(plan, dy, NULL, dfit, NULL, &e);
    CUDA_OK(cudaEventRecord(b, 0));
    CUDA_OK(cudaEventSynchronize(b));
    CUDA_OK(cudaEventElapsedTime(&ms, a, b));
    t[k] = ms;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(t, reps);
}

/* Median ms of copies: kind 0 device to device, 1 host to device, 2 device to host. */
static double time_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, int reps) {
  cudaEvent_t a, b;
  double t[16];
  CUDA_OK(cudaEventCreate(&a));
  CUDA_OK(cudaEventCreate(&b));
  for (int k = 0; k < reps; k++) {
    float ms;
    CUDA_OK(cudaEventRecord(a, 0));
    CUDA_OK(cudaMemcpy(dst, src, bytes, kind));
    CUDA_OK(cudaEventRecord(b, 0));
    CUDA_OK(cudaEventSynchronize(b));
    CUDA_OK(cudaEventElapsedTime(&ms, a, b));
    t[k] = ms;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(t, reps);
}

static int speed_passed, speed_failed;

static void speed_check(int ok, const char *what, double got, double want) {
  ok ? speed_passed++ : speed_failed++;
  printf("%s speed %s: %.4g (target %.4g)\n", ok ? "PASS" : "FAIL", what, got, want);
}

/* ---- IDR ---- */

/* IDR on the GPU (gpuiso_cuda_idr_fit) against the CPU engine on all threads, on the data of
 * gen_idr; returns the GPU's wall-clock seconds (copies included), NAN on failure. With unit
 * weights and continuous data the sums are exact and the runs must be the same bit for bit. */
static double check_idr(int64_t n, int ties, weight_kind wk, gpuiso_gpu_kernel kernel, int64_t chunk) {
  int32_t *pos = xmalloc(n * sizeof *pos), *thr = xmalloc(n * sizeof *thr);
  double *w = xmalloc(n * sizeof *w);
  int64_t npos, nthr;
  gen_idr(n, 90 + n, ties, wk, pos, thr, w, &npos, &nthr);
  const double *wp = wk == W_NONE ? NULL : w;
  gpuiso_opts o = options(0, kernel, chunk, 0);
  o.nthreads = omp_get_max_threads();
  gpuiso_cdf_runs ref, got;
  gpuiso_error e;
  double t0 = now();
  gpuiso_status s = gpuiso_idr_fit(n, pos, thr, wp, npos, nthr, &o, &ref, &e);
  double cpu = now() - t0;
  t0 = now();
  if (s == GPUISO_OK) s = gpuiso_cuda_idr_fit(n, pos, thr, wp, npos, nthr, &o, &got, &e);
  double gpu = now() - t0;
  runs_comparison c = {NAN, -1, -1, -1};
  if (s == GPUISO_OK) c = compare_cdf_runs(&ref, &got, 1e-10);
  int exact = !ties && !wp;
  int ok = s == GPUISO_OK && c.max_dev <= (exact ? 0 : 1e-10) && c.steps_differ == 0 && c.bad == 0 &&
           (!exact || c.starts_differ == 0);
  ok ? accuracy_passed++ : accuracy_failed++;
  printf("%s accuracy idr n %lld%s %-8s %s: %lld positions, %lld thresholds, %.1f runs each; dev "
         "%.2e, thresholds of other runs %lld (past 1e-10: %lld), misshapen %lld; GPU %.3f s, CPU "
         "%.3f s on %d threads%s%s\n",
         ok ? "PASS" : "FAIL", (long long)n, ties ? " ties" : "", weight_names[wk],
         kernel == GPUISO_GPU_SIMPLE ? "simple" : "rowpav", (long long)npos, (long long)nthr,
         s == GPUISO_OK ? (double)got.offset[nthr] / nthr : NAN, c.max_dev,
         (long long)c.starts_differ, (long long)c.steps_differ, (long long)c.bad, gpu, cpu,
         omp_get_max_threads(), s == GPUISO_OK ? "" : " error: ", s == GPUISO_OK ? "" : e.message);
  if (s == GPUISO_OK) {
    gpuiso_cdf_runs_free(&ref);
    gpuiso_cdf_runs_free(&got);
  } else if (ref.offset) {
    gpuiso_cdf_runs_free(&ref);
  }
  free(pos);
  free(thr);
  free(w);
  return ok ? gpu : NAN;
}

/* The target: n = 1e5 continuous observations (as many thresholds) fitted within 1 s,
 * host arrays in and runs out; the first run is also the accuracy check. */
static void check_idr_all(void) {
  check_idr(1000, 1, W_UNIFORM, GPUISO_GPU_SIMPLE, 0);
  check_idr(10000, 0, W_EXTREME, GPUISO_GPU_SIMPLE, 0);
  check_idr(30000, 1, W_NONE, GPUISO_GPU_SIMPLE, 0);
  check_idr(3000, 0, W_NONE, GPUISO_GPU_ROW_PAV, 0);
  if (late(45)) {
    printf("SKIP idr n 1e5: running late\n");
    skipped++;
    return;
  }
  double t[3];
  int k = 0;
  for (; k < 3 && (k == 0 || !late(30)); k++) t[k] = check_idr(100000, 0, W_NONE, GPUISO_GPU_SIMPLE, 0);
  double best = median(t, k);
  speed_check(best <= 1.0, "IDR n 1e5 continuous, seconds (median)", best, 1.0);
  if (!late(60) && best < 10) check_idr(100000, 0, W_NONE, GPUISO_GPU_ROW_PAV, 0);
}

/* ---- Calibration ---- */

/* calibrate_isotonic()'s pipeline on the GPU (gpuiso_cuda_calibrate) against the CPU path
 * (gpuiso_calibrate) on every thread, on the traffic of gen_calibration, with groups and without;
 * same blocks, probabilities within 1e-10. timed: medians of 3 wall-clock runs of each, host
 * arrays to blocks on the host, and the parts of the GPU's time: the host's input check and the
 * copy of the input to the device (CUDA events). */
static void check_calibrate(int64_t n, int64_t ngroups, int ties, weight_kind wk, int timed) {
  double *score = xmalloc(n * sizeof *score), *label = xmalloc(n * sizeof *label);
  double *w = xmalloc(n * sizeof *w);
  int *g = xmalloc(n * sizeof *g);
  int64_t *ref_first = xmalloc((ngroups + 2) * sizeof *ref_first), *first = xmalloc((ngroups + 2) * sizeof *first);
  gen_calibration(n, ngroups, 95 + n, ties, wk, score, label, w, g);
  const double *wp = wk == W_NONE ? NULL : w;
  gpuiso_opts o = options(1, GPUISO_GPU_SIMPLE, 0, 0);
  o.nthreads = omp_get_max_threads();
  for (int grouped = 1; grouped >= 0; grouped--) {
    const int *gp = grouped ? g : NULL;
    int64_t ncurves = grouped ? ngroups + 1 : 1;
    gpuiso_block *ref = NULL, *got = NULL;
    gpuiso_error e;
    double cpu[3], gpu[3];
    int reps = timed ? 3 : 1;
    gpuiso_status s = GPUISO_OK;
    if (timed) s = gpuiso_cuda_calibrate(n, score, label, wp, gp, ngroups, &o, &got, first, &e); /* warm-up */
    for (int k = 0; k < reps && s == GPUISO_OK; k++) {
      free(ref);
      free(got);
      ref = got = NULL;
      double t0 = now();
      s = gpuiso_calibrate(n, score, label, wp, gp, ngroups, &o, &ref, ref_first, &e);
      cpu[k] = 1e3 * (now() - t0);
      t0 = now();
      if (s == GPUISO_OK) s = gpuiso_cuda_calibrate(n, score, label, wp, gp, ngroups, &o, &got, first, &e);
      gpu[k] = 1e3 * (now() - t0);
    }
    blocks_comparison c = {NAN, NAN, -1};
    if (s == GPUISO_OK) c = compare_blocks(ncurves, ref_first, ref, first, got);
    int ok = s == GPUISO_OK && c.curves_differ == 0 && c.max_dev <= 1e-10 && c.max_weight_dev <= 1e-12;
    ok ? accuracy_passed++ : accuracy_failed++;
    printf("%s accuracy calibrate n %lld, %lld curves%s %-8s: %lld blocks; level dev %.2e, weight "
           "dev %.2e, curves differ %lld%s%s\n",
           ok ? "PASS" : "FAIL", (long long)n, (long long)ncurves, ties ? " ties" : "", weight_names[wk],
           s == GPUISO_OK ? (long long)first[ncurves] : -1LL, c.max_dev, c.max_weight_dev,
           (long long)c.curves_differ, s == GPUISO_OK ? "" : " error: ", s == GPUISO_OK ? "" : e.message);
    if (ok && timed) {
      /* the parts: the input check on the host, the copy of score, label, weights and groups to
       * the device (CUDA events); the rest is the device's stages and the blocks' copy back */
      size_t bytes = n * (2 * sizeof(double) + (wp ? sizeof(double) : 0) + (gp ? sizeof(int) : 0));
      int64_t *count = xmalloc((ngroups + 1) * sizeof *count);
      double check[3];
      void *dev;
      CUDA_OK(cudaMalloc(&dev, bytes));
      double h2d = time_copy(dev, score, n * sizeof(double), cudaMemcpyHostToDevice, 3) +
                   time_copy(dev, label, n * sizeof(double), cudaMemcpyHostToDevice, 3) +
                   (wp ? time_copy(dev, w, n * sizeof(double), cudaMemcpyHostToDevice, 3) : 0) +
                   (gp ? time_copy(dev, g, n * sizeof(int), cudaMemcpyHostToDevice, 3) : 0);
      CUDA_OK(cudaFree(dev));
      for (int k = 0; k < 3; k++) {
        double t0 = now();
        calibrate_check(n, score, label, wp, gp, ngroups, &o, count, &e);
        check[k] = 1e3 * (now() - t0);
      }
      double tg = median(gpu, reps), tc = median(cpu, reps), tk = median(check, 3);
      printf("timing calibrate n %lld, %lld curves%s: GPU host-to-host %.1f ms (input check on the "
             "host %.1f, input copy %.1f, device stages and blocks back %.1f), CPU path on %d "
             "threads %.1f ms; CPU / GPU %.1f\n",
             (long long)n, (long long)ncurves, wp ? ", weighted" : "", tg, tk, h2d, tg - tk - h2d,
             omp_get_max_threads(), tc, tc / tg);
      free(count);
    }
    free(ref);
    free(got);
  }
  free(score); free(label); free(w); free(g); free(ref_first); free(first);
}

/* One table row: float32 unweighted decreasing (the paper's Table 1), on device data. */
static void time_row(shape sh, family_kind f, int with_control, double *solver_ms, double *control_ms) {
  int64_t nrows, *off = layout(sh, &nrows), n = off[nrows];
  double *y = xmalloc(n * sizeof *y);
  gen_rows(f, W_NONE, nrows, off, 77, 1, y, NULL);
  float *yf = to_float(y, n), *back = xmalloc(n * sizeof *back);
  size_t bytes = n * sizeof(float);
  void *dy, *dfit;
  CUDA_OK(cudaMalloc(&dy, bytes));
  CUDA_OK(cudaMalloc(&dfit, bytes));
  double h2d = time_copy(dy, yf, bytes, cudaMemcpyHostToDevice, 3);
  double d2h = time_copy(back, dfit, bytes, cudaMemcpyDeviceToHost, 3);
  double d2d = time_copy(dfit, dy, bytes, cudaMemcpyDeviceToDevice, 5);
  gpuiso_opts o = options(0, GPUISO_GPU_SIMPLE, 0, 0);
  gpuiso_cuda_plan *plan;
  gpuiso_error e;
  *solver_ms = *control_ms = NAN;
  if (gpuiso_cuda_plan_create(nrows, off, GPUISO_SINGLE, &o, &plan, &e) == GPUISO_OK) {
    *solver_ms = time_plan(plan, dy, dfit, 5);
    gpuiso_cuda_plan_free(plan);
  } else {
    printf("FAIL timing plan: %s\n", e.message);
  }
  if (with_control) {
    o.gpu_kernel = GPUISO_GPU_ROW_PAV;
    if (gpuiso_cuda_plan_create(nrows, off, GPUISO_SINGLE, &o, &plan, &e) == GPUISO_OK) {
      *control_ms = time_plan(plan, dy, dfit, n / nrows >= 1000000 ? 1 : 3);
      gpuiso_cuda_plan_free(plan);
    }
  }
  printf("| %-9s | %-10s | %10.4f | %12.4f | %8.0f | %8.4f | %8.4f | %8.4f | %6.1f |\n", sh.name,
         family_names[f], *solver_ms, *control_ms, *control_ms / *solver_ms, d2d, h2d, d2h,
         *solver_ms / d2d);
  fflush(stdout);
  cudaFree(dy);
  cudaFree(dfit);
  free(off);
  free(y);
  free(yf);
  free(back);
}

/* A host array of n doubles: copy in, fit, copy out (what an R call pays, less R's own work),
 * against the CPU PAV engine on every core; medians of 3 wall-clock runs. */
static void time_end_to_end(int64_t n) {
  int64_t off[2] = {0, n};
  double *y = xmalloc(n * sizeof *y), *z = xmalloc(n * sizeof *z), t[3], c[3];
  gen_rows(FAM_NOISE, W_NONE, 1, off, 78, 0, y, NULL);
  gpuiso_opts o = options(1, GPUISO_GPU_SIMPLE, 0, 0);
  gpuiso_error e;
  gpuiso_cuda_fit_rows(1, off, GPUISO_DOUBLE, y, NULL, &o, z, NULL, &e); /* warm-up */
  for (int k = 0; k < 3; k++) {
    double t0 = now();
    gpuiso_cuda_fit_rows(1, off, GPUISO_DOUBLE, y, NULL, &o, z, NULL, &e);
    t[k] = 1e3 * (now() - t0);
    o.nthreads = omp_get_max_threads();
    t0 = now();
    gpuiso_pav(n, y, NULL, &o, z, NULL, NULL, &e);
    c[k] = 1e3 * (now() - t0);
  }
  double gpu = median(t, 3), cpu = median(c, 3);
  printf("end to end, 1 x %lld doubles (noise): GPU host-to-host %.2f ms, CPU PAV on %d threads %.2f ms\n",
         (long long)n, gpu, omp_get_max_threads(), cpu);
  speed_check(cpu / gpu >= 10, "end-to-end 1e7 doubles, CPU PAV / GPU", cpu / gpu, 10);
  free(y);
  free(z);
}

static void timing_table(void) {
  shape shapes[] = {{"1e6x16", 1000000, 16},   {"1e4x1e3", 10000, 1000}, {"1e3x1e4", 1000, 10000},
                    {"1e2x1e5", 100, 100000}, {"1x1e7", 1, 10000000},    {"1x1e8", 1, 100000000}};
  printf("\ntiming: float32, unweighted, decreasing, data on the device; ms, medians (CUDA events)\n");
  printf("| shape     | family     | solver ms  | row-PAV ms   | ratio    | d2d copy | h2d      | d2h      | /copy  |\n");
  printf("|---|---|---|---|---|---|---|---|---|\n");
  for (int s = 0; s < 6; s++) {
    for (int f = 0; f < 2; f++) {
      int big = shapes[s].len == 100000000;
      if (big && late(60)) {
        printf("| %-9s | %-10s | skipped: running late |\n", shapes[s].name, family_names[f]);
        skipped++;
        continue;
      }
      double solver, control;
      time_row(shapes[s], (family_kind)f, !big, &solver, &control);
      if (shapes[s].len == 10000000 && f == FAM_NOISE)
        speed_check(control / solver >= 1000, "1e7 row, row-PAV control / solver", control / solver, 1000);
      if (big)
        speed_check(solver <= (f == FAM_NOISE ? 2.7 : 7.3),
                    f == FAM_NOISE ? "1e8 float32 noise, ms" : "1e8 float32 increasing, ms", solver,
                    f == FAM_NOISE ? 2.7 : 7.3);
    }
  }
  time_end_to_end(10000000);
}

int main(int argc, char **argv) {
  int small = argc > 1 && strcmp(argv[1], "small") == 0;
  const char *dl = getenv("GPUISO_CHECK_DEADLINE");
  if (dl) deadline = atof(dl);
  setvbuf(stdout, NULL, _IOLBF, 0);
  gpuiso_device_info info;
  int count = 0;
  gpuiso_error e;
  if (gpuiso_cuda_probe(&info, 1, &count, &e) != GPUISO_OK || count == 0) {
    printf("no CUDA device: %s\n", count == 0 && e.status == GPUISO_OK ? "none found" : e.message);
    return 2;
  }
  printf("device: %s, compute capability %d.%d, %.0f GiB; %d CPU threads\n", info.name, info.major,
         info.minor, info.memory_bytes / 1073741824.0, omp_get_max_threads());
  if (small) { /* many chunks, merges, searches and ragged rows in little data */
    shape rows = {"small", 3, 20000}, ragged = {"ragged-s", 30000, 0};
    check_shape(rows, 0, 2, 0, W_COUNT, 64, 2, 0);
    check_shape(ragged, 0, 2, 0, 2, 32, 1, 0);
    check_unsorted_x(20000);
    check_idr(600, 1, W_UNIFORM, GPUISO_GPU_SIMPLE, 32);
    check_idr(1500, 0, W_NONE, GPUISO_GPU_SIMPLE, 64);
    check_calibrate(5000, 50, 1, W_ZEROS, 0);
  } else {
    shape shapes[] = {{"1e6x16", 1000000, 16}, {"1e4x1e3", 10000, 1000}, {"1e3x1e4", 1000, 10000},
                      {"1e2x1e5", 100, 100000}, {"1x1e7", 1, 10000000}, {"ragged", 16000000, 0}};
    /* breadth first, so that running late drops the rarer cases on every shape: the four
     * families unweighted and uniformly weighted, then with extreme and zero weights, then the
     * stress families */
    int pass[3][4] = {{0, 4, W_NONE, W_EXTREME}, {0, 4, W_EXTREME, W_COUNT}, {4, FAM_COUNT, 0, W_COUNT}};
    for (int p = 0; p < 3; p++)
      for (int s = 0; s < 6; s++) check_shape(shapes[s], pass[p][0], pass[p][1], pass[p][2], pass[p][3], 0, 0, 120);
    check_unsorted_x(1000000);
    timing_table();
    check_idr_all();
    check_calibrate(100000, 300, 1, W_ZEROS, 0);
    check_calibrate(1000000, 2000, 0, W_UNIFORM, 0);
    if (late(40)) {
      printf("SKIP calibrate n 1e7: running late\n");
      skipped++;
    } else {
      check_calibrate(10000000, 300, 0, W_NONE, 1); /* tools/bench/calibrate.R's traffic */
    }
    shape big = {"1x1e8", 1, 100000000};
    if (late(40)) {
      printf("SKIP accuracy 1x1e8: running late\n");
      skipped++;
    } else {
      check_shape(big, 0, 4, W_NONE, W_EXTREME, 0, 0, 25); /* unweighted and uniform weights */
    }
    printf("speed checks: %d passed, %d failed (reported, not fatal)\n", speed_passed, speed_failed);
  }
  printf("accuracy checks: %d passed, %d failed, %d skipped for time\n", accuracy_passed,
         accuracy_failed, skipped);
  printf("%s\n", accuracy_failed ? "RESULT: FAIL" : "RESULT: PASS");
  return accuracy_failed ? 1 : 0;
}

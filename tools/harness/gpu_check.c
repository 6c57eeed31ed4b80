/* tools/gpu-check's harness: the CUDA engine against its CPU twins, one section per process, so
 * that a hang or a sticky CUDA error costs one section and not the run.
 *
 *   gpu_check SECTION
 *     device        the device's name and memory
 *     small         a few small cases with many chunks, merges, searches and ragged rows, IDR,
 *                   calibration, soft ranks and a vjp: the run of compute-sanitizer
 *     accuracy-1e8  the row of 1e8: the fast and simple kernels against the CPU hull engine, the
 *                   four main families, unweighted and uniformly weighted, float32 and float64
 *     accuracy      a fit on unsorted x with ties, then every family and weighting in both
 *                   precisions and directions on the paper's other shapes and ragged rows, on the
 *                   fast and simple kernels and (rows up to 1e5) the row-PAV control, breadth first
 *     timing        the table (per shape, family and precision: the fast path, the simple path,
 *                   the row-PAV control and a device-to-device copy of the same bytes, CUDA
 *                   events; issue 11's targets on the fast path; ties in float64 on two shapes,
 *                   which the lane kernels fit twice), then a host array of 1e7 doubles end to
 *                   end on the fast path against the CPU PAV on every core
 *     lanes         the fast path and its lane kernels' stages on the shapes that they fit (rows
 *                   of 16, 1e3 and 4e3, chunks of a row of 1e7), float32 and float64: run once by
 *                   each build of the lane kernels' registers (GPUISO_CHECK_VARIANT names it)
 *     merges        the fast path and its merge levels' stages at walk caps 64 (the default) and
 *                   16 on rows of 1e4 to 1e8, float32, with the fits' hashes (the same at every
 *                   cap), and each level's launch at cap 64 (earlier runs settled the cap: 64 the
 *                   best or as good on every shape against 16, 4 and 1)
 *     profile       one fit of each of the targets' float32 noise shapes of the lane kernels (a
 *                   row of 1e8, 1e4 x 1e3, 1e6 x 16; the one GPUISO_PROFILE_SHAPE names) on the
 *                   fast path between cudaProfilerStart and cudaProfilerStop, after an untimed
 *                   one, for Nsight Compute to profile those fits alone (tools/gpu-check runs it
 *                   under ncu, a shape at a time)
 *     idr           IDR on the GPU against the CPU engine, and its time at n = 1e5
 *     calibration   calibrate_isotonic()'s GPU pipeline against the CPU path, and its time at 1e7
 *                   scores in 300 groups
 *     grad          soft ranks forward and backward on 256 x 1e3 and 4 x 1e5 and isoreg_vjp's
 *                   product on a row of 1e7, against the CPU engine, and their times
 *
 * Output lines: PASS or FAIL (a check), INFO (a measure, a skip, the section's count at its end)
 * and the rows of the timing table ("| ..."). Exit status: 0 every check passed, 1 a check failed
 * or the harness met an error, 2 no CUDA device (every section probes first), 64 usage.
 * GPUISO_CHECK_DEADLINE (seconds since the epoch): work that would run past it is skipped and
 * counted, so that a section ends by itself before tools/gpu-check's timeout stops it.
 */
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compare.h"
#include "families.h"
#include "gpuiso.h"
#include "internal.h" /* calibrate_check, to time the calibration's input check alone */

static int passed, failed, skipped;
static double deadline = INFINITY;
static gpuiso_device_info device;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Whether work of about reserve seconds would end past the deadline. */
static int late(double reserve) { return now() + reserve > deadline; }

static void skip(const char *what) {
  printf("INFO skip %s: running late\n", what);
  skipped++;
}

/* One check's line: PASS or FAIL, then the text. */
static void report(int ok, const char *fmt, ...) {
  va_list ap;
  ok ? passed++ : failed++;
  fputs(ok ? "PASS " : "FAIL ", stdout);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
}

/* A speed target: reported, never a failure (the device and its load vary). */
static void target(int met, const char *what, double got, double want) {
  printf("INFO speed %s: %.4g, target %.4g: %s\n", what, got, want, met ? "met" : "missed");
}

/* What went wrong: the error's message (CUDA's text), else the status's name. */
static const char *error_text(gpuiso_status s, const gpuiso_error *e) {
  static const char *const names[] = {"OK",          "E_NOMEM",     "E_Y_NONFINITE", "E_X_NONFINITE",
                                      "E_W_NONFINITE", "E_W_NEGATIVE", "E_W_ALLZERO", "E_OVERFLOW",
                                      "E_INTERRUPT", "E_CUDA",      "E_NO_CUDA",     "E_INTERNAL",
                                      "E_CUDA_LOST", "E_W_UNPLANNED", "E_W_SPAN"};
  if (e->message[0]) return e->message;
  return (int)s >= 0 && (int)s < (int)(sizeof names / sizeof names[0]) ? names[s] : "unknown status";
}

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

/* The paper's shapes (section 7.1); the last, one row of 1e8, is a section of its own. */
static const shape paper_shapes[] = {{"1e6x16", 1000000, 16},   {"1e4x1e3", 10000, 1000},
                                     {"1e3x1e4", 1000, 10000},  {"1e2x1e5", 100, 100000},
                                     {"1x1e7", 1, 10000000},    {"1x1e8", 1, 100000000}};
#define NSHAPES (int)(sizeof paper_shapes / sizeof paper_shapes[0])

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

static const char *kernel_name(gpuiso_gpu_kernel k) {
  return k == GPUISO_GPU_SIMPLE ? "simple" : k == GPUISO_GPU_FAST ? "fast" : "rowpav";
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

/* ---- Accuracy ---- */

/* NaN in each of the n elements of an output, so that one the device leaves unwritten fails its
 * check (compare_rows takes NaN for the worst deviation). */
static void poison(void *z, int64_t n, int single) {
#pragma omp parallel for
  for (int64_t i = 0; i < n; i++)
    if (single) ((float *)z)[i] = NAN;
    else ((double *)z)[i] = NAN;
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
  poison(z, n, single);
  gpuiso_error e;
  double t0 = now();
  gpuiso_status s = gpuiso_cuda_fit_rows(nrows, off, type, single ? (const void *)yf : y,
                                         single ? (const void *)wf : w, &o, z, NULL, &e);
  double t = now() - t0;
  comparison c = {0, -1, 0, 0, 0};
  /* relative to 1 + |z|, but the row-PAV control's plain double sums on the cancellation family:
   * on the scale of the data there (tools/ctest/test_pipeline.cpp) */
  if (s == GPUISO_OK)
    c = compare_rows(nrows, off, y, ref, type, z, increasing, f == FAM_CANCELLATION && kernel == GPUISO_GPU_ROW_PAV);
  int ok = s == GPUISO_OK &&
           (single ? c.max_dev <= 2e-7 && c.step_downs == 0
                   : c.max_dev <= 1e-10 && (kernel != GPUISO_GPU_SIMPLE || c.block_rows == 0));
  report(ok, "accuracy %-10s %-12s %-8s %-4s %s %-6s dev %.2e steps %lld blocks-differ-rows %lld "
         "not-bitwise %lld (%.2f s)%s%s",
         shape_name, family_names[f], weight_names[wk], increasing ? "inc" : "dec",
         single ? "f32" : "f64", kernel_name(kernel), c.max_dev, (long long)c.step_downs,
         (long long)c.block_rows, (long long)c.differ, t, s == GPUISO_OK ? "" : " error: ",
         s == GPUISO_OK ? "" : error_text(s, &e));
  free(yf);
  free(wf);
  free(z);
}

/* Families [f0, f1) and weightings [w0, w1) in both precisions on a shape (directions
 * alternate), on the fast and simple kernels and, where rows are short enough for it, the row-PAV
 * control.
 * Cases are skipped once less than reserve seconds, or than the slowest case took, are left. */
static void check_shape(shape sh, int f0, int f1, int w0, int w1, int64_t chunk, int64_t cap,
                        double reserve) {
  int64_t nrows, *off = layout(sh, &nrows), n = off[nrows];
  double *y = xmalloc(n * sizeof *y), *w = xmalloc(n * sizeof *w), *ref = xmalloc(n * sizeof *ref);
  int64_t longest = 0;
  for (int64_t r = 0; r < nrows; r++) longest = off[r + 1] - off[r] > longest ? off[r + 1] - off[r] : longest;
  double slowest = 0;
  for (int f = f0; f < f1; f++) {
    for (int wk = w0; wk < w1; wk++) {
      for (int single = 0; single <= 1; single++) {
        if (late(reserve > slowest ? reserve : slowest)) {
          skipped++;
          continue;
        }
        double t0 = now();
        int increasing = (f + wk + single) % 2;
        gen_rows((family_kind)f, (weight_kind)wk, nrows, off, 1000 * f + 10 * wk + single, single, y, w);
        const double *wp = wk == W_NONE ? NULL : w;
        cpu_rows(GPUISO_HULL, nrows, off, y, wp, options(increasing, GPUISO_GPU_SIMPLE, chunk, cap), ref);
        check_case(sh.name, nrows, off, (family_kind)f, (weight_kind)wk, increasing, single,
                   GPUISO_GPU_FAST, chunk, cap, y, wp, ref);
        /* the simple path walks each row's elements on one thread in places (seconds on a row of
         * 1e8): there, on noise only, so that the fast path meets every family in the time */
        if (longest < 100000000 || f == FAM_NOISE)
          check_case(sh.name, nrows, off, (family_kind)f, (weight_kind)wk, increasing, single,
                     GPUISO_GPU_SIMPLE, chunk, cap, y, wp, ref);
        if (longest <= 100000)
          check_case(sh.name, nrows, off, (family_kind)f, (weight_kind)wk, increasing, single,
                     GPUISO_GPU_ROW_PAV, chunk, cap, y, wp, ref);
        slowest = now() - t0 > slowest ? now() - t0 : slowest;
      }
    }
  }
  free(off);
  free(y);
  free(w);
  free(ref);
}

/* Work over a cap on the device memory (opt.gpu_memory): a row of n weighted doubles in segments
 * joined on the host, and 1e4 rows of 1e3 in slices, on the fast kernel against the CPU hull
 * engine, with the times beside the fits without the cap. */
static void check_memory_cap(int64_t n) {
  shape shapes[] = {{"1 row", 1, n}, {"1e4x1e3", 10000, 1000}};
  for (int k = 0; k < 2; k++) {
    int64_t nrows, *off = layout(shapes[k], &nrows), total = off[nrows];
    double *y = xmalloc(total * sizeof *y), *w = xmalloc(total * sizeof *w), *ref = xmalloc(total * sizeof *ref);
    double *z = xmalloc(total * sizeof *z), t[2] = {0, 0};
    gen_rows(FAM_SAWTOOTH, W_EXTREME, nrows, off, 77 + k, 0, y, w);
    cpu_rows(GPUISO_HULL, nrows, off, y, w, options(k, GPUISO_GPU_SIMPLE, 0, 0), ref);
    gpuiso_opts o = options(k, GPUISO_GPU_FAST, 0, 0);
    gpuiso_error e;
    gpuiso_status s = GPUISO_OK;
    comparison c = {0, -1, 0, 0, 0};
    for (int capped = 1; capped >= 0 && s == GPUISO_OK; capped--) {
      o.gpu_memory = capped ? 2e-5 * device.memory_bytes : 0; /* 2.8 MB on an H200 */
      poison(z, total, 0);
      double t0 = now();
      s = gpuiso_cuda_fit_rows(nrows, off, GPUISO_DOUBLE, y, w, &o, z, NULL, &e);
      t[capped] = now() - t0;
      if (capped && s == GPUISO_OK) c = compare_rows(nrows, off, y, ref, GPUISO_DOUBLE, z, k, 0);
    }
    report(s == GPUISO_OK && c.max_dev <= 1e-10 && c.step_downs == 0,
           "accuracy memory cap %s, sawtooth extreme %s f64 fast: dev %.2e steps %lld (%.3f s capped, %.3f s not)%s%s",
           shapes[k].name, k ? "inc" : "dec", c.max_dev, (long long)c.step_downs, t[1], t[0],
           s == GPUISO_OK ? "" : " error: ", s == GPUISO_OK ? "" : error_text(s, &e));
    free(off); free(y); free(w); free(ref); free(z);
  }
}

/* The CPU path of a fit on unsorted x (sort, pooling, the knots fitted by engine): fit (n) and
 * *nblocks. */
static gpuiso_status cpu_fit_xy(int64_t n, const double *x, const double *y, const double *w,
                                const gpuiso_opts *opt, gpuiso_engine engine, double *fit,
                                int64_t *nknots, int64_t *nblocks, gpuiso_error *e) {
  gpuiso_opts o = *opt;
  o.engine = engine;
  gpuiso_sorted *sorted;
  int64_t nk = 0;
  gpuiso_status s = gpuiso_sort_xy(n, x, y, w, &o, &sorted, &nk, e);
  if (s != GPUISO_OK) return s;
  double *kx = xmalloc(nk * sizeof *kx), *kl = xmalloc(nk * sizeof *kl), *kw = xmalloc(nk * sizeof *kw);
  uint8_t *ks = xmalloc(nk > 0 ? nk : 1);
  gpuiso_knots kn = {nk, kx, kl, kw, ks, 0};
  s = gpuiso_fit_sorted(sorted, &o, fit, &kn, e);
  gpuiso_sorted_free(sorted);
  *nknots = nk;
  *nblocks = kn.nblocks;
  free(kx); free(kl); free(kw); free(ks);
  return s;
}

/* A fit on unsorted x with ties, sorted, pooled, fitted and scattered back on the device
 * (gpuiso_cuda_fit_xy), against the CPU path with the hull engine. */
static void check_unsorted_x(int64_t n) {
  double *x = xmalloc(n * sizeof *x), *y = xmalloc(n * sizeof *y), *w = xmalloc(n * sizeof *w);
  double *z[2] = {xmalloc(n * sizeof(double)), xmalloc(n * sizeof(double))};
  int64_t off[2] = {0, n};
  gen_x_ties(n, 5, x);
  gen_rows(FAM_NOISE, W_UNIFORM, 1, off, 6, 0, y, w);
  for (int single = 0; single <= 1; single++) {
    int64_t nk = 0, nb = 0;
    gpuiso_error e = {GPUISO_OK, -1, -1, ""};
    gpuiso_opts o = options(!single, GPUISO_GPU_FAST, 0, 0);
    o.gpu_precision = single ? GPUISO_SINGLE : GPUISO_DOUBLE;
    gpuiso_knots kn = {0, NULL, NULL, NULL, NULL, 0};
    gpuiso_status s = cpu_fit_xy(n, x, y, w, &o, GPUISO_HULL, z[0], &nk, &nb, &e);
    poison(z[1], n, 0);
    if (s == GPUISO_OK) s = gpuiso_cuda_fit_xy(n, x, y, w, &o, z[1], &kn, NULL, NULL, &e);
    double dev = 0;
    for (int64_t i = 0; s == GPUISO_OK && i < n; i++) {
      double d = fabs(z[1][i] - z[0][i]) / (1 + fabs(z[0][i]));
      if (!isnan(dev) && !(d <= dev)) dev = d; /* NaN, an element left unwritten, sticks */
    }
    /* single: the knots' pooled means are rounded to float32 before the fit */
    int ok = s == GPUISO_OK && kn.n == nk && (single ? dev <= 2e-7 : dev <= 1e-10 && kn.nblocks == nb);
    report(ok, "accuracy unsorted-x on the device n %lld, %lld knots (CPU %lld), %s: dev %.2e blocks %lld vs CPU %lld%s%s",
           (long long)n, (long long)kn.n, (long long)nk, single ? "f32 dec" : "f64 inc", dev,
           (long long)kn.nblocks, (long long)nb, s == GPUISO_OK ? "" : " error: ",
           s == GPUISO_OK ? "" : error_text(s, &e));
    free(kn.x);
  }
  free(x); free(y); free(w); free(z[0]); free(z[1]);
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

/* Something to time on the device: a plan's run or a copy. */
typedef gpuiso_status (*device_work)(void *ctx, gpuiso_error *e);

typedef struct {
  gpuiso_cuda_plan *plan;
  const void *y;
  void *fit;
} plan_work;

static gpuiso_status run_plan(void *ctx, gpuiso_error *e) {
  plan_work *p = ctx;
  return gpuiso_cuda_plan_run(p->plan, p->y, NULL, p->fit, NULL, e);
}

typedef struct {
  void *dst;
  const void *src;
  size_t bytes;
  enum cudaMemcpyKind kind;
} copy_work;

static gpuiso_status run_copy(void *ctx, gpuiso_error *e) {
  copy_work *c = ctx;
  cudaError_t r = cudaMemcpy(c->dst, c->src, c->bytes, c->kind);
  if (r == cudaSuccess) return GPUISO_OK;
  snprintf(e->message, sizeof e->message, "cudaMemcpy: %s", cudaGetErrorString(r));
  return GPUISO_E_CUDA;
}

/* Median ms of reps runs (at most 16) by CUDA events on the default stream, after one untimed
 * run when warm; NAN, with a FAIL line, when a run fails. */
static double time_ms(device_work work, void *ctx, int reps, int warm, const char *what) {
  cudaEvent_t a, b;
  double t[16];
  gpuiso_error e;
  CUDA_OK(cudaEventCreate(&a));
  CUDA_OK(cudaEventCreate(&b));
  int k = warm ? -1 : 0;
  for (; k < reps; k++) {
    float ms;
    CUDA_OK(cudaEventRecord(a, 0));
    gpuiso_status s = work(ctx, &e);
    CUDA_OK(cudaEventRecord(b, 0));
    CUDA_OK(cudaEventSynchronize(b));
    if (s != GPUISO_OK) {
      report(0, "timing %s: %s", what, error_text(s, &e));
      break;
    }
    CUDA_OK(cudaEventElapsedTime(&ms, a, b));
    if (k >= 0) t[k] = ms;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return k == reps ? median(t, reps) : NAN;
}

static double time_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                        int reps, const char *what) {
  copy_work c = {dst, src, bytes, kind};
  return time_ms(run_copy, &c, reps, 0, what);
}

/* A stage's name without "_step" and the element type, into out of size bytes. */
static void short_name(const char *name, char *out, size_t size) {
  snprintf(out, size, "%s", name);
  out[strcspn(out, "<")] = 0;
  char *suffix = strstr(out, "_step");
  if (suffix) *suffix = 0;
}

/* The device time of each stage of one run of the plan, as "stage ms ..." (short_name), into
 * text of size bytes; "-" when it fails. */
static void stage_text(plan_work *p, char *text, size_t size) {
  gpuiso_stage_times t;
  gpuiso_error e;
  snprintf(text, size, "-");
  if (gpuiso_cuda_plan_stages(p->plan, p->y, NULL, p->fit, NULL, &t, &e) != GPUISO_OK) return;
  size_t at = 0;
  for (int i = 0; i < t.count && at < size; i++) {
    char name[48];
    short_name(t.name[i], name, sizeof name);
    at += snprintf(text + at, size - at, "%s%s %.3g", i ? ", " : "", name, t.ms[i]);
  }
}

/* Stages of a run: the lane kernels', the merge levels' (the thread-per-merge steps and
 * merge_warp_kernel). */
typedef struct {
  const char *names[3]; /* the stages whose names begin with one of these */
} stage_set;
static const stage_set lane_stages = {{"short_rows_kernel", "block_rows_kernel", "chunk_hulls_kernel"}};
static const stage_set merge_stages = {{"merge"}};

static int in_set(const char *name, const stage_set *set) {
  for (int k = 0; k < 3 && set->names[k]; k++)
    if (strncmp(name, set->names[k], strlen(set->names[k])) == 0) return 1;
  return 0;
}

/* The device ms of a set's stages in one run of the plan: the sum of their times. */
static double set_ms(plan_work *p, const stage_set *set) {
  gpuiso_stage_times t;
  gpuiso_error e;
  if (gpuiso_cuda_plan_stages(p->plan, p->y, NULL, p->fit, NULL, &t, &e) != GPUISO_OK) return NAN;
  double ms = 0;
  for (int i = 0; i < t.count; i++)
    if (in_set(t.name[i], set)) ms += t.ms[i];
  return ms;
}

/* The ms of each launch of a set's stages in one run of the plan, in order (a merge level's
 * each), as "stage ms ms ... stage ms ..." (short_name, where the launches change stage), into
 * text of size bytes; "-" when it fails. */
static void step_text(plan_work *p, const stage_set *set, char *text, size_t size) {
  gpuiso_stage_times t;
  gpuiso_error e;
  snprintf(text, size, "-");
  if (gpuiso_cuda_plan_stages(p->plan, p->y, NULL, p->fit, NULL, &t, &e) != GPUISO_OK) return;
  size_t at = 0;
  for (int k = 0, last = -1; k < t.steps && at < size; k++) {
    int i = t.step_stage[k];
    if (i < 0 || !in_set(t.name[i], set)) continue;
    if (i != last) {
      char name[48];
      short_name(t.name[i], name, sizeof name);
      at += snprintf(text + at, size - at, "%s%s", at ? " " : "", name);
      last = i;
    }
    if (at < size) at += snprintf(text + at, size - at, " %.3g", t.step_ms[k]);
  }
}

/* A plan of the kernel over the rows of off, merges walking at most cap steps (0: the default),
 * timed on device data; NAN when it cannot be made. stages (when not NULL) gets the time of each
 * stage of one more run (stage_text), or where set is given, of each launch of set's stages
 * (step_text); set_time (when not NULL) the median of 5 more runs' ms of the stages of set. */
static double time_kernel(int64_t nrows, const int64_t *off, gpuiso_precision type,
                          gpuiso_gpu_kernel kernel, int64_t cap, const void *dy, void *dfit, int reps,
                          int warm, const char *what, char *stages, size_t stages_size,
                          const stage_set *set, double *set_time) {
  gpuiso_opts o = options(1, kernel, 0, cap);
  gpuiso_error e;
  plan_work p = {NULL, dy, dfit};
  gpuiso_status s = gpuiso_cuda_plan_create(nrows, off, type, 0, &o, &p.plan, &e); /* runs: w NULL */
  if (s != GPUISO_OK) {
    report(0, "timing %s %s: plan: %s", what, kernel_name(kernel), error_text(s, &e));
    return NAN;
  }
  double ms = time_ms(run_plan, &p, reps, warm, what);
  if (stages && !isnan(ms) && set) step_text(&p, set, stages, stages_size);
  else if (stages && !isnan(ms)) stage_text(&p, stages, stages_size);
  if (set_time) {
    double part[5];
    for (int k = 0; k < 5 && !isnan(ms); k++) part[k] = set_ms(&p, set);
    *set_time = isnan(ms) ? NAN : median(part, 5);
  }
  gpuiso_cuda_plan_free(p.plan);
  return ms;
}

/* A table cell: v in fmt, or why there is no number. */
static const char *cell(char *buf, const char *fmt, double v, const char *none) {
  if (isnan(v)) return none;
  snprintf(buf, 16, fmt, v);
  return buf;
}

static void table_header(void) {
  printf("INFO timing: unweighted increasing fits, data on the device, ms, medians of CUDA events; fast: "
         "the fast path (rows of up to 4096 on the lane kernels, longer ones a warp per chunk hull, block "
         "row scans, listed merges, a warp per merge at small levels); "
         "simple: the simple path, the control of the ablations; blocks/n: the fit's blocks per "
         "element (the density); stages: the fast path's ms per stage (CUDA events between its "
         "launches, summed over the launches of a kernel: merge, all levels)\n");
  printf("| shape | family | type | blocks/n | fast ms | simple ms | simple / fast | row-PAV ms | "
         "row-PAV / fast | d2d copy ms | fast / copy | h2d ms | d2h ms | stages |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

/* One table row on device data: the fast path (the paper's solver), the simple path, the row-PAV
 * control (control_reps runs, 0: none, with no_control in its cells) and the copies of the same
 * bytes; the fast path's fit comes back for its density. Returns the fast path's and the control's
 * ms. */
static void time_row(shape sh, family_kind f, gpuiso_precision type, int control_reps,
                     const char *no_control, double *fast, double *control) {
  int64_t nrows, *off = layout(sh, &nrows), n = off[nrows];
  int single = type == GPUISO_SINGLE;
  size_t bytes = n * (single ? sizeof(float) : sizeof(double));
  double *y = xmalloc(n * sizeof *y);
  gen_rows(f, W_NONE, nrows, off, 77, single, y, NULL);
  float *yf = single ? to_float(y, n) : NULL;
  void *back = xmalloc(bytes), *dy, *dfit;
  char what[64], b[10][16], stages[320] = "-";
  snprintf(what, sizeof what, "%s %s %s", sh.name, family_names[f], single ? "f32" : "f64");
  CUDA_OK(cudaMalloc(&dy, bytes));
  CUDA_OK(cudaMalloc(&dfit, bytes));
  double h2d = time_copy(dy, single ? (const void *)yf : y, bytes, cudaMemcpyHostToDevice, 3, what);
  int big = n >= 100000000; /* the simple path: seconds a run, so once */
  double simple = time_kernel(nrows, off, type, GPUISO_GPU_SIMPLE, 0, dy, dfit, big ? 1 : 5, !big, what, NULL, 0,
                              NULL, NULL);
  *fast = time_kernel(nrows, off, type, GPUISO_GPU_FAST, 0, dy, dfit, 5, 1, what, stages, sizeof stages, NULL, NULL);
  double d2h = time_copy(back, dfit, bytes, cudaMemcpyDeviceToHost, 3, what);
  double density = isnan(*fast) ? NAN : (double)count_blocks(nrows, off, type, back) / n;
  *control = control_reps ? time_kernel(nrows, off, type, GPUISO_GPU_ROW_PAV, 0, dy, dfit,
                                        control_reps, control_reps > 1, what, NULL, 0, NULL, NULL)
                          : NAN;
  double d2d = time_copy(dfit, dy, bytes, cudaMemcpyDeviceToDevice, 5, what);
  printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", sh.name,
         family_names[f], single ? "f32" : "f64", cell(b[0], "%.3g", density, "fail"),
         cell(b[1], "%.4f", *fast, "fail"), cell(b[2], "%.4f", simple, "fail"),
         cell(b[3], "%.3g", simple / *fast, "fail"), cell(b[4], "%.4f", *control, no_control),
         cell(b[5], "%.3g", *control / *fast, isnan(*control) ? no_control : "fail"),
         cell(b[6], "%.4f", d2d, "fail"), cell(b[7], "%.3g", *fast / d2d, "fail"),
         cell(b[8], "%.4f", h2d, "fail"), cell(b[9], "%.4f", d2h, "fail"), stages);
  cudaFree(dy);
  cudaFree(dfit);
  free(off);
  free(y);
  free(yf);
  free(back);
}

/* FNV-1a of the bytes: the builds' fits compared bit for bit. */
static uint64_t fnv1a(const void *data, size_t bytes) {
  const unsigned char *b = data;
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < bytes; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* A shape's unweighted noise (seed 79) on the device in the precision, with room for its fit. */
typedef struct {
  int64_t nrows, *off;
  size_t bytes;
  void *dy, *dfit;
} device_noise;

static device_noise noise_on_device(shape sh, int single) {
  device_noise d;
  d.off = layout(sh, &d.nrows);
  int64_t n = d.off[d.nrows];
  d.bytes = n * (single ? sizeof(float) : sizeof(double));
  double *y = xmalloc(n * sizeof *y);
  gen_rows(FAM_NOISE, W_NONE, d.nrows, d.off, 79, single, y, NULL);
  float *yf = single ? to_float(y, n) : NULL;
  CUDA_OK(cudaMalloc(&d.dy, d.bytes));
  CUDA_OK(cudaMalloc(&d.dfit, d.bytes));
  CUDA_OK(cudaMemcpy(d.dy, single ? (const void *)yf : y, d.bytes, cudaMemcpyHostToDevice));
  free(y);
  free(yf);
  return d;
}

static void device_noise_free(device_noise *d) {
  cudaFree(d->dy);
  cudaFree(d->dfit);
  free(d->off);
}

/* Lines for tools/gpu-check to set beside another build's or setting's: on unweighted noise of
 * the shape, in the precision, at each walk cap of the merges (0: the default), the fast path's ms
 * and its ms in the stages of set (medians of 5), and the hash of the fit, the same bit for bit
 * whatever the build or the cap (the caps find the same bridges). "INFO SECTION VARIANT SHAPE TYPE
 * MS SET_MS HASH", the variant followed by "/capN" where a cap is given; after the first cap's,
 * "INFO SECTION steps VARIANT SHAPE TYPE: STEPS", the ms of each launch of set's stages in one
 * more run (step_text: the merge levels one by one). */
static void time_stages(const char *section, const char *variant, shape sh, gpuiso_precision type,
                        const int64_t *caps, int ncaps, const stage_set *set) {
  int single = type == GPUISO_SINGLE;
  device_noise d = noise_on_device(sh, single);
  void *back = xmalloc(d.bytes);
  double part;
  for (int c = 0; c < ncaps; c++) {
    char name[48], what[96];
    if (caps[c] > 0) snprintf(name, sizeof name, "%s/cap%lld", variant, (long long)caps[c]);
    else snprintf(name, sizeof name, "%s", variant);
    snprintf(what, sizeof what, "%s %s %s %s", section, name, sh.name, single ? "f32" : "f64");
    char steps[400];
    double ms = time_kernel(d.nrows, d.off, type, GPUISO_GPU_FAST, caps[c], d.dy, d.dfit, 5, 1, what,
                            c == 0 ? steps : NULL, sizeof steps, set, &part);
    if (isnan(ms)) continue;
    CUDA_OK(cudaMemcpy(back, d.dfit, d.bytes, cudaMemcpyDeviceToHost));
    printf("INFO %s %s %s %s %.4f %.4f %016llx\n", section, name, sh.name, single ? "f32" : "f64", ms, part,
           (unsigned long long)fnv1a(back, d.bytes));
    if (c == 0) printf("INFO %s steps %s %s %s: %s\n", section, name, sh.name, single ? "f32" : "f64", steps);
  }
  device_noise_free(&d);
  free(back);
}

/* The build's name for these lines (GPUISO_CHECK_VARIANT). */
static const char *variant_name(void) {
  const char *variant = getenv("GPUISO_CHECK_VARIANT");
  return variant ? variant : "default";
}

/* The lane kernels' shapes: packed short rows, a row a warp, a row a block, a row in chunks. */
static void run_lanes(void) {
  shape shapes[] = {{"1e6x16", 1000000, 16}, {"1e4x1e3", 10000, 1000}, {"1e4x4e3", 10000, 4000},
                    {"1x1e7", 1, 10000000}};
  const int64_t cap = 0;
  for (int single = 1; single >= 0; single--)
    for (int k = 0; k < 4; k++) {
      if (late(2)) {
        skip("lanes");
        continue;
      }
      time_stages("lanes", variant_name(), shapes[k], single ? GPUISO_SINGLE : GPUISO_DOUBLE, &cap, 1, &lane_stages);
    }
}

/* The merge levels (a thread per merge at the large levels, a warp per merge at the small ones)
 * at walk caps 64 (the default) and 16, float32, on rows of several levels to one of 1e8, and
 * each level's time at 64. */
static void run_merges(void) {
  shape shapes[] = {{"1e3x1e4", 1000, 10000}, {"1e2x1e5", 100, 100000}, {"1x1e7", 1, 10000000},
                    {"1x1e8", 1, 100000000}};
  const int64_t caps[] = {64, 16};
  for (int k = 0; k < 4; k++) {
    if (late(k == 3 ? 5 : 2)) {
      skip("merges");
      continue;
    }
    time_stages("merges", variant_name(), shapes[k], GPUISO_SINGLE, caps, 2, &merge_stages);
  }
}

/* One fit of each shape (of the one GPUISO_PROFILE_SHAPE names, where set) between
 * cudaProfilerStart and cudaProfilerStop, after an untimed one that loads the kernels, so that a
 * profiler started with its collection off (ncu --profile-from-start off) sees those fits' launches
 * alone; the fit's status as a check. */
static void run_profile(void) {
  shape shapes[] = {{"1x1e8", 1, 100000000}, {"1e4x1e3", 10000, 1000}, {"1e6x16", 1000000, 16}};
  const char *only = getenv("GPUISO_PROFILE_SHAPE");
  for (int k = 0; k < 3; k++) {
    if (only && strcmp(only, shapes[k].name) != 0) continue;
    if (late(5)) {
      skip("profile");
      continue;
    }
    device_noise d = noise_on_device(shapes[k], 1);
    gpuiso_opts o = options(1, GPUISO_GPU_FAST, 0, 0);
    gpuiso_error e;
    plan_work p = {NULL, d.dy, d.dfit};
    gpuiso_status s = gpuiso_cuda_plan_create(d.nrows, d.off, GPUISO_SINGLE, 0, &o, &p.plan, &e);
    if (s == GPUISO_OK && (s = run_plan(&p, &e)) == GPUISO_OK) {
      CUDA_OK(cudaDeviceSynchronize());
      CUDA_OK(cudaProfilerStart());
      s = run_plan(&p, &e);
      CUDA_OK(cudaDeviceSynchronize());
      CUDA_OK(cudaProfilerStop());
    }
    report(s == GPUISO_OK, "profile %s f32 noise: the fits between the profiler's start and stop%s%s", shapes[k].name,
           s == GPUISO_OK ? "" : ": ", s == GPUISO_OK ? "" : error_text(s, &e));
    if (p.plan) gpuiso_cuda_plan_free(p.plan);
    device_noise_free(&d);
  }
}

/* Rows of host doubles on the fast path (R's default): copy in, fit, copy out (what an R call
 * pays, less R's own work), against the CPU PAV engine on every core (over rows, or one row on
 * every thread); medians of reps (at most 5) wall-clock ms after a first call (its time to
 * *first, when wanted: the pinned buffers are made then). gpu is NAN, with a FAIL line, when the
 * GPU fails. */
static void host_to_host(int64_t nrows, const int64_t *off, const double *y, int reps, double *gpu, double *cpu,
                         double *first) {
  int64_t n = off[nrows];
  double *z = xmalloc(n * sizeof *z), t[5], c[5], t0 = now();
  gpuiso_opts o = options(1, GPUISO_GPU_FAST, 0, 0);
  o.nthreads = omp_get_max_threads();
  gpuiso_error e;
  gpuiso_status s = gpuiso_cuda_fit_rows(nrows, off, GPUISO_DOUBLE, y, NULL, &o, z, NULL, &e);
  if (first) *first = 1e3 * (now() - t0);
  int k = 0;
  for (; k < reps && s == GPUISO_OK; k++) {
    t0 = now();
    s = gpuiso_cuda_fit_rows(nrows, off, GPUISO_DOUBLE, y, NULL, &o, z, NULL, &e);
    t[k] = 1e3 * (now() - t0);
    t0 = now();
    cpu_rows(GPUISO_PAV, nrows, off, y, NULL, o, z);
    c[k] = 1e3 * (now() - t0);
  }
  if (s != GPUISO_OK)
    report(0, "timing host to host, %lld rows, %lld doubles: %s", (long long)nrows, (long long)n, error_text(s, &e));
  *gpu = s == GPUISO_OK ? median(t, k) : NAN;
  *cpu = s == GPUISO_OK ? median(c, k) : NAN;
  free(z);
}

/* Host arrays of doubles end to end: one row (issue 11's host-to-host target), rows of 1000 (in
 * groups whose transfers overlap each other and the kernels) and of 10000 (chunked: in one plan),
 * beside the plain copies of the same bytes in and out from pageable memory (device time, CUDA
 * events) and the first call's time. */
static void time_end_to_end(int64_t n) {
  const shape shapes[] = {{"end to end", 1, n}, {"end to end", n / 1000, 1000}, {"end to end", n / 10000, 10000}};
  for (int k = 0; k < 3; k++) {
    int64_t nrows, *off = layout(shapes[k], &nrows);
    double *y = xmalloc(n * sizeof *y), gpu, cpu, first, in = NAN, out = NAN;
    gen_rows(FAM_NOISE, W_NONE, nrows, off, 78, 0, y, NULL);
    host_to_host(nrows, off, y, 3, &gpu, &cpu, &first);
    void *dev = NULL;
    if (!isnan(gpu) && cudaMalloc(&dev, n * sizeof(double)) == cudaSuccess) {
      in = time_copy(dev, y, n * sizeof(double), cudaMemcpyHostToDevice, 3, "end-to-end copy in");
      out = time_copy(y, dev, n * sizeof(double), cudaMemcpyDeviceToHost, 3, "end-to-end copy out");
      cudaFree(dev);
    }
    if (!isnan(gpu))
      printf("INFO timing end to end, %lld x %lld doubles (noise): GPU host-to-host %.2f ms (first call %.2f ms; "
             "copies alone, device time: in %.2f ms, out %.2f ms), CPU PAV on %d threads %.2f ms\n",
             (long long)nrows, (long long)shapes[k].len, gpu, first, in, out, omp_get_max_threads(), cpu);
    if (!isnan(gpu) && k == 0) target(cpu / gpu >= 10, "end-to-end 1e7 doubles, CPU PAV / GPU", cpu / gpu, 10);
    free(off);
    free(y);
  }
}

/* The size from which device = "auto" should take the GPU (options(gpuiso.gpu_min_n)): host to
 * host against the CPU at n = 1e3 to 1e7 elements, as one row and as rows of 100, on noise; the
 * crossover is the smallest n from which the GPU was faster at every n measured. */
static void time_crossover(void) {
  for (int len = 0; len <= 100; len += 100) {
    int64_t from = -1;
    char line[512] = "";
    size_t at = 0;
    for (double n = 1000; n <= 1.0001e7; n *= sqrt(10.0)) {
      if (late(3)) {
        skip("crossover");
        break;
      }
      shape sh = {"crossover", len ? (int64_t)n / len : 1, len ? len : (int64_t)n};
      int64_t nrows, *off = layout(sh, &nrows), total = off[nrows];
      double *y = xmalloc(total * sizeof *y), gpu, cpu;
      gen_rows(FAM_NOISE, W_NONE, nrows, off, 80, 0, y, NULL);
      host_to_host(nrows, off, y, 5, &gpu, &cpu, NULL);
      if (gpu < cpu && from < 0) from = total;
      if (!(gpu < cpu)) from = -1;
      at += snprintf(line + at, at < sizeof line ? sizeof line - at : 0, " %lld: %.3g/%.3g",
                     (long long)total, gpu, cpu);
      free(off);
      free(y);
    }
    char verdict[64] = "never";
    if (from >= 0) snprintf(verdict, sizeof verdict, "n = %lld on", (long long)from);
    printf("INFO timing crossover, %s, doubles, GPU/CPU ms host to host at n =%s; the GPU is faster "
           "from %s\n", len ? "rows of 100" : "one row", line, verdict);
  }
}

/* A weighted fit on n unsorted x with ties, host to host: on the device (gpuiso_cuda_fit_xy) against
 * the CPU path (radix sort, pooling, PAV) on every core, beside the plain copies of the same
 * bytes (x, y and w in, the fit out) from pageable memory; medians of 3 wall-clock runs. */
static void time_unsorted_x(int64_t n) {
  if (late(5)) {
    skip("timing unsorted x");
    return;
  }
  int64_t off[2] = {0, n}, nk, nb;
  /* x, y and w side by side, so that one copy of 3 n doubles times their transfer */
  double *x = xmalloc(3 * n * sizeof *x), *y = x + n, *w = x + 2 * n;
  double *z = xmalloc(n * sizeof *z), t[3], c[3];
  gen_x_ties(n, 81, x);
  gen_rows(FAM_NOISE, W_UNIFORM, 1, off, 82, 0, y, w);
  gpuiso_opts o = options(1, GPUISO_GPU_FAST, 0, 0);
  o.nthreads = omp_get_max_threads();
  gpuiso_error e;
  gpuiso_knots kn = {0, NULL, NULL, NULL, NULL, 0};
  gpuiso_status s = gpuiso_cuda_fit_xy(n, x, y, w, &o, z, &kn, NULL, NULL, &e); /* warm-up */
  free(kn.x);
  for (int k = 0; k < 3 && s == GPUISO_OK; k++) {
    double t0 = now();
    s = gpuiso_cuda_fit_xy(n, x, y, w, &o, z, &kn, NULL, NULL, &e);
    t[k] = 1e3 * (now() - t0);
    free(kn.x);
    t0 = now();
    if (s == GPUISO_OK) s = cpu_fit_xy(n, x, y, w, &o, GPUISO_PAV, z, &nk, &nb, &e);
    c[k] = 1e3 * (now() - t0);
  }
  void *dev = NULL;
  double in = NAN, out = NAN;
  if (s == GPUISO_OK && cudaMalloc(&dev, 3 * n * sizeof(double)) == cudaSuccess) {
    in = time_copy(dev, x, 3 * n * sizeof(double), cudaMemcpyHostToDevice, 3, "unsorted-x copy in");
    out = time_copy(z, dev, n * sizeof(double), cudaMemcpyDeviceToHost, 3, "unsorted-x copy out");
    cudaFree(dev);
  }
  if (s != GPUISO_OK) {
    report(0, "timing unsorted x, %lld doubles: %s", (long long)n, error_text(s, &e));
  } else {
    double gpu = median(t, 3), cpu = median(c, 3);
    printf("INFO timing unsorted x with ties, %lld weighted doubles: GPU host-to-host %.2f ms (copies "
           "alone: in %.2f ms, out %.2f ms), CPU sort + PAV on %d threads %.2f ms\n", (long long)n, gpu,
           in, out, omp_get_max_threads(), cpu);
    target(cpu / gpu >= 10, "unsorted x 1e7 f64 host-to-host, CPU / GPU", cpu / gpu, 10);
  }
  free(x); free(z);
}

/* The host-to-host runs first (a few seconds), then the table: float32 first on every shape, so
 * that running late drops float64 rows and the slow controls of the long rows (one thread walks a
 * whole row: seconds) before anything else. A long row's control runs while 20 s (the rows of
 * 1e8) and the slowest control so far are left. Noise and increasing (the paper's targets) first,
 * then sawtooth and cliff. */
static void run_timing(void) {
  double control_s = 0, big_s = 8; /* the slowest row of 1e8 so far (seconds), 8 before one */
  time_end_to_end(10000000); /* a few seconds: before the table, whose long rows may run late */
  time_crossover();
  time_unsorted_x(10000000);
  table_header();
  for (int s = 0; s < NSHAPES; s++) {
    shape sh = paper_shapes[s];
    int big = sh.len >= 100000000, slow = sh.len >= 1000000;
    for (int single = 1; single >= 0; single--) {
      for (int f = FAM_NOISE; f <= FAM_INCREASING; f++) {
        const char *type = single ? "f32" : "f64";
        if (late(big ? big_s + 2 : 2)) {
          printf("| %s | %s | %s | skipped: running late |\n", sh.name, family_names[f], type);
          skipped++;
          continue;
        }
        int control = !big && !(slow && late(20 + control_s));
        if (!big && !control) skipped++;
        double fast, ctl, t0 = now();
        time_row(sh, (family_kind)f, single ? GPUISO_SINGLE : GPUISO_DOUBLE,
                 control ? (slow ? 1 : 3) : 0, big ? "-" : "late", &fast, &ctl);
        if (big && now() - t0 > big_s) big_s = now() - t0;
        if (slow && ctl / 1e3 > control_s) control_s = ctl / 1e3;
        /* issue 11's targets, on the paper's solver (the fast path), float32 on the device */
        char what[64];
        snprintf(what, sizeof what, "%s f32 %s, fast ms", sh.name, family_names[f]);
        if (single && sh.len == 10000000 && f == FAM_NOISE && control)
          target(ctl / fast >= 1000, "1x1e7 f32 noise, row-PAV control / fast", ctl / fast, 1000);
        if (single && sh.len == 1000)
          target(fast <= 0.5, what, fast, 0.5);
        if (single && big)
          target(fast <= (f == FAM_NOISE ? 2.7 : 7.3), what, fast, f == FAM_NOISE ? 2.7 : 7.3);
      }
    }
  }
  /* the paper's other two families, float32, without the controls and the rows of 1e8, while
   * time is left: after the rows above, which matter more */
  for (int f = FAM_SAWTOOTH; f <= FAM_CLIFF; f++) {
    for (int s = 0; s < NSHAPES; s++) {
      shape sh = paper_shapes[s];
      if (sh.len >= 100000000) continue;
      if (late(2)) {
        printf("| %s | %s | f32 | skipped: running late |\n", sh.name, family_names[f]);
        skipped++;
        continue;
      }
      double fast, ctl;
      time_row(sh, (family_kind)f, GPUISO_SINGLE, 0, "-", &fast, &ctl);
    }
  }
  /* ties in float64 (runs of equal values, their sums rounded): turns of exactly zero that the lane
   * kernels' filtered instances leave to their exact ones (lane_retry), every block run twice */
  for (int s = 0; s < NSHAPES; s++) {
    shape sh = paper_shapes[s];
    if (sh.len != 1000 && sh.len != 10000000) continue;
    if (late(2)) {
      printf("| %s | %s | f64 | skipped: running late |\n", sh.name, family_names[FAM_RUNS]);
      skipped++;
      continue;
    }
    double fast, ctl;
    time_row(sh, FAM_RUNS, GPUISO_DOUBLE, 0, "-", &fast, &ctl);
  }
}

/* ---- IDR ---- */

/* IDR on the GPU (gpuiso_cuda_idr_fit) against the CPU engine on all threads, on the data of
 * gen_idr; the GPU runs up to reps times while time is left, and the median of its wall-clock
 * seconds (copies included) is returned, NAN on failure. With unit weights and continuous data the
 * sums are exact and the runs must be the same bit for bit. */
static double check_idr(int64_t n, int ties, weight_kind wk, gpuiso_gpu_kernel kernel, int64_t chunk,
                        int reps) {
  int32_t *pos = xmalloc(n * sizeof *pos), *thr = xmalloc(n * sizeof *thr);
  double *w = xmalloc(n * sizeof *w), gpu[3];
  int64_t npos, nthr;
  gen_idr(n, 90 + n, ties, wk, pos, thr, w, &npos, &nthr);
  const double *wp = wk == W_NONE ? NULL : w;
  gpuiso_opts o = options(0, kernel, chunk, 0);
  o.nthreads = omp_get_max_threads();
  gpuiso_cdf_runs ref, got; /* both zeroed by the fits, freed again on failure */
  memset(&got, 0, sizeof got);
  gpuiso_error e;
  double t0 = now();
  gpuiso_status s = gpuiso_idr_fit(n, pos, thr, wp, npos, nthr, &o, &ref, &e);
  double cpu = now() - t0;
  int k = 0;
  for (; k < reps && s == GPUISO_OK && (k == 0 || !late(2 * gpu[0] + 2)); k++) {
    gpuiso_cdf_runs_free(&got);
    t0 = now();
    s = gpuiso_cuda_idr_fit(n, pos, thr, wp, npos, nthr, &o, &got, &e);
    gpu[k] = now() - t0;
  }
  runs_comparison c = {NAN, -1, -1, -1};
  if (s == GPUISO_OK) c = compare_cdf_runs(&ref, &got, 1e-10);
  int exact = !ties && !wp;
  int ok = s == GPUISO_OK && c.max_dev <= (exact ? 0 : 1e-10) && c.steps_differ == 0 && c.bad == 0 &&
           (!exact || c.starts_differ == 0);
  double t = k ? median(gpu, k) : NAN;
  report(ok, "accuracy idr n %lld%s %-8s %s: %lld positions, %lld thresholds, %.1f runs each; dev "
         "%.2e, thresholds of other runs %lld (past 1e-10: %lld), misshapen %lld; GPU %.3f s "
         "(median of %d), CPU %.3f s on %d threads%s%s",
         (long long)n, ties ? " ties" : "", weight_names[wk], kernel_name(kernel), (long long)npos,
         (long long)nthr, s == GPUISO_OK ? (double)got.offset[nthr] / nthr : NAN, c.max_dev,
         (long long)c.starts_differ, (long long)c.steps_differ, (long long)c.bad, t, k, cpu,
         omp_get_max_threads(), s == GPUISO_OK ? "" : " error: ", s == GPUISO_OK ? "" : error_text(s, &e));
  gpuiso_cdf_runs_free(&ref);
  gpuiso_cdf_runs_free(&got);
  free(pos);
  free(thr);
  free(w);
  return ok ? t : NAN;
}

/* The target: n = 1e5 continuous observations (as many thresholds) fitted within 1 s,
 * host arrays in and runs out. */
static void run_idr(void) {
  check_idr(1000, 1, W_UNIFORM, GPUISO_GPU_SIMPLE, 0, 1);
  check_idr(10000, 0, W_EXTREME, GPUISO_GPU_FAST, 0, 1);
  check_idr(30000, 1, W_NONE, GPUISO_GPU_FAST, 0, 1);
  check_idr(3000, 0, W_NONE, GPUISO_GPU_ROW_PAV, 0, 1);
  if (late(12)) {
    skip("idr n 1e5");
    return;
  }
  double t = check_idr(100000, 0, W_NONE, GPUISO_GPU_FAST, 0, 3);
  target(t <= 1.0, "IDR n 1e5 continuous, fast, seconds", t, 1.0);
  if (!(t < 10)) /* one thread per row of 1e5: only after a fast path that leaves time */
    printf("INFO skip idr n 1e5 rowpav: the fast path took %.3g s\n", t);
  else if (late(12))
    skip("idr n 1e5 rowpav");
  else
    check_idr(100000, 0, W_NONE, GPUISO_GPU_ROW_PAV, 0, 1);
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
  gpuiso_opts o = options(1, GPUISO_GPU_FAST, 0, 0);
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
    report(ok, "accuracy calibrate n %lld, %lld curves%s %-8s: %lld blocks; level dev %.2e, weight "
           "dev %.2e, curves differ %lld%s%s",
           (long long)n, (long long)ncurves, ties ? " ties" : "", weight_names[wk],
           s == GPUISO_OK ? (long long)first[ncurves] : -1LL, c.max_dev, c.max_weight_dev,
           (long long)c.curves_differ, s == GPUISO_OK ? "" : " error: ", s == GPUISO_OK ? "" : error_text(s, &e));
    if (ok && timed) {
      /* beside it: the input check on the host, and one plain (pageable) copy of score, label,
       * weights and groups to the device (CUDA events); the pipeline stages its copies through
       * pinned buffers beside its kernels, so neither is a part to subtract */
      size_t bytes = n * (2 * sizeof(double) + (wp ? sizeof(double) : 0) + (gp ? sizeof(int) : 0));
      int64_t *count = xmalloc((ngroups + 1) * sizeof *count);
      double check[3];
      void *dev;
      const char *what = "calibrate input copy";
      CUDA_OK(cudaMalloc(&dev, bytes));
      double h2d = time_copy(dev, score, n * sizeof(double), cudaMemcpyHostToDevice, 3, what) +
                   time_copy(dev, label, n * sizeof(double), cudaMemcpyHostToDevice, 3, what) +
                   (wp ? time_copy(dev, w, n * sizeof(double), cudaMemcpyHostToDevice, 3, what) : 0) +
                   (gp ? time_copy(dev, g, n * sizeof(int), cudaMemcpyHostToDevice, 3, what) : 0);
      CUDA_OK(cudaFree(dev));
      for (int k = 0; k < 3; k++) {
        double t0 = now();
        calibrate_check(n, score, label, wp, gp, ngroups, &o, count, &e);
        check[k] = 1e3 * (now() - t0);
      }
      double tg = median(gpu, reps), tc = median(cpu, reps), tk = median(check, 3);
      printf("INFO timing calibrate n %lld, %lld curves%s: GPU host-to-host %.1f ms (beside it: the "
             "input check on the host %.1f, a pageable copy of the input alone %.1f), CPU path on "
             "%d threads %.1f ms; CPU / GPU %.1f\n",
             (long long)n, (long long)ncurves, wp ? ", weighted" : "", tg, tk, h2d,
             omp_get_max_threads(), tc, tc / tg);
      free(count);
    }
    free(ref);
    free(got);
  }
  free(score); free(label); free(w); free(g); free(ref_first); free(first);
}

static void run_calibration(void) {
  check_calibrate(100000, 300, 1, W_ZEROS, 0);
  check_calibrate(1000000, 2000, 0, W_UNIFORM, 0);
  if (late(15))
    skip("calibrate n 1e7");
  else
    check_calibrate(10000000, 300, 0, W_NONE, 1); /* tools/bench/calibrate.R's traffic */
}

/* ---- Gradients ---- */

static double max_rel_dev(int64_t n, const double *got, const double *ref) {
  double dev = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs(got[i] - ref[i]) / (1 + fabs(ref[i]));
    dev = d > dev || isnan(d) ? d : dev;
  }
  return dev;
}

/* Soft ranks forward and backward on the device (gpuiso_cuda_soft, host arrays in and out) for an
 * nrow x ncol matrix of noise, against gpuiso_soft on every CPU thread (it sorts in each pass too):
 * within 1e-9 (relative, as the SIMT tests; the device's solver pools in another order). timed:
 * medians of 3 wall-clock runs of both passes on each side, after one untimed run. */
static void check_soft_rank(int64_t nrow, int64_t ncol, double epsilon, int timed) {
  int64_t n = nrow * ncol, off[2] = {0, n};
  double *x = xmalloc(n * sizeof *x), *g = xmalloc(n * sizeof *g);
  double *ref[2] = {xmalloc(n * sizeof(double)), xmalloc(n * sizeof(double))};
  double *got[2] = {xmalloc(n * sizeof(double)), xmalloc(n * sizeof(double))};
  gen_rows(FAM_NOISE, W_NONE, 1, off, 80 + nrow, 0, x, NULL);
  gen_rows(FAM_NOISE, W_NONE, 1, off, 81 + nrow, 0, g, NULL);
  gpuiso_opts o = options(1, GPUISO_GPU_FAST, 0, 0);
  o.nthreads = omp_get_max_threads();
  gpuiso_error e;
  double cpu[3], gpu[3];
  int reps = timed ? 3 : 1;
  gpuiso_status s = GPUISO_OK;
  for (int k = timed ? -1 : 0; k < reps && s == GPUISO_OK; k++) {
    double t0 = now();
    o.engine = GPUISO_PAV;
    for (int back = 0; back <= 1 && s == GPUISO_OK; back++)
      s = gpuiso_soft(GPUISO_SOFT_RANK, nrow, ncol, x, back ? g : NULL, epsilon, 0, &o, ref[back], &e);
    if (k >= 0) cpu[k] = 1e3 * (now() - t0);
    poison(got[0], n, 0);
    poison(got[1], n, 0);
    t0 = now();
    for (int back = 0; back <= 1 && s == GPUISO_OK; back++)
      s = gpuiso_cuda_soft(GPUISO_SOFT_RANK, nrow, ncol, x, back ? g : NULL, epsilon, 0, &o, got[back], &e);
    if (k >= 0) gpu[k] = 1e3 * (now() - t0);
  }
  double dev[2] = {NAN, NAN};
  for (int back = 0; back <= 1 && s == GPUISO_OK; back++) dev[back] = max_rel_dev(n, got[back], ref[back]);
  report(s == GPUISO_OK && dev[0] <= 1e-9 && dev[1] <= 1e-9,
         "accuracy soft rank %lld x %lld, epsilon %g: values dev %.2e, gradient dev %.2e%s%s",
         (long long)nrow, (long long)ncol, epsilon, dev[0], dev[1], s == GPUISO_OK ? "" : " error: ",
         s == GPUISO_OK ? "" : error_text(s, &e));
  if (s == GPUISO_OK && timed)
    printf("INFO timing soft rank forward + backward %lld x %lld, epsilon %g: GPU host-to-host %.2f ms, "
           "CPU on %d threads %.2f ms; CPU / GPU %.2f\n",
           (long long)nrow, (long long)ncol, epsilon, median(gpu, 3), omp_get_max_threads(),
           median(cpu, 3), median(cpu, 3) / median(gpu, 3));
  free(x); free(g); free(ref[0]); free(ref[1]); free(got[0]); free(got[1]);
}

/* isoreg_vjp's product on the device (gpuiso_cuda_vjp, host arrays in and out) for one weighted
 * row of n, its blocks from the CPU hull engine's fit, against gpuiso_vjp on every CPU thread:
 * within 1e-12 (relative, as the SIMT tests: double-double sums on both sides). timed: medians of
 * 3 wall-clock runs of each, after one untimed run. */
static void check_vjp(int64_t n, int timed) {
  int64_t off[2] = {0, n};
  double *y = xmalloc(n * sizeof *y), *w = xmalloc(n * sizeof *w), *z = xmalloc(n * sizeof *z);
  double *g = xmalloc(n * sizeof *g), *ry = xmalloc(n * sizeof *ry), *rw = xmalloc(n * sizeof *rw);
  double *dy = xmalloc(n * sizeof *dy), *dw = xmalloc(n * sizeof *dw);
  uint8_t *start = xmalloc(n);
  gen_rows(FAM_NOISE, W_UNIFORM, 1, off, 85, 0, y, w);
  gen_rows(FAM_SAWTOOTH, W_NONE, 1, off, 86, 0, g, NULL);
  gpuiso_opts o = options(1, GPUISO_GPU_FAST, 0, 0);
  o.nthreads = omp_get_max_threads();
  o.engine = GPUISO_HULL;
  o.solver_blocks = 1;
  gpuiso_error e;
  int64_t nblocks = 0;
  gpuiso_status s = gpuiso_fit(n, y, w, &o, z, start, &nblocks, &e);
  double cpu[3], gpu[3];
  int reps = timed ? 3 : 1;
  for (int k = timed ? -1 : 0; k < reps && s == GPUISO_OK; k++) {
    double t0 = now();
    s = gpuiso_vjp(1, off, y, w, z, start, g, &o, ry, rw, &e);
    if (k >= 0) cpu[k] = 1e3 * (now() - t0);
    poison(dy, n, 0);
    poison(dw, n, 0);
    t0 = now();
    if (s == GPUISO_OK) s = gpuiso_cuda_vjp(1, off, GPUISO_DOUBLE, y, w, z, start, g, &o, dy, dw, &e);
    if (k >= 0) gpu[k] = 1e3 * (now() - t0);
  }
  double dev_y = NAN, dev_w = NAN;
  if (s == GPUISO_OK) {
    dev_y = max_rel_dev(n, dy, ry);
    dev_w = max_rel_dev(n, dw, rw);
  }
  report(s == GPUISO_OK && dev_y <= 1e-12 && dev_w <= 1e-12,
         "accuracy vjp 1 x %lld weighted, %lld blocks: d/dy dev %.2e, d/dw dev %.2e%s%s", (long long)n,
         (long long)nblocks, dev_y, dev_w, s == GPUISO_OK ? "" : " error: ", s == GPUISO_OK ? "" : error_text(s, &e));
  if (s == GPUISO_OK && timed)
    printf("INFO timing vjp 1 x %lld weighted doubles (d/dy and d/dw): GPU host-to-host %.2f ms, CPU "
           "on %d threads %.2f ms; CPU / GPU %.2f\n",
           (long long)n, median(gpu, 3), omp_get_max_threads(), median(cpu, 3), median(cpu, 3) / median(gpu, 3));
  free(y); free(w); free(z); free(g); free(ry); free(rw); free(dy); free(dw); free(start);
}

/* The shapes: soft ranks of 256 x 1e3 and 4 x 1e5 (epsilon 1, one block a row, and 1/n,
 * many), then the product of a row of 1e7. */
static void run_grad(void) {
  static const int64_t shapes[][2] = {{256, 1000}, {4, 100000}};
  for (int s = 0; s < 2; s++) {
    for (int k = 0; k < 2; k++) {
      if (late(3)) {
        skip("soft rank");
        continue;
      }
      check_soft_rank(shapes[s][0], shapes[s][1], k ? 1.0 / shapes[s][1] : 1.0, 1);
    }
  }
  if (late(10))
    skip("vjp 1e7");
  else
    check_vjp(10000000, 1);
}

/* ---- Sections ---- */

/* CUDA does not survive fork(), and main's probe has started it here: a child's probe must
 * report the fork at once, without a runtime call (one could wait for ever; the alarm ends it). */
static void check_fork_probe(void) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    gpuiso_device_info info;
    gpuiso_error e;
    int count = -1;
    gpuiso_status s = gpuiso_cuda_probe(&info, 1, &count, &e);
    _exit(s == GPUISO_E_CUDA && count == 0 && strstr(e.message, "forked") != NULL ? 0 : 1);
  }
  int status = 0;
  int ok = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  report(ok, "the probe of a process forked after CUDA started reports the fork (wait status %d)", status);
}

static void run_device(void) {
  printf("INFO device: %s, compute capability %d.%d, %.0f GiB; %d CPU threads\n", device.name,
         device.major, device.minor, device.memory_bytes / 1073741824.0, omp_get_max_threads());
  check_fork_probe();
}

/* Many chunks, merges, searches and ragged rows in little data; reserve: a case under a sanitizer.
 * The one-off checks first: check_shape skips what would run past the deadline, they do not. */
static void run_small(void) {
  /* levels: a row in 12,500 chunks of 8, whose first level has more merges than WARP_MERGE_BELOW
   * (a thread per merge), the others fewer (a warp per merge) */
  shape rows = {"small", 3, 20000}, ragged = {"ragged-s", 30000, 0}, levels = {"levels-s", 1, 100000};
  check_unsorted_x(20000);
  check_idr(600, 1, W_UNIFORM, GPUISO_GPU_SIMPLE, 32, 1);
  check_idr(1500, 0, W_NONE, GPUISO_GPU_FAST, 64, 1);
  check_calibrate(5000, 50, 1, W_ZEROS, 0);
  check_soft_rank(7, 300, 0.01, 0);
  check_vjp(5000, 0);
  check_shape(rows, 0, 2, 0, W_COUNT, 64, 2, 3);
  check_shape(ragged, 0, 2, 0, 2, 32, 1, 3);
  check_shape(levels, 0, 1, 0, 2, 8, 2, 3);
}

static void run_accuracy_1e8(void) {
  check_shape(paper_shapes[NSHAPES - 1], 0, 4, W_NONE, W_EXTREME, 0, 0, 5);
}

/* Breadth first, so that running late drops the rarer cases on every shape: the four families
 * unweighted and uniformly weighted, then with extreme and zero weights, then the stress
 * families. */
static void run_accuracy(void) {
  shape shapes[] = {paper_shapes[0], paper_shapes[1], paper_shapes[2], paper_shapes[3],
                    paper_shapes[4], {"ragged", 16000000, 0}};
  int pass[3][4] = {{0, 4, W_NONE, W_EXTREME}, {0, 4, W_EXTREME, W_COUNT}, {4, FAM_COUNT, 0, W_COUNT}};
  check_unsorted_x(1000000);
  check_memory_cap(10000000);
  for (int p = 0; p < 3; p++)
    for (int s = 0; s < 6; s++)
      check_shape(shapes[s], pass[p][0], pass[p][1], pass[p][2], pass[p][3], 0, 0, 3);
}

typedef struct {
  const char *name;
  void (*run)(void);
} section;

static const section sections[] = {{"device", run_device},           {"small", run_small},
                                   {"accuracy-1e8", run_accuracy_1e8}, {"accuracy", run_accuracy},
                                   {"timing", run_timing},           {"lanes", run_lanes},
                                   {"merges", run_merges},           {"profile", run_profile},
                                   {"idr", run_idr},
                                   {"calibration", run_calibration}, {"grad", run_grad}};

int main(int argc, char **argv) {
  int nsections = (int)(sizeof sections / sizeof sections[0]), which = -1;
  for (int k = 0; argc == 2 && k < nsections; k++)
    if (strcmp(argv[1], sections[k].name) == 0) which = k;
  if (which < 0) {
    fprintf(stderr, "usage: gpu_check SECTION, one of:");
    for (int k = 0; k < nsections; k++) fprintf(stderr, " %s", sections[k].name);
    fprintf(stderr, "\n");
    return 64;
  }
  const char *dl = getenv("GPUISO_CHECK_DEADLINE");
  if (dl) deadline = atof(dl);
  setvbuf(stdout, NULL, _IOLBF, 0);
  int count = 0;
  gpuiso_error e;
  if (gpuiso_cuda_probe(&device, 1, &count, &e) != GPUISO_OK || count == 0) {
    printf("INFO no CUDA device: %s\n", count == 0 && e.status == GPUISO_OK ? "cudaGetDeviceCount found none" : e.message);
    return 2;
  }
  sections[which].run();
  printf("INFO section %s: %d passed, %d failed, %d skipped for time\n", sections[which].name, passed,
         failed, skipped);
  return failed ? 1 : 0;
}

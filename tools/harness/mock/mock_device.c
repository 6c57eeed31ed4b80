/* A mock CUDA device for a dry run of tools/gpu-check's harness on a machine without a GPU
 * (tools/harness/dry-run): the CUDA runtime calls that the harness makes, on host memory, and the
 * engine's gpuiso_cuda_* entry points on the CPU engines. It checks the harness's control flow and
 * output (under AddressSanitizer), never the kernels: the fits are the CPU hull engine's, and the
 * stages and times are the CPU's. */
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuiso.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e3 * t.tv_sec + 1e-6 * t.tv_nsec;
}

cudaError_t cudaMalloc(void **p, size_t bytes) {
  *p = malloc(bytes ? bytes : 1);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
cudaError_t cudaMemcpy(void *d, const void *s, size_t bytes, enum cudaMemcpyKind k) {
  (void)k;
  memmove(d, s, bytes);
  return cudaSuccess;
}
const char *cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "mock error"; }
struct CUevent_st { double ms; };
cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = calloc(1, sizeof **e); return cudaSuccess; }
cudaError_t cudaEventDestroy(cudaEvent_t e) { free(e); return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { (void)s; e->ms = now_ms(); return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { (void)e; return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) { *ms = (float)(b->ms - a->ms); return cudaSuccess; }
cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
cudaError_t cudaProfilerStop(void) { return cudaSuccess; }

int gpuiso_cuda_built(void) { return 1; }

gpuiso_status gpuiso_cuda_probe(gpuiso_device_info *info, int max, int *count, gpuiso_error *err) {
  *count = 0;
  if (gpuiso_cuda_forked()) { /* as src/cuda/probe.cu */
    if (err) {
      memset(err, 0, sizeof *err);
      err->status = GPUISO_E_CUDA;
      strcpy(err->message, "mock: this process was forked after CUDA started");
    }
    return GPUISO_E_CUDA;
  }
  gpuiso_cuda_started();
  if (max > 0 && info) {
    memset(info, 0, sizeof *info);
    strcpy(info->name, "mock device (CPU engines)");
    info->major = 9;
    info->memory_bytes = 141.0 * 1073741824.0;
  }
  *count = 1;
  if (err) memset(err, 0, sizeof *err);
  return GPUISO_OK;
}

static void to_double(gpuiso_precision t, const void *v, int64_t n, double *d) {
  for (int64_t i = 0; i < n; i++) d[i] = t == GPUISO_SINGLE ? ((const float *)v)[i] : ((const double *)v)[i];
}

gpuiso_status gpuiso_cuda_fit_rows(int64_t nrows, const int64_t *off, gpuiso_precision type, const void *y,
                                   const void *w, const gpuiso_opts *opt, void *fit, uint8_t *start,
                                   gpuiso_error *err) {
  int64_t n = off[nrows];
  double *yd = malloc((3 * n + 1) * sizeof *yd), *wd = yd + n, *z = yd + 2 * n;
  to_double(type, y, n, yd);
  if (w) to_double(type, w, n, wd);
  gpuiso_opts o = *opt;
  o.engine = GPUISO_HULL;
  o.nthreads = 1;
  gpuiso_status s = GPUISO_OK;
  for (int64_t r = 0; r < nrows && s == GPUISO_OK; r++) {
    int64_t nb;
    s = gpuiso_fit(off[r + 1] - off[r], yd + off[r], w ? wd + off[r] : NULL, &o, z + off[r],
                   start ? start + off[r] : NULL, &nb, err);
    if (s != GPUISO_OK) err->row = r;
  }
  for (int64_t i = 0; s == GPUISO_OK && i < n; i++)
    if (type == GPUISO_SINGLE) ((float *)fit)[i] = (float)z[i];
    else ((double *)fit)[i] = z[i];
  free(yd);
  return s;
}

struct gpuiso_cuda_plan {
  int64_t nrows, *off;
  gpuiso_precision type;
  int weighted;
  gpuiso_opts opt;
};

gpuiso_status gpuiso_cuda_plan_create(int64_t nrows, const int64_t *off, gpuiso_precision type, int weighted,
                                      const gpuiso_opts *opt, gpuiso_cuda_plan **plan, gpuiso_error *err) {
  gpuiso_cuda_plan *p = malloc(sizeof *p);
  p->nrows = nrows, p->type = type, p->weighted = weighted, p->opt = *opt;
  p->off = malloc((nrows + 1) * sizeof *p->off);
  memcpy(p->off, off, (nrows + 1) * sizeof *off);
  *plan = p;
  memset(err, 0, sizeof *err);
  return GPUISO_OK;
}
gpuiso_status gpuiso_cuda_plan_run(gpuiso_cuda_plan *p, const void *y, const void *w, void *fit,
                                   uint8_t *start, gpuiso_error *err) {
  if (w && !p->weighted) {
    err->status = GPUISO_E_W_UNPLANNED;
    return GPUISO_E_W_UNPLANNED;
  }
  return gpuiso_cuda_fit_rows(p->nrows, p->off, p->type, y, w, &p->opt, fit, start, err);
}
void gpuiso_cuda_plan_free(gpuiso_cuda_plan *p) {
  if (p) free(p->off);
  free(p);
}
gpuiso_status gpuiso_cuda_plan_stages(gpuiso_cuda_plan *p, const void *y, const void *w, void *fit,
                                      uint8_t *start, gpuiso_stage_times *t, gpuiso_error *err) {
  memset(t, 0, sizeof *t);
  double t0 = now_ms();
  gpuiso_status s = gpuiso_cuda_plan_run(p, y, w, fit, start, err);
  int64_t longest = 0;
  for (int64_t r = 0; r < p->nrows; r++) longest = p->off[r + 1] - p->off[r] > longest ? p->off[r + 1] - p->off[r] : longest;
  const char *names[] = {longest <= 1024 ? "short_rows_kernel<float>" : longest <= 4096 ? "block_rows_kernel<double>" : "chunk_hulls_kernel<double>",
                         "merge_step<double>", "fit_warp_kernel<double>"};
  t->count = longest <= 4096 ? 1 : 3;
  for (int i = 0; i < t->count; i++) {
    strcpy(t->name[i], names[i]);
    t->ms[i] = (now_ms() - t0) / t->count;
    t->step_stage[t->steps] = i, t->step_ms[t->steps++] = t->ms[i];
  }
  return s;
}

gpuiso_status gpuiso_cuda_idr_fit(int64_t n, const int32_t *pos, const int32_t *thr, const double *w,
                                  int64_t npos, int64_t nthr, const gpuiso_opts *opt, gpuiso_cdf_runs *out,
                                  gpuiso_error *err) {
  return gpuiso_idr_fit(n, pos, thr, w, npos, nthr, opt, out, err);
}
gpuiso_status gpuiso_cuda_calibrate(int64_t n, const double *score, const double *label, const double *w,
                                    const int *g, int64_t ngroups, const gpuiso_opts *opt,
                                    gpuiso_block **blocks, int64_t *first, gpuiso_error *err) {
  gpuiso_opts o = *opt;
  o.engine = GPUISO_HULL;
  return gpuiso_calibrate(n, score, label, w, g, ngroups, &o, blocks, first, err);
}
gpuiso_status gpuiso_cuda_fit_xy(int64_t n, const double *x, const double *y, const double *w,
                                 const gpuiso_opts *opt, double *fit, gpuiso_knots *kn, int64_t *order,
                                 uint8_t *start, gpuiso_error *err) {
  (void)order, (void)start;
  gpuiso_opts o = *opt;
  o.engine = GPUISO_HULL;
  gpuiso_sorted *sorted;
  int64_t nk = 0;
  gpuiso_status s = gpuiso_sort_xy(n, x, y, w, &o, &sorted, &nk, err);
  if (s != GPUISO_OK) return s;
  double *block = malloc((3 * nk + 1) * sizeof(double) + nk + 1);
  gpuiso_knots k = {nk, block, block + nk, block + 2 * nk, (uint8_t *)(block + 3 * nk), 0};
  s = gpuiso_fit_sorted(sorted, &o, fit, &k, err);
  gpuiso_sorted_free(sorted);
  *kn = k;
  return s;
}
gpuiso_status gpuiso_cuda_vjp(int64_t nrows, const int64_t *off, gpuiso_precision type, const void *y,
                              const void *w, const void *fit, const uint8_t *start, const void *g,
                              const gpuiso_opts *opt, void *dy, void *dw, gpuiso_error *err) {
  if (type != GPUISO_DOUBLE) return GPUISO_E_INTERNAL;
  return gpuiso_vjp(nrows, off, y, w, fit, start, g, opt, dy, dw, err);
}
gpuiso_status gpuiso_cuda_soft(gpuiso_soft_kind kind, int64_t nrow, int64_t ncol, const double *x,
                               const double *g, double epsilon, int decreasing, const gpuiso_opts *opt,
                               double *out, gpuiso_error *err) {
  gpuiso_opts o = *opt;
  o.engine = GPUISO_HULL;
  return gpuiso_soft(kind, nrow, ncol, x, g, epsilon, decreasing, &o, out, err);
}
gpuiso_status gpuiso_cuda_predict(const gpuiso_curves *cv, int64_t ncurves, int64_t n, const double *v,
                                  const int *curve, int linear, int outside_missing, double missing,
                                  const gpuiso_opts *opt, double *out, int64_t *beyond, gpuiso_error *err) {
  (void)cv, (void)ncurves, (void)n, (void)v, (void)curve, (void)linear, (void)outside_missing;
  (void)missing, (void)opt, (void)out, (void)beyond, (void)err;
  return GPUISO_E_INTERNAL;
}

/* gpuiso: the CPU-only twin of src/cuda/probe.cu, solver.cu, idr.cu, calibrate.cu, predict.cu
 * and grad.cu, compiled only when the package is built without CUDA (configure leaves it out of
 * the object list otherwise). */
#include <string.h>

#include "gpuiso.h"

int gpuiso_cuda_built(void)
{
  return 0;
}

gpuiso_status gpuiso_cuda_probe(gpuiso_device_info *info, int max, int *count, gpuiso_error *err)
{
  (void)info;
  (void)max;
  if (count != NULL) *count = 0;
  if (err != NULL) {
    static const char msg[] = "gpuiso was built without CUDA";
    err->status = GPUISO_E_NO_CUDA;
    err->index = -1;
    err->row = -1;
    memcpy(err->message, msg, sizeof msg);
  }
  return GPUISO_E_NO_CUDA;
}

void gpuiso_cuda_release(void) {}

static gpuiso_status no_cuda(gpuiso_error *err)
{
  int count;
  return gpuiso_cuda_probe(NULL, 0, &count, err);
}

gpuiso_status gpuiso_cuda_fit_rows(int64_t nrows, const int64_t *offsets, gpuiso_precision type,
                                   const void *y, const void *w, const gpuiso_opts *opt,
                                   void *fit, uint8_t *start, gpuiso_error *err)
{
  (void)nrows, (void)offsets, (void)type, (void)y, (void)w, (void)opt, (void)fit, (void)start;
  return no_cuda(err);
}

gpuiso_status gpuiso_cuda_fit_xy(int64_t n, const double *x, const double *y, const double *w,
                                 const gpuiso_opts *opt, double *fit, gpuiso_knots *kn,
                                 int64_t *order, uint8_t *start, gpuiso_error *err)
{
  (void)n, (void)x, (void)y, (void)w, (void)opt, (void)fit, (void)order, (void)start;
  memset(kn, 0, sizeof *kn);
  return no_cuda(err);
}

gpuiso_status gpuiso_cuda_plan_create(int64_t nrows, const int64_t *offsets,
                                      gpuiso_precision type, int weighted, const gpuiso_opts *opt,
                                      gpuiso_cuda_plan **plan, gpuiso_error *err)
{
  (void)nrows, (void)offsets, (void)type, (void)weighted, (void)opt;
  *plan = NULL;
  return no_cuda(err);
}

gpuiso_status gpuiso_cuda_plan_run(gpuiso_cuda_plan *plan, const void *y, const void *w,
                                   void *fit, uint8_t *start, gpuiso_error *err)
{
  (void)plan, (void)y, (void)w, (void)fit, (void)start;
  return no_cuda(err);
}

void gpuiso_cuda_plan_free(gpuiso_cuda_plan *plan)
{
  (void)plan;
}

gpuiso_status gpuiso_cuda_plan_stages(gpuiso_cuda_plan *plan, const void *y, const void *w,
                                      void *fit, uint8_t *start, gpuiso_stage_times *times,
                                      gpuiso_error *err)
{
  (void)plan, (void)y, (void)w, (void)fit, (void)start;
  times->count = times->steps = 0;
  return no_cuda(err);
}

gpuiso_status gpuiso_cuda_idr_fit(int64_t n, const int32_t *pos, const int32_t *thr,
                                  const double *w, int64_t npos, int64_t nthr,
                                  const gpuiso_opts *opt, gpuiso_cdf_runs *out,
                                  gpuiso_error *err)
{
  (void)n, (void)pos, (void)thr, (void)w, (void)opt;
  memset(out, 0, sizeof *out);
  out->npos = npos;
  out->nthr = nthr;
  return no_cuda(err);
}

gpuiso_status gpuiso_cuda_calibrate(int64_t n, const double *score, const double *label,
                                    const double *w, const int *g, int64_t ngroups,
                                    const gpuiso_opts *opt, gpuiso_block **blocks,
                                    int64_t *first, gpuiso_error *err)
{
  (void)n, (void)score, (void)label, (void)w, (void)g, (void)ngroups, (void)opt, (void)first;
  *blocks = NULL;
  return no_cuda(err);
}

gpuiso_status gpuiso_cuda_predict(const gpuiso_curves *cv, int64_t ncurves, int64_t n,
                                  const double *v, const int *curve, int linear,
                                  int outside_missing, double missing, const gpuiso_opts *opt,
                                  double *out, int64_t *beyond, gpuiso_error *err)
{
  (void)cv, (void)ncurves, (void)n, (void)v, (void)curve, (void)linear, (void)outside_missing;
  (void)missing, (void)opt, (void)out, (void)beyond;
  return no_cuda(err);
}

gpuiso_status gpuiso_cuda_vjp(int64_t nrows, const int64_t *offsets, gpuiso_precision type,
                              const void *y, const void *w, const void *fit,
                              const uint8_t *start, const void *g, const gpuiso_opts *opt,
                              void *dy, void *dw, gpuiso_error *err)
{
  (void)nrows, (void)offsets, (void)type, (void)y, (void)w, (void)fit, (void)start, (void)g;
  (void)opt, (void)dy, (void)dw;
  return no_cuda(err);
}

gpuiso_status gpuiso_cuda_soft(gpuiso_soft_kind kind, int64_t nrow, int64_t ncol, const double *x,
                               const double *g, double epsilon, int decreasing,
                               const gpuiso_opts *opt, double *out, gpuiso_error *err)
{
  (void)kind, (void)nrow, (void)ncol, (void)x, (void)g, (void)epsilon, (void)decreasing;
  (void)opt, (void)out;
  return no_cuda(err);
}

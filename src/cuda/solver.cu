/* The CUDA solver's entry points (declared in gpuiso.h): the pipeline of pipeline.cuh run by the
 * executor of exec.cuh. CPU-only twin: src/core/cuda_none.c.
 */
#include "exec.cuh"
#include "pipeline.cuh"

extern "C" gpuiso_status gpuiso_cuda_fit_rows(int64_t nrows, const int64_t *offsets,
                                              gpuiso_precision type, const void *y,
                                              const void *w, const gpuiso_opts *opt, void *fit,
                                              uint8_t *start, gpuiso_error *err) {
  cuda_exec ex = {err};
  return fit_rows_host(ex, nrows, offsets, type, y, w, opt, fit, start, err);
}

extern "C" gpuiso_status gpuiso_cuda_plan_create(int64_t nrows, const int64_t *offsets,
                                                 gpuiso_precision type, const gpuiso_opts *opt,
                                                 gpuiso_cuda_plan **plan, gpuiso_error *err) {
  *plan = NULL;
  gpuiso_cuda_plan *p = (gpuiso_cuda_plan *)malloc(sizeof *p);
  if (!p) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  cuda_exec ex = {err};
  gpuiso_status s = plan_init(ex, p, nrows, offsets, type, opt, err);
  if (s != GPUISO_OK) {
    free(p);
    return s;
  }
  *plan = p;
  return GPUISO_OK;
}

extern "C" gpuiso_status gpuiso_cuda_plan_run(gpuiso_cuda_plan *plan, const void *y,
                                              const void *w, void *fit, uint8_t *start,
                                              gpuiso_error *err) {
  cuda_exec ex = {err};
  return plan_fit_any(ex, plan, y, w, fit, start, err);
}

extern "C" void gpuiso_cuda_plan_free(gpuiso_cuda_plan *plan) {
  if (!plan) return;
  cuda_exec ex = {NULL};
  plan_release(ex, plan);
  free(plan);
}

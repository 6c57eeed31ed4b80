/* The plans that gpuiso_cuda_plan_create hands out (gpuiso.h), written over an executor as
 * pipeline.cuh is: solver.cu runs them on the CUDA executor, tools/ctest on the SIMT one. A
 * handle is the solver's plan and whether its slots have room for weights, which the solver's
 * plan does not record: a run with w on a plan made unweighted would write past its slots.
 */
#ifndef GPUISO_CUDA_PLAN_HANDLE_CUH
#define GPUISO_CUDA_PLAN_HANDLE_CUH

#include "pipeline.cuh"

struct plan_handle {
  gpuiso_cuda_plan plan; /* first: a handle's address is its plan's */
  int weighted;
};

static inline plan_handle *handle_of(gpuiso_cuda_plan *plan) {
  return reinterpret_cast<plan_handle *>(plan);
}

/* A run of the plan with w: refused, before anything is launched, when the plan has no room for
 * weights. */
static inline gpuiso_status handle_check(gpuiso_cuda_plan *plan, const void *w, gpuiso_error *err) {
  if (w == NULL || handle_of(plan)->weighted) return GPUISO_OK;
  set_error(err, GPUISO_E_W_UNPLANNED, -1, -1);
  return GPUISO_E_W_UNPLANNED;
}

template <class Exec>
static gpuiso_status handle_create(Exec &ex, int64_t nrows, const int64_t *offsets, gpuiso_precision type,
                                   int weighted, const gpuiso_opts *opt, gpuiso_cuda_plan **plan,
                                   gpuiso_error *err) {
  *plan = NULL;
  plan_handle *h = (plan_handle *)malloc(sizeof *h);
  if (!h) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  h->weighted = weighted != 0;
  gpuiso_status s = plan_init(ex, &h->plan, nrows, offsets, type, h->weighted, opt, err);
  if (s != GPUISO_OK) {
    free(h);
    return s;
  }
  *plan = &h->plan;
  return GPUISO_OK;
}

template <class Exec>
static gpuiso_status handle_run(Exec &ex, gpuiso_cuda_plan *plan, const void *y, const void *w, void *fit,
                                uint8_t *start, gpuiso_error *err) {
  gpuiso_status s = handle_check(plan, w, err);
  return s == GPUISO_OK ? plan_fit_any(ex, plan, y, w, fit, start, err) : s;
}

template <class Exec>
static void handle_free(Exec &ex, gpuiso_cuda_plan *plan) {
  if (!plan) return;
  plan_release(ex, plan);
  free(handle_of(plan));
}

#endif

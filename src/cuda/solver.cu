/* The CUDA solver's entry points (declared in gpuiso.h): the pipeline of pipeline.cuh run by the
 * executor of exec.cuh, or by that of sort_exec.cuh (with CUB's sort and scan, and the lanes of
 * pinned staging) where host data go through the device: host batches (host_fit.cuh) and the fit
 * on unsorted x (fit_xy.cuh); the plans of data on the device by plan_handle.cuh. CPU-only twin:
 * src/core/cuda_none.c.
 */
#include "exec.cuh"
#include "fit_xy.cuh"
#include "host_fit.cuh"
#include "plan_handle.cuh"
#include "sort_exec.cuh"

/* The solver's plan on the CUDA executor, for every entry point (see exec.cuh). */
gpuiso_status plan_init(cuda_exec &ex, gpuiso_cuda_plan *p, int64_t nrows, const int64_t *offsets,
                        gpuiso_precision type, int weighted, const gpuiso_opts *opt, gpuiso_error *err) {
  return plan_init<cuda_exec>(ex, p, nrows, offsets, type, weighted, opt, err);
}

gpuiso_status plan_fit(cuda_exec &ex, const gpuiso_cuda_plan *p, const double *y, const double *w,
                       double *fit, uint8_t *start, gpuiso_error *err) {
  return plan_fit<cuda_exec, double>(ex, p, y, w, fit, start, err);
}

void plan_release(cuda_exec &ex, gpuiso_cuda_plan *p) { plan_release<cuda_exec>(ex, p); }

extern "C" gpuiso_status gpuiso_cuda_fit_rows(int64_t nrows, const int64_t *offsets,
                                              gpuiso_precision type, const void *y,
                                              const void *w, const gpuiso_opts *opt, void *fit,
                                              uint8_t *start, gpuiso_error *err) {
  cuda_sort_exec ex = {{err, NULL}};
  return fit_rows_host(ex, nrows, offsets, type, y, w, opt, fit, start, err);
}

extern "C" gpuiso_status gpuiso_cuda_fit_xy(int64_t n, const double *x, const double *y,
                                            const double *w, const gpuiso_opts *opt, double *fit,
                                            gpuiso_knots *kn, int64_t *order, uint8_t *start,
                                            gpuiso_error *err) {
  cuda_sort_exec ex = {{err, NULL}};
  return fit_xy_device(ex, n, x, y, w, opt, fit, kn, order, start, err);
}

extern "C" gpuiso_status gpuiso_cuda_plan_create(int64_t nrows, const int64_t *offsets,
                                                 gpuiso_precision type, int weighted,
                                                 const gpuiso_opts *opt, gpuiso_cuda_plan **plan,
                                                 gpuiso_error *err) {
  cuda_exec ex = {err, NULL};
  return handle_create(ex, nrows, offsets, type, weighted, opt, plan, err);
}

extern "C" gpuiso_status gpuiso_cuda_plan_run(gpuiso_cuda_plan *plan, const void *y,
                                              const void *w, void *fit, uint8_t *start,
                                              gpuiso_error *err) {
  cuda_exec ex = {err, NULL};
  return handle_run(ex, plan, y, w, fit, start, err);
}

extern "C" void gpuiso_cuda_plan_free(gpuiso_cuda_plan *plan) {
  cuda_exec ex = {NULL, NULL};
  handle_free(ex, plan);
}

extern "C" gpuiso_status gpuiso_cuda_plan_stages(gpuiso_cuda_plan *plan, const void *y, const void *w,
                                                 void *fit, uint8_t *start, gpuiso_stage_times *times,
                                                 gpuiso_error *err) {
  memset(times, 0, sizeof *times);
  gpuiso_status s = handle_check(plan, w, err);
  if (s != GPUISO_OK) return s;
  stage_clock clock;
  clock.count = clock.made = 0;
  cuda_exec ex = {err, &clock};
  s = ex.mark(NULL);
  if (s == GPUISO_OK) s = plan_fit_any(ex, plan, y, w, fit, start, err);
  if (s == GPUISO_OK) s = ex.sync();
  /* the sync's own event, recorded after it, done before the times are read (else "not ready") */
  if (s == GPUISO_OK && clock.count > 0)
    s = ex.check(cudaEventSynchronize(clock.event[clock.count - 1]), "cudaEventSynchronize");
  for (int k = 1; s == GPUISO_OK && k < clock.count; k++) {
    float ms = 0;
    s = ex.check(cudaEventElapsedTime(&ms, clock.event[k - 1], clock.event[k]), "cudaEventElapsedTime");
    if (s != GPUISO_OK) break;
    int i = 0;
    while (i < times->count && strcmp(times->name[i], clock.name[k]) != 0) i++;
    if (i == times->count && i < GPUISO_MAX_STAGES) {
      snprintf(times->name[i], sizeof times->name[i], "%s", clock.name[k]);
      times->count++;
    }
    if (i < times->count) times->ms[i] += ms;
    if (times->steps < GPUISO_MAX_STEPS) {
      times->step_stage[times->steps] = i < times->count ? i : -1;
      times->step_ms[times->steps++] = ms;
    }
  }
  for (int k = 0; k < clock.made; k++) (void)cudaEventDestroy(clock.event[k]);
  return s;
}

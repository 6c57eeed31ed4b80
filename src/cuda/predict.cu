/* The predictions' entry point on the device (declared in gpuiso.h): predict.cuh run by the
 * executor of sort_exec.cuh, for the lanes of its staged transfers. CPU-only twin:
 * src/core/cuda_none.c.
 */
#include "sort_exec.cuh"
#include "predict.cuh"

extern "C" gpuiso_status gpuiso_cuda_predict(const gpuiso_curves *cv, int64_t ncurves, int64_t n,
                                             const double *v, const int *curve, int linear,
                                             int outside_missing, double missing,
                                             const gpuiso_opts *opt, double *out, int64_t *beyond,
                                             gpuiso_error *err) {
  cuda_sort_exec ex = {{err, NULL}};
  return predict_device(ex, cv, ncurves, n, v, curve, linear, outside_missing, missing, opt, out,
                        beyond, err, GPUISO_POLL_EVERY);
}

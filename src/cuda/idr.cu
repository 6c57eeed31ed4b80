/* IDR's entry point on the device (declared in gpuiso.h): the steps of idr.cuh run by the executor
 * of sort_exec.cuh, for the lanes of its staged transfers. CPU-only twin: src/core/cuda_none.c.
 */
#include "sort_exec.cuh"
#include "idr.cuh"

extern "C" gpuiso_status gpuiso_cuda_idr_fit(int64_t n, const int32_t *pos, const int32_t *thr,
                                             const double *w, int64_t npos, int64_t nthr,
                                             const gpuiso_opts *opt, gpuiso_cdf_runs *out,
                                             gpuiso_error *err) {
  cuda_sort_exec ex = {{err, NULL}};
  return idr_fit_device(ex, n, pos, thr, w, npos, nthr, opt, out, err);
}

/* The calibration's entry point on the device (declared in gpuiso.h): the steps of calibrate.cuh
 * run by the executor of sort_exec.cuh, with CUB's radix sort and scan. CPU-only twin:
 * src/core/cuda_none.c.
 */
#include "sort_exec.cuh"
#include "calibrate.cuh"

extern "C" gpuiso_status gpuiso_cuda_calibrate(int64_t n, const double *score, const double *label,
                                               const double *w, const int *g, int64_t ngroups,
                                               const gpuiso_opts *opt, gpuiso_block **blocks,
                                               int64_t *first, gpuiso_error *err) {
  cuda_sort_exec ex = {{err, NULL}};
  return calibrate_device(ex, n, score, label, w, g, ngroups, opt, blocks, first, err);
}

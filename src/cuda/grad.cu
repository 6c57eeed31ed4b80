/* The gradients' entry points on the device (declared in gpuiso.h): the backward pass of vjp.cuh
 * and the soft ranks and sorts of soft.cuh, run by the executor of sort_exec.cuh (its lanes for
 * the staged transfers of both, its sort for soft.cuh). CPU-only twin: src/core/cuda_none.c.
 */
#include "sort_exec.cuh"
#include "soft.cuh"

extern "C" gpuiso_status gpuiso_cuda_vjp(int64_t nrows, const int64_t *offsets,
                                         gpuiso_precision type, const void *y, const void *w,
                                         const void *fit, const uint8_t *start, const void *g,
                                         const gpuiso_opts *opt, void *dy, void *dw,
                                         gpuiso_error *err) {
  cuda_sort_exec ex = {{err}};
  if (type == GPUISO_SINGLE)
    return vjp_host(ex, nrows, offsets, (const float *)y, (const float *)w, (const float *)fit,
                    start, (const float *)g, opt, (float *)dy, (float *)dw, err);
  return vjp_host(ex, nrows, offsets, (const double *)y, (const double *)w, (const double *)fit,
                  start, (const double *)g, opt, (double *)dy, (double *)dw, err);
}

extern "C" gpuiso_status gpuiso_cuda_soft(gpuiso_soft_kind kind, int64_t nrow, int64_t ncol,
                                          const double *x, const double *g, double epsilon,
                                          int decreasing, const gpuiso_opts *opt, double *out,
                                          gpuiso_error *err) {
  cuda_sort_exec ex = {{err}};
  return soft_device(ex, kind, nrow, ncol, x, g, epsilon, decreasing, opt, out, err);
}

/* The CUDA engine's entry points (declared in gpuiso.h): the pipeline of pipeline.cuh run by an
 * executor that allocates device memory, copies and launches, checking every CUDA call and every
 * launch. Nothing here prints or exits. CPU-only twin: src/core/cuda_none.c.
 */
#include "check.cuh"
#include "pipeline.cuh"

#define THREADS_PER_BLOCK 256
#define MAX_BLOCKS ((int64_t)1 << 30)

/* A thread per index (a grid-stride loop past MAX_BLOCKS blocks). */
template <class Step>
__global__ void each_kernel(Step step, int64_t count) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * blockDim.x)
    step(i);
}

/* The executor of pipeline.cuh on the current device and its default stream. */
struct cuda_exec {
  gpuiso_error *err;

  gpuiso_status check(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return GPUISO_OK;
    (void)cudaGetLastError(); /* clears the error unless it is sticky */
    return cuda_error(err, e, what);
  }
  gpuiso_status alloc(void **p, size_t bytes) {
    *p = NULL;
    if (bytes == 0) return GPUISO_OK;
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaSuccess) return GPUISO_OK;
    *p = NULL;
    char what[64];
    snprintf(what, sizeof what, "cudaMalloc of %zu bytes", bytes);
    return check(e, what);
  }
  void release(void *p) {
    if (p) (void)cudaFree(p); /* a failure here leaves nothing to undo */
  }
  gpuiso_status put(void *dev, const void *host, size_t bytes) {
    if (bytes == 0) return GPUISO_OK;
    return check(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  }
  gpuiso_status get(void *host, const void *dev, size_t bytes) {
    if (bytes == 0) return GPUISO_OK;
    return check(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy from the device");
  }
  template <class Step>
  gpuiso_status each(const Step &step, int64_t count) {
    if (count <= 0) return GPUISO_OK;
    int64_t blocks = (count + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;
    each_kernel<<<(unsigned)(blocks < MAX_BLOCKS ? blocks : MAX_BLOCKS), THREADS_PER_BLOCK>>>(step, count);
    return check(cudaGetLastError(), "a kernel launch");
  }
  gpuiso_status sync() {
    return check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the kernels");
  }
};

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

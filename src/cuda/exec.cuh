/* The executor of the CUDA engine's host sides (pipeline.cuh, idr.cuh) on the current device and
 * its default stream: device memory, checked copies, and a thread per index for each step. Every
 * CUDA call and launch is checked; nothing here prints or exits.
 */
#ifndef GPUISO_CUDA_EXEC_CUH
#define GPUISO_CUDA_EXEC_CUH

#include "check.cuh"

#define THREADS_PER_BLOCK 256
#define MAX_BLOCKS ((int64_t)1 << 30)

/* A thread per index (a grid-stride loop past MAX_BLOCKS blocks). */
template <class Step>
__global__ void each_kernel(Step step, int64_t count) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * blockDim.x)
    step(i);
}

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
  gpuiso_status available(size_t *bytes) {
    size_t total;
    *bytes = 0;
    return check(cudaMemGetInfo(bytes, &total), "cudaMemGetInfo");
  }
  gpuiso_status put(void *dev, const void *host, size_t bytes) {
    if (bytes == 0) return GPUISO_OK;
    return check(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  }
  gpuiso_status get(void *host, const void *dev, size_t bytes) {
    if (bytes == 0) return GPUISO_OK;
    return check(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy from the device");
  }
  gpuiso_status fill(void *dev, int byte, size_t bytes) {
    if (bytes == 0) return GPUISO_OK;
    return check(cudaMemset(dev, byte, bytes), "cudaMemset");
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

#endif

/* gpuiso: CUDA device probe (compiled only when the package is built with CUDA).
 *
 * The runtime is linked statically (libcudart_static), so this file loads on machines without a
 * driver; cudaGetDeviceCount then reports the error (e.g. cudaErrorInsufficientDriver, 35, or
 * cudaErrorNoDevice, 100) and the package falls back to the CPU. Nothing here prints or exits.
 * CPU-only twin: src/core/cuda_none.c.
 */
#include <stdio.h>
#include <string.h>

#include "check.cuh"

extern "C" int gpuiso_cuda_built(void)
{
  return 1;
}

extern "C" gpuiso_status gpuiso_cuda_probe(gpuiso_device_info *info, int max, int *count,
                                           gpuiso_error *err)
{
  if (err != NULL) {
    err->status = GPUISO_OK;
    err->index = -1;
    err->row = -1;
    err->message[0] = '\0';
  }
  if (count != NULL) *count = 0;
  if (gpuiso_cuda_forked()) {
    /* no runtime call at all: each would fail, or with some drivers never return */
    if (err != NULL) {
      err->status = GPUISO_E_CUDA;
      snprintf(err->message, sizeof err->message, "%s",
               "CUDA was started in the process this one was forked from (parallel::mclapply's "
               "workers, say), and CUDA cannot be used across fork(); use the CPU here, or "
               "workers started afresh (parallel::makeCluster)");
    }
    return GPUISO_E_CUDA;
  }

  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    /* Clear the (non-sticky) error so later runtime calls start clean. */
    (void)cudaGetLastError();
    return cuda_error(err, e, "cudaGetDeviceCount");
  }
  gpuiso_cuda_started();
  if (n < 0) n = 0;

  int nfill = (info == NULL || max <= 0) ? 0 : (n < max ? n : max);
  for (int i = 0; i < nfill; i++) {
    cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    e = cudaGetDeviceProperties(&prop, i);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return cuda_error(err, e, "cudaGetDeviceProperties");
    }
    memset(&info[i], 0, sizeof info[i]);
    strncpy(info[i].name, prop.name, sizeof info[i].name - 1);
    info[i].name[sizeof info[i].name - 1] = '\0';
    info[i].major = prop.major;
    info[i].minor = prop.minor;
    info[i].memory_bytes = (double)prop.totalGlobalMem;
  }
  if (count != NULL) *count = n;
  return GPUISO_OK;
}

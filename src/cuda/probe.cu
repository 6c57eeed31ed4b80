/* gpuiso: CUDA device probe (compiled only when the package is built with CUDA).
 *
 * The runtime is linked statically (libcudart_static), so this file loads on machines without a
 * driver; cudaGetDeviceCount then reports the error (e.g. cudaErrorInsufficientDriver, 35, or
 * cudaErrorNoDevice, 100) and the package falls back to the CPU. Nothing here prints or exits.
 * CPU-only twin: src/core/cuda_none.c.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "gpuiso.h"

static void probe_set_error(gpuiso_error *err, gpuiso_status st, const char *what, cudaError_t e)
{
  if (err == NULL) return;
  err->status = st;
  err->index = -1;
  err->row = -1;
  const char *name = cudaGetErrorName(e);
  const char *text = cudaGetErrorString(e);
  if (name == NULL) name = "cudaError";
  if (text == NULL) text = "unknown CUDA error";
  /* "<text> (<name> = <code>, in <call>)"; snprintf truncates safely. */
  snprintf(err->message, sizeof err->message, "%s (%s = %d, in %s)", text, name, (int)e, what);
}

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

  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    /* Clear the (non-sticky) error so later runtime calls start clean. */
    (void)cudaGetLastError();
    probe_set_error(err, GPUISO_E_CUDA, "cudaGetDeviceCount", e);
    return GPUISO_E_CUDA;
  }
  if (n < 0) n = 0;

  int nfill = (info == NULL || max <= 0) ? 0 : (n < max ? n : max);
  for (int i = 0; i < nfill; i++) {
    cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    e = cudaGetDeviceProperties(&prop, i);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      probe_set_error(err, GPUISO_E_CUDA, "cudaGetDeviceProperties", e);
      return GPUISO_E_CUDA;
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

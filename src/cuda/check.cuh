/* CUDA runtime errors as the core's error report: "<text> (<name> = <code>, in <call>)". */
#ifndef GPUISO_CUDA_CHECK_CUH
#define GPUISO_CUDA_CHECK_CUH

#include <cuda_runtime.h>
#include <stdio.h>

#include "gpuiso.h"

static inline gpuiso_status cuda_error(gpuiso_error *err, cudaError_t e, const char *what) {
  if (err != NULL) {
    const char *name = cudaGetErrorName(e), *text = cudaGetErrorString(e);
    err->status = GPUISO_E_CUDA;
    err->index = -1;
    err->row = -1;
    snprintf(err->message, sizeof err->message, "%s (%s = %d, in %s)",
             text ? text : "unknown CUDA error", name ? name : "cudaError", (int)e, what);
  }
  return GPUISO_E_CUDA;
}

#endif

/* CUDA runtime errors as the core's error report: "<text> (<name> = <code>, in <call>)", with
 * the status of gpuiso_cuda_failure (a sticky error marks the device lost). */
#ifndef GPUISO_CUDA_CHECK_CUH
#define GPUISO_CUDA_CHECK_CUH

#include <cuda_runtime.h>
#include <stdio.h>

#include "gpuiso.h"

/* The core lists the sticky errors by number; the names of CUDA 13 (older toolkits lack some)
 * must have those numbers. */
#if CUDART_VERSION >= 13000
#define GPUISO_STICKY_NUMBER(number, name) \
  static_assert((int)name == number, #name " is not the number gpuiso.h gives it");
GPUISO_CUDA_STICKY_ERRORS(GPUISO_STICKY_NUMBER)
#undef GPUISO_STICKY_NUMBER
#endif

static inline gpuiso_status cuda_error(gpuiso_error *err, cudaError_t e, const char *what) {
  const char *name = cudaGetErrorName(e), *text = cudaGetErrorString(e);
  char message[sizeof err->message];
  snprintf(message, sizeof message, "%s (%s = %d, in %s)", text ? text : "unknown CUDA error",
           name ? name : "cudaError", (int)e, what);
  return gpuiso_cuda_failure((int)e, message, err);
}

#endif

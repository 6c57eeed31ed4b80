/* The process-wide record of a lost CUDA device (see gpuiso.h, "A lost device"), compiled with
 * and without CUDA so that the R side reads it the same way in both builds.
 *
 * The sticky codes (GPUISO_CUDA_STICKY_ERRORS) are those that the CUDA 13 runtime documents
 * (driver_types.h) as leaving "the process in an inconsistent state": "any further CUDA work will
 * return the same error", "the process must be terminated and relaunched" (cudaErrorAssert: "the
 * device cannot be used again"). Added to them: cudaErrorECCUncorrectable, documented without
 * that sentence, because device memory cannot be trusted after it and NVIDIA's notes on memory
 * errors have the application that met one stopped; a device taken for lost by mistake only costs
 * the CPU fallback. Left out: cudaErrorUnknown, not documented as sticky and returned for
 * unrelated failures (cudaGetDeviceCount with the driver's modules not loaded); were it sticky in
 * fact, each later call would fail with it again and device = "auto" would still fall back to the
 * CPU. Out of memory and launch configuration errors stay ordinary errors.
 */
#include <stdio.h>
#ifndef _WIN32
#include <unistd.h>
#endif

#include "gpuiso.h"

static int lost;
static char lost_message[sizeof ((gpuiso_error *)0)->message];

static int sticky(int code) {
#define GPUISO_STICKY_CASE(number, name) case number:
  switch (code) {
    GPUISO_CUDA_STICKY_ERRORS(GPUISO_STICKY_CASE)
    return 1;
  default:
    return 0;
  }
#undef GPUISO_STICKY_CASE
}

gpuiso_status gpuiso_cuda_failure(int code, const char *message, gpuiso_error *err) {
  gpuiso_status s = sticky(code) ? GPUISO_E_CUDA_LOST : GPUISO_E_CUDA;
  if (s == GPUISO_E_CUDA_LOST && !lost) {
    snprintf(lost_message, sizeof lost_message, "%s", message);
    lost = 1;
  }
  if (err != NULL) {
    err->status = s;
    err->index = -1;
    err->row = -1;
    snprintf(err->message, sizeof err->message, "%s", message);
  }
  return s;
}

const char *gpuiso_cuda_lost(void) {
  return lost ? lost_message : NULL;
}

void gpuiso_cuda_lost_reset(void) {
  lost = 0;
  lost_message[0] = '\0';
}

#ifdef _WIN32
void gpuiso_cuda_started(void) {}
int gpuiso_cuda_forked(void) { return 0; } /* no fork() */
#else
static pid_t started_in; /* 0 until this process or its parent started CUDA */

void gpuiso_cuda_started(void) {
  if (started_in == 0) started_in = getpid();
}

int gpuiso_cuda_forked(void) {
  return started_in != 0 && getpid() != started_in;
}
#endif

/* gpuiso: the CPU-only twin of src/cuda/probe.cu, compiled only when the package is built
 * without CUDA (configure leaves it out of the object list otherwise). */
#include <string.h>

#include "gpuiso.h"

int gpuiso_cuda_built(void)
{
  return 0;
}

gpuiso_status gpuiso_cuda_probe(gpuiso_device_info *info, int max, int *count, gpuiso_error *err)
{
  (void)info;
  (void)max;
  if (count != NULL) *count = 0;
  if (err != NULL) {
    static const char msg[] = "gpuiso was built without CUDA";
    err->status = GPUISO_E_NO_CUDA;
    err->index = -1;
    err->row = -1;
    memcpy(err->message, msg, sizeof msg);
  }
  return GPUISO_E_NO_CUDA;
}

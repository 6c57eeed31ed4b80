/* A thread per index: the kernel behind the steps of the simple path, IDR and calibration (a
 * functor called once per index), launched through an executor (exec.cuh on the GPU, the SIMT
 * executor of tools/simt in the C tests). */
#ifndef GPUISO_CUDA_LAUNCH_CUH
#define GPUISO_CUDA_LAUNCH_CUH

#include <string.h>

#include "gpuiso.h"
#include "simt.cuh"

#define THREADS_PER_BLOCK 256
#define MAX_BLOCKS ((int64_t)1 << 30)

/* A grid of `blocks` blocks in x: a count over CUDA's limit (2^31 - 1) becomes 2^31, which the
 * launch refuses as a configuration error, rather than its low bits, a smaller grid that would
 * leave work undone. */
static inline dim3 grid_of(int64_t blocks) {
  return dim3(blocks < ((int64_t)1 << 31) ? (unsigned)blocks : 1u << 31);
}

/* A grid-stride loop: a grid of MAX_BLOCKS blocks at most covers any count. */
template <class Step>
SIMT_KERNEL void each_kernel(Step step, int64_t count) {
  int64_t stride = (int64_t)simt::grid_dim().x * simt::block_dim().x;
  for (int64_t i = simt::global_x(); i < count; i += stride) step(i);
}

/* The name of a step's type, for the launch's error reports: "Step = X" of the signature. */
template <class Step>
static const char *step_name() {
  static char name[96];
  if (!name[0]) {
    const char *sig = __PRETTY_FUNCTION__, *at = strstr(sig, "Step = ");
    at = at ? at + 7 : sig;
    size_t n = strcspn(at, "];");
    if (n >= sizeof name) n = sizeof name - 1;
    memcpy(name, at, n);
    name[n] = 0;
  }
  return name;
}

/* Device buffers for the host sides: *p released and cleared; count elements allocated (an
 * upload of host elements: stage_upload, staging.cuh). */
template <class Exec, typename T>
static void drop(Exec &ex, T **p) {
  ex.release((void *)*p);
  *p = NULL;
}

template <class Exec, typename T>
static gpuiso_status make(Exec &ex, T **dev, int64_t count) {
  return ex.alloc((void **)dev, (size_t)count * sizeof(T));
}

/* step(i) for every i < count, in blocks of `threads`. */
template <class Exec, class Step>
static gpuiso_status each(Exec &ex, const Step &step, int64_t count, int threads = THREADS_PER_BLOCK) {
  if (count <= 0) return GPUISO_OK;
  int64_t blocks = (count + threads - 1) / threads;
  return ex.launch(step_name<Step>(), each_kernel<Step>, grid_of(blocks < MAX_BLOCKS ? blocks : MAX_BLOCKS),
                   dim3((unsigned)threads), 0, step, count);
}

#endif

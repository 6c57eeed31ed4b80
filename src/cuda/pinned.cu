/* Pinned host memory kept from one fit to the next (the staging buffers of sort_exec.cuh):
 * cudaHostAlloc locks the pages one by one, which costs more than the transfers it speeds up in
 * a fit of a few megabytes, and a staged fit asks for two buffers of up to STAGE_SLICE bytes. Up
 * to PINNED_KEPT buffers are kept after use; gpuiso_cuda_release (at unload) frees them.
 * CPU-only twin of gpuiso_cuda_release: src/core/cuda_none.c.
 */
#include <pthread.h>

#include <cuda_runtime.h>

#include "gpuiso.h"
#include "pinned.cuh"

#define PINNED_KEPT 2

struct pinned_buffer {
  void *p;
  size_t bytes;
  int in_use;
};

static pinned_buffer kept[PINNED_KEPT];
/* The R package fits from one thread, but the C entry points may be called from several: each
 * fit then takes buffers of its own. A POSIX lock, which throws nothing through the C callers. */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

struct kept_hold {
  kept_hold() { (void)pthread_mutex_lock(&kept_lock); }
  ~kept_hold() { (void)pthread_mutex_unlock(&kept_lock); }
};

/* A buffer kept is given out only while the CUDA context that pinned it lives: one reset by
 * anything in the process (cudaDeviceReset) leaves its pages unmapped. */
void *pinned_take(size_t bytes) {
  kept_hold hold;
  for (int k = 0; k < PINNED_KEPT; k++) {
    unsigned int flags;
    if (!kept[k].p || kept[k].in_use || kept[k].bytes < bytes) continue;
    if (cudaHostGetFlags(&flags, kept[k].p) != cudaSuccess) {
      (void)cudaGetLastError(); /* not sticky: the buffer is only forgotten */
      kept[k].p = NULL, kept[k].bytes = 0;
      continue;
    }
    kept[k].in_use = 1;
    return kept[k].p;
  }
  return NULL;
}

void pinned_made(void *p, size_t bytes) {
  kept_hold hold;
  int at = -1; /* an empty place, else a smaller buffer not in use, which this one replaces */
  for (int k = 0; k < PINNED_KEPT && at < 0; k++)
    if (!kept[k].p) at = k;
  for (int k = 0; k < PINNED_KEPT && at < 0; k++)
    if (!kept[k].in_use && kept[k].bytes < bytes) at = k;
  if (at < 0) return; /* not kept: unpin frees it */
  if (kept[at].p) (void)cudaFreeHost(kept[at].p); /* a failure leaves nothing to undo */
  kept[at].p = p, kept[at].bytes = bytes, kept[at].in_use = 1;
}

int pinned_give(void *p) {
  kept_hold hold;
  for (int k = 0; k < PINNED_KEPT; k++)
    if (kept[k].p == p) {
      kept[k].in_use = 0;
      return 1;
    }
  return 0;
}

/* After a lost device (a sticky error) cudaFreeHost fails, and the pages stay pinned until the
 * process ends, as every other CUDA resource of it. A forked process (gpuiso_cuda_forked) makes
 * no CUDA call: its copies of the parent's buffers are dropped. */
extern "C" void gpuiso_cuda_release(void) {
  kept_hold hold;
  int forked = gpuiso_cuda_forked();
  for (int k = 0; k < PINNED_KEPT; k++) {
    if (kept[k].p && !kept[k].in_use && !forked) (void)cudaFreeHost(kept[k].p);
    if (!kept[k].in_use) kept[k].p = NULL, kept[k].bytes = 0;
  }
}

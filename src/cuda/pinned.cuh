/* The pinned host buffers kept from one fit to the next (pinned.cu), for sort_exec.cuh's pin and
 * unpin: one of at least `bytes` not in use, or NULL; a new one offered for keeping (then in
 * use); one given back (0: not kept, to be freed by the caller). */
#ifndef GPUISO_CUDA_PINNED_CUH
#define GPUISO_CUDA_PINNED_CUH

#include <stddef.h>

void *pinned_take(size_t bytes);
void pinned_made(void *p, size_t bytes);
int pinned_give(void *p);

#endif

/* Large outputs on huge pages where the system offers them on request (Linux's transparent huge
 * pages in "madvise" mode): a fresh 80 MB result otherwise takes 20 000 page faults of 4 KB,
 * which cost a memory-bound fit about as much as writing it. */
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

#define HUGE_PAGE ((uintptr_t)1 << 21)

void gpuiso_advise_huge_pages(void *p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < 4 * HUGE_PAGE) return; /* too small for a whole huge page to be worth one */
  uintptr_t first = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  uintptr_t last = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);
  if (last > first) (void)madvise((void *)first, last - first, MADV_HUGEPAGE); /* advice only */
#else
  (void)p;
  (void)bytes;
#endif
}

void *malloc_dense(size_t bytes) {
  void *p = malloc(bytes);
  if (p) gpuiso_advise_huge_pages(p, bytes);
  return p;
}

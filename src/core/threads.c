/* Thread count: the package default and its limits, as an R user expects of a CRAN package. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static int threads_now = 0; /* 0: not yet initialised */

static int env_int(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  int n = atoi(v);
  return n > 0 ? n : 0;
}

int gpuiso_max_threads(void) {
#ifdef _OPENMP
  int n = omp_get_num_procs();
  int limit = env_int("OMP_THREAD_LIMIT");
  if (limit > 0 && limit < n) n = limit;
  return n > 0 ? n : 1;
#else
  return 1;
#endif
}

int gpuiso_default_threads(void) {
  int n = gpuiso_max_threads();
  int want = env_int("OMP_NUM_THREADS");
  return want > 0 && want < n ? want : n;
}

int gpuiso_get_threads(void) {
  if (threads_now == 0) threads_now = gpuiso_default_threads();
  return threads_now;
}

int gpuiso_set_threads(int n) {
  int old = gpuiso_get_threads();
  int max = gpuiso_max_threads();
  threads_now = n < 1 ? 1 : (n > max ? max : n);
  return old;
}

/* Threads for a piece of work of the given number of elements: small work runs on one. */
int resolve_threads(const gpuiso_opts *opt, int64_t work) {
  int n = opt->nthreads > 0 ? opt->nthreads : gpuiso_get_threads();
  if (work < GPUISO_MIN_PARALLEL) return 1;
  return n;
}

int thread_num(void) {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

void copy_parallel(void *dst, const void *src, size_t bytes, int nth) {
  size_t parts = (size_t)(nth > 0 ? nth : 1), piece = ((bytes + parts - 1) / parts + 63) / 64 * 64;
  if (nth <= 1 || piece == 0) {
    memcpy(dst, src, bytes);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth)
#endif
  for (int t = 0; t < nth; t++) {
    size_t from = (size_t)t * piece;
    if (from < bytes) memcpy((char *)dst + from, (const char *)src + from, bytes - from < piece ? bytes - from : piece);
  }
}

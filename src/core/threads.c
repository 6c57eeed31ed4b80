/* Thread count: the package default and its limits, as an R user expects of a CRAN package. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(_OPENMP) && !defined(_WIN32)
#include <unistd.h>
#define GPUISO_FORK_GUARD 1
#endif

static int threads_now = 0; /* 0: not yet initialised */

#ifdef GPUISO_FORK_GUARD
static pid_t loaded_in; /* 0 until gpuiso_threads_init */

void gpuiso_threads_init(void) {
  loaded_in = getpid();
}

/* OpenMP's worker threads do not survive fork(): a child of a process that has run a parallel
 * region (parallel::mclapply after a fit) waits for them forever in its own first one. So a
 * process forked from the one that loaded the package runs on one thread. Compared by process
 * id rather than set by pthread_atfork, whose handler would outlive an unloaded package. */
static int forked(void) {
  return loaded_in != 0 && getpid() != loaded_in;
}
#else
void gpuiso_threads_init(void) {}

static int forked(void) {
  return 0;
}
#endif

static int env_int(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  int n = atoi(v);
  return n > 0 ? n : 0;
}

int gpuiso_max_threads(void) {
#ifdef _OPENMP
  if (forked()) return 1;
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
  if (forked()) return 1;
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
  if (work < GPUISO_MIN_PARALLEL || forked()) return 1; /* small work: no system call (getpid) */
  return opt->nthreads > 0 ? opt->nthreads : gpuiso_get_threads();
}

void for_each_piece(int64_t count, int nth, int64_t grain, piece_fn fn, void *ctx) {
  if (nth <= 1 || count <= grain) {
    for (int64_t i = 0; i < count; i++) fn(ctx, i, 0);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, grain)
#endif
  for (int64_t i = 0; i < count; i++) fn(ctx, i, thread_num());
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

/* n elements at run k's value over their runs, each from its own copy of the value, so that a
 * value's bytes go out as they were. */
#define FILL_RUN(T)                                                                                    \
  for (int64_t k = run, i = from; i < to; k++) {                                                      \
    int64_t end = first[k + 1] < to ? first[k + 1] : to;                                              \
    T v;                                                                                               \
    memcpy(&v, (const char *)value + k * sizeof v, sizeof v);                                         \
    for (; i < end; i++) memcpy((char *)dst + i * sizeof v, &v, sizeof v);                            \
  }

void fill_runs_parallel(void *dst, size_t size, const int64_t *first, const void *value, int64_t nruns, int64_t n,
                        int nth) {
  int parts = nth > 0 ? nth : 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(parts)
#endif
  for (int t = 0; t < parts; t++) {
    int64_t from = slice_bound(n, t, parts), to = slice_bound(n, t + 1, parts), run = 0, last = nruns - 1;
    while (run < last) { /* the run of element from: the last to start at or before it */
      int64_t mid = run + (last - run + 1) / 2;
      if (first[mid] <= from) run = mid;
      else last = mid - 1;
    }
    if (size == sizeof(uint64_t)) FILL_RUN(uint64_t) else FILL_RUN(uint32_t)
  }
}

/* Run k's value, in its type, as a double (exact). */
static double run_value(size_t size, const void *value, int64_t k) {
  if (size == sizeof(double)) {
    double v;
    memcpy(&v, (const char *)value + k * size, size);
    return v;
  }
  float v;
  memcpy(&v, (const char *)value + k * size, size);
  return v;
}

void level_starts_from_runs(uint8_t *start, int64_t n, int64_t nrows, const int64_t *offsets, size_t size,
                            const int64_t *first, const void *value, int64_t nruns, int nth) {
  int parts = nth > 0 ? nth : 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(parts)
#endif
  for (int t = 0; t < parts; t++) {
    int64_t from = slice_bound(n, t, parts), to = slice_bound(n, t + 1, parts);
    memset(start + from, 0, (size_t)(to - from));
  }
  for (int64_t k = 0; k < nruns; k++) {
    double v = run_value(size, value, k);
    if (v != v) /* a NaN differs from the element before it, even of its own run */
      memset(start + first[k], 1, (size_t)(first[k + 1] - first[k]));
    else if (k > 0)
      start[first[k]] = v != run_value(size, value, k - 1);
  }
  for (int64_t r = 0; r < nrows; r++)
    if (offsets[r] < n) start[offsets[r]] = 1;
}

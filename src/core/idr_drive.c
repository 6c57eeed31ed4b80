/* The sweep over IDR's slices of thresholds, shared by the fits of one covariate (idr.c) and of
 * several (idr_poset.c): rounds of some steps of the slices on the threads, with interrupt polls
 * and progress reports between rounds. */
#include "idr_poset.h"

gpuiso_status idr_drive(void *slices, size_t slice_size, int nsl, int nth, int64_t per_round,
                        idr_step step, const void *in, const gpuiso_opts *opt,
                        const gpuiso_progress *progress) {
  char *base = slices;
  for (;;) {
    int failed = 0, started = 0, short_of = nsl; /* short of their round's per_round steps */
    int64_t stepped = 0;
    /* Each slice takes its per_round steps, then goes on while another is still short of its
     * own, rather than wait at the round's end (where slices share their work, taking theirs
     * once its own is done): the round lasts about as long as before. Not while a slice is
     * still to start: with fewer threads than slices (a team cut short by OpenMP), its thread
     * is the one to start it, or the round would never end. */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1) reduction(| : failed) reduction(+ : stepped)
#endif
    for (int t = 0; t < nsl; t++) {
      idr_range *r = (idr_range *)(base + (size_t)t * slice_size);
      int done = 1;
#ifdef _OPENMP
#pragma omp atomic
#endif
      started++;
      for (int64_t j = 0; j < per_round && done > 0; j++) {
        done = step(r, in);
        stepped += done > 0;
      }
#ifdef _OPENMP
#pragma omp atomic
#endif
      short_of--;
#ifdef _OPENMP
      for (;;) {
        int left, begun;
#pragma omp atomic read
        left = short_of;
#pragma omp atomic read
        begun = started;
        if (left == 0 || begun < nsl || done <= 0) break;
        done = step(r, in);
        stepped += done > 0;
      }
#endif
      if (done == 0) failed = 1;
    }
    if (failed) return GPUISO_E_NOMEM;
    int64_t fitted = 0, total = 0;
    for (int t = 0; t < nsl; t++) {
      const idr_range *r = (const idr_range *)(base + (size_t)t * slice_size);
      fitted += r->next - r->k0;
      total += r->k1 - r->k0;
    }
    if (fitted == total) return GPUISO_OK;
    if (stepped == 0) return GPUISO_E_INTERNAL; /* nothing left to fit, yet not all fitted */
    if (poll_interrupt(opt)) return GPUISO_E_INTERRUPT;
    if (progress && progress->report && progress->report(progress->ctx, (double)fitted / (double)total))
      return GPUISO_E_INTERRUPT;
  }
}

/* The sweep over IDR's slices of thresholds, shared by the fits of one covariate (idr.c) and of
 * several (idr_poset.c): rounds of some steps of the slices on the threads, with interrupt polls
 * and progress reports between rounds. */
#include "idr_poset.h"

gpuiso_status idr_drive(void *slices, size_t slice_size, int nsl, int nth, int64_t per_round,
                        idr_step step, const void *in, const gpuiso_opts *opt,
                        const gpuiso_progress *progress) {
  char *base = slices;
  for (;;) {
    int failed = 0;
    int64_t stepped = 0, taken = 0, budget = per_round * nsl;
    /* A round's steps are shared out as they are taken, not per_round to each slice: a slice
     * whose steps cost less takes more of them, rather than wait for the others at the round's
     * end (and, where slices share their work, takes theirs once its own is done). */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1) reduction(| : failed) reduction(+ : stepped)
#endif
    for (int t = 0; t < nsl; t++) {
      idr_range *r = (idr_range *)(base + (size_t)t * slice_size);
      for (;;) {
        int64_t ticket;
#ifdef _OPENMP
#pragma omp atomic capture
#endif
        ticket = taken++;
        if (ticket >= budget) break;
        int done = step(r, in);
        if (done < 0) break;
        if (done == 0) { failed = 1; break; }
        stepped++;
      }
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

/* Fits of y on x per group from one sort by x.
 *
 * The records sorted by x (gpuiso_sort_xy) are scattered by group with a stable counting sort:
 * reading them in x order and appending each to its group's range leaves every group sorted by x.
 * One radix sort thus serves the curve of all groups pooled and the curves of the groups, and
 * costs less than sorting by (group, x). Each group's knots are then pooled and fitted on their
 * own, in parallel over groups, in rounds between which the interrupt callback is polled.
 */
#include <stdlib.h>

#include "internal.h"


struct gpuiso_grouped {
  int64_t ngroups;
  sort_record *r;  /* group by group, sorted by x within each */
  int64_t *offset; /* ngroups + 1: where each group's records start, then n */
  int64_t *knots;  /* ngroups + 1: distinct x in the groups before each, then in all */
  int nth;
};

void gpuiso_grouped_free(gpuiso_grouped *grouped) {
  if (!grouped) return;
  free(grouped->r);
  free(grouped->offset);
  free(grouped->knots);
  free(grouped);
}

gpuiso_status gpuiso_group_sorted(const gpuiso_sorted *sorted, const int *g, int64_t ngroups,
                                  const gpuiso_opts *opt, gpuiso_grouped **grouped,
                                  int64_t *nknots, gpuiso_error *err) {
  const sort_record *r = sorted->s.r;
  int64_t n = sorted->s.n;
  int nth = sorted->nth;
  /* a count per group and thread: one thread when groups are many */
  int count_threads = ngroups * nth > n ? 1 : nth;
  size_t m = (size_t)(n > 0 ? n : 1);
  *grouped = NULL;
  gpuiso_grouped *out = calloc(1, sizeof *out);
  int *gr = malloc(m * sizeof *gr); /* the group of each record, in x order */
  int64_t *count = calloc((size_t)count_threads * (size_t)ngroups, sizeof *count);
  if (out) {
    out->ngroups = ngroups;
    out->nth = nth;
    out->r = malloc(m * sizeof *out->r);
    out->offset = malloc(((size_t)ngroups + 1) * sizeof *out->offset);
    out->knots = malloc(((size_t)ngroups + 1) * sizeof *out->knots);
  }
  if (!out || !gr || !count || !out->r || !out->offset || !out->knots) {
    gpuiso_grouped_free(out);
    free(gr);
    free(count);
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }

#ifdef _OPENMP
#pragma omp parallel for num_threads(count_threads) schedule(static, 1)
#endif
  for (int t = 0; t < count_threads; t++) {
    int64_t *mine = count + (size_t)t * (size_t)ngroups;
    for (int64_t p = n * t / count_threads; p < n * (t + 1) / count_threads; p++) {
      gr[p] = g[r[p].index];
      mine[gr[p]]++;
    }
  }
  group_slots(count, count_threads, ngroups, out->offset);
#ifdef _OPENMP
#pragma omp parallel for num_threads(count_threads) schedule(static, 1)
#endif
  for (int t = 0; t < count_threads; t++) {
    int64_t *next = count + (size_t)t * (size_t)ngroups;
    for (int64_t p = n * t / count_threads; p < n * (t + 1) / count_threads; p++)
      out->r[next[gr[p]]++] = r[p];
  }
  free(gr);
  free(count);

  const int64_t *offset = out->offset;
  const sort_record *q = out->r;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic)
#endif
  for (int64_t k = 0; k < ngroups; k++) {
    int64_t distinct = offset[k + 1] > offset[k];
    for (int64_t p = offset[k] + 1; p < offset[k + 1]; p++) distinct += q[p].key != q[p - 1].key;
    out->knots[k + 1] = distinct;
  }
  out->knots[0] = 0;
  for (int64_t k = 0; k < ngroups; k++) out->knots[k + 1] += out->knots[k];
  if (poll_interrupt(opt)) {
    gpuiso_grouped_free(out);
    set_error(err, GPUISO_E_INTERRUPT, -1, -1);
    return GPUISO_E_INTERRUPT;
  }
  *grouped = out;
  *nknots = out->knots[ngroups];
  return GPUISO_OK;
}

gpuiso_status gpuiso_fit_grouped(const gpuiso_grouped *grouped, const gpuiso_opts *opt,
                                 int64_t *offset, gpuiso_knots *kn, gpuiso_error *err) {
  const int64_t *rec = grouped->offset, *knots = grouped->knots;
  int64_t ngroups = grouped->ngroups;
  int nth = grouped->nth;
  gpuiso_opts worker = *opt;
  worker.interrupt = NULL; /* only the calling thread may poll */
  worker.nthreads = 1;     /* the groups share the threads out */
  gpuiso_error first = {GPUISO_OK, -1, -1, ""};
  int64_t largest = 0;
  for (int64_t k = 0; k < ngroups; k++)
    if (knots[k + 1] - knots[k] > largest) largest = knots[k + 1] - knots[k];
  pav_work *work = calloc((size_t)nth, sizeof *work);
  int ok = work != NULL;
  for (int t = 0; ok && t < nth; t++) ok = pav_work_init(&work[t], largest);
  if (!ok) first.status = GPUISO_E_NOMEM;

  int64_t nblocks = 0, k0 = 0;
  while (ok && k0 < ngroups && first.status == GPUISO_OK) {
    int64_t k1 = k0; /* groups of this round: about GPUISO_POLL_EVERY records */
    while (k1 < ngroups && rec[k1] - rec[k0] < GPUISO_POLL_EVERY) k1++;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic) reduction(+ : nblocks)
#endif
    for (int64_t k = k0; k < k1; k++) {
      int64_t d0 = knots[k], len = knots[k + 1] - d0, nb = 0;
      if (len == 0) continue;
      gpuiso_error e;
      gpuiso_status s = pool_records(grouped->r, rec[k], rec[k + 1], d0, kn, &e);
      if (s == GPUISO_OK && (s = fit_row(len, kn->level + d0, kn->weight + d0, &worker,
                                         &work[thread_num()], kn->level + d0, kn->start + d0, &nb,
                                         &e)) != GPUISO_OK)
        e.index = -1; /* a knot of the group, not an element of the input */
      if (s != GPUISO_OK) {
        e.row = k;
        keep_error(&first, &e);
      }
      nblocks += nb;
    }
    k0 = k1;
    if (first.status == GPUISO_OK && k0 < ngroups && poll_interrupt(opt)) first.status = GPUISO_E_INTERRUPT;
  }
  for (int t = 0; work && t < nth; t++) pav_work_free(&work[t]);
  free(work);
  for (int64_t k = 0; k <= ngroups; k++) offset[k] = knots[k];
  kn->n = knots[ngroups];
  kn->nblocks = nblocks;
  if (err) *err = first;
  return first.status;
}

/* Fits of y on x per group from one sort by x.
 *
 * The records sorted by x (gpuiso_sort_groups_xy, their tags holding their groups) are read in x
 * order, and each is added to its group's current knot or starts the group's next one: every
 * group's knots then come out in x order, so one radix sort serves the curve of all groups pooled
 * and the curves of the groups, for less than a sort by (group, x) costs, and the records are
 * never copied by group.
 *
 * Threads take parts of the records cut at bucket boundaries of the sort: equal x never span two
 * buckets, so a group's tied x never span two parts. Two passes over the parts (a counting sort of
 * knots by group): the first counts each group's distinct x per part, which fixes where each
 * part's knots of each group go; the second pools the records into them. Each group is then
 * fitted on its own, in parallel over groups (a group long enough to be split alone, on all
 * threads), in rounds between which the interrupt callback is polled; the fitted values are
 * written back by a third pass over the parts (gpuiso_grouped_fitted).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"


struct gpuiso_grouped {
  const sorted_records *s; /* borrowed from the gpuiso_sorted */
  int64_t ngroups;
  int nth, nparts;
  int64_t *part;  /* nparts + 1: the records of each part, cut between buckets */
  int64_t *next;  /* nparts x ngroups: where part t's next knot of group k goes (pool_part) */
  int64_t *first; /* nparts x ngroups: where part t's first knot of group k went */
  int64_t *knots; /* ngroups + 1: where each group's knots start, then the number of knots */
};

void gpuiso_grouped_free(gpuiso_grouped *grouped) {
  if (!grouped) return;
  free(grouped->part);
  free(grouped->next);
  free(grouped->first);
  free(grouped->knots);
  free(grouped);
}

/* Part t ends at the first bucket start at or after t / nparts of the records. */
static void cut_parts(const sorted_records *s, int nparts, int64_t *part) {
  int64_t b = 0;
  part[0] = 0;
  for (int t = 1; t < nparts; t++) {
    while (b < s->nbuckets && s->start[b] < s->n * t / nparts) b++;
    part[t] = s->start[b];
  }
  part[nparts] = s->n;
}

gpuiso_status gpuiso_group_sorted(const gpuiso_sorted *sorted, const gpuiso_opts *opt,
                                  gpuiso_grouped **grouped, int64_t *nknots, gpuiso_error *err) {
  const sorted_records *s = &sorted->s;
  const sort_record *r = s->r;
  int64_t ngroups = sorted->ngroups;
  int nth = sorted->nth, gbits = s->gbits;
  /* per part and group a count and a key: one part when groups are many */
  int nparts = ngroups * nth > s->n ? 1 : (nth < GPUISO_MAX_CHUNKS ? nth : GPUISO_MAX_CHUNKS);
  size_t cells = (size_t)nparts * (size_t)ngroups;
  *grouped = NULL;
  gpuiso_grouped *out = calloc(1, sizeof *out);
  uint64_t *last = malloc((cells > 0 ? cells : 1) * sizeof *last);
  if (out) {
    out->s = s;
    out->ngroups = ngroups;
    out->nth = nth;
    out->nparts = nparts;
    out->part = malloc(((size_t)nparts + 1) * sizeof *out->part);
    out->next = calloc(cells > 0 ? cells : 1, sizeof *out->next);
    out->first = malloc((cells > 0 ? cells : 1) * sizeof *out->first);
    out->knots = malloc(((size_t)ngroups + 1) * sizeof *out->knots);
  }
  if (!out || !last || !out->part || !out->next || !out->first || !out->knots) {
    gpuiso_grouped_free(out);
    free(last);
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  cut_parts(s, nparts, out->part);

#ifdef _OPENMP
#pragma omp parallel for num_threads(nparts) schedule(static, 1)
#endif
  for (int t = 0; t < nparts; t++) {
    int64_t *count = out->next + (size_t)t * (size_t)ngroups;
    uint64_t *key = last + (size_t)t * (size_t)ngroups;
    for (int64_t p = out->part[t]; p < out->part[t + 1]; p++) {
      int k = tag_group(r[p].tag, gbits);
      if (count[k] == 0 || key[k] != r[p].key) {
        count[k]++;
        key[k] = r[p].key;
      }
    }
  }
  free(last);
  group_slots(out->next, nparts, ngroups, out->knots);
  memcpy(out->first, out->next, cells * sizeof *out->first);
  if (poll_interrupt(opt)) {
    gpuiso_grouped_free(out);
    set_error(err, GPUISO_E_INTERRUPT, -1, -1);
    return GPUISO_E_INTERRUPT;
  }
  *grouped = out;
  *nknots = out->knots[ngroups];
  return GPUISO_OK;
}

/* Closes knot d: its weighted sum of y becomes the mean (0 for zero weight). 0 when a sum
 * overflowed. */
static int close_knot(gpuiso_knots *kn, int64_t d) {
  double sum = kn->level[d], weight = kn->weight[d];
  kn->level[d] = weight > 0 ? sum / weight : 0;
  return isfinite(sum) && isfinite(weight);
}

/* Pools part t's records into its knots of each group, each knot's mean computed when the group's
 * next knot starts (while it is still in cache). cur has room for 2 x ngroups entries. Returns
 * the first record with a bad y or w, or that starts a knot whose sums overflow (its status in
 * *bad), or -1. */
static int64_t pool_part(const gpuiso_grouped *gs, int t, int64_t *cur, gpuiso_knots *kn,
                         gpuiso_status *bad) {
  const sort_record *r = gs->s->r;
  int gbits = gs->s->gbits;
  int64_t *next = gs->next + (size_t)t * (size_t)gs->ngroups;
  int64_t *from = cur + gs->ngroups; /* the record that started each current knot */
  for (int64_t k = 0; k < gs->ngroups; k++) cur[k] = -1;
  *bad = GPUISO_E_OVERFLOW;
  for (int64_t p = gs->part[t]; p < gs->part[t + 1]; p++) {
    int k = tag_group(r[p].tag, gbits);
    int64_t d = cur[k];
    if (d < 0 || kn->x[d] != key_double(r[p].key)) {
      if (d >= 0 && !close_knot(kn, d)) return from[k];
      d = cur[k] = next[k]++;
      from[k] = p;
      kn->x[d] = key_double(r[p].key);
      kn->level[d] = kn->weight[d] = 0;
    }
    gpuiso_status s = value_status(r[p].y, r[p].w);
    if (s != GPUISO_OK) {
      *bad = s;
      return p;
    }
    kn->level[d] += r[p].w * r[p].y;
    kn->weight[d] += r[p].w;
  }
  for (int64_t k = 0; k < gs->ngroups; k++)
    if (cur[k] >= 0 && !close_knot(kn, cur[k])) return from[k];
  *bad = GPUISO_OK;
  return -1;
}

/* Fits groups k0 .. k1 - 1 of short knots in parallel on nth threads, each on one (worker), adding
 * their blocks to *nblocks and keeping the error of the lowest group in *first. */
static void fit_short_groups(const int64_t *knots, int64_t k0, int64_t k1, gpuiso_knots *kn,
                             const gpuiso_opts *worker, int nth, pav_work *work,
                             gpuiso_error *first, int64_t *nblocks) {
  int64_t count = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic) reduction(+ : count)
#endif
  for (int64_t k = k0; k < k1; k++) {
    int64_t len = knots[k + 1] - knots[k], nb = 0;
    gpuiso_error e;
    double *level = kn->level + knots[k];
    if (len > 0 && fit_row(len, level, kn->weight + knots[k], worker, &work[thread_num()], level,
                           kn->start + knots[k], &nb, &e) != GPUISO_OK) {
      e.index = -1; /* a knot of the group, not an element of the input */
      e.row = k;
      keep_error(first, &e);
    }
    count += nb;
  }
  *nblocks += count;
}

int knots_alloc(gpuiso_knots *kn, size_t m) {
  kn->x = malloc_dense(m * sizeof *kn->x);
  kn->level = malloc_dense(m * sizeof *kn->level);
  kn->weight = malloc_dense(m * sizeof *kn->weight);
  kn->start = malloc_dense(m);
  return kn->x && kn->level && kn->weight && kn->start;
}

void knots_release(gpuiso_knots *kn) {
  free(kn->x);
  free(kn->level);
  free(kn->weight);
  free(kn->start);
}

/* Whether group k's knots are fitted alone on all threads (see pav_long_row). */
static int long_group(const gpuiso_opts *opt, const int64_t *knots, int64_t k) {
  return opt->engine == GPUISO_PAV && pav_row_is_long(knots[k + 1] - knots[k]);
}

gpuiso_status gpuiso_fit_grouped(const gpuiso_grouped *grouped, const gpuiso_opts *opt,
                                 int64_t *offset, gpuiso_knots *kn, gpuiso_error *err) {
  const int64_t *knots = grouped->knots;
  int64_t ngroups = grouped->ngroups;
  int nth = grouped->nth, nparts = grouped->nparts;
  gpuiso_opts worker = *opt;
  worker.interrupt = NULL; /* only the calling thread may poll */
  worker.nthreads = 1;     /* the groups share the threads out */
  gpuiso_error first = {GPUISO_OK, -1, -1, ""};
  int64_t largest = 0;
  for (int64_t k = 0; k < ngroups; k++)
    if (knots[k + 1] - knots[k] > largest) largest = knots[k + 1] - knots[k];
  int64_t *cur = malloc((2 * (size_t)nparts * (size_t)ngroups + 1) * sizeof *cur);
  pav_work *work = calloc((size_t)nth, sizeof *work);
  int ok = cur && work;
  for (int t = 0; ok && t < nth; t++) ok = pav_work_init(&work[t], largest);
  if (!ok) first.status = GPUISO_E_NOMEM;

  if (ok) {
    int64_t bad[GPUISO_MAX_CHUNKS];
    gpuiso_status why[GPUISO_MAX_CHUNKS];
#ifdef _OPENMP
#pragma omp parallel for num_threads(nparts) schedule(static, 1)
#endif
    for (int t = 0; t < nparts; t++)
      bad[t] = pool_part(grouped, t, cur + 2 * (size_t)t * (size_t)ngroups, kn, &why[t]);
    for (int t = 0; t < nparts && first.status == GPUISO_OK; t++) {
      if (bad[t] < 0) continue;
      int64_t tag = grouped->s->r[bad[t]].tag;
      set_error(&first, why[t], tag_index(tag, grouped->s->gbits), tag_group(tag, grouped->s->gbits));
    }
  }
  int64_t nblocks = 0, k0 = 0;
  if (ok && first.status == GPUISO_OK && opt->engine == GPUISO_GPU) { /* every group in one call */
    if (gpu_fit_rows(ngroups, knots, kn->level, kn->weight, opt, kn->level, kn->start, &first) ==
        GPUISO_OK) {
      for (int64_t k = 0; k < ngroups; k++)
        for (int64_t d = knots[k]; d < knots[k + 1]; d++) nblocks += kn->start[d];
    } else {
      first.index = -1;
    }
    k0 = ngroups;
  }
  while (ok && k0 < ngroups && first.status == GPUISO_OK) {
    int64_t k1 = k0 + 1;
    if (long_group(opt, knots, k0)) { /* alone, on all threads (the bits of fit_row's chunks) */
      int64_t len = knots[k1] - knots[k0];
      double *level = kn->level + knots[k0];
      uint8_t *flags = kn->start + knots[k0];
      gpuiso_error e;
      if (pav_long_row(len, level, kn->weight + knots[k0], opt, level, flags, &e) != GPUISO_OK) {
        e.index = -1;
        e.row = e.status == GPUISO_E_INTERRUPT ? -1 : k0;
        first = e;
      }
      for (int64_t d = 0; d < len; d++) nblocks += flags[d];
    } else {
      /* short groups of this round: about GPUISO_POLL_EVERY knots */
      while (k1 < ngroups && knots[k1] - knots[k0] < GPUISO_POLL_EVERY && !long_group(opt, knots, k1))
        k1++;
      fit_short_groups(knots, k0, k1, kn, &worker, nth, work, &first, &nblocks);
    }
    k0 = k1;
    if (first.status == GPUISO_OK && k0 < ngroups && poll_interrupt(opt)) first.status = GPUISO_E_INTERRUPT;
  }
  for (int t = 0; work && t < nth; t++) pav_work_free(&work[t]);
  free(work);
  free(cur);
  for (int64_t k = 0; k <= ngroups; k++) offset[k] = knots[k];
  kn->n = knots[ngroups];
  kn->nblocks = nblocks;
  if (err) *err = first;
  return first.status;
}

gpuiso_status gpuiso_grouped_fitted(const gpuiso_grouped *grouped, const gpuiso_knots *kn,
                                    double *fit, uint8_t *start, gpuiso_error *err) {
  const sort_record *r = grouped->s->r;
  int gbits = grouped->s->gbits;
  int64_t ngroups = grouped->ngroups;
  int nparts = grouped->nparts;
  size_t cells = (size_t)nparts * (size_t)ngroups;
  int64_t *cur = malloc((cells > 0 ? cells : 1) * sizeof *cur);
  if (!cur) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nparts) schedule(static, 1)
#endif
  for (int t = 0; t < nparts; t++) {
    /* each part meets its knots of a group in the order pool_part made them */
    const int64_t *first = grouped->first + (size_t)t * (size_t)ngroups;
    int64_t *knot = cur + (size_t)t * (size_t)ngroups;
    for (int64_t k = 0; k < ngroups; k++) knot[k] = -1;
    for (int64_t p = grouped->part[t]; p < grouped->part[t + 1]; p++) {
      int k = tag_group(r[p].tag, gbits);
      int64_t d = knot[k], i = tag_index(r[p].tag, gbits);
      int new_knot = d < 0 || kn->x[d] != key_double(r[p].key);
      if (new_knot) d = knot[k] = d < 0 ? first[k] : d + 1;
      fit[i] = kn->level[d];
      if (start) start[i] = (uint8_t)(new_knot && kn->start[d]);
    }
  }
  free(cur);
  return GPUISO_OK;
}

/* A fit of y on x with x in any order: sort (stable), pool tied x, fit the knots, map back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The first element of [from, to) of x (ctx) that is not finite or is not above the one before
 * it (to when none). */
static int64_t first_stop(const void *ctx, int64_t from, int64_t to) {
  const double *x = ctx;
  if (from >= to) return to;
  if (!isfinite(x[from]) || (from > 0 && !(x[from - 1] < x[from]))) return from;
  int64_t i = from + 1;
  while (i < to && x[i - 1] < x[i]) i++; /* NaN stops it too */
  /* A strictly increasing run from a finite value is finite but for its last element (+Inf):
   * one comparison an element. */
  return isfinite(x[i - 1]) ? i : i - 1;
}

gpuiso_status gpuiso_scan_x(int64_t n, const double *x, int *strict, gpuiso_error *err) {
  int64_t i = first_stop_in_slices(n, first_stop, x);
  *strict = i == n;
  if (i < n && !isfinite(x[i])) { /* else the step down comes first: the sort checks the rest */
    set_error(err, GPUISO_E_X_NONFINITE, i, -1);
    return GPUISO_E_X_NONFINITE;
  }
  return GPUISO_OK;
}

/* The sort of gpuiso_sort_xy, with groups when g is not NULL. */
static gpuiso_status sort_xy(int64_t n, const double *x, const double *y, const double *w,
                             const int *g, int64_t ngroups, const gpuiso_opts *opt,
                             gpuiso_sorted **sorted, int64_t *nknots, gpuiso_error *err) {
  *sorted = NULL;
  int gbits = 0;
  while (((int64_t)1 << gbits) < ngroups) gbits++;
  gpuiso_sorted *out = malloc(sizeof *out);
  int64_t bad = -1;
  gpuiso_status s = GPUISO_E_NOMEM; /* also when index and group do not fit in a tag's 63 bits */
  if (out && n <= (INT64_MAX >> gbits)) {
    out->ngroups = ngroups;
    out->nth = resolve_threads(opt, n);
    s = sort_records(n, x, y, w, g, gbits, out->nth, &out->s, &bad);
  }
  if (s != GPUISO_OK) {
    free(out);
    set_error(err, s, bad, -1);
    return s;
  }
  if (poll_interrupt(opt)) {
    gpuiso_sorted_free(out);
    set_error(err, GPUISO_E_INTERRUPT, -1, -1);
    return GPUISO_E_INTERRUPT;
  }
  *sorted = out;
  *nknots = out->s.knots[out->s.nbuckets];
  return GPUISO_OK;
}

gpuiso_status gpuiso_sort_xy(int64_t n, const double *x, const double *y, const double *w,
                             const gpuiso_opts *opt, gpuiso_sorted **sorted, int64_t *nknots,
                             gpuiso_error *err) {
  return sort_xy(n, x, y, w, NULL, 1, opt, sorted, nknots, err);
}

gpuiso_status gpuiso_sort_groups_xy(int64_t n, const double *x, const double *y, const double *w,
                                    const int *g, int64_t ngroups, const gpuiso_opts *opt,
                                    gpuiso_sorted **sorted, int64_t *nknots, gpuiso_error *err) {
  return sort_xy(n, x, y, w, g, ngroups, opt, sorted, nknots, err);
}

void gpuiso_sorted_free(gpuiso_sorted *sorted) {
  if (!sorted) return;
  free(sorted->s.r);
  free(sorted->s.start);
  free(sorted->s.knots);
  free(sorted);
}

/* The weighted mean of y over the records [from, to) of one x, whose weights sum to sw and
 * w * y to swy (0 for zero weight). Weights so small that their products with y come near the
 * subnormals are first brought up by a power of two, which leaves the mean as it is but keeps
 * the products' digits. */
static double knot_mean(const sort_record *r, int64_t from, int64_t to, double sw, double swy) {
  if (!(sw > 0)) return 0;
  if (sw >= 0x1p-900) return swy / sw;
  int shift = -ilogb(sw);
  double a = 0, b = 0;
  for (int64_t p = from; p < to; p++) {
    double wi = ldexp(r[p].w, shift);
    a += wi;
    b += wi * r[p].y;
  }
  return b / a;
}

/* Pools the sorted records [from, to), which start a new x, into knots d0, d0 + 1, ...: x, the
 * weighted mean of y (0 for zero weight) and the summed weight. */
static gpuiso_status pool_bucket(const sort_record *r, int64_t from, int64_t to, int64_t d0,
                                 int gbits, gpuiso_knots *kn, gpuiso_error *err) {
  int64_t d = d0 - 1, knot_from = from;
  double sw = 0, swy = 0;
  for (int64_t p = from; p < to; p++) {
    double yi = r[p].y, wi = r[p].w;
    gpuiso_status s = value_status(yi, wi);
    if (s != GPUISO_OK) {
      set_error(err, s, tag_index(r[p].tag, gbits), -1);
      return s;
    }
    if (p == from || r[p].key != r[p - 1].key) {
      if (d >= d0) kn->level[d] = knot_mean(r, knot_from, p, sw, swy);
      knot_from = p;
      d++;
      kn->x[d] = key_double(r[p].key);
      sw = swy = 0;
    }
    sw += wi;
    swy += wi * yi;
    kn->weight[d] = sw;
    if (!isfinite(swy) || !isfinite(sw)) {
      set_error(err, GPUISO_E_OVERFLOW, tag_index(r[p].tag, gbits), -1);
      return GPUISO_E_OVERFLOW;
    }
  }
  if (d >= d0) kn->level[d] = knot_mean(r, knot_from, to, sw, swy);
  return GPUISO_OK;
}

/* The records meet bad values in x order; the error names the first in input order: the
 * element of lowest index whose y or w may not enter a fit, else (no bad value) the overflow
 * that `bad` reports. */
static void first_in_input(const sorted_records *s, gpuiso_error *bad) {
  int64_t first = -1;
  gpuiso_status why = GPUISO_OK;
  for (int64_t p = 0; p < s->n; p++) {
    gpuiso_status v = value_status(s->r[p].y, s->r[p].w);
    int64_t i = tag_index(s->r[p].tag, s->gbits);
    if (v != GPUISO_OK && (first < 0 || i < first)) {
      first = i;
      why = v;
    }
  }
  if (first >= 0) set_error(bad, why, first, -1);
}

/* The buckets' passes below: one bucket each (a piece_fn), sharing their arguments. */
typedef struct {
  const sorted_records *s;
  gpuiso_knots *kn;
  const double *level;
  double *fit;
  const uint8_t *knot_start;
  int64_t *order;
  uint8_t *start;
  int64_t first_bad; /* pooling: the first bucket with bad input, and its error */
  gpuiso_error bad;
} bucket_pass;

static void pool_one_bucket(void *ctx, int64_t b, int thread) {
  bucket_pass *bp = ctx;
  const sorted_records *s = bp->s;
  gpuiso_error e;
  if (pool_bucket(s->r, s->start[b], s->start[b + 1], s->knots[b], s->gbits, bp->kn, &e) !=
      GPUISO_OK) {
#ifdef _OPENMP
#pragma omp critical(gpuiso_pool_error)
#endif
    if (b < bp->first_bad) {
      bp->first_bad = b;
      bp->bad = e;
    }
  }
}

gpuiso_status gpuiso_pool_sorted(const gpuiso_sorted *sorted, gpuiso_knots *kn, gpuiso_error *err) {
  const sorted_records *s = &sorted->s;
  kn->n = s->knots[s->nbuckets];
  kn->nblocks = 0;
  /* On bad input, the error of the first bucket that has one is reported. */
  bucket_pass bp = {.s = s, .kn = kn, .first_bad = s->nbuckets, .bad = {GPUISO_OK, -1, -1, ""}};
  for_each_piece(s->nbuckets, sorted->nth, 16, pool_one_bucket, &bp);
  if (bp.bad.status != GPUISO_OK) {
    first_in_input(s, &bp.bad);
    if (err) *err = bp.bad;
  }
  return bp.bad.status;
}

static void fit_one_bucket(void *ctx, int64_t b, int thread) {
  const bucket_pass *bp = ctx;
  const sort_record *r = bp->s->r;
  const double *level = bp->level;
  double *fit = bp->fit;
  int gbits = bp->s->gbits;
  int64_t d = bp->s->knots[b] - 1, from = bp->s->start[b], to = bp->s->start[b + 1];
  for (int64_t p = from; p < to; p++) {
    d += p == from || r[p].key != r[p - 1].key;
    fit[tag_index(r[p].tag, gbits)] = level[d];
  }
}

void gpuiso_sorted_fitted(const gpuiso_sorted *sorted, const double *level, double *fit) {
  bucket_pass bp = {.s = &sorted->s, .level = level, .fit = fit};
  for_each_piece(sorted->s.nbuckets, sorted->nth, 16, fit_one_bucket, &bp);
}

/* Knots' means go to kn->level, where the fit then replaces them. */
gpuiso_status gpuiso_fit_sorted(const gpuiso_sorted *sorted, const gpuiso_opts *opt, double *fit,
                                gpuiso_knots *kn, gpuiso_error *err) {
  gpuiso_status st = gpuiso_pool_sorted(sorted, kn, err);
  if (st == GPUISO_OK) st = gpuiso_fit(kn->n, kn->level, kn->weight, opt, kn->level, kn->start, &kn->nblocks, err);
  if (st == GPUISO_OK && fit) gpuiso_sorted_fitted(sorted, kn->level, fit);
  return st;
}

static void order_one_bucket(void *ctx, int64_t b, int thread) {
  const bucket_pass *bp = ctx;
  const sort_record *r = bp->s->r;
  const uint8_t *knot_start = bp->knot_start;
  int64_t *order = bp->order;
  uint8_t *start = bp->start;
  int gbits = bp->s->gbits;
  int64_t d = bp->s->knots[b] - 1, from = bp->s->start[b], to = bp->s->start[b + 1];
  for (int64_t p = from; p < to; p++) {
    int first = p == from || r[p].key != r[p - 1].key;
    d += first;
    if (order) order[p] = tag_index(r[p].tag, gbits);
    if (start) start[p] = (uint8_t)(first && knot_start[d]);
  }
}

void gpuiso_sorted_order(const gpuiso_sorted *sorted, const uint8_t *knot_start, int64_t *order,
                         uint8_t *start) {
  bucket_pass bp = {.s = &sorted->s, .knot_start = knot_start, .order = order, .start = start};
  for_each_piece(sorted->s.nbuckets, sorted->nth, 16, order_one_bucket, &bp);
}

/* Whether block a's level is above b's for the direction of the fit (then they must pool). */
static int violates(const gpuiso_block *a, const gpuiso_block *b, int increasing) {
  double la = a->level / a->weight, lb = b->level / b->weight; /* level holds the sum meanwhile */
  return increasing ? la >= lb : la <= lb;
}

gpuiso_status gpuiso_curve_sorted(const gpuiso_sorted *sorted, const gpuiso_opts *opt,
                                  gpuiso_block **blocks, int64_t *nblocks, gpuiso_error *err) {
  const sorted_records *s = &sorted->s;
  const sort_record *r = s->r;
  int64_t nk = s->knots[s->nbuckets];
  *blocks = NULL;
  *nblocks = 0;
  /* Only the stack's depth is touched, whatever room it has. */
  gpuiso_block *st = malloc((size_t)(nk > 0 ? nk : 1) * sizeof *st);
  if (!st) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  int64_t n = 0;
  double lead = NAN; /* the first x, while every weight so far is zero */
  for (int64_t p = 0; p < s->n;) {
    gpuiso_block knot = {key_double(r[p].key), key_double(r[p].key), 0.0, 0.0};
    for (; p < s->n && key_double(r[p].key) == knot.lower; p++) {
      gpuiso_status bad = value_status(r[p].y, r[p].w);
      knot.level += r[p].w * r[p].y;
      knot.weight += r[p].w;
      if (bad == GPUISO_OK && !(isfinite(knot.level) && isfinite(knot.weight))) bad = GPUISO_E_OVERFLOW;
      if (bad != GPUISO_OK) {
        free(st);
        set_error(err, bad, tag_index(r[p].tag, s->gbits), -1);
        return bad;
      }
    }
    if (knot.weight == 0) {
      if (n > 0) st[n - 1].upper = knot.upper; else if (isnan(lead)) lead = knot.lower;
      continue;
    }
    if (n == 0 && !isnan(lead)) knot.lower = lead;
    st[n++] = knot;
    while (n >= 2 && violates(&st[n - 2], &st[n - 1], opt->increasing)) {
      st[n - 2].level += st[n - 1].level;
      st[n - 2].weight += st[n - 1].weight;
      st[n - 2].upper = st[n - 1].upper;
      n--;
      if (!(isfinite(st[n - 1].level) && isfinite(st[n - 1].weight))) {
        free(st);
        set_error(err, GPUISO_E_OVERFLOW, tag_index(r[p - 1].tag, s->gbits), -1);
        return GPUISO_E_OVERFLOW;
      }
    }
  }
  if (n == 0) {
    free(st);
    set_error(err, GPUISO_E_W_ALLZERO, -1, -1);
    return GPUISO_E_W_ALLZERO;
  }
  /* Levels, clipped; blocks that clipping made equal are one block. */
  int64_t m = 0;
  for (int64_t b = 0; b < n; b++) {
    double level = clip(st[b].level / st[b].weight, opt->lo, opt->hi);
    if (m > 0 && st[m - 1].level == level) {
      st[m - 1].upper = st[b].upper;
      st[m - 1].weight += st[b].weight;
      continue;
    }
    st[m] = st[b];
    st[m++].level = level;
  }
  *blocks = st;
  *nblocks = m;
  set_error(err, GPUISO_OK, -1, -1);
  return GPUISO_OK;
}

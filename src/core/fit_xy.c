/* A fit of y on x with x in any order: sort (stable), pool tied x, fit the knots, map back. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

gpuiso_status gpuiso_scan_x(int64_t n, const double *x, int *strict, gpuiso_error *err) {
  int s = 1;
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(x[i])) {
      set_error(err, GPUISO_E_X_NONFINITE, i, -1);
      return GPUISO_E_X_NONFINITE;
    }
    s = s && (i == 0 || x[i - 1] < x[i]);
  }
  *strict = s;
  return GPUISO_OK;
}

static inline int new_knot(const sort_record *r, int64_t p, int64_t from) {
  return p == from || r[p].key != r[p - 1].key;
}

/* Pools the sorted records [from, to) into knots d0, d0 + 1, ...: x, the weighted mean of y (0
 * for zero weight) and the summed weight. */
static gpuiso_status pool_range(const sort_record *r, int64_t from, int64_t to, int64_t d0,
                                gpuiso_knots *kn, double *ymean, gpuiso_error *err) {
  int64_t d = d0 - 1;
  double sw = 0, swy = 0;
  for (int64_t p = from; p < to; p++) {
    double yi = r[p].y, wi = r[p].w;
    if (!isfinite(yi) || !(wi >= 0 && wi < INFINITY)) {
      gpuiso_status s = !isfinite(yi) ? GPUISO_E_Y_NONFINITE
                        : (wi < 0 ? GPUISO_E_W_NEGATIVE : GPUISO_E_W_NONFINITE);
      set_error(err, s, r[p].index, -1);
      return s;
    }
    if (new_knot(r, p, from)) {
      if (d >= d0) ymean[d] = sw > 0 ? swy / sw : 0;
      d++;
      kn->x[d] = key_double(r[p].key);
      sw = swy = 0;
    }
    sw += wi;
    swy += wi * yi;
    kn->weight[d] = sw;
    if (!isfinite(swy) || !isfinite(sw)) {
      set_error(err, GPUISO_E_OVERFLOW, r[p].index, -1);
      return GPUISO_E_OVERFLOW;
    }
  }
  if (d >= d0) ymean[d] = sw > 0 ? swy / sw : 0;
  return GPUISO_OK;
}

/* Pools the records, sorted by x, into knots, fits them and writes the fit in input order. */
static gpuiso_status fit_sorted(int64_t n, const sort_record *r, int nth, const gpuiso_opts *opt,
                                double *fit, gpuiso_knots *kn, gpuiso_error *err) {
  if (poll_interrupt(opt)) {
    set_error(err, GPUISO_E_INTERRUPT, -1, -1);
    return GPUISO_E_INTERRUPT;
  }

  /* Ranges for the threads, each starting at a new knot; knots counted, then pooled. */
  int64_t bound[GPUISO_MAX_CHUNKS + 1], first[GPUISO_MAX_CHUNKS + 1];
  for (int t = 0; t <= nth; t++) {
    int64_t b = n * t / nth;
    while (b > 0 && b < n && r[b].key == r[b - 1].key) b++;
    bound[t] = t > 0 && b < bound[t - 1] ? bound[t - 1] : b;
  }
  first[0] = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static, 1)
#endif
  for (int t = 0; t < nth; t++) {
    int64_t c = 0;
    for (int64_t p = bound[t]; p < bound[t + 1]; p++) c += new_knot(r, p, bound[t]);
    first[t + 1] = c;
  }
  for (int t = 0; t < nth; t++) first[t + 1] += first[t];
  kn->n = first[nth];

  /* The knots' means go to kn->level, where the fit then replaces them. */
  gpuiso_error perr[GPUISO_MAX_CHUNKS];
  gpuiso_status pst[GPUISO_MAX_CHUNKS], s = GPUISO_OK;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static, 1)
#endif
  for (int t = 0; t < nth; t++)
    pst[t] = pool_range(r, bound[t], bound[t + 1], first[t], kn, kn->level, &perr[t]);
  for (int t = 0; t < nth && s == GPUISO_OK; t++) {
    s = pst[t];
    if (s != GPUISO_OK && err) *err = perr[t];
  }
  if (s == GPUISO_OK)
    s = gpuiso_pav(kn->n, kn->level, kn->weight, opt, kn->level, kn->start, &kn->nblocks, err);

  if (s == GPUISO_OK) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static, 1)
#endif
    for (int t = 0; t < nth; t++) {
      int64_t d = first[t] - 1;
      for (int64_t p = bound[t]; p < bound[t + 1]; p++) {
        d += new_knot(r, p, bound[t]);
        fit[r[p].index] = kn->level[d];
      }
    }
  }
  return s;
}

gpuiso_status gpuiso_fit_xy(int64_t n, const double *x, const double *y, const double *w,
                            const gpuiso_opts *opt, double *fit, gpuiso_knots *kn,
                            gpuiso_error *err) {
  kn->n = kn->nblocks = 0;
  int nth = resolve_threads(opt, n);
  if (nth > GPUISO_MAX_CHUNKS) nth = GPUISO_MAX_CHUNKS;
  sort_record *r = sort_records(n, x, y, w, nth);
  if (!r) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  gpuiso_status s = fit_sorted(n, r, nth, opt, fit, kn, err);
  free(r);
  return s;
}

/* A fit of y on x with x in any order: sort (stable), pool tied x, fit the knots, map back. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

void gpuiso_knots_free(gpuiso_knots *kn) {
  free(kn->x);
  free(kn->level);
  free(kn->weight);
  free(kn->start);
  kn->x = kn->level = kn->weight = NULL;
  kn->start = NULL;
  kn->n = kn->nblocks = 0;
}

enum x_order { X_STRICT, X_TIES, X_UNSORTED };

static gpuiso_status scan_x(int64_t n, const double *x, enum x_order *order, gpuiso_error *err) {
  enum x_order o = X_STRICT;
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(x[i])) {
      set_error(err, GPUISO_E_X_NONFINITE, i, -1);
      return GPUISO_E_X_NONFINITE;
    }
    if (i > 0 && o != X_UNSORTED && !(x[i - 1] < x[i])) o = x[i - 1] == x[i] ? X_TIES : X_UNSORTED;
  }
  *order = o;
  return GPUISO_OK;
}

/* Element at sorted position p: the identity when x is already sorted. */
static inline int64_t at(const keyed_index *sorted, int64_t p) {
  return sorted ? sorted[p].index : p;
}

/* Pools runs of equal x (in sorted order) into knots: x, weighted mean of y, summed weight. */
static gpuiso_status pool_ties(int64_t n, const double *x, const double *y, const double *w,
                               const keyed_index *sorted, gpuiso_knots *kn, double *ymean,
                               gpuiso_error *err) {
  int64_t d = -1;
  double xprev = 0, sw = 0, swy = 0;
  for (int64_t p = 0; p < n; p++) {
    int64_t i = at(sorted, p);
    double yi = y[i], wi = w ? w[i] : 1.0;
    if (!isfinite(yi)) {
      set_error(err, GPUISO_E_Y_NONFINITE, i, -1);
      return GPUISO_E_Y_NONFINITE;
    }
    if (!(wi >= 0 && wi < INFINITY)) {
      gpuiso_status s = wi < 0 ? GPUISO_E_W_NEGATIVE : GPUISO_E_W_NONFINITE;
      set_error(err, s, i, -1);
      return s;
    }
    if (d < 0 || x[i] != xprev) {
      if (d >= 0) ymean[d] = sw > 0 ? swy / sw : 0;
      d++;
      xprev = x[i];
      kn->x[d] = xprev == 0 ? 0 : xprev; /* -0 -> 0 */
      sw = swy = 0;
    }
    sw += wi;
    swy += wi * yi;
    kn->weight[d] = sw;
    if (!isfinite(swy) || !isfinite(sw)) {
      set_error(err, GPUISO_E_OVERFLOW, i, -1);
      return GPUISO_E_OVERFLOW;
    }
  }
  if (d >= 0) ymean[d] = sw > 0 ? swy / sw : 0;
  kn->n = d + 1;
  return GPUISO_OK;
}

static gpuiso_status fit_pooled(int64_t n, const double *x, const double *y, const double *w,
                                const gpuiso_opts *opt, const keyed_index *sorted, double *fit,
                                gpuiso_knots *kn, gpuiso_error *err) {
  size_t m = (size_t)n;
  double *ymean = malloc(m * sizeof *ymean);
  kn->x = malloc(m * sizeof *kn->x);
  kn->weight = malloc(m * sizeof *kn->weight);
  if (!ymean || !kn->x || !kn->weight) {
    free(ymean);
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  gpuiso_status s = pool_ties(n, x, y, w, sorted, kn, ymean, err);
  if (s == GPUISO_OK) {
    kn->level = malloc((size_t)kn->n * sizeof *kn->level);
    kn->start = malloc((size_t)kn->n);
    s = kn->level && kn->start ? GPUISO_OK : GPUISO_E_NOMEM;
    if (s != GPUISO_OK) set_error(err, s, -1, -1);
  }
  if (s == GPUISO_OK)
    s = gpuiso_pav(kn->n, ymean, kn->weight, opt, kn->level, kn->start, &kn->nblocks, err);
  free(ymean);
  if (s != GPUISO_OK) return s;

  int64_t d = 0;
  for (int64_t p = 0; p < n; p++) {
    int64_t i = at(sorted, p);
    if (p > 0 && x[i] != x[at(sorted, p - 1)]) d++;
    fit[i] = kn->level[d];
  }
  return GPUISO_OK;
}

gpuiso_status gpuiso_fit_xy(int64_t n, const double *x, const double *y, const double *w,
                            const gpuiso_opts *opt, double *fit, gpuiso_knots *kn,
                            gpuiso_error *err) {
  gpuiso_knots empty = {0};
  *kn = empty;
  enum x_order order = X_STRICT;
  gpuiso_status s = x ? scan_x(n, x, &order, err) : GPUISO_OK;
  if (s != GPUISO_OK) return s;

  if (order == X_STRICT) {
    kn->n = n;
    kn->start = malloc((size_t)(n > 0 ? n : 1));
    if (!kn->start) {
      set_error(err, GPUISO_E_NOMEM, -1, -1);
      return GPUISO_E_NOMEM;
    }
    s = gpuiso_pav(n, y, w, opt, fit, kn->start, &kn->nblocks, err);
  } else {
    keyed_index *sorted = NULL;
    if (order == X_UNSORTED) {
      sorted = radix_argsort(n, x);
      if (!sorted) {
        set_error(err, GPUISO_E_NOMEM, -1, -1);
        return GPUISO_E_NOMEM;
      }
    }
    s = poll_interrupt(opt) ? GPUISO_E_INTERRUPT : GPUISO_OK;
    if (s != GPUISO_OK) set_error(err, s, -1, -1);
    else s = fit_pooled(n, x, y, w, opt, sorted, fit, kn, err);
    free(sorted);
  }
  if (s != GPUISO_OK) gpuiso_knots_free(kn);
  return s;
}

/* Step CDFs stored as runs by threshold (gpuiso_cdf_runs): dense input, and the evaluations that
 * predictions need (values, quantiles; the CRPS is in crps.c). */
#include <stdlib.h>

#include "internal.h"

void gpuiso_cdf_runs_free(gpuiso_cdf_runs *runs) {
  free(runs->offset);
  free(runs->start);
  free(runs->value);
  runs->offset = NULL;
  runs->start = NULL;
  runs->value = NULL;
}

static int64_t dense_runs(int64_t nrow, const double *col, int32_t *start, double *value) {
  int64_t n = 0;
  for (int64_t i = 0; i < nrow; i++) {
    if (i > 0 && col[i] == col[i - 1]) continue;
    if (start) {
      start[n] = (int32_t)i;
      value[n] = col[i];
    }
    n++;
  }
  return n;
}

gpuiso_status gpuiso_cdf_runs_dense(int64_t nrow, int64_t nthr, const double *cdf,
                                    gpuiso_cdf_runs *out, gpuiso_error *err) {
  memset(out, 0, sizeof *out);
  out->nthr = nthr;
  out->npos = nrow;
  gpuiso_status st = GPUISO_OK;
  out->offset = malloc((size_t)(nthr + 1) * sizeof *out->offset);
  if (!out->offset) st = GPUISO_E_NOMEM;
  if (st == GPUISO_OK) {
    out->offset[0] = 0;
    for (int64_t k = 0; k < nthr; k++)
      out->offset[k + 1] = out->offset[k] + dense_runs(nrow, cdf + k * nrow, NULL, NULL);
    size_t total = (size_t)(out->offset[nthr] > 0 ? out->offset[nthr] : 1);
    out->start = malloc_dense(total * sizeof *out->start);
    out->value = malloc_dense(total * sizeof *out->value);
    if (!out->start || !out->value) st = GPUISO_E_NOMEM;
  }
  if (st == GPUISO_OK) {
    for (int64_t k = 0; k < nthr; k++)
      dense_runs(nrow, cdf + k * nrow, out->start + out->offset[k], out->value + out->offset[k]);
  } else {
    gpuiso_cdf_runs_free(out);
  }
  set_error(err, st, -1, -1);
  return st;
}

int64_t run_at(const int32_t *start, int64_t n, int32_t p) {
  int64_t lo = 0, hi = n - 1;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (start[mid] <= p) lo = mid; else hi = mid - 1;
  }
  return lo;
}

double cdf_run_value(const gpuiso_cdf_runs *r, int64_t k, int32_t p) {
  int64_t first = r->offset[k];
  return r->value[first + run_at(r->start + first, r->offset[k + 1] - first, p)];
}

double cdf_query_value(const gpuiso_cdf_runs *r, const gpuiso_cdf_query *q, int64_t i, int64_t k) {
  if (k < 0) return 0.0;
  int32_t p = q->pos[i];
  double v = cdf_run_value(r, k, p);
  double lam = q->lambda[i];
  return lam > 0 ? v + lam * (cdf_run_value(r, k, p + 1) - v) : v;
}

gpuiso_status gpuiso_cdf_eval(const gpuiso_cdf_runs *r, const gpuiso_cdf_query *q, int64_t nk,
                              const int64_t *kidx, int paired, const gpuiso_opts *opt, double *out,
                              gpuiso_error *err) {
  int64_t total = paired ? nk : q->n * nk;
  int nth = resolve_threads(opt, total * 8);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static)
#endif
  for (int64_t c = 0; c < total; c++) {
    int64_t i = paired ? c : c % q->n, j = paired ? c : c / q->n;
    out[c] = cdf_query_value(r, q, i, kidx[j]);
  }
  set_error(err, GPUISO_OK, -1, -1);
  return GPUISO_OK;
}

gpuiso_status gpuiso_cdf_quantile(const gpuiso_cdf_runs *r, const gpuiso_cdf_query *q,
                                  int64_t nlev, const double *level, const gpuiso_opts *opt,
                                  int64_t *kout, gpuiso_error *err) {
  int64_t total = q->n * nlev;
  int nth = resolve_threads(opt, total * 64);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static)
#endif
  for (int64_t c = 0; c < total; c++) {
    int64_t i = c % q->n;
    double a = level[c / q->n];
    int64_t lo = 0, hi = r->nthr - 1; /* F is non-decreasing in k: bisect */
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      double f = cdf_query_value(r, q, i, mid);
      /* level 0: the lowest point of the distribution, where F first exceeds 0 (isodistrreg) */
      if (a > 0 ? f >= a : f > 0) hi = mid; else lo = mid + 1;
    }
    kout[c] = lo;
  }
  set_error(err, GPUISO_OK, -1, -1);
  return GPUISO_OK;
}

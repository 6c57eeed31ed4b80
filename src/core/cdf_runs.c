/* Step CDFs stored as runs by threshold (gpuiso_cdf_runs): dense input, and the evaluations that
 * predictions need (values, quantiles, CRPS). */
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
    out->start = malloc(total * sizeof *out->start);
    out->value = malloc(total * sizeof *out->value);
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

/* F_k at position p: the last run of threshold k that starts at or before p. */
static double run_value(const gpuiso_cdf_runs *r, int64_t k, int32_t p) {
  int64_t lo = r->offset[k], hi = r->offset[k + 1] - 1;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (r->start[mid] <= p) lo = mid; else hi = mid - 1;
  }
  return r->value[lo];
}

static double query_value(const gpuiso_cdf_runs *r, const gpuiso_cdf_query *q, int64_t i, int64_t k) {
  if (k < 0) return 0.0;
  int32_t p = q->pos[i];
  double v = run_value(r, k, p);
  double lam = q->lambda[i];
  return lam > 0 ? v + lam * (run_value(r, k, p + 1) - v) : v;
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
    out[c] = query_value(r, q, i, kidx[j]);
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
      if (query_value(r, q, i, mid) >= a) hi = mid; else lo = mid + 1;
    }
    kout[c] = lo;
  }
  set_error(err, GPUISO_OK, -1, -1);
  return GPUISO_OK;
}

/* The CRPS integral over [thr[k], thr[k+1]) (k < nthr - 1), where F is f; from the last threshold
 * on F is taken as 1, so only [thr[last], y) counts; below the first threshold F is 0. */
static double crps_piece(const double *thr, int64_t nthr, int64_t k, double f, double y) {
  double t0 = thr[k], s = 0.0;
  if (k == 0 && y < t0) s += t0 - y;
  if (k == nthr - 1) return s + (y > t0 ? (y - t0) * f * f : 0.0);
  double t1 = thr[k + 1];
  double a = y < t0 ? t0 : (y > t1 ? t1 : y);
  return s + (a - t0) * f * f + (t1 - a) * (1.0 - f) * (1.0 - f);
}

/* Threads take slices of thresholds and sum into their own row of acc. Per threshold, the values
 * at all positions are laid out first when there are many queries, else each query looks its
 * value up. */
gpuiso_status gpuiso_cdf_crps(const gpuiso_cdf_runs *r, const double *thr,
                              const gpuiso_cdf_query *q, const double *y, const gpuiso_opts *opt,
                              double *out, gpuiso_error *err) {
  int64_t nq = q->n, m = r->nthr, np = r->npos;
  set_error(err, GPUISO_OK, -1, -1);
  if (nq == 0) return GPUISO_OK;
  int expand = nq * 8 >= np;
  int nth = resolve_threads(opt, m * (expand ? np + nq : nq * 8));
  if (nth > m) nth = (int)m;
  double *acc = calloc((size_t)nth * (size_t)nq, sizeof *acc);
  double **lay = calloc((size_t)nth, sizeof *lay);
  int ok = acc && lay;
  for (int t = 0; ok && expand && t < nth; t++) ok = (lay[t] = malloc((size_t)(np + 1) * sizeof **lay)) != NULL;
  gpuiso_status st = ok ? GPUISO_OK : GPUISO_E_NOMEM;
  int64_t per_round = GPUISO_POLL_EVERY / (nq + np + 1) + 1;
  for (int64_t k0 = 0; st == GPUISO_OK && k0 < m; k0 += per_round * nth) {
    int64_t k1 = k0 + per_round * nth < m ? k0 + per_round * nth : m;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static)
#endif
    for (int64_t k = k0; k < k1; k++) {
      int t = thread_num();
      double *sum = acc + (size_t)t * (size_t)nq, *f = lay[t];
      if (expand) {
        for (int64_t j = r->offset[k]; j < r->offset[k + 1]; j++) {
          int64_t end = j + 1 < r->offset[k + 1] ? r->start[j + 1] : np;
          for (int64_t p = r->start[j]; p < end; p++) f[p] = r->value[j];
        }
        f[np] = f[np - 1];
      }
      for (int64_t i = 0; i < nq; i++) {
        double v;
        if (expand) {
          v = f[q->pos[i]];
          if (q->lambda[i] > 0) v += q->lambda[i] * (f[q->pos[i] + 1] - v);
        } else {
          v = query_value(r, q, i, k);
        }
        sum[i] += crps_piece(thr, m, k, v, y[i]);
      }
    }
    if (k1 < m && poll_interrupt(opt)) st = GPUISO_E_INTERRUPT;
  }
  if (st == GPUISO_OK) {
    for (int64_t i = 0; i < nq; i++) {
      double s = 0.0;
      for (int t = 0; t < nth; t++) s += acc[(size_t)t * (size_t)nq + i];
      out[i] = s;
    }
  }
  for (int t = 0; lay && t < nth; t++) free(lay[t]);
  free(lay);
  free(acc);
  set_error(err, st, -1, -1);
  return st;
}

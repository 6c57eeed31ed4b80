/* .Call entry points for isotonic distributional regression and its predictive CDFs. Arguments
 * are checked in R; positions and threshold indices arrive 0-based. A set of step CDFs lives in
 * R as list(offset, start, value, npos) (see gpuiso_cdf_runs). */
#include <stdlib.h>

#include "r_glue.h"

/* The runs are malloc'ed, the struct too: the finalizer may run after the call has ended. */
static void free_runs(SEXP holder) {
  gpuiso_cdf_runs *r = R_ExternalPtrAddr(holder);
  if (r) {
    gpuiso_cdf_runs_free(r);
    free(r);
  }
  R_ClearExternalPtr(holder);
}

/* Copies runs made by the core into R vectors and frees them; they sit in an external pointer
 * meanwhile, so that an allocation error frees them too. */
static SEXP runs_to_r(gpuiso_cdf_runs *r) {
  SEXP holder = PROTECT(R_MakeExternalPtr(r, R_NilValue, R_NilValue));
  R_RegisterCFinalizerEx(holder, free_runs, TRUE);
  int64_t total = r->offset[r->nthr];
  const char *names[] = {"offset", "start", "value", "npos", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  double *offset = REAL(SET_VECTOR_ELT(out, 0, Rf_allocVector(REALSXP, (R_xlen_t)(r->nthr + 1))));
  for (int64_t k = 0; k <= r->nthr; k++) offset[k] = (double)r->offset[k];
  SEXP start = SET_VECTOR_ELT(out, 1, Rf_allocVector(INTSXP, (R_xlen_t)total));
  SEXP value = SET_VECTOR_ELT(out, 2, Rf_allocVector(REALSXP, (R_xlen_t)total));
  memcpy(INTEGER(start), r->start, (size_t)total * sizeof(int));
  memcpy(REAL(value), r->value, (size_t)total * sizeof(double));
  SET_VECTOR_ELT(out, 3, Rf_ScalarReal((double)r->npos));
  free_runs(holder);
  UNPROTECT(2);
  return out;
}

/* A view of R's runs for the core (the offsets converted to 64-bit). */
static gpuiso_cdf_runs runs_from_r(SEXP runs) {
  gpuiso_cdf_runs r;
  SEXP offset = VECTOR_ELT(runs, 0);
  r.nthr = (int64_t)XLENGTH(offset) - 1;
  r.npos = (int64_t)Rf_asReal(VECTOR_ELT(runs, 3));
  r.offset = (int64_t *)R_alloc((size_t)(r.nthr + 1), sizeof(int64_t));
  for (int64_t k = 0; k <= r.nthr; k++) r.offset[k] = (int64_t)REAL(offset)[k];
  r.start = INTEGER(VECTOR_ELT(runs, 1));
  r.value = REAL(VECTOR_ELT(runs, 2));
  return r;
}

static gpuiso_cdf_query query_from_r(SEXP pos, SEXP lambda) {
  gpuiso_cdf_query q = {(int64_t)XLENGTH(pos), INTEGER(pos), REAL(lambda)};
  return q;
}

static const int64_t *indices_from_r(SEXP k) {
  R_xlen_t n = XLENGTH(k);
  int64_t *out = (int64_t *)R_alloc((size_t)(n > 0 ? n : 1), sizeof(int64_t));
  for (R_xlen_t i = 0; i < n; i++) out[i] = (int64_t)REAL(k)[i];
  return out;
}

static void stop_on_error(const gpuiso_error *err) {
  r_error_context ctx = {"vector", 0, R_NilValue, R_NilValue, R_NilValue};
  r_stop_on_error(err, &ctx);
}

static gpuiso_cdf_runs *new_runs(void) {
  gpuiso_cdf_runs *r = malloc(sizeof *r);
  if (!r) Rf_errorcall(R_NilValue, "gpuiso: out of memory");
  return r;
}

static SEXP fitted_runs(gpuiso_status st, gpuiso_cdf_runs *r, const gpuiso_error *err) {
  if (st != GPUISO_OK) {
    free(r); /* the core has released the runs */
    stop_on_error(err);
  }
  return runs_to_r(r);
}

/* gpu: TRUE for the CUDA engine (gpuiso_cuda_idr_fit), FALSE for the CPU's. */
SEXP C_idr_fit(SEXP pos, SEXP thr, SEXP w, SEXP npos, SEXP nthr, SEXP gpu) {
  gpuiso_opts opt = r_plain_opts();
  gpuiso_error err;
  gpuiso_cdf_runs *r = new_runs();
  gpuiso_status (*fit)(int64_t, const int32_t *, const int32_t *, const double *, int64_t,
                       int64_t, const gpuiso_opts *, gpuiso_cdf_runs *, gpuiso_error *) =
      Rf_asLogical(gpu) == 1 ? gpuiso_cuda_idr_fit : gpuiso_idr_fit;
  gpuiso_status st = fit((int64_t)XLENGTH(pos), INTEGER(pos), INTEGER(thr), r_optional_real(w),
                         (int64_t)Rf_asReal(npos), (int64_t)Rf_asReal(nthr), &opt, r, &err);
  return fitted_runs(st, r, &err);
}

SEXP C_cdf_dense(SEXP cdf) {
  gpuiso_error err;
  gpuiso_cdf_runs *r = new_runs();
  gpuiso_status st = gpuiso_cdf_runs_dense(Rf_nrows(cdf), Rf_ncols(cdf), REAL(cdf), r, &err);
  return fitted_runs(st, r, &err);
}

SEXP C_cdf_eval(SEXP runs, SEXP pos, SEXP lambda, SEXP k, SEXP paired) {
  gpuiso_opts opt = r_plain_opts();
  gpuiso_error err;
  gpuiso_cdf_runs r = runs_from_r(runs);
  gpuiso_cdf_query q = query_from_r(pos, lambda);
  int pair = Rf_asLogical(paired) == 1;
  int64_t nk = (int64_t)XLENGTH(k);
  SEXP out = PROTECT(pair ? Rf_allocVector(REALSXP, (R_xlen_t)nk)
                          : Rf_allocMatrix(REALSXP, (int)q.n, (int)nk));
  if (gpuiso_cdf_eval(&r, &q, nk, indices_from_r(k), pair, &opt, REAL(out), &err) != GPUISO_OK)
    stop_on_error(&err);
  UNPROTECT(1);
  return out;
}

/* Returns the 0-based threshold index of each quantile, as a q->n x length(level) matrix. */
SEXP C_cdf_quantile(SEXP runs, SEXP pos, SEXP lambda, SEXP level) {
  gpuiso_opts opt = r_plain_opts();
  gpuiso_error err;
  gpuiso_cdf_runs r = runs_from_r(runs);
  gpuiso_cdf_query q = query_from_r(pos, lambda);
  int64_t nlev = (int64_t)XLENGTH(level);
  int64_t *k = (int64_t *)R_alloc((size_t)(q.n * nlev > 0 ? q.n * nlev : 1), sizeof(int64_t));
  if (gpuiso_cdf_quantile(&r, &q, nlev, REAL(level), &opt, k, &err) != GPUISO_OK)
    stop_on_error(&err);
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, (int)q.n, (int)nlev));
  for (int64_t i = 0; i < q.n * nlev; i++) REAL(out)[i] = (double)k[i];
  UNPROTECT(1);
  return out;
}

SEXP C_cdf_crps(SEXP runs, SEXP thr, SEXP pos, SEXP lambda, SEXP y) {
  gpuiso_opts opt = r_plain_opts();
  gpuiso_error err;
  gpuiso_cdf_runs r = runs_from_r(runs);
  gpuiso_cdf_query q = query_from_r(pos, lambda);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)q.n));
  if (gpuiso_cdf_crps(&r, REAL(thr), &q, REAL(y), &opt, REAL(out), &err) != GPUISO_OK)
    stop_on_error(&err);
  UNPROTECT(1);
  return out;
}

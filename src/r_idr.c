/* .Call entry points for isotonic distributional regression and its predictive CDFs. Arguments
 * of fits are checked in R; predictions, which R code can edit, are checked here (see
 * predictions_from_r). Positions and threshold indices arrive 0-based. A set of step CDFs lives
 * in R as list(offset, start, value, npos) (see gpuiso_cdf_runs). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  SEXP start = SET_VECTOR_ELT(out, 1, r_alloc_result(INTSXP, (R_xlen_t)total));
  SEXP value = SET_VECTOR_ELT(out, 2, r_alloc_result(REALSXP, (R_xlen_t)total));
  memcpy(INTEGER(start), r->start, (size_t)total * sizeof(int));
  memcpy(REAL(value), r->value, (size_t)total * sizeof(double));
  SET_VECTOR_ELT(out, 3, Rf_ScalarReal((double)r->npos));
  free_runs(holder);
  UNPROTECT(2);
  return out;
}

/* ---- Predictions from R, checked ----------------------------------------------------------
 * A "gpuiso_idr" object is list(runs, thresholds, pos, lambda, bounds), runs being
 * list(offset, start, value, npos). R code can edit these, an object saved by another version of
 * gpuiso may differ, and one may be built by hand: every entry point below reads a prediction
 * only through predictions_from_r, which checks all that the core reads (types, lengths, the
 * offsets, the runs of each threshold, positions and fractions in range), so that a bad object is
 * an R error naming the argument, never an access out of bounds or a silently wrong value. */

typedef struct {
  gpuiso_cdf_runs r;
  gpuiso_cdf_query q;
  const double *thr;
} idr_view;

static void invalid(SEXP arg, const char *problem) {
  r_invalid(CHAR(STRING_ELT(arg, 0)), "gpuiso IDR object", problem);
}

/* The element called name of list, or R's NULL. */
static SEXP element(SEXP list, const char *name) {
  SEXP names = Rf_getAttrib(list, R_NamesSymbol);
  if (TYPEOF(list) != VECSXP || TYPEOF(names) != STRSXP) return R_NilValue;
  for (R_xlen_t i = 0; i < XLENGTH(list); i++)
    if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return VECTOR_ELT(list, i);
  return R_NilValue;
}

static SEXP typed_element(SEXP list, const char *name, SEXPTYPE type, SEXP arg) {
  SEXP v = element(list, name);
  if (TYPEOF(v) != type) {
    char problem[96];
    snprintf(problem, sizeof problem, "its `%s` is missing or not of type %s", name,
             Rf_type2char(type));
    invalid(arg, problem);
  }
  return v;
}

/* The runs of each threshold, whose offsets are checked: 0 when they start at position 0, increase
 * below npos and hold values in [0, 1]; else the highest of the codes 1, 2, 3 of these that fail
 * (the same whatever the threads). In parallel: a large fit has millions of runs, checked at
 * every call. */
static int runs_problem(const gpuiso_cdf_runs *r) {
  int bad = 0;
#ifdef _OPENMP
  int nth = r->offset[r->nthr] < ((int64_t)1 << 16) ? 1 : gpuiso_get_threads();
#pragma omp parallel for num_threads(nth) schedule(static) reduction(max : bad)
#endif
  for (int64_t k = 0; k < r->nthr; k++) {
    int64_t first = r->offset[k], end = r->offset[k + 1];
    int why = first < end && r->start[first] != 0 ? 1 : 0;
    for (int64_t j = first + 1; !why && j < end; j++)
      if (!(r->start[j] > r->start[j - 1] && r->start[j] < r->npos)) why = 2;
    for (int64_t j = first; !why && j < end; j++)
      if (!(r->value[j] >= 0 && r->value[j] <= 1)) why = 3;
    if (why > bad) bad = why;
  }
  return bad;
}

static gpuiso_cdf_runs runs_from_r(SEXP runs, SEXP arg) {
  gpuiso_cdf_runs r;
  if (TYPEOF(runs) != VECSXP) invalid(arg, "its `runs` is missing or not a list");
  SEXP offset = typed_element(runs, "offset", REALSXP, arg);
  SEXP start = typed_element(runs, "start", INTSXP, arg);
  SEXP value = typed_element(runs, "value", REALSXP, arg);
  SEXP npos = element(runs, "npos");
  if (!Rf_isNumeric(npos) || XLENGTH(npos) != 1) invalid(arg, "its `runs$npos` is not one number");
  double np = Rf_asReal(npos);
  if (!(np >= 0 && np <= INT_MAX && np == floor(np)))
    invalid(arg, "its `runs$npos` is not a whole number from 0 to 2^31 - 1");
  R_xlen_t total = XLENGTH(start);
  if (XLENGTH(value) != total) invalid(arg, "its `runs$start` and `runs$value` differ in length");
  if (XLENGTH(offset) < 2) invalid(arg, "its `runs$offset` has fewer than 2 elements");
  r.nthr = (int64_t)XLENGTH(offset) - 1;
  r.npos = (int64_t)np;
  r.offset = (int64_t *)R_alloc((size_t)(r.nthr + 1), sizeof(int64_t));
  const double *off = REAL(offset);
  if (off[0] != 0) invalid(arg, "its `runs$offset` does not start at 0");
  r.offset[0] = 0;
  for (int64_t k = 1; k <= r.nthr; k++) {
    /* every threshold has a run at each position: at least one, none without positions (the
     * dense runs of no CDFs) */
    int ok = r.npos > 0 ? off[k] > off[k - 1] : off[k] == off[k - 1];
    if (!(ok && off[k] <= (double)total && off[k] == floor(off[k])))
      invalid(arg, "its `runs$offset` is not increasing whole numbers up to the number of runs");
    r.offset[k] = (int64_t)off[k];
  }
  if (r.offset[r.nthr] != (int64_t)total) invalid(arg, "its `runs$offset` does not end at the number of runs");
  r.start = INTEGER(start);
  r.value = REAL(value);
  static const char *problem[] = {
      NULL, "a threshold's runs in `runs$start` do not start at position 0",
      "a threshold's runs in `runs$start` are not increasing positions below `runs$npos`",
      "its `runs$value` has a CDF value outside [0, 1]"};
  int bad = runs_problem(&r);
  if (bad) invalid(arg, problem[bad]);
  return r;
}

static idr_view predictions_from_r(SEXP pred, SEXP arg) {
  idr_view v;
  if (TYPEOF(pred) != VECSXP) invalid(arg, "it is not a list");
  v.r = runs_from_r(element(pred, "runs"), arg);
  SEXP thr = typed_element(pred, "thresholds", REALSXP, arg);
  SEXP pos = typed_element(pred, "pos", INTSXP, arg);
  SEXP lambda = typed_element(pred, "lambda", REALSXP, arg);
  if (XLENGTH(thr) != v.r.nthr) invalid(arg, "its `thresholds` do not match its runs in number");
  v.thr = REAL(thr);
  for (int64_t k = 0; k < v.r.nthr; k++) {
    if (!isfinite(v.thr[k]) || (k > 0 && !(v.thr[k] > v.thr[k - 1])))
      invalid(arg, "its `thresholds` are not finite and increasing");
  }
  if (XLENGTH(lambda) != XLENGTH(pos)) invalid(arg, "its `pos` and `lambda` differ in length");
  if (XLENGTH(pos) > INT_MAX) invalid(arg, "it has more than 2^31 - 1 predictions");
  v.q.n = (int64_t)XLENGTH(pos);
  v.q.pos = INTEGER(pos);
  v.q.lambda = REAL(lambda);
  for (int64_t i = 0; i < v.q.n; i++) {
    int32_t p = v.q.pos[i];
    double lam = v.q.lambda[i];
    if (!(p >= 0 && p < v.r.npos)) invalid(arg, "its `pos` has a position outside the runs");
    /* lambda > 0 reads position p + 1 */
    if (!(lam >= 0 && lam <= 1) || (lam > 0 && p + 1 >= v.r.npos))
      invalid(arg, "its `lambda` has a fraction outside [0, 1] or past the last position");
  }
  return v;
}

SEXP C_check_predictions(SEXP pred, SEXP arg) {
  predictions_from_r(pred, arg);
  return R_NilValue;
}

/* For each value t of at, the 0-based index of the last threshold at or below it (below it when
 * left_open), -1 when there is none: where the step CDFs are evaluated at t (just below t).
 * Increasing values (all the thresholds, say) are found in one walk, others by bisection. */
static const int64_t *threshold_indices(SEXP at, const idr_view *v, int left_open) {
  R_xlen_t n = XLENGTH(at);
  const double *t = REAL(at);
  int64_t *out = r_alloc_dense((size_t)n, sizeof(int64_t));
  int sorted = 1;
  for (R_xlen_t i = 1; sorted && i < n; i++) sorted = t[i] >= t[i - 1];
#define BELOW(k, x) (left_open ? v->thr[k] < (x) : v->thr[k] <= (x))
  int64_t lo = 0; /* the thresholds before lo are below t[i] (or at it) */
  for (R_xlen_t i = 0; i < n; i++) {
    if (sorted) {
      while (lo < v->r.nthr && BELOW(lo, t[i])) lo++;
    } else {
      int64_t hi = v->r.nthr;
      lo = 0;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (BELOW(mid, t[i])) lo = mid + 1; else hi = mid;
      }
    }
    out[i] = lo - 1;
  }
#undef BELOW
  return out;
}

static void stop_on_error(const gpuiso_error *err) {
  r_error_context ctx = {"vector", 0, R_NilValue, R_NilValue, R_NilValue, {"X", "y", "weights"}, R_NilValue};
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

/* list(distinct values increasing, each element's 0-based rank among them) of v (double), for
 * IDR's positions and thresholds and for numeric group ids; NULL where v has a value that is not
 * finite (IDR checks its values first; group ids are then ranked by R). */
SEXP C_distinct_codes(SEXP v) {
  R_xlen_t n = XLENGTH(v);
  if (TYPEOF(v) != REALSXP || n > INT_MAX)
    Rf_errorcall(R_NilValue, "gpuiso: internal error: distinct codes of a double vector expected");
  gpuiso_error err;
  double *distinct = r_alloc_dense((size_t)n, sizeof *distinct);
  SEXP code = PROTECT(r_alloc_result(INTSXP, n));
  int64_t nd = 0;
  gpuiso_status st = gpuiso_distinct_codes((int64_t)n, REAL(v), distinct, INTEGER(code), &nd, &err);
  if (st == GPUISO_E_X_NONFINITE) {
    UNPROTECT(1);
    return R_NilValue;
  }
  if (st != GPUISO_OK) stop_on_error(&err);
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SEXP values = Rf_allocVector(REALSXP, (R_xlen_t)nd);
  SET_VECTOR_ELT(out, 0, values);
  if (nd > 0) memcpy(REAL(values), distinct, (size_t)nd * sizeof *distinct);
  SET_VECTOR_ELT(out, 1, code);
  UNPROTECT(2);
  return out;
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

/* The CDFs at the values at (double, checked in R), or just below them with left_open; paired:
 * at[i] for prediction i. */
SEXP C_cdf_eval(SEXP pred, SEXP at, SEXP paired, SEXP left_open, SEXP arg) {
  gpuiso_opts opt = r_plain_opts();
  gpuiso_error err;
  idr_view v = predictions_from_r(pred, arg);
  int pair = Rf_asLogical(paired) == 1;
  int64_t nk = (int64_t)XLENGTH(at);
  if (TYPEOF(at) != REALSXP || (pair ? nk != v.q.n : nk > INT_MAX))
    Rf_errorcall(R_NilValue, "gpuiso: internal error: values do not match the predictions");
  const int64_t *kidx = threshold_indices(at, &v, Rf_asLogical(left_open) == 1);
  SEXP out = PROTECT(r_dense(pair ? Rf_allocVector(REALSXP, (R_xlen_t)nk)
                                  : Rf_allocMatrix(REALSXP, (int)v.q.n, (int)nk)));
  if (gpuiso_cdf_eval(&v.r, &v.q, nk, kidx, pair, &opt, REAL(out), &err) != GPUISO_OK)
    stop_on_error(&err);
  UNPROTECT(1);
  return out;
}

/* Returns the 0-based threshold index of each quantile, as a q.n x length(level) matrix. */
SEXP C_cdf_quantile(SEXP pred, SEXP level, SEXP arg) {
  gpuiso_opts opt = r_plain_opts();
  gpuiso_error err;
  idr_view v = predictions_from_r(pred, arg);
  int64_t nlev = (int64_t)XLENGTH(level);
  if (nlev > INT_MAX) Rf_errorcall(R_NilValue, "`quantiles` has more than 2^31 - 1 levels");
  int64_t *k = r_alloc_dense((size_t)(v.q.n * nlev), sizeof(int64_t));
  if (gpuiso_cdf_quantile(&v.r, &v.q, nlev, REAL(level), &opt, k, &err) != GPUISO_OK)
    stop_on_error(&err);
  SEXP out = PROTECT(r_dense(Rf_allocMatrix(REALSXP, (int)v.q.n, (int)nlev)));
  double *index = REAL(out);
  for (int64_t i = 0; i < v.q.n * nlev; i++) index[i] = (double)k[i];
  UNPROTECT(1);
  return out;
}

/* Progress goes to an R function of the fraction done. R_tryEvalSilent catches an interrupt
 * there as a failure (an error too), which must stop the work or the interrupt is lost. */
static int report_to_r(void *ctx, double done) {
  SEXP call = PROTECT(Rf_lang2((SEXP)ctx, Rf_ScalarReal(done)));
  int failed;
  R_tryEvalSilent(call, R_GlobalEnv, &failed);
  UNPROTECT(1);
  return failed;
}

/* y: one finite observation per prediction (checked in R); report is NULL or a function of the
 * fraction done. */
SEXP C_cdf_crps(SEXP pred, SEXP y, SEXP arg, SEXP report) {
  gpuiso_opts opt = r_plain_opts();
  gpuiso_error err;
  gpuiso_progress progress = {report_to_r, report};
  idr_view v = predictions_from_r(pred, arg);
  if (TYPEOF(y) != REALSXP || XLENGTH(y) != v.q.n)
    Rf_errorcall(R_NilValue, "gpuiso: internal error: observations do not match the predictions");
  SEXP out = PROTECT(r_alloc_result(REALSXP, (R_xlen_t)v.q.n));
  if (gpuiso_cdf_crps(&v.r, v.thr, &v.q, REAL(y), &opt, Rf_isFunction(report) ? &progress : NULL,
                      REAL(out), &err) != GPUISO_OK)
    stop_on_error(&err);
  UNPROTECT(1);
  return out;
}

/* ---- Several covariates (a partial order) -------------------------------------------------
 * A poset lives in R as list(first, cover): first (double, npos + 1) and cover (integer, 0-based),
 * made by C_poset_reduce and used inside idr() only. */

/* The poset and its struct are malloc'ed: the finalizer may run after the call has ended. */
static void free_poset(SEXP holder) {
  gpuiso_poset *g = R_ExternalPtrAddr(holder);
  if (g) {
    gpuiso_poset_free(g);
    free(g);
  }
  R_ClearExternalPtr(holder);
}

SEXP C_poset_reduce(SEXP x) {
  gpuiso_opts opt = r_plain_opts();
  gpuiso_error err;
  gpuiso_poset *g = malloc(sizeof *g);
  if (!g) Rf_errorcall(R_NilValue, "gpuiso: out of memory");
  if (gpuiso_poset_reduce(Rf_nrows(x), Rf_ncols(x), REAL(x), &opt, g, &err) != GPUISO_OK) {
    free(g);
    stop_on_error(&err);
  }
  /* g sits in an external pointer while it is copied, so that an allocation error frees it */
  SEXP holder = PROTECT(R_MakeExternalPtr(g, R_NilValue, R_NilValue));
  R_RegisterCFinalizerEx(holder, free_poset, TRUE);
  const char *names[] = {"first", "cover", ""};
  int64_t nedge = g->first[g->npos];
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SEXP first = SET_VECTOR_ELT(out, 0, Rf_allocVector(REALSXP, (R_xlen_t)(g->npos + 1)));
  SEXP cover = SET_VECTOR_ELT(out, 1, Rf_allocVector(INTSXP, (R_xlen_t)nedge));
  double *first_of = REAL(first);
  for (int64_t p = 0; p <= g->npos; p++) first_of[p] = (double)g->first[p];
  memcpy(INTEGER(cover), g->cover, (size_t)nedge * sizeof(int));
  free_poset(holder);
  UNPROTECT(2);
  return out;
}

static gpuiso_poset poset_from_r(SEXP poset) {
  gpuiso_poset g;
  SEXP first = VECTOR_ELT(poset, 0), cover = VECTOR_ELT(poset, 1);
  g.npos = (int64_t)XLENGTH(first) - 1;
  g.first = (int64_t *)R_alloc((size_t)(g.npos + 1), sizeof(int64_t));
  const double *first_of = REAL(first);
  for (int64_t p = 0; p <= g.npos; p++) g.first[p] = (int64_t)first_of[p];
  g.cover = INTEGER(cover);
  return g;
}

SEXP C_poset_antitonic(SEXP poset, SEXP sum, SEXP weight) {
  gpuiso_opts opt = r_plain_opts();
  gpuiso_error err;
  gpuiso_poset g = poset_from_r(poset);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)g.npos));
  if (gpuiso_poset_antitonic(&g, REAL(sum), REAL(weight), &opt, REAL(out), &err) != GPUISO_OK)
    stop_on_error(&err);
  UNPROTECT(1);
  return out;
}

/* pos (0-based points), thr (0-based thresholds), w (NULL: 1) and slot (0-based) are checked in
 * R; report is NULL or a function of the fraction done. */
SEXP C_idr_poset_fit(SEXP poset, SEXP pos, SEXP thr, SEXP w, SEXP nthr, SEXP slot, SEXP report) {
  gpuiso_opts opt = r_plain_opts();
  gpuiso_error err;
  gpuiso_poset g = poset_from_r(poset);
  gpuiso_progress progress = {report_to_r, report};
  gpuiso_cdf_runs *r = new_runs();
  gpuiso_status st = gpuiso_idr_poset_fit(&g, (int64_t)XLENGTH(pos), INTEGER(pos), INTEGER(thr),
                                          r_optional_real(w), (int64_t)Rf_asReal(nthr),
                                          INTEGER(slot), &opt,
                                          Rf_isFunction(report) ? &progress : NULL, r, &err);
  return fitted_runs(st, r, &err);
}

/* Predictions at the rows of xnew (m x d) from a fit's runs over the points x (npos x d, sorted
 * lexicographically) at slots slot, and climatology clim: list(runs, lambda). The fit's parts
 * come from an R object that may have been edited, so all are checked (arg names it). */
SEXP C_idr_poset_predict(SEXP runs, SEXP x, SEXP slot, SEXP xnew, SEXP clim, SEXP arg) {
  gpuiso_opts opt = r_plain_opts();
  gpuiso_error err;
  gpuiso_cdf_runs fit = runs_from_r(runs, arg);
  if (TYPEOF(x) != REALSXP || !Rf_isMatrix(x) || Rf_nrows(x) != fit.npos || fit.npos < 1)
    invalid(arg, "its points do not match its runs");
  int64_t d = Rf_ncols(x);
  if (TYPEOF(slot) != INTSXP || XLENGTH(slot) != fit.npos)
    invalid(arg, "its slots do not match its runs");
  uint8_t *seen = (uint8_t *)R_alloc((size_t)fit.npos, 1);
  memset(seen, 0, (size_t)fit.npos);
  const int *slot_of = INTEGER(slot);
  for (int64_t p = 0; p < fit.npos; p++) {
    int s = slot_of[p];
    if (s < 0 || s >= fit.npos || seen[s]) invalid(arg, "its slots are not a permutation of its points");
    seen[s] = 1;
  }
  const double *point = REAL(x);
  for (int64_t i = 0; i < XLENGTH(x); i++)
    if (!isfinite(point[i])) invalid(arg, "its points are not finite");
  if (TYPEOF(clim) != REALSXP || XLENGTH(clim) != fit.nthr)
    invalid(arg, "its climatology does not match its thresholds");
  const double *cdf = REAL(clim);
  for (int64_t k = 0; k < fit.nthr; k++)
    if (!(cdf[k] >= 0 && cdf[k] <= 1 && (k == 0 || cdf[k] >= cdf[k - 1])))
      invalid(arg, "its climatology is not a CDF");
  if (TYPEOF(xnew) != REALSXP || Rf_ncols(xnew) != d)
    Rf_errorcall(R_NilValue, "gpuiso: internal error: new points do not match the fit");
  int64_t m = Rf_nrows(xnew);
  const char *names[] = {"runs", "lambda", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SEXP lambda = SET_VECTOR_ELT(out, 1, Rf_allocVector(REALSXP, (R_xlen_t)m));
  gpuiso_cdf_runs *r = new_runs();
  gpuiso_status st = gpuiso_idr_poset_predict(&fit, d, REAL(x), INTEGER(slot), m, REAL(xnew),
                                              REAL(clim), &opt, r, REAL(lambda), &err);
  SET_VECTOR_ELT(out, 0, fitted_runs(st, r, &err));
  UNPROTECT(1);
  return out;
}

/* .Call entry points for the fits: one row, matrix batches and groups. Arguments are checked
 * in R (types, lengths); values (finite, non-negative weights) are checked by the core. */
#include <stdlib.h>
#include <string.h>

#include "r_glue.h"

/* Block starts (flags) as 1-based indices, integer while they fit. */
static SEXP flags_to_index(const uint8_t *flag, int64_t n, int64_t nblocks) {
  int as_int = n <= INT_MAX;
  SEXP out = r_alloc_result(as_int ? INTSXP : REALSXP, (R_xlen_t)nblocks);
  gpuiso_flag_positions(flag, n, as_int ? INTEGER(out) : NULL, as_int ? NULL : REAL(out));
  return out;
}

void r_release_sorted(SEXP holder) {
  gpuiso_sorted_free(R_ExternalPtrAddr(holder));
  R_ClearExternalPtr(holder);
}

/* Returns the holder protected: the caller unprotects it. */
SEXP r_hold_sorted(gpuiso_sorted *sorted) {
  SEXP holder = PROTECT(R_MakeExternalPtr(sorted, R_NilValue, R_NilValue));
  R_RegisterCFinalizerEx(holder, r_release_sorted, TRUE);
  return holder;
}

/* Flags as a logical vector. */
static SEXP flags_to_logical(const uint8_t *flag, R_xlen_t n) {
  SEXP out = r_alloc_result(LGLSXP, n);
  int *v = LOGICAL(out);
  for (R_xlen_t i = 0; i < n; i++) v[i] = flag[i];
  return out;
}

/* Level flags (where the level changes) in place of the solver's blocks of a gradient fit, so
 * that the fit's blocks are those of a plain one; returns their number. */
static int64_t level_flags(const double *level, int64_t n, uint8_t *flag) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; i++) count += flag[i] = i == 0 || level[i] != level[i - 1];
  return count;
}

static void r_release_knots(SEXP holder) {
  free(R_ExternalPtrAddr(holder));
  R_ClearExternalPtr(holder);
}

/* Positions in x order (0-based) as R's 1-based indices, out[5], and their block flags, out[6]. */
static void set_grad_order(SEXP out, const int64_t *order, const uint8_t *start, R_xlen_t n) {
  SEXP o = SET_VECTOR_ELT(out, 5, r_alloc_result(n <= INT_MAX ? INTSXP : REALSXP, n));
  if (TYPEOF(o) == INTSXP) {
    int *v = INTEGER(o);
    for (R_xlen_t i = 0; i < n; i++) v[i] = (int)(order[i] + 1);
  } else {
    double *v = REAL(o);
    for (R_xlen_t i = 0; i < n; i++) v[i] = (double)(order[i] + 1);
  }
  SET_VECTOR_ELT(out, 6, flags_to_logical(start, n));
}

/* fit_unsorted on the device (gpuiso_cuda_fit_xy): sorted, pooled and fitted there; the knots
 * come back in one allocation, held by an external pointer while R's vectors are made. */
static SEXP fit_unsorted_gpu(SEXP x, SEXP y, SEXP w, const gpuiso_opts *opt, SEXP out,
                             gpuiso_knots *kn, const r_error_context *ctx) {
  R_xlen_t n = XLENGTH(y);
  int64_t *order = opt->solver_blocks ? r_alloc_dense((size_t)n, sizeof *order) : NULL;
  uint8_t *start = opt->solver_blocks ? r_alloc_dense((size_t)n, 1) : NULL;
  gpuiso_knots got;
  gpuiso_error err;
  if (gpuiso_cuda_fit_xy(n, REAL(x), REAL(y), r_optional_real(w), opt, REAL(VECTOR_ELT(out, 0)), &got,
                         order, start, &err) != GPUISO_OK)
    r_stop_on_error(&err, ctx);
  SEXP holder = PROTECT(R_MakeExternalPtr(got.x, R_NilValue, R_NilValue));
  R_RegisterCFinalizerEx(holder, r_release_knots, TRUE);
  R_xlen_t nk = (R_xlen_t)got.n;
  kn->n = got.n;
  kn->nblocks = got.nblocks;
  kn->x = REAL(SET_VECTOR_ELT(out, 1, r_alloc_result(REALSXP, nk)));
  kn->level = REAL(SET_VECTOR_ELT(out, 2, r_alloc_result(REALSXP, nk)));
  kn->weight = REAL(SET_VECTOR_ELT(out, 3, r_alloc_result(REALSXP, nk)));
  SEXP flags = PROTECT(r_alloc_result(RAWSXP, nk));
  kn->start = RAW(flags);
  memcpy(kn->x, got.x, (size_t)nk * sizeof(double));
  memcpy(kn->level, got.level, (size_t)nk * sizeof(double));
  memcpy(kn->weight, got.weight, (size_t)nk * sizeof(double));
  memcpy(kn->start, got.start, (size_t)nk);
  r_release_knots(holder);
  if (opt->solver_blocks) {
    set_grad_order(out, order, start, n);
    kn->nblocks = level_flags(kn->level, kn->n, kn->start);
  }
  UNPROTECT(2);
  return flags;
}

/* Fit on x that is not strictly increasing: sort, then fit into knot vectors of the right size.
 * The sorted records live in an external pointer meanwhile, so that an allocation error frees
 * them too. With the solver's blocks (opt->solver_blocks), out[5] and out[6] get the elements in
 * x order (1-based) and their block flags. */
static SEXP fit_unsorted(SEXP x, SEXP y, SEXP w, const gpuiso_opts *opt, SEXP out,
                         gpuiso_knots *kn, const r_error_context *ctx) {
  gpuiso_error err;
  gpuiso_sorted *sorted;
  int64_t nk;
  if (gpuiso_sort_xy(XLENGTH(y), REAL(x), REAL(y), r_optional_real(w), opt, &sorted, &nk, &err) !=
      GPUISO_OK)
    r_stop_on_error(&err, ctx);
  SEXP holder = r_hold_sorted(sorted);
  kn->x = REAL(SET_VECTOR_ELT(out, 1, r_alloc_result(REALSXP, (R_xlen_t)nk)));
  kn->level = REAL(SET_VECTOR_ELT(out, 2, r_alloc_result(REALSXP, (R_xlen_t)nk)));
  kn->weight = REAL(SET_VECTOR_ELT(out, 3, r_alloc_result(REALSXP, (R_xlen_t)nk)));
  SEXP flags = PROTECT(r_alloc_result(RAWSXP, (R_xlen_t)nk));
  kn->start = RAW(flags);
  gpuiso_status s = gpuiso_fit_sorted(sorted, opt, REAL(VECTOR_ELT(out, 0)), kn, &err);
  if (s != GPUISO_OK) {
    r_release_sorted(holder);
    r_stop_on_error(&err, ctx);
  }
  if (opt->solver_blocks) {
    R_xlen_t n = XLENGTH(y);
    int64_t *order = r_alloc_dense((size_t)n, sizeof *order);
    uint8_t *start = r_alloc_dense((size_t)n, 1);
    gpuiso_sorted_order(sorted, kn->start, order, start);
    set_grad_order(out, order, start, n);
    kn->nblocks = level_flags(kn->level, kn->n, kn->start);
  }
  r_release_sorted(holder);
  UNPROTECT(2);
  return flags;
}

/* Returns list(fitted, knots, level, knot_weight, block_start, grad_order, grad_start); knots,
 * level and knot_weight are NULL when the knots are the input itself (x missing or strictly
 * increasing). With grad TRUE the solver's blocks are recorded for the gradient: grad_start flags
 * them on the elements in x order, the elements of grad_order (NULL: in input order). */
SEXP C_isoreg_fit(SEXP x, SEXP y, SEXP w, SEXP increasing, SEXP lo, SEXP hi, SEXP engine,
                  SEXP single, SEXP grad, SEXP names) {
  int64_t n = (int64_t)XLENGTH(y);
  gpuiso_opts opt = r_fit_opts(increasing, lo, hi, engine, single);
  opt.solver_blocks = Rf_asLogical(grad) == 1;
  gpuiso_error err;
  r_error_context ctx = {"vector", 0, x, y, w};
  /* a formula's variables and `weights` for x, y and w, where given (NA: the plain name) */
  for (int k = 0; k < 3 && TYPEOF(names) == STRSXP && XLENGTH(names) == 3; k++)
    if (STRING_ELT(names, k) != NA_STRING) ctx.names[k] = CHAR(STRING_ELT(names, k));
  int strict = 1;
  if (!Rf_isNull(x) && gpuiso_scan_x(n, REAL(x), &strict, &err) != GPUISO_OK)
    r_stop_on_error(&err, &ctx);

  SEXP out = PROTECT(Rf_allocVector(VECSXP, 7));
  SEXP fit = SET_VECTOR_ELT(out, 0, r_alloc_result(REALSXP, XLENGTH(y)));
  gpuiso_knots kn = {n, NULL, NULL, NULL, NULL, 0};
  SEXP flags;
  if (strict) {
    flags = PROTECT(r_alloc_result(RAWSXP, XLENGTH(y)));
    kn.start = RAW(flags);
    if (gpuiso_fit(n, REAL(y), r_optional_real(w), &opt, REAL(fit), kn.start, &kn.nblocks, &err) !=
        GPUISO_OK)
      r_stop_on_error(&err, &ctx);
    if (opt.solver_blocks) {
      SET_VECTOR_ELT(out, 6, flags_to_logical(kn.start, XLENGTH(y)));
      kn.nblocks = level_flags(REAL(fit), n, kn.start);
    }
  } else {
    flags = PROTECT(opt.engine == GPUISO_GPU ? fit_unsorted_gpu(x, y, w, &opt, out, &kn, &ctx)
                                             : fit_unsorted(x, y, w, &opt, out, &kn, &ctx));
  }
  SET_VECTOR_ELT(out, 4, flags_to_index(kn.start, kn.n, kn.nblocks));
  UNPROTECT(2);
  return out;
}

static SEXP fitted_with_starts(SEXP fit, SEXP start) {
  if (Rf_isNull(start)) return fit;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, fit);
  SET_VECTOR_ELT(out, 1, flags_to_logical(RAW(start), XLENGTH(start)));
  UNPROTECT(1);
  return out;
}

/* y: numeric matrix (one problem per row); w: NULL, same shape or length ncol; x: NULL (each row
 * in its own order) or, for the CPU engines, numeric of y's shape or length ncol (checked in R).
 * With grad TRUE the flags are the solver's blocks (for the gradient). */
SEXP C_batch_matrix(SEXP y, SEXP w, SEXP x, SEXP increasing, SEXP lo, SEXP hi, SEXP engine,
                    SEXP single, SEXP want_start, SEXP grad) {
  int64_t nrow = Rf_nrows(y), ncol = Rf_ncols(y);
  gpuiso_opts opt = r_fit_opts(increasing, lo, hi, engine, single);
  opt.solver_blocks = Rf_asLogical(grad) == 1;
  SEXP fit = PROTECT(r_alloc_result(REALSXP, XLENGTH(y)));
  SEXP start =
      PROTECT(Rf_asLogical(want_start) == 1 ? r_alloc_result(RAWSXP, XLENGTH(y)) : R_NilValue);
  gpuiso_error err;
  int64_t w_len = Rf_isNull(w) ? 0 : (int64_t)XLENGTH(w);
  uint8_t *flags = Rf_isNull(start) ? NULL : RAW(start);
  gpuiso_status s =
      Rf_isNull(x) ? gpuiso_batch_matrix(nrow, ncol, REAL(y), r_optional_real(w), w_len, &opt,
                                         REAL(fit), flags, &err)
                   : gpuiso_batch_matrix_xy(nrow, ncol, REAL(y), r_optional_real(w), w_len, REAL(x),
                                            (int64_t)XLENGTH(x), &opt, REAL(fit), flags, &err);
  if (s != GPUISO_OK) {
    r_error_context ctx = {"matrix", nrow, R_NilValue, y, w};
    int weight_error = err.status == GPUISO_E_W_NONFINITE || err.status == GPUISO_E_W_NEGATIVE;
    if (weight_error && XLENGTH(w) == ncol && XLENGTH(w) != XLENGTH(y)) {
      err.index /= nrow; /* weights shared by the rows: the column is the element of w */
      err.row = -1;
      ctx.layout = "vector";
    }
    r_stop_on_error(&err, &ctx);
  }
  SEXP out = fitted_with_starts(fit, start);
  UNPROTECT(2);
  return out;
}

/* group: integer ids 1..ngroups, no NA (checked in R); labels: NULL, or the group of each id as
 * errors name it. grad as for C_batch_matrix. */
SEXP C_batch_groups(SEXP y, SEXP w, SEXP group, SEXP ngroups, SEXP labels, SEXP increasing,
                    SEXP lo, SEXP hi, SEXP engine, SEXP single, SEXP want_start, SEXP grad) {
  R_xlen_t n = XLENGTH(y);
  gpuiso_opts opt = r_fit_opts(increasing, lo, hi, engine, single);
  opt.solver_blocks = Rf_asLogical(grad) == 1;
  int *g = r_alloc_dense((size_t)n, sizeof *g);
  const int *code = INTEGER(group);
  for (R_xlen_t i = 0; i < n; i++) g[i] = code[i] - 1;
  SEXP fit = PROTECT(r_alloc_result(REALSXP, n));
  SEXP start = PROTECT(Rf_asLogical(want_start) == 1 ? r_alloc_result(RAWSXP, n) : R_NilValue);
  gpuiso_error err;
  gpuiso_status s = gpuiso_batch_groups((int64_t)n, g, (int64_t)Rf_asInteger(ngroups), REAL(y),
                                        r_optional_real(w), &opt, REAL(fit),
                                        Rf_isNull(start) ? NULL : RAW(start), &err);
  if (s != GPUISO_OK) {
    r_error_context ctx = {"groups", 0, R_NilValue, y, w, {NULL, NULL, NULL}, labels};
    r_stop_on_error(&err, &ctx);
  }
  SEXP out = fitted_with_starts(fit, start);
  UNPROTECT(2);
  return out;
}

/* Fits of y in the order of x within each group (isoreg_batch with x): y, x and w (NULL or
 * numeric) of one length, checked in R (finite y and x; w finite, non-negative, positive in every
 * group); group: integer ids 1..ngroups; labels as for C_batch_groups. Returns the fit in input
 * order; with want_start also the flags of the first element, in x order, of each block. */
SEXP C_batch_xy(SEXP y, SEXP w, SEXP x, SEXP group, SEXP ngroups, SEXP labels, SEXP increasing,
                SEXP lo, SEXP hi, SEXP engine, SEXP single, SEXP want_start) {
  R_xlen_t n = XLENGTH(y);
  gpuiso_opts opt = r_fit_opts(increasing, lo, hi, engine, single);
  int *g = r_alloc_dense((size_t)n, sizeof *g);
  const int *code = INTEGER(group);
  for (R_xlen_t i = 0; i < n; i++) g[i] = code[i] - 1;
  SEXP fit = PROTECT(r_alloc_result(REALSXP, n));
  SEXP start = PROTECT(Rf_asLogical(want_start) == 1 ? r_alloc_result(RAWSXP, n) : R_NilValue);
  gpuiso_error err;
  if (gpuiso_batch_groups_xy((int64_t)n, g, (int64_t)Rf_asInteger(ngroups), REAL(x), REAL(y),
                             r_optional_real(w), &opt, REAL(fit),
                             Rf_isNull(start) ? NULL : RAW(start), &err) != GPUISO_OK) {
    r_error_context ctx = {"groups", 0, R_NilValue, y, w, {NULL, NULL, NULL}, labels};
    r_stop_on_error(&err, &ctx);
  }
  SEXP out = fitted_with_starts(fit, start);
  UNPROTECT(2);
  return out;
}

/* increasing = "auto" (R's rank_direction): x, y (doubles, no NA), w (NULL or doubles), problem
 * (integer 1..k), k. A non-finite value gives TRUE everywhere: the fit that follows reports it. */
SEXP C_rank_direction(SEXP x, SEXP y, SEXP w, SEXP problem, SEXP k) {
  int64_t n = (int64_t)XLENGTH(y), nk = (int64_t)Rf_asInteger(k);
  const int *code = INTEGER(problem);
  int *p = r_alloc_dense((size_t)n, sizeof *p);
  for (int64_t i = 0; i < n; i++) p[i] = code[i] - 1;
  SEXP up = PROTECT(r_alloc_result(LGLSXP, (R_xlen_t)nk));
  gpuiso_error err;
  int *is_up = LOGICAL(up);
  gpuiso_status s = gpuiso_rank_direction(n, REAL(x), REAL(y), r_optional_real(w), p, nk, is_up, &err);
  if (s == GPUISO_E_X_NONFINITE) {
    for (int64_t q = 0; q < nk; q++) is_up[q] = TRUE;
  } else if (s != GPUISO_OK) {
    r_error_context ctx = {"vector", 0, x, y, w};
    r_stop_on_error(&err, &ctx);
  }
  UNPROTECT(1);
  return up;
}

/* The 1-based index of the first value of the double vector v that is not finite (nonnegative
 * TRUE: or is negative), 0 for none: the R checks' fast path. */
SEXP C_first_bad(SEXP v, SEXP nonnegative) {
  int64_t n = (int64_t)XLENGTH(v);
  int64_t bad = gpuiso_first_bad(n, REAL(v), Rf_asLogical(nonnegative) == 1);
  return Rf_ScalarReal(bad < n ? (double)(bad + 1) : 0);
}

/* .Call entry points for the gradients: the vector-Jacobian product of fits, and the soft ranks
 * and sorts. Shapes and values of g and epsilon are checked in R; x by the core. */
#include <string.h>

#include "r_glue.h"
#include "core/soft.h"

/* offsets (double, nrows + 1) lay out rows one after another in y, w (NULL), fit, start
 * (logical) and g; returns list(dy, dw) in that layout. engine: the gpuiso_engine code (the
 * CUDA engine for 2, in double precision). The R code has checked the fit; its types and lengths
 * are checked again here, so that no object reaches out of bounds. */
SEXP C_vjp(SEXP offsets, SEXP y, SEXP w, SEXP fit, SEXP start, SEXP g, SEXP lo, SEXP hi,
           SEXP engine) {
  R_xlen_t n = XLENGTH(y);
  if (TYPEOF(offsets) != REALSXP || XLENGTH(offsets) < 2 || TYPEOF(y) != REALSXP ||
      TYPEOF(fit) != REALSXP || XLENGTH(fit) != n || TYPEOF(start) != LGLSXP ||
      XLENGTH(start) != n || TYPEOF(g) != REALSXP || XLENGTH(g) != n ||
      (!Rf_isNull(w) && (TYPEOF(w) != REALSXP || XLENGTH(w) != n)) || !Rf_isNumeric(lo) ||
      XLENGTH(lo) != 1 || !Rf_isNumeric(hi) || XLENGTH(hi) != 1)
    r_invalid("fit", "gpuiso fit", "its data, fitted values and blocks differ in type or length");
  int64_t nrows = (int64_t)XLENGTH(offsets) - 1;
  int64_t *off = (int64_t *)R_alloc((size_t)nrows + 1, sizeof *off);
  const double *offset = REAL(offsets);
  for (int64_t r = 0; r <= nrows; r++) {
    double o = offset[r];
    if (!(o >= (r ? (double)off[r - 1] : 0) && o <= (double)n && o == (double)(int64_t)o) ||
        (r == 0 && o != 0) || (r == nrows && o != (double)n))
      r_invalid("fit", "gpuiso fit", "its rows do not match its data");
    off[r] = (int64_t)o;
  }
  uint8_t *flag = r_alloc_dense((size_t)n, 1);
  const int *is_start = LOGICAL(start);
  for (R_xlen_t i = 0; i < n; i++) flag[i] = is_start[i] == 1;
  gpuiso_opts opt = r_plain_opts();
  opt.lo = Rf_asReal(lo);
  opt.hi = Rf_asReal(hi);
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  double *dy = REAL(SET_VECTOR_ELT(out, 0, r_alloc_result(REALSXP, n)));
  double *dw = REAL(SET_VECTOR_ELT(out, 1, r_alloc_result(REALSXP, n)));
  gpuiso_error err;
  gpuiso_status s =
      Rf_asInteger(engine) == GPUISO_GPU
          ? gpuiso_cuda_vjp(nrows, off, GPUISO_DOUBLE, REAL(y), r_optional_real(w), REAL(fit), flag,
                            REAL(g), &opt, dy, dw, &err)
          : gpuiso_vjp(nrows, off, REAL(y), r_optional_real(w), REAL(fit), flag, REAL(g), &opt, dy,
                       dw, &err);
  if (s != GPUISO_OK) {
    r_error_context ctx = {"vector", 0, R_NilValue, y, w, {NULL, NULL, NULL}, R_NilValue};
    r_stop_on_error(&err, &ctx);
  }
  UNPROTECT(1);
  return out;
}

/* kind: 0 rank, 1 sort; x: a double vector (one row) or matrix (rows); g: NULL (the values) or
 * the upstream gradient, of x's shape. order: NULL; TRUE (the values on the CPU): record the rows'
 * sort order as the result's attribute "order" (an integer array of x's shape); or (with g) such
 * an array, which is checked and read instead of sorting again (the device sorts anyway).
 * Returns a double vector of x's length. */
SEXP C_soft(SEXP kind, SEXP x, SEXP g, SEXP epsilon, SEXP decreasing, SEXP engine, SEXP order) {
  int matrix = Rf_isMatrix(x);
  int64_t nrow = matrix ? Rf_nrows(x) : 1, ncol = matrix ? Rf_ncols(x) : (int64_t)XLENGTH(x);
  gpuiso_opts opt = r_plain_opts();
  opt.engine = (gpuiso_engine)Rf_asInteger(engine);
  gpuiso_soft_kind k = (gpuiso_soft_kind)Rf_asInteger(kind);
  double eps = Rf_asReal(epsilon);
  int dec = Rf_asLogical(decreasing) == 1;
  SEXP out = PROTECT(r_alloc_result(REALSXP, XLENGTH(x)));
  int32_t *ord = NULL;
  if (opt.engine != GPUISO_GPU && !Rf_isNull(g) && Rf_isInteger(order)) {
    ord = INTEGER(order);
  } else if (opt.engine != GPUISO_GPU && Rf_isNull(g) && Rf_isLogical(order) &&
             Rf_asLogical(order) == 1) {
    SEXP o = r_alloc_result(INTSXP, XLENGTH(x));
    Rf_setAttrib(out, Rf_install("order"), o); /* protected by out */
    if (matrix) Rf_setAttrib(o, R_DimSymbol, Rf_getAttrib(x, R_DimSymbol));
    ord = INTEGER(o);
  }
  gpuiso_error err;
  int64_t wrong = -1;
  gpuiso_status s = soft_with_order(k, nrow, ncol, REAL(x), r_optional_real(g), eps, dec, &opt,
                                    ord, REAL(out), &wrong, &err);
  if (s == GPUISO_OK && wrong >= 0 && matrix)
    Rf_errorcall(R_NilValue, "`order` is not the sort order of row %lld of `x`; take it from the "
                 "forward pass on this `x`, `epsilon` and `decreasing` (`gradient = TRUE`)",
                 (long long)wrong + 1);
  if (s == GPUISO_OK && wrong >= 0)
    Rf_errorcall(R_NilValue, "`order` is not the sort order of `x`; take it from the forward "
                 "pass on this `x`, `epsilon` and `decreasing` (`gradient = TRUE`)");
  if (s == GPUISO_E_OVERFLOW && err.index >= 0) {
    long long i = (long long)err.index;
    if (matrix)
      Rf_errorcall(R_NilValue, "`x / epsilon` overflows double precision at row %lld, column %lld; use a "
                   "larger `epsilon` or rescale `x`", i % nrow + 1, i / nrow + 1);
    Rf_errorcall(R_NilValue, "`x / epsilon` overflows double precision at element %lld; use a larger "
                 "`epsilon` or rescale `x`", i + 1);
  }
  if (s == GPUISO_E_OVERFLOW && err.row < 0) /* the soft sort's (n, ..., 1) / epsilon */
    Rf_errorcall(R_NilValue, "`n / epsilon` overflows double precision (`epsilon` = %g is too small "
                 "for rows of %lld); use a larger `epsilon`", eps, (long long)ncol);
  if (s == GPUISO_E_OVERFLOW)
    Rf_errorcall(R_NilValue, "the sums of the soft %s overflow double precision (`x` near the "
                 "largest double); rescale `x`", k == GPUISO_SOFT_RANK ? "rank" : "sort");
  if (s != GPUISO_OK) {
    r_error_context ctx = {matrix ? "matrix" : "vector", nrow, x, R_NilValue, R_NilValue,
                           {NULL, NULL, NULL}, R_NilValue};
    r_stop_on_error(&err, &ctx);
  }
  UNPROTECT(1);
  return out;
}

/* Whether order, an integer vector, is a permutation of 1 to its length: a byte a value, in one
 * pass (R's anyDuplicated hashes, about 1 s on 1e7 elements, a fifth of a product's time). */
SEXP C_is_permutation(SEXP order) {
  if (!Rf_isInteger(order)) return Rf_ScalarLogical(0);
  R_xlen_t n = XLENGTH(order);
  const int *o = INTEGER(order);
  unsigned char *seen = r_alloc_dense((size_t)n, 1);
  memset(seen, 0, (size_t)n);
  for (R_xlen_t i = 0; i < n; i++) {
    if (o[i] == NA_INTEGER || o[i] < 1 || o[i] > n || seen[o[i] - 1]) return Rf_ScalarLogical(0);
    seen[o[i] - 1] = 1;
  }
  return Rf_ScalarLogical(1);
}

/* R memory that C code is about to fill in full, on huge pages where the system offers them
 * (gpuiso_advise_huge_pages): fresh large vectors otherwise fault a 4 KB page at a time, which
 * cost a fit of 1e7 unsorted x about as much as the fit itself. Also the doubles of integer or
 * logical vectors (labels), made in such memory rather than by as.double() in R. */
#include "r_glue.h"

SEXP r_dense(SEXP v) {
  size_t n = (size_t)XLENGTH(v);
  switch (TYPEOF(v)) {
  case REALSXP: gpuiso_advise_huge_pages(REAL(v), n * sizeof(double)); break;
  case INTSXP: gpuiso_advise_huge_pages(INTEGER(v), n * sizeof(int)); break;
  case LGLSXP: gpuiso_advise_huge_pages(LOGICAL(v), n * sizeof(int)); break;
  case RAWSXP: gpuiso_advise_huge_pages(RAW(v), n); break;
  default: break;
  }
  return v;
}

SEXP r_alloc_result(SEXPTYPE type, R_xlen_t n) { return r_dense(Rf_allocVector(type, n)); }

void *r_alloc_dense(size_t n, size_t size) {
  void *p = R_alloc(n > 0 ? n : 1, (int)size);
  gpuiso_advise_huge_pages(p, n * size);
  return p;
}

const double *r_as_real(SEXP v) {
  if (TYPEOF(v) == REALSXP) return REAL(v);
  if (TYPEOF(v) != INTSXP && TYPEOF(v) != LGLSXP)
    Rf_errorcall(R_NilValue, "gpuiso: internal error: a number vector expected");
  R_xlen_t n = XLENGTH(v);
  const int *iv = TYPEOF(v) == INTSXP ? INTEGER(v) : LOGICAL(v);
  double *d = r_alloc_dense((size_t)n, sizeof *d);
  for (R_xlen_t i = 0; i < n; i++) d[i] = iv[i] == NA_INTEGER ? NA_REAL : (double)iv[i];
  return d;
}

/* Shared by the R glue files: the only C code of the package that includes R headers. */
#ifndef GPUISO_R_GLUE_H
#define GPUISO_R_GLUE_H

#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>

#include "core/gpuiso.h"

/* Fit options from the R arguments (engine: the gpuiso_engine code; single: TRUE for the CUDA
 * engine in single precision), with the interrupt poll of the calling R session. */
gpuiso_opts r_fit_opts(SEXP increasing, SEXP lo, SEXP hi, SEXP engine, SEXP single);
/* Default options (increasing, no bounds, PAV, default threads) with the interrupt poll. */
gpuiso_opts r_plain_opts(void);

/* Turns a failed status into an R error naming the argument; an interrupt is passed on to R.
 * layout tells how err->index reads: "vector", "matrix" (with nrow) or "groups". The arguments
 * are called x, y and w unless names says otherwise (NULL entries keep those); a character
 * vector group_names, when given (not NULL or R's NULL), names the groups in place of their
 * numbers. */
typedef struct {
  const char *layout;
  int64_t nrow;
  SEXP x, y, w;
  const char *names[3];
  SEXP group_names;
} r_error_context;

void r_stop_on_error(const gpuiso_error *err, const r_error_context *ctx);

/* Memory that C code is about to write in full (fits, predictions, gradients, knots, flags,
 * scratch of the data's length), on huge pages where the system offers them
 * (gpuiso_advise_huge_pages): r_dense advises the vector v (double, integer, logical or raw)
 * and returns it; r_alloc_result allocates one; r_alloc_dense is R_alloc's (freed by R at the
 * end of the .Call) for n elements of size bytes. */
SEXP r_dense(SEXP v);
SEXP r_alloc_result(SEXPTYPE type, R_xlen_t n);
void *r_alloc_dense(size_t n, size_t size);
/* The doubles of v, a double, integer or logical vector: its own, or a copy made by
 * r_alloc_dense (NA as NA_REAL). */
const double *r_as_real(SEXP v);

/* The error of an object (the argument called arg, a `what` such as "gpuiso fit") whose parts
 * do not hold together, with the problem found. */
void r_invalid(const char *arg, const char *what, const char *problem);

/* Optional numeric argument: NULL for R's NULL. */
const double *r_optional_real(SEXP v);

/* The sorted records of a fit on x, held by a protected external pointer while R allocates, so
 * that an R error frees them too; r_release_sorted frees them at once. */
SEXP r_hold_sorted(gpuiso_sorted *sorted);
void r_release_sorted(SEXP holder);

#endif

/* .Call entry points of calibrate_isotonic() and of its label check. The curves (of all traffic
 * and of each group) come from gpuiso_calibrate on the CPU or gpuiso_cuda_calibrate on the GPU,
 * as blocks (first and last score, probability, weight): a block's knots share one level, so the
 * blocks hold everything that prediction needs, in far less memory than the knots. */
#include <stdlib.h>

#include "r_glue.h"

/* Labels of a binary outcome (double, integer or logical) must be 0 or 1; returns NULL. */
SEXP C_check_labels(SEXP label) {
  R_xlen_t n = XLENGTH(label);
  if (TYPEOF(label) == INTSXP || TYPEOF(label) == LGLSXP) {
    const int *v = TYPEOF(label) == INTSXP ? INTEGER(label) : LOGICAL(label);
    for (R_xlen_t i = 0; i < n; i++) {
      if (v[i] == 0 || v[i] == 1) continue;
      double at = (double)i + 1;
      if (v[i] == NA_INTEGER)
        Rf_errorcall(R_NilValue, "`label` must be 0 or 1, but has NA at element %.0f", at);
      Rf_errorcall(R_NilValue, "`label` must be 0 or 1, but has %d at element %.0f", v[i], at);
    }
    return R_NilValue;
  }
  const double *v = REAL(label);
  for (R_xlen_t i = 0; i < n; i++) {
    if (v[i] == 0 || v[i] == 1) continue;
    if (ISNAN(v[i]))
      Rf_errorcall(R_NilValue, "`label` must be 0 or 1, but has %s at element %.0f",
                   ISNA(v[i]) ? "NA" : "NaN", (double)i + 1);
    Rf_errorcall(R_NilValue, "`label` must be 0 or 1, but has %g at element %.0f", v[i], (double)i + 1);
  }
  return R_NilValue;
}

static const char *block_names[] = {"lower", "upper", "prob", "weight", "first", ""};

/* Releases blocks held by an external pointer (on an R error too). */
static void free_blocks(SEXP holder) {
  free(R_ExternalPtrAddr(holder));
  R_ClearExternalPtr(holder);
}

/* list(lower, upper, prob, weight, first): the blocks of curves c0 .. c1 - 1, whose blocks start
 * at first[c]; the list's first (c1 - c0 + 1) is the 1-based row of each curve's first block,
 * then the number of blocks + 1. */
static SEXP curve_list(const gpuiso_block *blocks, const int64_t *first, int64_t c0, int64_t c1) {
  int64_t b0 = first[c0], nb = first[c1] - b0;
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, block_names));
  double *col[4];
  for (int j = 0; j < 4; j++)
    col[j] = REAL(SET_VECTOR_ELT(out, j, Rf_allocVector(REALSXP, (R_xlen_t)nb)));
  for (int64_t b = 0; b < nb; b++) {
    col[0][b] = blocks[b0 + b].lower;
    col[1][b] = blocks[b0 + b].upper;
    col[2][b] = blocks[b0 + b].level;
    col[3][b] = blocks[b0 + b].weight;
  }
  double *row = REAL(SET_VECTOR_ELT(out, 4, Rf_allocVector(REALSXP, (R_xlen_t)(c1 - c0 + 1))));
  for (int64_t c = c0; c <= c1; c++) row[c - c0] = (double)(first[c] - b0 + 1);
  UNPROTECT(1);
  return out;
}

/* score: a double vector; label: one of its length, double, integer or logical, 0 or 1 (checked
 * by C_check_labels); weights: NULL or the same; group: NULL or integer codes
 * 1..length(group_names) (checked in R);
 * increasing: FALSE for falling curves; gpu: TRUE for the GPU pipeline. Returns list(pooled,
 * groups), the blocks of the curve of all scores and (NULL without group) of the curves per
 * group. */
SEXP C_calibrate(SEXP score, SEXP label, SEXP weights, SEXP group, SEXP group_names, SEXP increasing,
                 SEXP gpu) {
  R_xlen_t n = XLENGTH(score);
  gpuiso_opts opt = r_plain_opts();
  opt.increasing = Rf_asLogical(increasing) == 1;
  r_error_context ctx = {"groups", 0, score, label, weights, {"score", "label", "weights"}, group_names};
  gpuiso_error err;
  int64_t ngroups = Rf_isNull(group) ? 0 : XLENGTH(group_names);
  int *g = NULL;
  if (ngroups > 0) {
    const int *code = INTEGER(group);
    g = r_alloc_dense((size_t)n, sizeof *g);
    for (R_xlen_t i = 0; i < n; i++) g[i] = code[i] - 1;
  }
  int64_t *first = (int64_t *)R_alloc((size_t)ngroups + 2, sizeof *first);
  gpuiso_block *blocks;
  gpuiso_status (*calibrate)(int64_t, const double *, const double *, const double *, const int *,
                             int64_t, const gpuiso_opts *, gpuiso_block **, int64_t *,
                             gpuiso_error *) =
      Rf_asLogical(gpu) == 1 ? gpuiso_cuda_calibrate : gpuiso_calibrate;
  if (calibrate((int64_t)n, REAL(score), r_as_real(label), r_optional_real(weights), g, ngroups,
                &opt, &blocks, first, &err) != GPUISO_OK)
    r_stop_on_error(&err, &ctx);
  SEXP holder = PROTECT(R_MakeExternalPtr(blocks, R_NilValue, R_NilValue));
  R_RegisterCFinalizerEx(holder, free_blocks, TRUE);
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, curve_list(blocks, first, 0, 1));
  if (ngroups > 0) SET_VECTOR_ELT(out, 1, curve_list(blocks, first, 1, ngroups + 1));
  free_blocks(holder);
  UNPROTECT(2);
  return out;
}

/* .Call entry points of predict() for fits and calibrators: the curves as block tables for
 * gpuiso_predict. The R code has checked types and lengths; the order of the knots and blocks,
 * which an edited object may have lost, is checked here. */
#include "r_glue.h"

static void invalid(const char *what, const char *problem) { r_invalid("object", what, problem); }

/* A fit's predictions search its knots, not its blocks, below one value for this many knots. */
#define KNOTS_PER_SEARCH 16

static SEXP values_and_beyond(SEXP values, int64_t beyond) {
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, values);
  SET_VECTOR_ELT(out, 1, Rf_ScalarReal((double)beyond));
  UNPROTECT(1);
  return out;
}

/* The predictions at v of curves 0 .. ncurves - 1 of cv, on the GPU when gpu (a CUDA error is
 * an R error, which device = "auto" turns into a CPU run). */
static SEXP predict_curves(const gpuiso_curves *cv, int64_t ncurves, SEXP v, const int *curve,
                           int linear, int outside_na, int gpu) {
  R_xlen_t n = XLENGTH(v);
  SEXP out = PROTECT(r_alloc_result(REALSXP, n));
  gpuiso_opts opt = r_plain_opts();
  gpuiso_error err;
  int64_t beyond = 0;
  gpuiso_status s =
      gpu ? gpuiso_cuda_predict(cv, ncurves, (int64_t)n, REAL(v), curve, linear, outside_na,
                                NA_REAL, &opt, REAL(out), &beyond, &err)
          : gpuiso_predict(cv, (int64_t)n, REAL(v), curve, linear, outside_na, NA_REAL, &opt,
                           REAL(out), &beyond, &err);
  if (s != GPUISO_OK) {
    r_error_context ctx = {"vector", 0, R_NilValue, R_NilValue, R_NilValue, {NULL, NULL, NULL}, R_NilValue};
    r_stop_on_error(&err, &ctx);
  }
  out = values_and_beyond(out, beyond);
  UNPROTECT(1);
  return out;
}

/* knots, level: double vectors of one length (at least 1) of a "gpuiso_fit"; newdata: double.
 * Returns list(values, beyond): the predictions, and how many non-NA newdata lie outside the
 * knots. */
SEXP C_predict_fit(SEXP knots, SEXP level, SEXP newdata, SEXP linear, SEXP outside_na) {
  int64_t nk = (int64_t)XLENGTH(knots);
  const double *x = REAL(knots);
  int64_t first[2] = {0, nk};
  gpuiso_curves cv = {first, x, x, REAL(level)};
  /* Few values are searched for among the knots, each a block of its own (the same doubles:
   * a block's knots share its level); many among the blocks, in cache once formed, but forming
   * them takes two passes over the knots. */
  if ((int64_t)XLENGTH(newdata) < nk / KNOTS_PER_SEARCH) {
    if (!gpuiso_knots_sorted(nk, x)) invalid("gpuiso fit", "its knots are not sorted");
  } else {
    int64_t nb = gpuiso_knot_blocks(nk, x, REAL(level), NULL, NULL, NULL);
    if (nb < 0) invalid("gpuiso fit", "its knots are not sorted");
    double *lower = (double *)R_alloc((size_t)nb, sizeof *lower);
    double *upper = (double *)R_alloc((size_t)nb, sizeof *upper);
    double *blevel = (double *)R_alloc((size_t)nb, sizeof *blevel);
    gpuiso_knot_blocks(nk, x, REAL(level), lower, upper, blevel);
    first[1] = nb;
    cv = (gpuiso_curves){first, lower, upper, blevel};
  }
  return predict_curves(&cv, 1, newdata, NULL, Rf_asLogical(linear) == 1,
                        Rf_asLogical(outside_na) == 1, 0);
}

/* The blocks of a calibrator: the pooled curve's (lower, upper, prob: double vectors of one
 * length) and the groups' (the same columns, with first: the 1-based row where each group's
 * curve starts, then one past the last; NULL without groups). code: integer, the curve of each
 * score (0: the pooled one, k: group k), in range (from match() in R), or NULL: the pooled curve
 * for all; score: double; gpu: TRUE to predict on the GPU. Returns the probabilities. */
SEXP C_predict_calibrator(SEXP pooled, SEXP curves, SEXP first, SEXP code, SEXP score,
                          SEXP linear, SEXP gpu) {
  int64_t np = (int64_t)XLENGTH(VECTOR_ELT(pooled, 0));
  int64_t ng = Rf_isNull(first) ? 0 : (int64_t)XLENGTH(first) - 1;
  int64_t nc = Rf_isNull(curves) ? 0 : (int64_t)XLENGTH(VECTOR_ELT(curves, 0));
  int64_t nb = np + nc;
  int64_t *start = (int64_t *)R_alloc((size_t)ng + 2, sizeof *start);
  double *col[3];
  for (int j = 0; j < 3; j++) {
    col[j] = (double *)R_alloc((size_t)(nb > 0 ? nb : 1), sizeof *col[j]);
    if (np > 0) memcpy(col[j], REAL(VECTOR_ELT(pooled, j)), (size_t)np * sizeof *col[j]);
    if (nc > 0) memcpy(col[j] + np, REAL(VECTOR_ELT(curves, j)), (size_t)nc * sizeof *col[j]);
  }
  start[0] = 0;
  start[1] = np;
  if (!Rf_isNull(first) && ng < 0) invalid("gpuiso calibrator", "it has no first rows");
  for (int64_t k = 0; k <= ng && !Rf_isNull(first); k++) { /* curve k + 1 starts at first[k] */
    double f = REAL(first)[k];
    int whole = f >= 1 && f <= (double)nc + 1 && f == (double)(int64_t)f;
    int64_t s = whole ? np + (int64_t)f - 1 : 0;
    if (!whole || (k == 0 && f != 1) || (k == ng && f != (double)nc + 1) || s < start[k])
      invalid("gpuiso calibrator", "its first rows do not match its curves");
    start[k + 1] = s;
  }
  for (int64_t c = 0; c <= ng; c++) {
    for (int64_t b = start[c]; b < start[c + 1]; b++) {
      if (!(col[0][b] <= col[1][b]) || (b > start[c] && !(col[1][b - 1] <= col[0][b])))
        invalid("gpuiso calibrator", "the blocks of a curve are not in increasing order");
    }
  }
  gpuiso_curves cv = {start, col[0], col[1], col[2]};
  SEXP out = predict_curves(&cv, ng + 1, score, Rf_isNull(code) ? NULL : INTEGER(code),
                            Rf_asLogical(linear) == 1, 0, Rf_asLogical(gpu) == 1);
  return VECTOR_ELT(out, 0);
}

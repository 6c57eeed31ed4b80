/* .Call entry points of calibrate_isotonic() and of its label check. One sort of the scores
 * serves the curve of all traffic and, through a stable split by group, the curve of each group.
 * Curves come back as blocks (first and last score, probability, weight): a block's knots share
 * one level, so the blocks hold everything that prediction needs, in far less memory than the
 * knots. */
#include <stdlib.h>

#include "r_glue.h"

/* Labels of a binary outcome (double) must be 0 or 1; returns NULL. */
SEXP C_check_labels(SEXP label) {
  const double *v = REAL(label);
  R_xlen_t n = XLENGTH(label);
  for (R_xlen_t i = 0; i < n; i++) {
    if (v[i] == 0 || v[i] == 1) continue;
    if (ISNAN(v[i]))
      Rf_errorcall(R_NilValue, "`label` must be 0 or 1, but has %s at element %.0f",
                   ISNA(v[i]) ? "NA" : "NaN", (double)i + 1);
    Rf_errorcall(R_NilValue, "`label` must be 0 or 1, but has %g at element %.0f", v[i], (double)i + 1);
  }
  return R_NilValue;
}

/* Knot arrays for nk knots, freed by R at the end of the call. */
static gpuiso_knots knot_arrays(int64_t nk) {
  size_t m = (size_t)(nk > 0 ? nk : 1);
  gpuiso_knots kn = {nk, (double *)R_alloc(m, sizeof(double)), (double *)R_alloc(m, sizeof(double)),
                     (double *)R_alloc(m, sizeof(double)), (uint8_t *)R_alloc(m, 1), 0};
  return kn;
}

static const char *block_names[] = {"lower", "upper", "prob", "weight", "first", ""};

/* Releases blocks held by an external pointer (on an R error too). */
static void free_blocks(SEXP holder) {
  free(R_ExternalPtrAddr(holder));
  R_ClearExternalPtr(holder);
}

/* list(lower, upper, prob, weight, first): the blocks of ncurves curves whose knots start at
 * offset[k]; first (ncurves + 1) is the 1-based row of each curve's first block, then the number
 * of blocks + 1. */
static SEXP curve_blocks(const gpuiso_knots *kn, const int64_t *offset, int64_t ncurves) {
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, block_names));
  double *col[4];
  for (int j = 0; j < 4; j++)
    col[j] = REAL(SET_VECTOR_ELT(out, j, Rf_allocVector(REALSXP, (R_xlen_t)kn->nblocks)));
  double *first = REAL(SET_VECTOR_ELT(out, 4, Rf_allocVector(REALSXP, (R_xlen_t)ncurves + 1)));
  int64_t b = -1;
  for (int64_t k = 0; k < ncurves; k++) {
    first[k] = (double)(b + 2);
    for (int64_t d = offset[k]; d < offset[k + 1]; d++) {
      if (kn->start[d]) {
        b++;
        col[0][b] = kn->x[d];
        col[2][b] = kn->level[d];
        col[3][b] = 0;
      }
      col[1][b] = kn->x[d];
      col[3][b] += kn->weight[d];
    }
  }
  first[ncurves] = (double)(b + 2);
  UNPROTECT(1);
  return out;
}

/* The same list for the blocks of one curve, which are freed here. */
static SEXP pooled_blocks(gpuiso_block *blocks, int64_t nb) {
  SEXP holder = PROTECT(R_MakeExternalPtr(blocks, R_NilValue, R_NilValue));
  R_RegisterCFinalizerEx(holder, free_blocks, TRUE);
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, block_names));
  double *col[4];
  for (int j = 0; j < 4; j++)
    col[j] = REAL(SET_VECTOR_ELT(out, j, Rf_allocVector(REALSXP, (R_xlen_t)nb)));
  for (int64_t b = 0; b < nb; b++) {
    col[0][b] = blocks[b].lower;
    col[1][b] = blocks[b].upper;
    col[2][b] = blocks[b].level;
    col[3][b] = blocks[b].weight;
  }
  double *first = REAL(SET_VECTOR_ELT(out, 4, Rf_allocVector(REALSXP, 2)));
  first[0] = 1;
  first[1] = (double)nb + 1;
  free_blocks(holder);
  UNPROTECT(2);
  return out;
}

static void release_grouped(SEXP holder) {
  gpuiso_grouped_free(R_ExternalPtrAddr(holder));
  R_ClearExternalPtr(holder);
}

/* score, label: double vectors of one length, label 0 or 1 (checked by C_check_labels); weights:
 * NULL or the same; group: NULL or integer codes 1..length(group_names) (checked in R). Returns
 * list(pooled, groups), the blocks of the curve of all scores and (NULL without group) of the
 * curves per group. The pooled curve comes straight from the sorted scores (gpuiso_curve_sorted);
 * the groups' curves from knot arrays. */
SEXP C_calibrate(SEXP score, SEXP label, SEXP weights, SEXP group, SEXP group_names) {
  R_xlen_t n = XLENGTH(score);
  gpuiso_opts opt = r_plain_opts();
  r_error_context ctx = {"groups", 0, score, label, weights, {"score", "label", "weights"}, group_names};
  gpuiso_error err;
  gpuiso_sorted *sorted;
  gpuiso_grouped *grouped = NULL;
  int64_t nk, nk_groups = 0, ngroups = Rf_isNull(group) ? 0 : XLENGTH(group_names);
  int *g = NULL;
  if (ngroups > 0) {
    const int *code = INTEGER(group);
    g = (int *)R_alloc((size_t)(n > 0 ? n : 1), sizeof *g);
    for (R_xlen_t i = 0; i < n; i++) g[i] = code[i] - 1;
  }
  if (gpuiso_sort_groups_xy((int64_t)n, REAL(score), REAL(label), r_optional_real(weights), g,
                            ngroups > 0 ? ngroups : 1, &opt, &sorted, &nk, &err) != GPUISO_OK)
    r_stop_on_error(&err, &ctx);
  SEXP held_sorted = r_hold_sorted(sorted);
  SEXP held_grouped = PROTECT(R_MakeExternalPtr(NULL, R_NilValue, R_NilValue));
  R_RegisterCFinalizerEx(held_grouped, release_grouped, TRUE);
  if (ngroups > 0) {
    if (gpuiso_group_sorted(sorted, &opt, &grouped, &nk_groups, &err) != GPUISO_OK)
      r_stop_on_error(&err, &ctx);
    R_SetExternalPtrAddr(held_grouped, grouped);
  }
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  gpuiso_block *pooled;
  int64_t npooled;
  if (gpuiso_curve_sorted(sorted, &opt, &pooled, &npooled, &err) != GPUISO_OK)
    r_stop_on_error(&err, &ctx);
  SET_VECTOR_ELT(out, 0, pooled_blocks(pooled, npooled));
  if (ngroups > 0) {
    gpuiso_knots kn = knot_arrays(nk_groups);
    int64_t *offset = (int64_t *)R_alloc((size_t)ngroups + 1, sizeof *offset);
    if (gpuiso_fit_grouped(grouped, &opt, offset, &kn, &err) != GPUISO_OK) r_stop_on_error(&err, &ctx);
    SET_VECTOR_ELT(out, 1, curve_blocks(&kn, offset, ngroups));
  }
  release_grouped(held_grouped);
  r_release_sorted(held_sorted);
  UNPROTECT(3);
  return out;
}

/* The curves of calibrate_isotonic() on the CPU (gpuiso_calibrate), and the input checks of its
 * device twin (calibrate_check; the device path is src/cuda/calibrate.cuh).
 *
 * One sort of the scores serves the pooled curve, which comes straight from the sorted records
 * (gpuiso_curve_sorted, no knot arrays), and the curves of the groups, pooled into knot arrays
 * by group (gpuiso_fit_grouped) and then read off as blocks.
 */
#include <stdlib.h>

#include "internal.h"

/* The blocks of ncurves curves whose knots start at offset[k], written from out[0]; first
 * (ncurves + 1) gets where each curve's blocks start, counted from base. */
static void knots_to_blocks(const gpuiso_knots *kn, const int64_t *offset, int64_t ncurves,
                            int64_t base, gpuiso_block *out, int64_t *first) {
  int64_t b = -1;
  for (int64_t k = 0; k < ncurves; k++) {
    first[k] = base + b + 1;
    for (int64_t d = offset[k]; d < offset[k + 1]; d++) {
      if (kn->start[d]) {
        b++;
        out[b].lower = kn->x[d];
        out[b].level = kn->level[d];
        out[b].weight = 0;
      }
      out[b].upper = kn->x[d];
      out[b].weight += kn->weight[d];
    }
  }
  first[ncurves] = base + b + 1;
}

gpuiso_status gpuiso_calibrate(int64_t n, const double *score, const double *label,
                               const double *w, const int *g, int64_t ngroups,
                               const gpuiso_opts *opt, gpuiso_block **blocks, int64_t *first,
                               gpuiso_error *err) {
  *blocks = NULL;
  if (!g) ngroups = 0;
  gpuiso_sorted *sorted = NULL;
  gpuiso_grouped *grouped = NULL;
  gpuiso_block *pooled = NULL;
  gpuiso_knots kn = {0, NULL, NULL, NULL, NULL, 0};
  int64_t *offset = NULL, nk, nk_groups = 0, npooled = 0;
  gpuiso_status s = gpuiso_sort_groups_xy(n, score, label, w, g, ngroups > 0 ? ngroups : 1, opt,
                                          &sorted, &nk, err);
  if (s == GPUISO_OK && ngroups > 0) s = gpuiso_group_sorted(sorted, opt, &grouped, &nk_groups, err);
  if (s == GPUISO_OK) s = gpuiso_curve_sorted(sorted, opt, &pooled, &npooled, err);
  if (s == GPUISO_OK && ngroups > 0) {
    size_t m = (size_t)(nk_groups > 0 ? nk_groups : 1);
    int have_knots = knots_alloc(&kn, m);
    offset = malloc(((size_t)ngroups + 1) * sizeof *offset);
    if (have_knots && offset) {
      s = gpuiso_fit_grouped(grouped, opt, offset, &kn, err);
    } else {
      s = GPUISO_E_NOMEM;
      set_error(err, s, -1, -1);
    }
  }
  if (s == GPUISO_OK) {
    /* the groups' blocks go after the pooled curve's, in the array that holds those */
    int64_t total = npooled + kn.nblocks;
    gpuiso_block *all = realloc(pooled, (size_t)(total > 0 ? total : 1) * sizeof *all);
    if (all) {
      pooled = all;
      first[0] = 0;
      first[1] = npooled;
      if (ngroups > 0) knots_to_blocks(&kn, offset, ngroups, npooled, all + npooled, first + 1);
      *blocks = all;
      pooled = NULL;
    } else {
      s = GPUISO_E_NOMEM;
      set_error(err, s, -1, -1);
    }
  }
  free(pooled);
  knots_release(&kn);
  free(offset);
  gpuiso_grouped_free(grouped);
  gpuiso_sorted_free(sorted);
  return s;
}

/* What one part of the input holds: its first bad score and first bad label or weight (or -1),
 * its sums of w * |y| and of w, and per group its elements and whether one has positive weight. */
typedef struct {
  int64_t bad_x, bad_v;
  gpuiso_status why_v;
  double sum_wy, sum_w;
} check_part;

static void check_range(const double *score, const double *label, const double *w, const int *g,
                        int64_t from, int64_t to, check_part *cp, int64_t *count, uint8_t *positive) {
  cp->bad_x = cp->bad_v = -1;
  cp->sum_wy = cp->sum_w = 0;
  for (int64_t i = from; i < to; i++) {
    double wi = w ? w[i] : 1.0;
    if (cp->bad_x < 0 && !isfinite(score[i])) cp->bad_x = i;
    gpuiso_status v = value_status(label[i], wi);
    if (v != GPUISO_OK) {
      if (cp->bad_v < 0) {
        cp->bad_v = i;
        cp->why_v = v;
      }
      continue;
    }
    cp->sum_wy += wi * fabs(label[i]);
    cp->sum_w += wi;
    if (g) {
      count[g[i]]++;
      positive[g[i]] |= wi > 0;
    }
  }
}

gpuiso_status calibrate_check(int64_t n, const double *score, const double *label, const double *w,
                              const int *g, int64_t ngroups, const gpuiso_opts *opt, int64_t *count,
                              gpuiso_error *err) {
  if (!g) ngroups = 0;
  int nth = resolve_threads(opt, n);
  /* per part a count and a flag per group: one part when groups are many */
  int nparts = ngroups * nth > n ? 1 : (nth < GPUISO_MAX_CHUNKS ? nth : GPUISO_MAX_CHUNKS);
  size_t cells = (size_t)nparts * (size_t)ngroups;
  check_part part[GPUISO_MAX_CHUNKS];
  int64_t *counts = calloc(cells > 0 ? cells : 1, sizeof *counts);
  uint8_t *positive = calloc(cells > 0 ? cells : 1, 1);
  if (!counts || !positive) {
    free(counts);
    free(positive);
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nparts) schedule(static, 1)
#endif
  for (int t = 0; t < nparts; t++)
    check_range(score, label, w, g, n * t / nparts, n * (t + 1) / nparts, &part[t],
                counts + (size_t)t * (size_t)ngroups, positive + (size_t)t * (size_t)ngroups);

  gpuiso_status s = GPUISO_OK;
  int64_t at = -1, row = -1;
  double sum_wy = 0, sum_w = 0;
  for (int t = 0; t < nparts && s == GPUISO_OK; t++)
    if (part[t].bad_x >= 0) s = GPUISO_E_X_NONFINITE, at = part[t].bad_x;
  for (int t = 0; t < nparts && s == GPUISO_OK; t++)
    if (part[t].bad_v >= 0) s = part[t].why_v, at = part[t].bad_v;
  for (int t = 0; t < nparts; t++) sum_wy += part[t].sum_wy, sum_w += part[t].sum_w;
  if (s == GPUISO_OK && !(isfinite(sum_wy) && isfinite(sum_w))) s = GPUISO_E_OVERFLOW;
  if (s == GPUISO_OK && !(sum_w > 0)) s = GPUISO_E_W_ALLZERO;
  for (int64_t k = 0; k < ngroups; k++) {
    int64_t c = 0;
    int pos = 0;
    for (int t = 0; t < nparts; t++) {
      c += counts[(size_t)t * (size_t)ngroups + k];
      pos |= positive[(size_t)t * (size_t)ngroups + k];
    }
    count[k] = c;
    if (s == GPUISO_OK && c > 0 && !pos) s = GPUISO_E_W_ALLZERO, row = k;
  }
  free(counts);
  free(positive);
  set_error(err, s, at, row);
  return s;
}

#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double at(gpuiso_precision type, const void *z, int64_t i) {
  return type == GPUISO_SINGLE ? (double)((const float *)z)[i] : ((const double *)z)[i];
}

comparison compare_rows(int64_t nrows, const int64_t *offsets, const double *y, const double *ref,
                        gpuiso_precision type, const void *z, int increasing, int by_max_y) {
  comparison c = {0, -1, 0, 0, 0};
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16)
#endif
  for (int64_t r = 0; r < nrows; r++) {
    int64_t from = offsets[r], to = offsets[r + 1], blocks_z = 0, blocks_ref = 0, steps = 0,
            differ = 0, worst = -1;
    double max_y = 0, dev = 0;
    for (int64_t i = from; by_max_y && i < to; i++) max_y = fabs(y[i]) > max_y ? fabs(y[i]) : max_y;
    for (int64_t i = from; i < to; i++) {
      double zi = at(type, z, i), d = fabs(zi - ref[i]) / (by_max_y ? max_y : 1 + fabs(ref[i]));
      if (d > dev || (isnan(d) && !isnan(dev))) dev = d, worst = i; /* NaN is the worst */
      differ += zi != ref[i];
      if (i == from) continue;
      double zp = at(type, z, i - 1);
      steps += increasing ? zi < zp : zi > zp;
      blocks_z += zi != zp;
      blocks_ref += ref[i] != ref[i - 1];
    }
#ifdef _OPENMP
#pragma omp critical(compare_rows)
#endif
    {
      if (dev > c.max_dev || (isnan(dev) && !isnan(c.max_dev))) c.max_dev = dev, c.worst = worst;
      c.step_downs += steps;
      c.block_rows += blocks_z != blocks_ref;
      c.differ += differ;
    }
  }
  return c;
}

int64_t count_blocks(int64_t nrows, const int64_t *offsets, gpuiso_precision type, const void *z) {
  int64_t blocks = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : blocks)
#endif
  for (int64_t r = 0; r < nrows; r++)
    for (int64_t i = offsets[r]; i < offsets[r + 1]; i++)
      blocks += i == offsets[r] || at(type, z, i) != at(type, z, i - 1);
  return blocks;
}

/* The positions where the runs of threshold k step by more than tol, in a (at most the runs). */
static int64_t steps_over(const gpuiso_cdf_runs *r, int64_t k, double tol, int32_t *a) {
  int64_t n = 0;
  for (int64_t i = r->offset[k] + 1; i < r->offset[k + 1]; i++)
    if (fabs(r->value[i] - r->value[i - 1]) > tol) a[n++] = r->start[i];
  return n;
}

/* max |F_a(k) - F_b(l)| over the positions, by a walk over both runs. */
static double runs_dev(const gpuiso_cdf_runs *a, int64_t k, const gpuiso_cdf_runs *b, int64_t l,
                       double *min_diff) {
  int64_t i = a->offset[k], j = b->offset[l], ie = a->offset[k + 1], je = b->offset[l + 1];
  double dev = 0, lowest = INFINITY;
  for (;;) {
    double d = a->value[i] - b->value[j];
    dev = fabs(d) > dev ? fabs(d) : dev;
    lowest = d < lowest ? d : lowest;
    int64_t ni = i + 1 < ie ? a->start[i + 1] : a->npos, nj = j + 1 < je ? b->start[j + 1] : b->npos;
    if (ni >= a->npos && nj >= b->npos) break;
    if (ni <= nj) i++;
    if (nj <= ni) j++;
  }
  if (min_diff) *min_diff = lowest;
  return dev;
}

runs_comparison compare_cdf_runs(const gpuiso_cdf_runs *ref, const gpuiso_cdf_runs *got, double tol) {
  runs_comparison c = {0, 0, 0, 0};
  int64_t m = ref->nthr, most = 1;
  for (int64_t k = 0; k < m; k++) {
    int64_t a = ref->offset[k + 1] - ref->offset[k], b = got->offset[k + 1] - got->offset[k];
    most = a > most ? a : most;
    most = b > most ? b : most;
  }
#ifdef _OPENMP
#pragma omp parallel
#endif
  {
    int32_t *sa = malloc((size_t)most * sizeof *sa), *sb = malloc((size_t)most * sizeof *sb);
    double dev = 0;
    int64_t starts = 0, steps = 0, bad = 0;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 64)
#endif
    for (int64_t k = 0; k < m; k++) {
      int64_t a0 = ref->offset[k], na = ref->offset[k + 1] - a0;
      int64_t b0 = got->offset[k], nb = got->offset[k + 1] - b0;
      double d = runs_dev(ref, k, got, k, NULL);
      dev = d > dev ? d : dev;
      starts += na != nb || memcmp(ref->start + a0, got->start + b0, (size_t)na * sizeof *sa) != 0;
      int64_t ma = steps_over(ref, k, tol, sa), mb = steps_over(got, k, tol, sb);
      steps += ma != mb || memcmp(sa, sb, (size_t)ma * sizeof *sa) != 0;
      int shape = nb >= 1 && got->start[b0] == 0;
      for (int64_t i = b0; i < b0 + nb; i++) {
        shape = shape && got->value[i] >= 0 && got->value[i] <= 1;
        if (i > b0) shape = shape && got->value[i] < got->value[i - 1] && got->start[i] > got->start[i - 1];
      }
      double rise = 0;
      if (shape && k > 0) runs_dev(got, k, got, k - 1, &rise);
      if (k == m - 1) shape = shape && nb == 1 && got->value[b0] == 1.0;
      bad += !shape || rise < 0;
    }
#ifdef _OPENMP
#pragma omp critical
#endif
    {
      c.max_dev = dev > c.max_dev ? dev : c.max_dev;
      c.starts_differ += starts;
      c.steps_differ += steps;
      c.bad += bad;
    }
    free(sa);
    free(sb);
  }
  return c;
}

blocks_comparison compare_blocks(int64_t ncurves, const int64_t *ref_first, const gpuiso_block *ref,
                                 const int64_t *first, const gpuiso_block *got) {
  blocks_comparison c = {0, 0, 0};
  for (int64_t k = 0; k < ncurves; k++) {
    int64_t b0 = ref_first[k], nb = ref_first[k + 1] - b0, g0 = first[k];
    int same = first[k + 1] - g0 == nb;
    for (int64_t b = 0; same && b < nb; b++) {
      const gpuiso_block *r = &ref[b0 + b], *z = &got[g0 + b];
      same = r->lower == z->lower && r->upper == z->upper;
      double dl = fabs(z->level - r->level), dw = fabs(z->weight - r->weight) / r->weight;
      if (!(dl <= c.max_dev)) c.max_dev = dl; /* NaN too */
      if (!(dw <= c.max_weight_dev)) c.max_weight_dev = dw;
    }
    c.curves_differ += !same;
  }
  return c;
}

/* The direction that increasing = "auto" picks: whether y rises with x, by the sign of Spearman's
 * rank covariance within each problem (average ranks for ties), over the elements of positive
 * weight. Exact: the ranks are kept doubled, as integers, and their products summed in 128 bits,
 * so that the sign is right however close to 0 the covariance is.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#if defined(__SIZEOF_INT128__)
__extension__ typedef __int128 wide_sum;
#else
typedef long double wide_sum; /* exact while the sums stay under 2^64 (compilers without int128) */
#endif

/* Doubled average ranks within each group (rank2[index] = 2 * rank), from the n elements sorted
 * by value with their group in the tags: a tie run's members of group g take the mean of the
 * ranks that group's next tie[g] places would have. seen and tie: one count per group, zero on
 * entry. */
static void doubled_ranks(const key_tag *r, int64_t n, int gbits, int64_t *seen, int64_t *tie,
                          int64_t *rank2) {
  for (int64_t a = 0, b; a < n; a = b) {
    for (b = a; b < n && r[b].key == r[a].key; b++) tie[tag_group(r[b].tag, gbits)]++;
    for (int64_t p = a; p < b; p++) {
      int g = tag_group(r[p].tag, gbits);
      rank2[tag_index(r[p].tag, gbits)] = 2 * seen[g] + tie[g] + 1;
    }
    for (int64_t p = a; p < b; p++) {
      int g = tag_group(r[p].tag, gbits);
      seen[g] += tie[g];
      tie[g] = 0;
    }
  }
}

/* The doubled ranks of v within the groups g; 0 on success, else a status. Only keys and tags
 * are sorted: the ranks need nothing else. */
static gpuiso_status ranks_of(int64_t n, const double *v, const int *g, int gbits, int64_t ngroups,
                              int nth, int64_t *count, int64_t *rank2) {
  key_tag *sorted;
  int64_t bad;
  gpuiso_status st = sort_keys(n, v, g, gbits, nth, &sorted, &bad);
  if (st != GPUISO_OK) return st;
  memset(count, 0, 2 * (size_t)ngroups * sizeof *count);
  doubled_ranks(sorted, n, gbits, count, count + ngroups, rank2);
  free(sorted);
  return GPUISO_OK;
}

gpuiso_status gpuiso_rank_direction(int64_t n, const double *x, const double *y, const double *w,
                                    const int *problem, int64_t k, int *up, gpuiso_error *err) {
  /* Elements of weight 0 join an extra group, k, which is left out. */
  int64_t ngroups = k + 1;
  int gbits = 0;
  while (((int64_t)1 << gbits) < ngroups) gbits++;
  gpuiso_opts opt;
  memset(&opt, 0, sizeof opt);
  int nth = resolve_threads(&opt, n);
  size_t m = (size_t)(n > 0 ? n : 1);
  int *g = malloc_dense(m * sizeof *g);
  int64_t *rx = malloc_dense(m * sizeof *rx), *ry = malloc_dense(m * sizeof *ry);
  int64_t *count = malloc(2 * (size_t)ngroups * sizeof *count);
  wide_sum *cov = malloc((size_t)ngroups * sizeof *cov);
  gpuiso_status st = g && rx && ry && count && cov ? GPUISO_OK : GPUISO_E_NOMEM;
  if (st == GPUISO_OK) {
    for (int64_t i = 0; i < n; i++) g[i] = w && !(w[i] > 0) ? (int)k : (problem ? problem[i] : 0);
    st = ranks_of(n, x, g, gbits, ngroups, nth, count, rx);
  }
  if (st == GPUISO_OK) st = ranks_of(n, y, g, gbits, ngroups, nth, count, ry);
  if (st == GPUISO_OK) {
    int64_t *size = count; /* the last ranking's counts per group: the group sizes */
    memset(cov, 0, (size_t)ngroups * sizeof *cov);
    for (int64_t i = 0; i < n; i++) {
      int64_t mid2 = size[g[i]] + 1;
      cov[g[i]] += (wide_sum)(rx[i] - mid2) * (ry[i] - mid2);
    }
    for (int64_t p = 0; p < k; p++) up[p] = cov[p] >= 0; /* a problem of no elements: 0 */
  } else {
    set_error(err, st == GPUISO_E_NOMEM ? st : GPUISO_E_X_NONFINITE, -1, -1);
  }
  free(g);
  free(rx);
  free(ry);
  free(count);
  free(cov);
  return st;
}

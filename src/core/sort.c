/* Stable sort of (x, y, w) records by x: a radix sort on the bits of x's keys.
 *
 * A double maps to an unsigned key with the same order (flip all bits of negatives, the sign bit
 * of the rest); -0 is made +0 first so that the two compare equal, as they do in R.
 *
 * The first pass scatters the records by the 11 highest bits in which the keys differ, reading
 * x, y and w in order, so y and w are never gathered at random. Each bucket is then sorted on its
 * own, in parallel: small buckets by insertion or LSD passes that stay in cache, large ones by
 * further MSD passes. Digits on which a bucket's keys agree cost a histogram and no movement, and a bucket of
 * equal keys stops at once. Every pass is stable, so equal x keep their input order.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define RADIX_BITS 11
#define RADIX_SIZE (1 << RADIX_BITS)
#define RADIX_MASK (RADIX_SIZE - 1)
/* Buckets up to this many records (512 KiB, in L2 with their scratch) are finished by LSD passes
 * on 8-bit digits, and the smallest by insertion. */
#define LEAF_RECORDS 16384
#define INSERTION_RECORDS 32

uint64_t double_key(double v) {
  uint64_t u;
  if (v == 0) v = 0; /* -0 -> +0 */
  memcpy(&u, &v, sizeof u);
  return (u >> 63) ? ~u : (u | ((uint64_t)1 << 63));
}

double key_double(uint64_t k) {
  uint64_t u = (k >> 63) ? (k & ~((uint64_t)1 << 63)) : ~k;
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

static inline unsigned digit(uint64_t key, int low) {
  return (unsigned)(key >> low) & RADIX_MASK;
}

/* Sorts len records of src on key bits [0, bits). The result lands in tmp when into_tmp, else in
 * src; the other array is scratch. */
static void sort_bucket(sort_record *src, sort_record *tmp, int64_t len, int bits, int into_tmp) {
  sort_record *want = into_tmp ? tmp : src;
  if (len > 1 && bits > 0) {
    uint64_t first = src[0].key, differ = 0;
    for (int64_t i = 1; i < len; i++) differ |= src[i].key ^ first;
    differ &= bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    if (differ == 0) bits = 0; /* equal keys: already in order */
    while (bits > 0 && !(differ >> (bits - 1))) bits--;
  }
  if (len <= 1 || bits <= 0) {
    if (into_tmp) memcpy(tmp, src, (size_t)len * sizeof *src);
    return;
  }
  if (len <= INSERTION_RECORDS) {
    sort_record *out = want;
    if (out != src) memcpy(out, src, (size_t)len * sizeof *src);
    for (int64_t i = 1; i < len; i++) {
      sort_record r = out[i];
      int64_t j = i;
      for (; j > 0 && out[j - 1].key > r.key; j--) out[j] = out[j - 1];
      out[j] = r;
    }
    return;
  }
  if (len <= LEAF_RECORDS) { /* LSD on 8-bit digits, all histograms from one read */
    int64_t count[8][256];
    int digits = (bits + 7) / 8;
    memset(count, 0, sizeof count);
    for (int64_t i = 0; i < len; i++)
      for (int p = 0; p < digits; p++) count[p][(src[i].key >> (8 * p)) & 255]++;
    sort_record *from = src, *to = tmp;
    for (int p = 0; p < digits; p++) {
      int shift = 8 * p;
      if (count[p][(from[0].key >> shift) & 255] == len) continue;
      int64_t sum = 0;
      for (int d = 0; d < 256; d++) {
        int64_t c = count[p][d];
        count[p][d] = sum;
        sum += c;
      }
      for (int64_t i = 0; i < len; i++) to[count[p][(from[i].key >> shift) & 255]++] = from[i];
      sort_record *t = from;
      from = to;
      to = t;
    }
    if (from != want) memcpy(want, from, (size_t)len * sizeof *src);
    return;
  }
  /* MSD pass on the highest digit, then each sub-bucket with the arrays' roles swapped. */
  int low = bits > RADIX_BITS ? bits - RADIX_BITS : 0;
  int64_t count[RADIX_SIZE + 1];
  memset(count, 0, sizeof count);
  for (int64_t i = 0; i < len; i++) count[digit(src[i].key, low) + 1]++;
  for (int d = 0; d < RADIX_SIZE; d++) count[d + 1] += count[d];
  int64_t next[RADIX_SIZE];
  memcpy(next, count, sizeof next);
  for (int64_t i = 0; i < len; i++) tmp[next[digit(src[i].key, low)]++] = src[i];
  for (int d = 0; d < RADIX_SIZE; d++) {
    int64_t o = count[d], c = count[d + 1] - o;
    if (c > 0) sort_bucket(tmp + o, src + o, c, low, !into_tmp);
  }
}

sort_record *sort_records(int64_t n, const double *x, const double *y, const double *w, int nth) {
  size_t m = (size_t)(n > 0 ? n : 1);
  sort_record *a = malloc(m * sizeof *a), *b = malloc(m * sizeof *b);
  int64_t(*count)[RADIX_SIZE] = calloc((size_t)nth, sizeof *count);
  if (!a || !b || !count) {
    free(a);
    free(b);
    free(count);
    return NULL;
  }
  /* The highest bit in which any two keys differ sets the first digit. */
  uint64_t lo = ~(uint64_t)0, hi = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) reduction(min : lo) reduction(max : hi)
#endif
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = double_key(x[i]);
    lo = k < lo ? k : lo;
    hi = k > hi ? k : hi;
  }
  int bits = 0;
  for (uint64_t d = n > 0 ? lo ^ hi : 0; d; d >>= 1) bits++;
  int low = bits > RADIX_BITS ? bits - RADIX_BITS : 0;

  /* First pass, stable across threads: thread t's part of the input lands after the same digit's
   * records from the parts before it. */
#ifdef _OPENMP
#pragma omp parallel num_threads(nth)
#endif
  {
#ifdef _OPENMP
    int t = omp_get_thread_num();
#else
    int t = 0;
#endif
    int64_t from = n * t / nth, to = n * (t + 1) / nth;
    for (int64_t i = from; i < to; i++) count[t][digit(double_key(x[i]), low)]++;
#ifdef _OPENMP
#pragma omp barrier
#pragma omp single
#endif
    {
      int64_t sum = 0;
      for (int d = 0; d < RADIX_SIZE; d++) {
        for (int u = 0; u < nth; u++) {
          int64_t c = count[u][d];
          count[u][d] = sum;
          sum += c;
        }
      }
    }
    for (int64_t i = from; i < to; i++) {
      sort_record r = {double_key(x[i]), i, y[i], w ? w[i] : 1.0};
      a[count[t][digit(r.key, low)]++] = r;
    }
  }
  /* count[nth - 1][d] is now the end of bucket d. */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic)
#endif
  for (int d = 0; d < RADIX_SIZE; d++) {
    int64_t end = count[nth - 1][d], start = d == 0 ? 0 : count[nth - 1][d - 1];
    if (end - start > 1) sort_bucket(a + start, b + start, end - start, low, 0);
  }
  free(b);
  free(count);
  return a;
}

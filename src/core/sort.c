/* Stable sort of (x, y, w) records by x: a radix sort on the bits of x's keys.
 *
 * A double maps to an unsigned key with the same order (flip all bits of negatives, the sign bit
 * of the rest); -0 is made +0 first so that the two compare equal, as they do in R.
 *
 * The first pass scatters the records into buckets of about equal sizes by the highest bits in
 * which the keys differ, reading x, y and w in order, so y and w are never gathered at random.
 * Each bucket, in cache, is then sorted on its own, in parallel (see sort_bucket). A bucket of
 * equal keys stops at once.
 * Every pass is stable, so equal x keep their input order. Buckets hold disjoint ranges of keys,
 * so equal x never span two buckets, and each bucket counts its distinct x while in cache.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"


#define RADIX_BITS 11
#define RADIX_SIZE (1 << RADIX_BITS)
#define RADIX_MASK (RADIX_SIZE - 1)
/* Sub-buckets up to this many records are left to the insertion sweep. */
#define INSERTION_RECORDS 32
/* Buckets whose keys vary in at most this many bytes, and that fit in cache, take LSD passes. */
#define LSD_MAX_BYTES 3
#define LSD_MAX_RECORDS 16384

static inline unsigned digit(uint64_t key, int low) {
  return (unsigned)(key >> low) & RADIX_MASK;
}

/* Sorts len records of src on key bits [0, bits). The result lands in tmp when into_tmp, else in
 * src; the other array is scratch.
 *
 * Keys that vary in few bytes (integer-valued x, say) take LSD passes on those bytes alone.
 * Others take one MSD pass on their highest differing bits, a recursion into the sub-buckets too
 * large for insertion, and one insertion sweep that orders the small ones: no element moves past
 * the end of its sub-bucket. */
static void sort_bucket(sort_record *src, sort_record *tmp, int64_t len, int bits, int into_tmp) {
  sort_record *want = into_tmp ? tmp : src;
  uint64_t differ = 0;
  if (len > 1 && bits > 0) {
    for (int64_t i = 1; i < len; i++) differ |= src[i].key ^ src[0].key;
    differ &= bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    while (bits > 0 && !(differ >> (bits - 1))) bits--; /* equal keys: bits 0, in order */
  }
  if (len <= 1 || bits <= 0) {
    if (into_tmp) memcpy(tmp, src, (size_t)len * sizeof *src);
    return;
  }
  int varying = 0;
  for (int p = 0; p < 8; p++) varying += ((differ >> (8 * p)) & 255) != 0;
  if (len > INSERTION_RECORDS && varying <= LSD_MAX_BYTES && len <= LSD_MAX_RECORDS) {
    sort_record *from = src, *to = tmp;
    for (int p = 0; p < 8; p++) {
      int shift = 8 * p;
      if (((differ >> shift) & 255) == 0) continue;
      int64_t count[256];
      memset(count, 0, sizeof count);
      for (int64_t i = 0; i < len; i++) count[(from[i].key >> shift) & 255]++;
      int64_t sum = 0;
      for (int d = 0; d < 256; d++) {
        int64_t c = count[d];
        count[d] = sum;
        sum += c;
      }
      for (int64_t i = 0; i < len; i++) to[count[(from[i].key >> shift) & 255]++] = from[i];
      sort_record *t = from;
      from = to;
      to = t;
    }
    if (from != want) memcpy(want, from, (size_t)len * sizeof *src);
    return;
  }
  if (len > INSERTION_RECORDS) {
    int low = bits > RADIX_BITS ? bits - RADIX_BITS : 0;
    int64_t count[RADIX_SIZE + 1], next[RADIX_SIZE];
    memset(count, 0, sizeof count);
    for (int64_t i = 0; i < len; i++) count[digit(src[i].key, low) + 1]++;
    for (int d = 0; d < RADIX_SIZE; d++) count[d + 1] += count[d];
    memcpy(next, count, sizeof next);
    for (int64_t i = 0; i < len; i++) tmp[next[digit(src[i].key, low)]++] = src[i];
    for (int d = 0; d < RADIX_SIZE; d++) {
      int64_t o = count[d], c = count[d + 1] - o;
      if (c > INSERTION_RECORDS) sort_bucket(tmp + o, src + o, c, low, 0);
    }
    src = tmp; /* the records are in tmp now */
  } else if (want != src) {
    memcpy(want, src, (size_t)len * sizeof *src);
    src = want;
  }
  for (int64_t i = 1; i < len; i++) {
    sort_record r = src[i];
    int64_t j = i;
    for (; j > 0 && src[j - 1].key > r.key; j--) src[j] = src[j - 1];
    src[j] = r;
  }
  if (src != want) memcpy(want, src, (size_t)len * sizeof *src);
}

void sort_records_serial(sort_record *r, sort_record *tmp, int64_t len) {
  sort_bucket(r, tmp, len, 64, 0);
}

/* The first pass splits the records into buckets of balanced sizes: a histogram of the 16
 * highest bits in which the keys differ, cut into runs of neighbouring prefixes that hold about
 * TOP_BUCKET_RECORDS records each, so that data whose keys crowd into a few exponents (as uniform
 * draws do) still give buckets that fit in cache. */
#define PREFIX_BITS 16
#define PREFIXES (1 << PREFIX_BITS)
#define TOP_BUCKET_RECORDS 4096

static inline unsigned prefix_of(uint64_t key, int shift) {
  return (unsigned)(key >> shift) & (PREFIXES - 1);
}

gpuiso_status sort_records(int64_t n, const double *x, const double *y, const double *w,
                           const int *g, int gbits, int nth, sorted_records *out, int64_t *bad) {
  size_t m = (size_t)(n > 0 ? n : 1);
  sort_record *a = malloc_dense(m * sizeof *a);
  int64_t *knots = NULL;
  int64_t(*count)[PREFIXES] = calloc((size_t)nth, sizeof *count); /* per thread, then offsets */
  uint32_t *bucket = malloc(PREFIXES * sizeof *bucket);
  int64_t *end = malloc((PREFIXES + 1) * sizeof *end);
  sort_record *scratch = NULL;
  if (!a || !count || !bucket || !end) goto fail;

  uint64_t lo = ~(uint64_t)0, hi = 0;
  int64_t first_bad = n;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) reduction(min : lo, first_bad) reduction(max : hi)
#endif
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = double_key(x[i]);
    lo = k < lo ? k : lo;
    hi = k > hi ? k : hi;
    if (!isfinite(x[i]) && i < first_bad) first_bad = i;
  }
  if (first_bad < n) {
    *bad = first_bad;
    free(a);
    free(count);
    free(bucket);
    free(end);
    return GPUISO_E_X_NONFINITE;
  }
  int bits = 0;
  for (uint64_t d = n > 0 ? lo ^ hi : 0; d; d >>= 1) bits++;
  int shift = bits > PREFIX_BITS ? bits - PREFIX_BITS : 0;

#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static, 1)
#endif
  for (int t = 0; t < nth; t++) {
    for (int64_t i = n * t / nth; i < n * (t + 1) / nth; i++) count[t][prefix_of(double_key(x[i]), shift)]++;
  }
  /* Buckets: consecutive prefixes until one holds enough records. */
  int64_t nbuckets = 0, filled = 0, largest = 0, total = 0;
  for (int p = 0; p < PREFIXES; p++) {
    int64_t c = 0;
    for (int t = 0; t < nth; t++) c += count[t][p];
    bucket[p] = (uint32_t)nbuckets;
    filled += c;
    total += c;
    if (filled >= TOP_BUCKET_RECORDS || p == PREFIXES - 1) {
      end[nbuckets++] = total;
      largest = filled > largest ? filled : largest;
      filled = 0;
    }
  }
  /* Stable across threads: thread t's records of a bucket follow those of threads before it.
   * count[t][b] becomes thread t's next slot in bucket b. */
  {
    int64_t sum = 0;
    for (int64_t b = 0, p = 0; b < nbuckets; b++) {
      int64_t p0 = p;
      for (int t = 0; t < nth; t++) {
        int64_t c = 0;
        for (p = p0; p < PREFIXES && bucket[p] == (uint32_t)b; p++) c += count[t][p];
        count[t][b] = sum;
        sum += c;
      }
    }
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static, 1)
#endif
  for (int t = 0; t < nth; t++) {
    for (int64_t i = n * t / nth; i < n * (t + 1) / nth; i++) {
      sort_record r = {double_key(x[i]), g ? i << gbits | g[i] : i, y[i], w ? w[i] : 1.0};
      a[count[t][bucket[prefix_of(r.key, shift)]]++] = r;
    }
  }

  /* Each bucket on its own, with a scratch array per thread of the largest bucket's size, or,
   * when that would take more (a few huge buckets of tied x), one of n shared by position. */
  int per_thread = (int64_t)nth * largest <= n;
  scratch = malloc((size_t)(per_thread ? nth * largest : n) * sizeof *scratch + 1);
  knots = malloc(((size_t)nbuckets + 1) * sizeof *knots);
  if (!scratch || !knots) goto fail;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic)
#endif
  for (int64_t b = 0; b < nbuckets; b++) {
    int64_t from = b == 0 ? 0 : end[b - 1], distinct = end[b] > from;
    sort_record *mine = per_thread ? scratch + (size_t)thread_num() * (size_t)largest : scratch + from;
    if (end[b] - from > 1) sort_bucket(a + from, mine, end[b] - from, bits, 0);
    for (int64_t p = from + 1; p < end[b]; p++) distinct += a[p].key != a[p - 1].key;
    knots[b + 1] = distinct;
  }
  knots[0] = 0;
  for (int64_t b = 0; b < nbuckets; b++) knots[b + 1] += knots[b];
  /* end[] becomes the bucket starts, one more entry than buckets. */
  for (int64_t b = nbuckets; b > 0; b--) end[b] = end[b - 1];
  end[0] = 0;
  out->n = n;
  out->gbits = g ? gbits : 0;
  out->r = a;
  out->nbuckets = nbuckets;
  out->start = end;
  out->knots = knots;
  free(scratch);
  free(count);
  free(bucket);
  return GPUISO_OK;

fail:
  free(a);
  free(count);
  free(bucket);
  free(end);
  free(knots);
  free(scratch);
  return GPUISO_E_NOMEM;
}

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
 *
 * The same code sorts a ranking's key_tag records (key and tag alone, half the bytes to move):
 * it is written once over the record's size, both of which start with the key, and inlined for
 * each size.
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

/* Record i of an array of records of the given size, and a record's key. */
static inline char *record_at(char *a, int64_t i, size_t size) { return a + (size_t)i * size; }
static inline uint64_t key_of(const char *r) {
  uint64_t k;
  memcpy(&k, r, sizeof k);
  return k;
}

static void sort_bucket_records(char *src, char *tmp, int64_t len, int bits, int into_tmp);
static void sort_bucket_keys(char *src, char *tmp, int64_t len, int bits, int into_tmp);

/* sort_bucket compiled for the record's size. */
static inline void sort_bucket_sized(char *src, char *tmp, int64_t len, int bits, int into_tmp, size_t size) {
  if (size == sizeof(sort_record)) sort_bucket_records(src, tmp, len, bits, into_tmp);
  else sort_bucket_keys(src, tmp, len, bits, into_tmp);
}

/* Sorts len records of src on key bits [0, bits). The result lands in tmp when into_tmp, else in
 * src; the other array is scratch.
 *
 * Keys that vary in few bytes (integer-valued x, say) take LSD passes on those bytes alone.
 * Others take one MSD pass on their highest differing bits, a recursion into the sub-buckets too
 * large for insertion, and one insertion sweep that orders the small ones: no element moves past
 * the end of its sub-bucket. */
static GPUISO_ALWAYS_INLINE void sort_bucket(char *src, char *tmp, int64_t len, int bits, int into_tmp,
                                             size_t size) {
  char *want = into_tmp ? tmp : src;
  uint64_t differ = 0;
  if (len > 1 && bits > 0) {
    uint64_t first = key_of(src);
    for (int64_t i = 1; i < len; i++) differ |= key_of(record_at(src, i, size)) ^ first;
    differ &= bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    while (bits > 0 && !(differ >> (bits - 1))) bits--; /* equal keys: bits 0, in order */
  }
  if (len <= 1 || bits <= 0) {
    if (into_tmp) memcpy(tmp, src, (size_t)len * size);
    return;
  }
  int varying = 0;
  for (int p = 0; p < 8; p++) varying += ((differ >> (8 * p)) & 255) != 0;
  if (len > INSERTION_RECORDS && varying <= LSD_MAX_BYTES && len <= LSD_MAX_RECORDS) {
    char *from = src, *to = tmp;
    for (int p = 0; p < 8; p++) {
      int shift = 8 * p;
      if (((differ >> shift) & 255) == 0) continue;
      int64_t count[256];
      memset(count, 0, sizeof count);
      for (int64_t i = 0; i < len; i++) count[(key_of(record_at(from, i, size)) >> shift) & 255]++;
      int64_t sum = 0;
      for (int d = 0; d < 256; d++) {
        int64_t c = count[d];
        count[d] = sum;
        sum += c;
      }
      for (int64_t i = 0; i < len; i++) {
        const char *r = record_at(from, i, size);
        memcpy(record_at(to, count[(key_of(r) >> shift) & 255]++, size), r, size);
      }
      char *t = from;
      from = to;
      to = t;
    }
    if (from != want) memcpy(want, from, (size_t)len * size);
    return;
  }
  if (len > INSERTION_RECORDS) {
    int low = bits > RADIX_BITS ? bits - RADIX_BITS : 0;
    int64_t count[RADIX_SIZE + 1], next[RADIX_SIZE];
    memset(count, 0, sizeof count);
    for (int64_t i = 0; i < len; i++) count[digit(key_of(record_at(src, i, size)), low) + 1]++;
    for (int d = 0; d < RADIX_SIZE; d++) count[d + 1] += count[d];
    memcpy(next, count, sizeof next);
    for (int64_t i = 0; i < len; i++) {
      const char *r = record_at(src, i, size);
      memcpy(record_at(tmp, next[digit(key_of(r), low)]++, size), r, size);
    }
    for (int d = 0; d < RADIX_SIZE; d++) {
      int64_t o = count[d], c = count[d + 1] - o;
      if (c > INSERTION_RECORDS) sort_bucket_sized(record_at(tmp, o, size), record_at(src, o, size), c, low, 0, size);
    }
    src = tmp; /* the records are in tmp now */
  } else if (want != src) {
    memcpy(want, src, (size_t)len * size);
    src = want;
  }
  for (int64_t i = 1; i < len; i++) {
    char r[sizeof(sort_record)];
    memcpy(r, record_at(src, i, size), size);
    uint64_t key = key_of(r);
    int64_t j = i;
    for (; j > 0 && key_of(record_at(src, j - 1, size)) > key; j--)
      memcpy(record_at(src, j, size), record_at(src, j - 1, size), size);
    memcpy(record_at(src, j, size), r, size);
  }
  if (src != want) memcpy(want, src, (size_t)len * size);
}

static void sort_bucket_records(char *src, char *tmp, int64_t len, int bits, int into_tmp) {
  sort_bucket(src, tmp, len, bits, into_tmp, sizeof(sort_record));
}

static void sort_bucket_keys(char *src, char *tmp, int64_t len, int bits, int into_tmp) {
  sort_bucket(src, tmp, len, bits, into_tmp, sizeof(key_tag));
}

void sort_records_serial(sort_record *r, sort_record *tmp, int64_t len) {
  sort_bucket_records((char *)r, (char *)tmp, len, 64, 0);
}

void sort_keys_serial(key_tag *r, key_tag *tmp, int64_t len) {
  sort_bucket_keys((char *)r, (char *)tmp, len, 64, 0);
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

/* sort_records with records of the given size: sort_record, or key_tag (y and w unused). out gets
 * all but its records, which *records gets. */
static gpuiso_status sort_sized(int64_t n, const double *x, const double *y, const double *w,
                                const int *g, int gbits, int nth, size_t size, char **records,
                                sorted_records *out, int64_t *bad) {
  size_t m = (size_t)(n > 0 ? n : 1);
  char *a = malloc_dense(m * size);
  int64_t *knots = NULL;
  int64_t(*count)[PREFIXES] = calloc((size_t)nth, sizeof *count); /* per thread, then offsets */
  uint32_t *bucket = malloc(PREFIXES * sizeof *bucket);
  int64_t *end = malloc((PREFIXES + 1) * sizeof *end);
  char *scratch = NULL;
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
      uint64_t key = double_key(x[i]);
      int64_t tag = g ? i << gbits | g[i] : i;
      char *to = record_at(a, count[t][bucket[prefix_of(key, shift)]]++, size);
      if (size == sizeof(sort_record)) {
        sort_record r = {key, tag, y[i], w ? w[i] : 1.0};
        memcpy(to, &r, sizeof r);
      } else {
        key_tag r = {key, tag};
        memcpy(to, &r, sizeof r);
      }
    }
  }

  /* Each bucket on its own, with a scratch array per thread of the largest bucket's size, or,
   * when that would take more (a few huge buckets of tied x), one of n shared by position. */
  int per_thread = (int64_t)nth * largest <= n;
  scratch = malloc((size_t)(per_thread ? nth * largest : n) * size + 1);
  knots = malloc(((size_t)nbuckets + 1) * sizeof *knots);
  if (!scratch || !knots) goto fail;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic)
#endif
  for (int64_t b = 0; b < nbuckets; b++) {
    int64_t from = b == 0 ? 0 : end[b - 1], distinct = end[b] > from;
    char *mine = record_at(scratch, per_thread ? (int64_t)thread_num() * largest : from, size);
    if (end[b] - from > 1) sort_bucket_sized(record_at(a, from, size), mine, end[b] - from, bits, 0, size);
    for (int64_t p = from + 1; p < end[b]; p++)
      distinct += key_of(record_at(a, p, size)) != key_of(record_at(a, p - 1, size));
    knots[b + 1] = distinct;
  }
  knots[0] = 0;
  for (int64_t b = 0; b < nbuckets; b++) knots[b + 1] += knots[b];
  /* end[] becomes the bucket starts, one more entry than buckets. */
  for (int64_t b = nbuckets; b > 0; b--) end[b] = end[b - 1];
  end[0] = 0;
  out->n = n;
  out->gbits = g ? gbits : 0;
  *records = a;
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

gpuiso_status sort_records(int64_t n, const double *x, const double *y, const double *w,
                           const int *g, int gbits, int nth, sorted_records *out, int64_t *bad) {
  char *r = NULL;
  gpuiso_status s = sort_sized(n, x, y, w, g, gbits, nth, sizeof(sort_record), &r, out, bad);
  out->r = (sort_record *)r;
  return s;
}

gpuiso_status sort_keys(int64_t n, const double *x, const int *g, int gbits, int nth, key_tag **keys,
                        int64_t *bad) {
  char *r = NULL;
  sorted_records s;
  gpuiso_status st = sort_sized(n, x, NULL, NULL, g, gbits, nth, sizeof(key_tag), &r, &s, bad);
  if (st == GPUISO_OK) {
    free(s.start);
    free(s.knots);
  }
  *keys = (key_tag *)r;
  return st;
}

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

/* The first pass splits the records into buckets of balanced sizes: a histogram of the (up to)
 * 16 highest bits in which the keys differ, cut into runs of neighbouring prefixes that hold
 * about TOP_BUCKET_RECORDS records each, so that data whose keys crowd into a few exponents (as
 * uniform draws do) still give buckets that fit in cache. Fewer records take fewer bits, about
 * one prefix for four records (none up to TOP_BUCKET_RECORDS: one bucket), so that a short row
 * does not pay for clearing and scanning 2^16 counts. */
#define PREFIX_BITS 16
#define TOP_BUCKET_RECORDS 4096

static int prefix_bits(int64_t n) {
  int bits = 0;
  if (n > TOP_BUCKET_RECORDS)
    for (int64_t q = n / 4; q > 1 && bits < PREFIX_BITS; q >>= 1) bits++;
  return bits;
}

static inline unsigned prefix_of(uint64_t key, int shift, unsigned mask) {
  return (unsigned)(key >> shift) & mask;
}

/* A slice's lowest and highest key and its first non-finite x (n: none). */
typedef struct {
  uint64_t lo, hi;
  int64_t bad;
} key_span;

/* The state of a sort_sized, shared by its passes (each a piece_fn over slices or buckets). */
typedef struct {
  int64_t n;
  const double *x, *y, *w;
  const int *g;
  int gbits, nth, shift, bits, per_thread;
  size_t size;
  char *a, *scratch;
  int64_t prefixes, largest;
  unsigned mask;
  int64_t *count;   /* count[t * prefixes + p]: slice t's records of prefix p, then its slots */
  key_span *span;   /* of each slice */
  uint32_t *bucket; /* of each prefix */
  int64_t *end;     /* where each bucket ends, then starts */
  int64_t *knots;   /* distinct x in each bucket, then before it */
} sort_pass;

/* The passes below copy what their loops read into locals: their stores (through char *, or
 * of int64_t) could otherwise alias the fields, which the compiler would then reload. */
static void key_range(void *ctx, int64_t t, int thread) {
  sort_pass *sp = ctx;
  const double *x = sp->x;
  int64_t from = slice_bound(sp->n, (int)t, sp->nth), to = slice_bound(sp->n, (int)t + 1, sp->nth);
  key_span s = {~(uint64_t)0, 0, sp->n};
  for (int64_t i = from; i < to; i++) {
    uint64_t k = double_key(x[i]);
    s.lo = k < s.lo ? k : s.lo;
    s.hi = k > s.hi ? k : s.hi;
    if (!isfinite(x[i]) && i < s.bad) s.bad = i;
  }
  sp->span[t] = s;
}

static void count_prefixes(void *ctx, int64_t t, int thread) {
  const sort_pass *sp = ctx;
  const double *x = sp->x;
  int shift = sp->shift;
  unsigned mask = sp->mask;
  int64_t *mine = sp->count + t * sp->prefixes;
  int64_t from = slice_bound(sp->n, (int)t, sp->nth), to = slice_bound(sp->n, (int)t + 1, sp->nth);
  for (int64_t i = from; i < to; i++) mine[prefix_of(double_key(x[i]), shift, mask)]++;
}

/* Slice t's records to its slots in their buckets, in input order. */
static void scatter(void *ctx, int64_t t, int thread) {
  const sort_pass *sp = ctx;
  const double *x = sp->x, *y = sp->y, *w = sp->w;
  const int *g = sp->g;
  const uint32_t *bucket = sp->bucket;
  int gbits = sp->gbits, shift = sp->shift;
  unsigned mask = sp->mask;
  size_t size = sp->size;
  char *a = sp->a;
  int64_t *slot = sp->count + t * sp->prefixes;
  int64_t from = slice_bound(sp->n, (int)t, sp->nth), to = slice_bound(sp->n, (int)t + 1, sp->nth);
  for (int64_t i = from; i < to; i++) {
    uint64_t key = double_key(x[i]);
    int64_t tag = g ? i << gbits | g[i] : i;
    char *dst = record_at(a, slot[bucket[prefix_of(key, shift, mask)]]++, size);
    if (size == sizeof(sort_record)) {
      sort_record r = {key, tag, y[i], w ? w[i] : 1.0};
      memcpy(dst, &r, sizeof r);
    } else {
      key_tag r = {key, tag};
      memcpy(dst, &r, sizeof r);
    }
  }
}

/* Bucket b sorted, in cache, and its distinct x counted. */
static void sort_one_bucket(void *ctx, int64_t b, int thread) {
  sort_pass *sp = ctx;
  size_t size = sp->size;
  char *a = sp->a;
  int64_t from = b == 0 ? 0 : sp->end[b - 1], to = sp->end[b], distinct = to > from;
  int64_t at = sp->per_thread ? (int64_t)thread * sp->largest : from;
  if (to - from > 1)
    sort_bucket_sized(record_at(a, from, size), record_at(sp->scratch, at, size), to - from,
                      sp->bits, 0, size);
  for (int64_t p = from + 1; p < to; p++)
    distinct += key_of(record_at(a, p, size)) != key_of(record_at(a, p - 1, size));
  sp->knots[b + 1] = distinct;
}

/* sort_records with records of the given size: sort_record, or key_tag (y and w unused). out gets
 * all but its records, which *records gets. */
static gpuiso_status sort_sized(int64_t n, const double *x, const double *y, const double *w,
                                const int *g, int gbits, int nth, size_t size, char **records,
                                sorted_records *out, int64_t *bad) {
  sort_pass sp = {.n = n, .x = x, .y = y, .w = w, .g = g, .gbits = gbits, .nth = nth, .size = size};
  int pbits = prefix_bits(n);
  sp.prefixes = (int64_t)1 << pbits;
  sp.mask = (unsigned)sp.prefixes - 1;
  sp.a = malloc_dense((size_t)(n > 0 ? n : 1) * size);
  sp.count = calloc((size_t)(nth * sp.prefixes), sizeof *sp.count);
  sp.span = malloc((size_t)nth * sizeof *sp.span);
  sp.bucket = malloc((size_t)sp.prefixes * sizeof *sp.bucket);
  sp.end = malloc((size_t)(sp.prefixes + 1) * sizeof *sp.end);
  gpuiso_status status = GPUISO_E_NOMEM;
  if (!sp.a || !sp.count || !sp.span || !sp.bucket || !sp.end) goto fail;

  for_each_piece(nth, nth, 1, key_range, &sp);
  key_span all = {~(uint64_t)0, 0, n};
  for (int t = 0; t < nth; t++) {
    all.lo = sp.span[t].lo < all.lo ? sp.span[t].lo : all.lo;
    all.hi = sp.span[t].hi > all.hi ? sp.span[t].hi : all.hi;
    all.bad = sp.span[t].bad < all.bad ? sp.span[t].bad : all.bad;
  }
  if (all.bad < n) {
    *bad = all.bad;
    status = GPUISO_E_X_NONFINITE;
    goto fail;
  }
  for (uint64_t d = n > 0 ? all.lo ^ all.hi : 0; d; d >>= 1) sp.bits++;
  sp.shift = pbits > 0 && sp.bits > pbits ? sp.bits - pbits : 0; /* (a shift by 64 is undefined) */

  for_each_piece(nth, nth, 1, count_prefixes, &sp);
  /* Buckets: consecutive prefixes until one holds enough records. */
  int64_t nbuckets = 0, filled = 0, total = 0;
  for (int64_t p = 0; p < sp.prefixes; p++) {
    int64_t c = 0;
    for (int t = 0; t < nth; t++) c += sp.count[t * sp.prefixes + p];
    sp.bucket[p] = (uint32_t)nbuckets;
    filled += c;
    total += c;
    if (filled >= TOP_BUCKET_RECORDS || p == sp.prefixes - 1) {
      sp.end[nbuckets++] = total;
      sp.largest = filled > sp.largest ? filled : sp.largest;
      filled = 0;
    }
  }
  /* Stable across slices: slice t's records of a bucket follow those of slices before it.
   * count[t * prefixes + b] becomes slice t's next slot in bucket b. */
  {
    int64_t sum = 0;
    for (int64_t b = 0, p = 0; b < nbuckets; b++) {
      int64_t p0 = p;
      for (int t = 0; t < nth; t++) {
        int64_t c = 0;
        for (p = p0; p < sp.prefixes && sp.bucket[p] == (uint32_t)b; p++)
          c += sp.count[t * sp.prefixes + p];
        sp.count[t * sp.prefixes + b] = sum;
        sum += c;
      }
    }
  }
  for_each_piece(nth, nth, 1, scatter, &sp);

  /* Each bucket on its own, with a scratch array per thread of the largest bucket's size, or,
   * when that would take more (a few huge buckets of tied x), one of n shared by position. */
  sp.per_thread = (int64_t)nth * sp.largest <= n;
  sp.scratch = malloc_dense((size_t)(sp.per_thread ? nth * sp.largest : n) * size + 1);
  sp.knots = malloc(((size_t)nbuckets + 1) * sizeof *sp.knots);
  if (!sp.scratch || !sp.knots) goto fail;
  for_each_piece(nbuckets, nth, 1, sort_one_bucket, &sp);
  sp.knots[0] = 0;
  for (int64_t b = 0; b < nbuckets; b++) sp.knots[b + 1] += sp.knots[b];
  /* end[] becomes the bucket starts, one more entry than buckets. */
  for (int64_t b = nbuckets; b > 0; b--) sp.end[b] = sp.end[b - 1];
  sp.end[0] = 0;
  out->n = n;
  out->gbits = g ? gbits : 0;
  *records = sp.a;
  out->nbuckets = nbuckets;
  out->start = sp.end;
  out->knots = sp.knots;
  free(sp.scratch);
  free(sp.count);
  free(sp.span);
  free(sp.bucket);
  return GPUISO_OK;

fail:
  free(sp.a);
  free(sp.count);
  free(sp.span);
  free(sp.bucket);
  free(sp.end);
  free(sp.knots);
  free(sp.scratch);
  return status;
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

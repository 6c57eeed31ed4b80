/* The transitive reduction of the componentwise order of distinct points (see gpuiso_poset in
 * gpuiso.h), computed once per IDR fit.
 *
 * The points are sorted lexicographically, so the points greater than p all come after it. Going
 * through them in that order, q covers p unless a cover c of p already found lies below q: a
 * point r strictly between p and q lies above some cover c of p (a least point of the interval
 * from p to r), and c comes before q. Two ways to know whether a cover found lies below q:
 *   - up-sets as bit rows (up_rows), where they fit in POSET_BITS_MAX bytes and in memory: each
 *     point's set of the points above it, from one comparison of every pair; then the points
 *     above p that no cover's up-set holds, in order, are the covers, each cover's row or-ed in
 *     as it is found;
 *   - else comparisons with the covers found so far (covers_of), which costs (comparable pairs)
 *     times (covers) comparisons: 2.7 s against 0.45 s (one thread) for 1e4 vectors of 10
 *     sorted members, 160 covers each.
 * Both list each point's covers in increasing order, the same lists. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Point p <= point q componentwise (rows of the row-major npos x d matrix xr). */
static int below(const double *xr, int64_t d, int64_t p, int64_t q) {
  const double *a = xr + p * d, *b = xr + q * d;
  for (int64_t j = 0; j < d; j++)
    if (a[j] > b[j]) return 0;
  return 1;
}

/* A growable list of pairs (point, cover). */
typedef struct {
  int64_t n, cap;
  int32_t *from, *to;
} pair_list;

static int pairs_push(pair_list *l, int32_t from, int32_t to) {
  if (l->n == l->cap) {
    int64_t cap = l->cap ? 2 * l->cap : 4096;
    int32_t *f = realloc(l->from, (size_t)cap * sizeof *f);
    if (!f) return 0;
    l->from = f;
    int32_t *t = realloc(l->to, (size_t)cap * sizeof *t);
    if (!t) return 0;
    l->to = t;
    l->cap = cap;
  }
  l->from[l->n] = from;
  l->to[l->n++] = to;
  return 1;
}

/* Appends the covers of p to l; scratch holds npos entries. */
static int covers_of(const double *xr, int64_t npos, int64_t d, int64_t p, int32_t *scratch,
                     pair_list *l) {
  int64_t nc = 0;
  for (int64_t q = p + 1; q < npos; q++) {
    if (!below(xr, d, p, q)) continue;
    /* the cover that lay below the last covered point is tried first: neighbouring points
     * in the order tend to lie above the same covers */
    int64_t c = 0;
    while (c < nc && !below(xr, d, scratch[c], q)) c++;
    if (c < nc) {
      int32_t hit = scratch[c];
      scratch[c] = scratch[0];
      scratch[0] = hit;
      continue;
    }
    scratch[nc++] = (int32_t)q;
    if (!pairs_push(l, (int32_t)p, (int32_t)q)) return 0;
  }
  return 1;
}

/* The up-set bit rows of npos points: row p holds bit q for each point q > p above p, in the
 * words from p / 64 on (the words before hold no point after p and are not stored). */
typedef struct {
  int64_t words; /* of a whole row */
  int64_t *at;   /* npos: where row p starts in bits (its word p / 64 there) */
  uint64_t *bits;
} up_rows;

static uint64_t *up_row(const up_rows *u, int64_t p) { return u->bits + u->at[p] - p / 64; }

/* The rows of npos points where they and their starts take at most max_bytes; returns 0 (rows
 * freed by up_rows_free) where they would take more or memory is short. */
static int up_rows_init(up_rows *u, int64_t npos, double max_bytes) {
  u->words = (npos + 63) / 64;
  u->at = malloc((size_t)npos * sizeof *u->at);
  int64_t total = 0;
  for (int64_t p = 0; u->at && p < npos; p++) {
    u->at[p] = total;
    total += u->words - p / 64;
  }
  if (!u->at || 8.0 * (double)(total + npos) > max_bytes) return 0;
  u->bits = calloc((size_t)(total > 0 ? total : 1), sizeof *u->bits);
  return u->bits != NULL;
}

static void up_rows_free(up_rows *u) {
  free(u->at);
  free(u->bits);
  u->at = NULL;
  u->bits = NULL;
}

/* Row p of u: the later points above p. */
static void up_row_fill(const up_rows *u, const double *xr, int64_t npos, int64_t d, int64_t p) {
  uint64_t *row = up_row(u, p);
  for (int64_t q = p + 1; q < npos; q++)
    if (below(xr, d, p, q)) row[q / 64] |= (uint64_t)1 << (q % 64);
}

/* Appends the covers of p to l from the rows of u: the points of p's row that no earlier
 * cover's row holds (seen: a row's words of scratch, the union of those rows). */
static int covers_from_rows(const up_rows *u, int64_t p, uint64_t *seen, pair_list *l) {
  const uint64_t *row = up_row(u, p);
  for (int64_t k = p / 64; k < u->words; k++) seen[k] = 0;
  for (int64_t k = p / 64; k < u->words; k++) {
    uint64_t left = row[k] & ~seen[k];
    while (left) {
      int64_t q = 64 * k + __builtin_ctzll(left);
      if (!pairs_push(l, (int32_t)p, (int32_t)q)) return 0;
      const uint64_t *above = up_row(u, q);
      for (int64_t j = q / 64; j < u->words; j++) seen[j] |= above[j];
      left &= left - 1; /* q itself, which its row does not hold */
      left &= ~seen[k];
    }
  }
  return 1;
}

void gpuiso_poset_free(gpuiso_poset *g) {
  free(g->first);
  free(g->cover);
  g->first = NULL;
  g->cover = NULL;
}

gpuiso_status gpuiso_poset_reduce(int64_t npos, int64_t d, const double *x, const gpuiso_opts *opt,
                                  gpuiso_poset *out, gpuiso_error *err) {
  return poset_reduce_within(npos, d, x, opt, POSET_BITS_MAX, out, err);
}

gpuiso_status poset_reduce_within(int64_t npos, int64_t d, const double *x, const gpuiso_opts *opt,
                                  double max_bits, gpuiso_poset *out, gpuiso_error *err) {
  memset(out, 0, sizeof *out);
  out->npos = npos;
  gpuiso_error e = {GPUISO_OK, -1, -1, ""};
  if (npos < 1 || d < 1 || npos > INT32_MAX) {
    e.status = GPUISO_E_INTERNAL;
    if (err) *err = e;
    return e.status;
  }
  int nth = resolve_threads(opt, npos * npos);
  up_rows u = {0, NULL, NULL};
  int by_rows = up_rows_init(&u, npos, max_bits);
  if (!by_rows) up_rows_free(&u); /* too many points, or no memory for the rows: comparisons */
  size_t scratch_bytes = by_rows ? (size_t)u.words * sizeof(uint64_t) : (size_t)npos * sizeof(int32_t);
  double *xr = malloc((size_t)(npos * d) * sizeof *xr);
  pair_list *lists = calloc((size_t)nth, sizeof *lists);
  char *scratch = malloc((size_t)nth * scratch_bytes);
  out->first = calloc((size_t)npos + 1, sizeof *out->first);
  int failed = !xr || !lists || !scratch || !out->first;
  if (!failed) {
    for (int64_t p = 0; p < npos; p++)
      for (int64_t j = 0; j < d; j++) xr[p * d + j] = x[p + j * npos];
  }
  /* rows per round between interrupt polls: a row compares with all later points; by rows, a
   * first pass fills them */
  int64_t per_round = GPUISO_POLL_EVERY / (npos * d) + 1;
  for (int fill = by_rows; fill >= 0 && !failed && e.status == GPUISO_OK; fill--) {
    for (int64_t p0 = 0; !failed && p0 < npos; p0 += per_round) {
      int64_t p1 = p0 + per_round < npos ? p0 + per_round : npos;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1) reduction(| : failed)
#endif
      for (int64_t p = p0; p < p1; p++) {
        void *mine = scratch + (size_t)thread_num() * scratch_bytes;
        if (fill) up_row_fill(&u, xr, npos, d, p);
        else if (by_rows ? !covers_from_rows(&u, p, mine, &lists[thread_num()])
                         : !covers_of(xr, npos, d, p, mine, &lists[thread_num()]))
          failed = 1;
      }
      if (!failed && p1 < npos && poll_interrupt(opt)) e.status = GPUISO_E_INTERRUPT;
      if (e.status != GPUISO_OK) break;
    }
  }
  if (failed) e.status = GPUISO_E_NOMEM;
  if (e.status == GPUISO_OK) {
    int64_t total = 0;
    for (int t = 0; t < nth; t++) {
      total += lists[t].n;
      for (int64_t i = 0; i < lists[t].n; i++) out->first[lists[t].from[i] + 1]++;
    }
    for (int64_t p = 0; p < npos; p++) out->first[p + 1] += out->first[p];
    out->cover = malloc((size_t)(total > 0 ? total : 1) * sizeof *out->cover);
    int64_t *at = malloc((size_t)npos * sizeof *at);
    if (!out->cover || !at) {
      e.status = GPUISO_E_NOMEM;
    } else {
      memcpy(at, out->first, (size_t)npos * sizeof *at);
      for (int t = 0; t < nth; t++)
        for (int64_t i = 0; i < lists[t].n; i++) out->cover[at[lists[t].from[i]]++] = lists[t].to[i];
    }
    free(at);
  }
  for (int t = 0; lists && t < nth; t++) {
    free(lists[t].from);
    free(lists[t].to);
  }
  free(lists);
  free(scratch);
  free(xr);
  up_rows_free(&u);
  if (e.status != GPUISO_OK) gpuiso_poset_free(out);
  if (err) *err = e;
  return e.status;
}

/* Isotonic distributional regression with one covariate: for every threshold t_k, the antitonic
 * (non-increasing in x) weighted least-squares fit of the indicators 1{y <= t_k}.
 *
 * The thresholds are swept in increasing order; going from t_{k-1} to t_k only the counts of the
 * positions holding an observation with y == t_k change, and only upwards. Two engines follow
 * the fits:
 *
 * The hull: the fit is the slopes of the least concave majorant of the cumulative sum diagram
 * (weights, counts of y <= t_k), kept in a balanced tree (cdf_hull.c) whose nodes above the
 * changed positions are joined again, O(log^3 n) a changed position, and read out in O(log n)
 * a vertex; each block between two vertices gets its weight and count summed over the tree's
 * nodes. It counts in integers, units of the power of two that every weight is a multiple of
 * (unit_exponent), so that its turns are exact: unweighted data, and weights whose total is
 * under 2^124 such units (Exp(1) weights at n = 1e6 need some 2^92); 32-bit coordinates in the
 * tree where the total allows, else 128-bit ones.
 *
 * The sweep, for weights of a wider range (Henzi, Moesching and Duembgen 2022): every vertex of
 * the new majorant is an old vertex or a point inside a block that holds a changed observation,
 * so the new partition is coarser than the old blocks with the changed ones split into their
 * positions: PAV over those units gives the new fit, and the old blocks right of the changes are
 * copied as soon as the stack stops merging. A block whose count is still 0 has all positions at
 * 0, so it only needs to be cut at its changed positions. Levels are compared as ratios of
 * pooled sums, whatever the weights' range; but a step costs the positions of the blocks it
 * splits, O(n) where the covariate says little and the blocks are long (60 s at n = 1e5 on one
 * core, where the hull takes 1 s).
 *
 * Both pool neighbouring blocks of equal level, so a threshold stores one run per distinct
 * value. The thresholds are cut into slices, one per thread, each started afresh.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "idr_poset.h"

/* An entry of the sweep's block list (and of its PAV stack). */
typedef struct {
  double sum, weight; /* weighted count of y <= t and weight of the block's observations */
  double value;       /* the stored CDF value */
  double before;      /* the CDF value at `start` for the previous threshold */
  int32_t start;      /* first position */
  int32_t fresh;      /* 1: pooled at this threshold (value to be set), 0: an old block kept */
} idr_block;

/* Appends a run (start, value) to r. */
int runs_push(run_list *r, int32_t start, double value) {
  if (r->n == r->cap) {
    int64_t cap = r->cap ? 2 * r->cap : 1024;
    int32_t *s = realloc(r->start, (size_t)cap * sizeof *s);
    if (!s) return 0;
    r->start = s;
    double *v = realloc(r->value, (size_t)cap * sizeof *v);
    if (!v) return 0;
    r->value = v;
    r->cap = cap;
  }
  r->start[r->n] = start;
  r->value[r->n] = value;
  r->n++;
  return 1;
}

/* The observations by threshold and the weight of each position, shared by the slices. */
typedef struct {
  int64_t npos, nthr;
  const int32_t *pos;   /* position of each observation */
  const double *w;      /* NULL: 1 */
  const int64_t *first; /* nthr + 1: observations of threshold k are order[first[k] .. first[k+1]), */
  const int64_t *order; /* by increasing position */
  const int32_t *at;    /* pos[order[i]] */
  const double *total;  /* the sweep's: weight of each position */
  const double *tree;   /* the sweep's: 2 npos, the positions' weights over a segment tree */
  int hull;             /* 1: the hull engine, 0: the sweep */
  int unit;             /* the hull's: its units are 2^unit */
  int wide;             /* the hull's: the units' total needs the tree's wide coordinates */
  const idr_units *units; /* the hull's: weight of each position, in units */
  int64_t pav_above;    /* the hull's: PAV for a threshold with more changed observations */
} idr_input;

/* One slice of thresholds [k0, k1) and its engine's state. */
typedef struct {
  idr_range r;
  double *count;      /* the sweep's: weighted count of y <= t per position */
  int restart;        /* the next step starts afresh (the slice's first) */
  run_list out;
  int64_t *nruns;     /* runs of each threshold of the slice */
  /* the sweep */
  idr_block *cur, *nxt;
  int64_t ncur;
  uint8_t *hit;       /* per block of cur: holds a changed observation */
  /* the hull */
  cdf_hull hull;
  idr_units *units;   /* npos: weighted count of y <= t per position, in units */
  int32_t *vertex;    /* npos + 1: the hull's vertices */
  idr_units *weight, *sum; /* npos: the blocks between them, pooled in place */
} idr_slice;

static double obs_weight(const double *w, int64_t i) {
  return w ? w[i] : 1.0;
}

/* An observation's weight in the hull's units: exact, an integer under IDR_UNITS_MAX. */
static idr_units obs_units(const double *w, int unit, int64_t i) {
  return w ? (idr_units)ldexp(w[i], -unit) : 1;
}

/* Counts the observations of thresholds [k0, k1) into the slice's positions. */
static void add_counts(idr_slice *s, const idr_input *in, int64_t k0, int64_t k1) {
  for (int64_t i = in->first[k0]; i < in->first[k1]; i++) {
    int64_t o = in->order[i];
    if (in->hull) s->units[in->pos[o]] += obs_units(in->w, in->unit, o);
    else s->count[in->pos[o]] += obs_weight(in->w, o);
  }
}

static int slice_init(idr_slice *s, const idr_input *in, int64_t k0, int64_t k1) {
  memset(s, 0, sizeof *s);
  s->r.k0 = k0;
  s->r.k1 = k1;
  s->r.next = k0;
  size_t np = (size_t)in->npos;
  s->nruns = malloc((size_t)(k1 - k0) * sizeof *s->nruns);
  s->restart = 1;
  if (in->hull) s->units = calloc(np, sizeof *s->units);
  else s->count = calloc(np, sizeof *s->count);
  if (!s->nruns || !(in->hull ? (void *)s->units : (void *)s->count)) return 0;
  add_counts(s, in, 0, k0); /* the thresholds before the slice */
  if (in->hull) {
    s->vertex = malloc((np + 1) * sizeof *s->vertex);
    s->weight = malloc(np * sizeof *s->weight);
    s->sum = malloc(np * sizeof *s->sum);
    return s->vertex && s->weight && s->sum;
  }
  s->cur = malloc(np * sizeof *s->cur);
  s->nxt = malloc(np * sizeof *s->nxt);
  s->hit = calloc(np, 1);
  if (!s->cur || !s->nxt || !s->hit) return 0;
  /* The first threshold of the slice is then a full PAV: one block over every position, marked
   * as changed. */
  idr_block all = {0.0, 1.0, 0.0, 0.0, 0, 0};
  s->cur[0] = all;
  s->ncur = 1;
  s->hit[0] = 1;
  return 1;
}

static void slice_free(idr_slice *s) {
  free(s->count);
  free(s->nruns);
  free(s->out.start);
  free(s->out.value);
  free(s->cur);
  free(s->nxt);
  free(s->hit);
  cdf_hull_free(&s->hull);
  free(s->units);
  free(s->vertex);
  free(s->weight);
  free(s->sum);
}

/* The block of cur that holds position p. */
static int64_t find_block(const idr_block *b, int64_t nb, int32_t p) {
  int64_t lo = 0, hi = nb - 1;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (b[mid].start <= p) lo = mid; else hi = mid - 1;
  }
  return lo;
}

static double level(const idr_block *b) {
  return b->sum / b->weight;
}

/* Pushes a unit onto the stack and pools while it violates the antitonic order or equals the
 * level below. */
static void push_unit(idr_block *stack, int64_t *n, idr_block unit) {
  stack[(*n)++] = unit;
  while (*n >= 2 && level(&stack[*n - 2]) <= level(&stack[*n - 1])) {
    idr_block *left = &stack[*n - 2];
    const idr_block *right = &stack[*n - 1];
    left->sum += right->sum;
    left->weight += right->weight;
    left->fresh = 1;
    (*n)--;
  }
}

/* A segment tree of the positions' weights (leaves at npos + p): the weight of any range adds up
 * a few node sums. Differences of prefix sums would cancel when weights span many magnitudes. */
static void weight_tree(const double *total, int64_t npos, double *tree) {
  for (int64_t p = 0; p < npos; p++) tree[npos + p] = total[p];
  for (int64_t i = npos - 1; i > 0; i--) tree[i] = tree[2 * i] + tree[2 * i + 1];
}

static double range_weight(const double *tree, int64_t npos, int64_t from, int64_t end) {
  double sum = 0.0;
  for (from += npos, end += npos; from < end; from >>= 1, end >>= 1) {
    if (from & 1) sum += tree[from++];
    if (end & 1) sum += tree[--end];
  }
  return sum;
}

/* Positions [from, end) of a block of zeros, as one unit. */
static idr_block zero_unit(const idr_input *in, int32_t from, int32_t end) {
  idr_block unit = {0.0, range_weight(in->tree, in->npos, from, end), 0.0, 0.0, from, 0};
  return unit;
}

/* The sweep's fit of threshold k from the one before: updates the counts, re-pools the changed
 * blocks, and appends the runs; returns their number, or -1 when out of memory. */
static int64_t sweep_fit(idr_slice *s, const idr_input *in, int64_t k) {
  int64_t lo = s->hit[0] ? 0 : s->ncur, hi = s->hit[0] ? 0 : -1;
  for (int64_t i = in->first[k]; i < in->first[k + 1]; i++) {
    int64_t o = in->order[i];
    int32_t p = in->pos[o];
    s->count[p] += obs_weight(in->w, o);
    int64_t b = find_block(s->cur, s->ncur, p);
    s->hit[b] = 1;
    if (b < lo) lo = b;
    if (b > hi) hi = b;
  }
  idr_block *stack = s->nxt;
  int64_t n = lo;
  memcpy(stack, s->cur, (size_t)lo * sizeof *stack);
  int64_t c = in->first[k], c_end = in->first[k + 1]; /* the changed observations, by position */
  for (int64_t b = lo; b < s->ncur; b++) {
    const idr_block *old = &s->cur[b];
    if (b > hi && level(&stack[n - 1]) > level(old)) {
      /* The old blocks from here on satisfy the order among themselves and with the stack. */
      memcpy(stack + n, old, (size_t)(s->ncur - b) * sizeof *stack);
      n += s->ncur - b;
      break;
    }
    if (!s->hit[b]) {
      idr_block unit = *old;
      unit.before = old->value;
      unit.fresh = 0;
      push_unit(stack, &n, unit);
      continue;
    }
    s->hit[b] = 0;
    int32_t end = b + 1 < s->ncur ? s->cur[b + 1].start : (int32_t)in->npos;
    int32_t from = old->start;
    if (old->sum == 0 && !s->restart) {
      for (; c < c_end && in->pos[in->order[c]] < end; c++) {
        int32_t p = in->pos[in->order[c]];
        if (p < from) continue; /* another observation at the same position */
        if (p > from) push_unit(stack, &n, zero_unit(in, from, p));
        idr_block unit = {s->count[p], in->total[p], 0.0, 0.0, p, 1};
        push_unit(stack, &n, unit);
        from = p + 1;
      }
      if (from < end) push_unit(stack, &n, zero_unit(in, from, end));
      continue;
    }
    for (; c < c_end && in->pos[in->order[c]] < end; c++) continue;
    for (int32_t p = from; p < end; p++) {
      idr_block unit = {s->count[p], in->total[p], 0.0, old->value, p, 1};
      push_unit(stack, &n, unit);
    }
  }
  s->restart = 0;
  for (int64_t b = 0; b < n; b++) {
    idr_block *e = &stack[b];
    if (e->fresh) {
      /* The CDF rises with t, and its values lie in [0, 1]: enforce both against rounding. */
      double v = level(e);
      e->value = v < e->before ? e->before : (v > 1.0 ? 1.0 : v);
      e->fresh = 0;
    }
    e->before = e->value; /* for the next threshold, should the block be pooled then */
    if (!runs_push(&s->out, e->start, e->value)) return -1;
  }
  s->nxt = s->cur;
  s->cur = stack;
  s->ncur = n;
  return n;
}

#define SUM idr_narrow
#define CROSS narrow_cross
#define NAME(x) x##_narrow
#include "idr_pool.h"
#undef SUM
#undef CROSS
#undef NAME

#define SUM idr_units
#define CROSS units_cross_sign
#define NAME(x) x##_wide
#include "idr_pool.h"
#undef SUM
#undef CROSS
#undef NAME

/* Whether the tree pays for building at threshold k: the slice's next thresholds (building
 * costs some ten PAVs) all change few positions. */
static int tree_pays(const idr_slice *s, const idr_input *in, int64_t k) {
  enum { AHEAD = 16 };
  if (k + AHEAD > s->r.k1) return 0;
  for (int64_t j = k; j < k + AHEAD; j++)
    if (in->first[j + 1] - in->first[j] > in->pav_above) return 0;
  return 1;
}

/* The hull's fit of threshold k: updates the counts and the tree, and appends the runs; returns
 * their number, or -1 when out of memory. A threshold that changes many positions is fitted by
 * PAV over all of them instead (the tree's joins would cost more), leaving the tree to be built
 * again; so is one where that building would not pay. */
static int64_t hull_fit(idr_slice *s, const idr_input *in, int64_t k) {
  add_counts(s, in, k, k + 1);
  int64_t nb, n = 0, changed = in->first[k + 1] - in->first[k];
  idr_units *weight = s->weight, *sum = s->sum;
  const idr_units *block_weight = weight, *block_sum = sum; /* the blocks to pool */
  int pav = changed > in->pav_above || (s->restart && !tree_pays(s, in, k));
  if (pav) { /* every position a block */
    nb = in->npos;
    block_weight = in->units;
    block_sum = s->units;
    s->restart = 1;
  } else {
    /* the tree is made when first used: a slice of PAV steps never needs it */
    if (!s->hull.node && !cdf_hull_init(&s->hull, (int32_t)in->npos, in->wide)) return -1;
    if (s->restart) cdf_hull_build(&s->hull, in->units, s->units);
    else cdf_hull_update(&s->hull, in->at + in->first[k], changed, s->units);
    s->restart = 0;
    nb = cdf_hull_vertices(&s->hull, s->vertex) - 1;
    cdf_hull_blocks(&s->hull, s->vertex + 1, nb, weight, sum);
  }
  n = in->wide ? pool_wide(block_weight, block_sum, pav, nb, weight, sum, s->vertex)
              : pool_narrow(block_weight, block_sum, pav, nb, weight, sum, s->vertex);
  /* The levels fall strictly, but two close ones may round to the same double, or (rounding the
   * sums first) the wrong way round: such a block joins the run before it. */
  int64_t runs = 0;
  for (int64_t b = 0; b < n; b++) {
    double v = (double)sum[b] / (double)weight[b];
    if (runs > 0 && v >= s->out.value[s->out.n - 1]) continue;
    if (!runs_push(&s->out, s->vertex[b] + 1, v > 1.0 ? 1.0 : v)) return -1;
    runs++;
  }
  return runs;
}

/* Advances the slice by one threshold. */
static int slice_step(void *slice, const void *input) {
  idr_slice *s = slice;
  const idr_input *in = input;
  if (s->r.next == s->r.k1) return -1;
  int64_t k = s->r.next++, n = 1;
  if (k == in->nthr - 1) { /* every indicator is 1: the CDF is exactly 1 */
    if (!runs_push(&s->out, 0, 1.0)) return 0;
  } else {
    n = in->hull ? hull_fit(s, in, k) : sweep_fit(s, in, k);
    if (n < 0) return 0;
  }
  s->nruns[k - s->r.k0] = n;
  return 1;
}

/* The exponent u of the hull's units: the largest power of two 2^u that every weight is an
 * integer multiple of, provided their total is under IDR_UNITS_MAX such units; else INT_MAX (the
 * sweep). */
static int unit_exponent(const double *w, int64_t n, double total) {
  if (!w) return total <= IDR_UNITS_MAX ? 0 : INT_MAX;
  int u = INT_MAX;
  for (int64_t i = 0; i < n; i++) {
    if (!(w[i] > 0) || isinf(w[i])) return INT_MAX; /* not the API's, but no endless loop */
    int e;
    uint64_t m = (uint64_t)ldexp(frexp(w[i], &e), 53); /* w[i] = m 2^(e - 53), m > 0 */
    for (e -= 53; !(m & 1); m >>= 1) e++;
    if (e < u) u = e;
  }
  return ldexp(total, -u) < IDR_UNITS_MAX ? u : INT_MAX;
}

int idr_order(int64_t n, const int32_t *major, int64_t nmajor, const int32_t *minor,
              int64_t nminor, int64_t *first, int64_t *order) {
  int64_t *count = calloc((size_t)(nmajor > nminor ? nmajor : nminor) + 1, sizeof *count);
  int64_t *by_minor = malloc_dense((size_t)(n > 0 ? n : 1) * sizeof *by_minor);
  if (!count || !by_minor) {
    free(count);
    free(by_minor);
    return 0;
  }
  for (int64_t i = 0; i < n; i++) count[minor[i] + 1]++;
  for (int64_t p = 0; p < nminor; p++) count[p + 1] += count[p];
  for (int64_t i = 0; i < n; i++) by_minor[count[minor[i]]++] = i;
  memset(first, 0, (size_t)(nmajor + 1) * sizeof *first);
  for (int64_t i = 0; i < n; i++) first[major[i] + 1]++;
  for (int64_t k = 0; k < nmajor; k++) first[k + 1] += first[k];
  memcpy(count, first, (size_t)nmajor * sizeof *count);
  for (int64_t j = 0; j < n; j++) {
    int64_t i = by_minor[j];
    order[count[major[i]]++] = i;
  }
  free(count);
  free(by_minor);
  return 1;
}

/* Joins the slices' runs threshold by threshold. Each run is raised to the previous threshold's
 * value at its start (the largest over the run, as that CDF is non-increasing in x) and runs
 * made equal are joined: a slice's first threshold comes from a fresh PAV, and pooling in another
 * order may round a value one unit in the last place below the one before. */
static gpuiso_status collect(idr_slice *sl, int nsl, int64_t nthr, gpuiso_cdf_runs *out) {
  int64_t total = 0;
  for (int t = 0; t < nsl; t++) total += sl[t].out.n;
  out->offset = malloc((size_t)(nthr + 1) * sizeof *out->offset);
  out->start = malloc_dense((size_t)(total > 0 ? total : 1) * sizeof *out->start);
  out->value = malloc_dense((size_t)(total > 0 ? total : 1) * sizeof *out->value);
  if (!out->offset || !out->start || !out->value) return GPUISO_E_NOMEM;
  int64_t at = 0;
  out->offset[0] = 0;
  for (int t = 0; t < nsl; t++) {
    const int32_t *start = sl[t].out.start;
    const double *value = sl[t].out.value;
    for (int64_t k = sl[t].r.k0; k < sl[t].r.k1; k++) {
      int64_t prev = k > 0 ? out->offset[k - 1] : 0, nprev = out->offset[k] - prev;
      for (int64_t j = 0; j < sl[t].nruns[k - sl[t].r.k0]; j++, start++, value++) {
        double v = *value;
        if (nprev > 0) {
          double below = out->value[prev + run_at(out->start + prev, nprev, *start)];
          if (v < below) v = below;
        }
        if (at > out->offset[k] && out->value[at - 1] == v) continue;
        out->start[at] = *start;
        out->value[at++] = v;
      }
      out->offset[k + 1] = at;
    }
  }
  return GPUISO_OK;
}

gpuiso_status gpuiso_idr_fit(int64_t n, const int32_t *pos, const int32_t *thr, const double *w,
                             int64_t npos, int64_t nthr, const gpuiso_opts *opt,
                             gpuiso_cdf_runs *out, gpuiso_error *err) {
  memset(out, 0, sizeof *out);
  out->npos = npos;
  out->nthr = nthr;
  gpuiso_error e = {GPUISO_OK, -1, -1, ""};
  if (npos < 1 || nthr < 1 || npos > INT32_MAX) {
    e.status = GPUISO_E_INTERNAL;
    if (err) *err = e;
    return e.status;
  }
  int64_t *first = malloc((size_t)(nthr + 1) * sizeof *first);
  int64_t *order = malloc_dense((size_t)(n > 0 ? n : 1) * sizeof *order);
  double sum = 0.0;
  int ok = first && order && idr_order(n, thr, nthr, pos, npos, first, order);
  for (int64_t i = 0; ok && i < n; i++) sum += obs_weight(w, i);
  /* The positions' weights: in units for the hull, in doubles (and their segment tree) for the
   * sweep. */
  int unit = ok ? unit_exponent(w, n, sum) : INT_MAX, hull = unit != INT_MAX;
  int32_t *at = hull ? malloc_dense((size_t)(n > 0 ? n : 1) * sizeof *at) : NULL;
  idr_units *units = hull ? calloc((size_t)npos, sizeof *units) : NULL;
  double *total = hull ? NULL : calloc((size_t)npos, sizeof *total);
  double *tree = hull ? NULL : malloc((size_t)(2 * npos) * sizeof *tree);
  if (ok && hull && (ok = at && units)) {
    for (int64_t i = 0; i < n; i++) at[i] = pos[order[i]];
    for (int64_t i = 0; i < n; i++) units[pos[i]] += obs_units(w, unit, i);
  }
  if (ok && !hull && (ok = total && tree)) {
    for (int64_t i = 0; i < n; i++) total[pos[i]] += obs_weight(w, i);
    weight_tree(total, npos, tree);
  }
  /* Slices: one per thread; a slice's first step costs O(n), so each needs many thresholds to
   * pay for it. */
  int nsl = resolve_threads(opt, nthr * 64);
  if (nthr < 256 * (int64_t)nsl) nsl = 1;
  idr_slice *sl = calloc((size_t)nsl, sizeof *sl);
  ok = ok && sl;
  /* PAV costs a step a position, the tree's joins some log2(npos)^3 a changed observation and
   * its read-out the vertices: PAV pays above about 2 sqrt(npos) changes, an empirical rule
   * (measured crossings: 700 at npos = 1e5, 2000 at 1e6). */
  idr_input in = {.npos = npos, .nthr = nthr, .pos = pos, .w = w, .first = first,
                  .order = order, .at = at, .total = total, .tree = tree, .hull = hull,
                  .unit = unit, .wide = hull && ldexp(sum, -unit) > IDR_NARROW_MAX,
                  .units = units,
                  .pav_above = (int64_t)(2.0 * sqrt((double)npos))};
  for (int t = 0; ok && t < nsl; t++)
    ok = slice_init(&sl[t], &in, nthr * t / nsl, nthr * (t + 1) / nsl);
  if (!ok) e.status = GPUISO_E_NOMEM;

  /* Thresholds per round between interrupt polls. The sweep's step costs about the size of a
   * block, some npos^(2/3) for continuous data; the hull's some log2(npos)^3 a changed position
   * (a threshold's changes together at most some 8 npos) and 2 log2(npos) a vertex read out. */
  int64_t per_round = (int64_t)(GPUISO_POLL_EVERY / cbrt((double)npos * (double)npos)) + 16;
  if (hull) {
    double lg = log2((double)npos) + 1.0;
    double changes = (double)n / (double)nthr * lg * lg * lg;
    if (changes > 8.0 * (double)npos) changes = 8.0 * (double)npos;
    per_round = (int64_t)(GPUISO_POLL_EVERY / (changes + 64.0 * lg)) + 1;
  }
  if (e.status == GPUISO_OK)
    e.status = idr_drive(sl, sizeof *sl, nsl, nsl, per_round, slice_step, &in, opt, NULL);
  if (e.status == GPUISO_OK) e.status = collect(sl, nsl, nthr, out);
  for (int t = 0; sl && t < nsl; t++) slice_free(&sl[t]);
  free(sl);
  free(first);
  free(order);
  free(total);
  free(at);
  free(units);
  free(tree);
  if (e.status != GPUISO_OK) gpuiso_cdf_runs_free(out);
  if (err) *err = e;
  return e.status;
}

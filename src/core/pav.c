/* Weighted pool adjacent violators, one pass with a stack of blocks.
 *
 * A stack entry is either a pooled block (sum of w * y, weight, start) or a run of elements that
 * no merge has touched (weight 0), whose levels and weights are y and w themselves. Data that are
 * already monotone stay one run, so the stack stays small and a push is one comparison; a merge
 * takes a run's elements from its end one at a time. An entry ends where the next one starts.
 *
 * A long row on several threads: each thread runs PAV over its own chunk of the row, then the
 * chunks' stacks are pushed, entry by entry, onto the first one. Pooling adjacent violators in any
 * order reaches the same unique fit, so pooling inside chunks first changes nothing; the pushes
 * only pool across chunk boundaries.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Rows shorter than this run on one thread. */
#define PAV_MIN_PARALLEL ((int64_t)1 << 18)

/* Rows up to this long keep their PAV stack on the C stack (24 KiB). */
#define PAV_SMALL_ROW 1024

int pav_work_init(pav_work *wk, int64_t cap) {
  wk->stack = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *wk->stack);
  return wk->stack != NULL;
}

void pav_work_free(pav_work *wk) {
  free(wk->stack);
  wk->stack = NULL;
}

void set_error(gpuiso_error *err, gpuiso_status s, int64_t index, int64_t row) {
  if (!err) return;
  err->status = s;
  err->index = index;
  err->row = row;
  err->message[0] = '\0';
}

int poll_interrupt(const gpuiso_opts *opt) {
  return opt->interrupt && opt->interrupt->poll && opt->interrupt->poll(opt->interrupt->ctx);
}

/* Products far above the smallest normal double keep their precision. */
#define PRODUCT_TINY 0x1p-900

/* True when a block of mean sa / wa before one of mean sb / wb must be pooled: the first is not
 * below the second (not above it, decreasing). Equal means pool, so blocks are maximal. Compared
 * by cross products, which keeps divisions off the merge loop. A row whose products might
 * overflow or underflow (see products_safe) is run again guarded: divided where they do. */
static GPUISO_ALWAYS_INLINE int violates(double sa, double wa, double sb, double wb,
                                         const int increasing, const int guarded) {
  double l = sa * wb, r = sb * wa;
  if (guarded && (!isfinite(l - r) || (fabs(l) < PRODUCT_TINY && fabs(r) < PRODUCT_TINY))) {
    l = sa / wa;
    r = sb / wb;
  }
  return increasing ? l >= r : l <= r;
}

/* No cross product of a row overflows when max |y| * (total weight)^2 is finite: a block's |sum|
 * is at most max |y| times its weight. None loses precision to underflow when the smallest
 * nonzero |y| times the smallest positive weight squared, less the 52 bits that cancellation in
 * a sum may cost, stays clear of it. */
static int products_safe(double max_abs_y, double total_weight, double min_abs_y,
                         double min_weight) {
  return max_abs_y * total_weight * total_weight < DBL_MAX &&
         (min_abs_y == INFINITY || 0x1p-52 * min_abs_y * min_weight * min_weight > PRODUCT_TINY);
}

/* Pools the block (sum, weight, s) with the entries on top of the stack while they violate the
 * order, then pushes it. Returns the new top. */
static GPUISO_ALWAYS_INLINE int64_t push_block(const double *y, const double *w, pav_block *st,
                                               int64_t k, double sum, double weight, int64_t s,
                                               const int weighted, const int increasing,
                                               const int guarded) {
  for (;;) {
    while (k >= 0 && st[k].weight != 0 && violates(st[k].sum, st[k].weight, sum, weight, increasing, guarded)) {
      sum += st[k].sum;
      weight += st[k].weight;
      s = st[k].start;
      k--;
    }
    if (k < 0 || st[k].weight != 0) break;
    int64_t run_start = st[k].start;
    while (s > run_start) {
      double wk = weighted ? w[s - 1] : 1.0, sk = y[s - 1] * wk;
      if (!violates(sk, wk, sum, weight, increasing, guarded)) break;
      sum += sk;
      weight += wk;
      s--;
    }
    if (s > run_start) break;
    k--;
  }
  pav_block merged = {sum, weight, s};
  st[++k] = merged;
  return k;
}

/* Pushes element i, of positive weight, onto a non-empty stack that ends at i. */
static GPUISO_ALWAYS_INLINE int64_t push_element(const double *y, const double *w, pav_block *st,
                                                 int64_t k, int64_t i, const int weighted,
                                                 const int increasing, const int guarded) {
  double yi = y[i], wi = weighted ? w[i] : 1.0;
  if (st[k].weight == 0) {
    if (!violates(y[i - 1], 1, yi, 1, increasing, guarded)) return k; /* the run goes on */
    return push_block(y, w, st, k, yi * wi, wi, i, weighted, increasing, guarded);
  }
  if (violates(st[k].sum, st[k].weight, yi, 1, increasing, guarded))
    return push_block(y, w, st, k, yi * wi, wi, i, weighted, increasing, guarded);
  /* yi stays apart; after an unmerged element the two start a run (branch-free: the same
   * stores either way). */
  int run = st[k].start == i - 1;
  pav_block single = {yi * wi, wi, i};
  st[k + 1] = single;
  st[k].weight = run ? 0.0 : st[k].weight;
  return k + !run;
}

/* Element i of weight zero joins the entry on its left, which ends at i. A run cannot hold it, so
 * the run's last element becomes a pooled block of its own that does. */
static int64_t absorb_zero(const double *y, const double *w, pav_block *st, int64_t k, int64_t i) {
  if (k >= 0 && st[k].weight == 0) {
    pav_block last = {y[i - 1] * w[i - 1], w[i - 1], i - 1};
    if (st[k].start < i - 1) k++;
    st[k] = last;
  }
  return k;
}

/* The first entry of a stack, for element i. Zero weights before it (from first_start on) join
 * it; first_start < 0 leaves them to the entry before the stack. */
static int64_t push_first(const double *y, const double *w, pav_block *st, int64_t i,
                          int64_t first_start) {
  if (first_start < 0 || first_start == i) {
    pav_block run = {0, 0, i};
    st[0] = run;
  } else {
    double wi = w ? w[i] : 1.0;
    pav_block block = {y[i] * wi, wi, first_start};
    st[0] = block;
  }
  return 0;
}

/* Running totals of a chunk's positive-weight elements. */
typedef struct {
  double sum_abs, max_abs, weight; /* of w * |y|, of |y|, of w */
  double min_abs, min_weight;      /* smallest nonzero |y|, smallest positive w */
  double max_weight;
} chunk_sums;

/* Pushes elements [from, to) onto the stack whose top is st[k], checking each. The flags are
 * literal constants at every call, so the compiler emits one loop for each combination.
 * Returns the new top, or -2 with *bad set to the offending element. */
static GPUISO_ALWAYS_INLINE int64_t pav_push(const double *y, const double *w, int64_t from,
                                             int64_t to, int64_t k, pav_block *st,
                                             int64_t first_start, chunk_sums *sums,
                                             int64_t *bad, const int weighted,
                                             const int increasing, const int guarded) {
  chunk_sums c = *sums;
  for (int64_t i = from; i < to; i++) {
    double yi = y[i];
    double wi = weighted ? w[i] : 1.0;
    if (!isfinite(yi) || (weighted && !(wi >= 0 && wi < INFINITY))) {
      *bad = i;
      return -2;
    }
    if (weighted && wi == 0) {
      k = absorb_zero(y, w, st, k, i);
      continue;
    }
    double a = fabs(yi);
    c.sum_abs += wi * a;
    c.max_abs = a > c.max_abs ? a : c.max_abs;
    c.min_abs = a > 0 && a < c.min_abs ? a : c.min_abs;
    c.min_weight = wi < c.min_weight ? wi : c.min_weight;
    c.max_weight = wi > c.max_weight ? wi : c.max_weight;
    c.weight += wi;
    k = k < 0 ? push_first(y, w, st, i, first_start)
              : push_element(y, w, st, k, i, weighted, increasing, guarded);
  }
  *sums = c;
  return k;
}

static int64_t push_range(const double *y, const double *w, int increasing, int guarded,
                          int64_t from, int64_t to, int64_t k, pav_block *st,
                          int64_t first_start, chunk_sums *sums, int64_t *bad) {
#define PUSH(W, I, G) pav_push(y, w, from, to, k, st, first_start, sums, bad, W, I, G)
  if (guarded) {
    if (w) return increasing ? PUSH(1, 1, 1) : PUSH(1, 0, 1);
    return increasing ? PUSH(0, 1, 1) : PUSH(0, 0, 1);
  }
  if (w) return increasing ? PUSH(1, 1, 0) : PUSH(1, 0, 0);
  return increasing ? PUSH(0, 1, 0) : PUSH(0, 0, 0);
#undef PUSH
}

/* Pushes the entry e, which ends at end, onto a non-empty stack that ends where e starts: a
 * pooled block pools like an element; a run is pushed element by element until one stays apart,
 * and then the rest of the run, monotone after it, stays apart too. */
static int64_t push_entry(const double *y, const double *w, int increasing, int guarded,
                          pav_block *st, int64_t k, pav_block e, int64_t end) {
  int weighted = w != NULL;
  if (e.weight != 0)
    return push_block(y, w, st, k, e.sum, e.weight, e.start, weighted, increasing, guarded);
  for (int64_t j = e.start; j < end; j++) {
    double yj = y[j], wj = weighted ? w[j] : 1.0;
    int top_run = st[k].weight == 0;
    if (!(top_run ? violates(y[j - 1], 1, yj, 1, increasing, guarded)
                  : violates(st[k].sum, st[k].weight, yj, 1, increasing, guarded))) {
      if (!top_run) { /* else the run on top extends over j..end */
        pav_block run = {0, 0, j};
        st[++k] = run;
      }
      break;
    }
    k = push_block(y, w, st, k, yj * wj, wj, j, weighted, increasing, guarded);
  }
  return k;
}

/* The entry that holds element j: the last one starting at or before it. */
static int64_t entry_of(const pav_block *st, int64_t k, int64_t j) {
  int64_t lo = 0, hi = k;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (st[mid].start <= j) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

static inline double level_of(const pav_block *e, const double *y, int64_t j) {
  return e->weight == 0 ? y[j] : e->sum / e->weight;
}

/* The clipped level of element j. */
static double clipped_level(const pav_block *st, int64_t k, const double *y, int64_t j, double lo,
                            double hi) {
  return clip(level_of(&st[entry_of(st, k, j)], y, j), lo, hi);
}

/* v, moved to prev where rounding put it on the wrong side: the fit never steps against its
 * direction (a block mean rounded, or a run's first element beside its rounded neighbour). */
static inline double monotone(double v, double prev, int increasing) {
  return increasing ? (v < prev ? prev : v) : (v > prev ? prev : v);
}

/* The level of a pooled block: its mean, clipped, and moved to prev (see monotone) when a level
 * comes before it (after). */
static inline double pooled_level(const pav_block *e, double lo, double hi, double prev, int after,
                                  int increasing) {
  double v = clip(e->sum / e->weight, lo, hi);
  return after ? monotone(v, prev, increasing) : v;
}

/* Writes level v over fit[s, e) and the flags there: is_start at s, 0 after. */
static inline void write_level(double v, uint8_t is_start, int64_t s, int64_t e, double *fit,
                               uint8_t *start) {
  for (int64_t j = s; j < e; j++) fit[j] = v;
  if (start) {
    start[s] = is_start;
    memset(start + s + 1, 0, (size_t)(e - s - 1));
  }
}

/* Writes the fit of elements [from, to) and their block-start flags; returns how many blocks
 * start there. prev is the clipped level of element from - 1 (NAN for none). A block starts
 * where the level differs from the one before, so blocks that clipping (or rounding of the
 * means) made equal count as one. fit may be y: element j is read before it is written. */
static int64_t expand_range(const pav_block *st, int64_t k, const double *y, double lo,
                            double hi, int increasing, int64_t from, int64_t to, double prev,
                            double *fit, uint8_t *start) {
  if (from >= to) return 0;
  int clipped = lo > -INFINITY || hi < INFINITY;
  int64_t b = entry_of(st, k, from), count = 0;
  for (; b <= k && st[b].start < to; b++) {
    int64_t s = st[b].start > from ? st[b].start : from;
    int64_t e = b < k && st[b + 1].start < to ? st[b + 1].start : to;
    if (st[b].weight == 0 && !clipped) {
      /* A run's elements differ from each other; those at its head that rounding left level
       * with or behind the level before it take that level. */
      if (fit != y) memcpy(fit + s, y + s, (size_t)(e - s) * sizeof *fit);
      int64_t j = s;
      while (s > 0 && j < e && (increasing ? fit[j] <= prev : fit[j] >= prev)) fit[j++] = prev;
      if (start) memset(start + s, 0, (size_t)(j - s));
      for (; j < e; j++) { /* equal neighbours (a rounded comparison let them apart) are one block */
        uint8_t is_start = !(fit[j] == prev);
        if (start) start[j] = is_start;
        count += is_start;
        prev = fit[j];
      }
    } else if (st[b].weight == 0) {
      for (int64_t j = s; j < e; j++) {
        double v = clip(y[j], lo, hi);
        if (j > 0) v = monotone(v, prev, increasing);
        uint8_t is_start = !(v == prev);
        fit[j] = v;
        if (start) start[j] = is_start;
        count += is_start;
        prev = v;
      }
    } else {
      double v = pooled_level(&st[b], lo, hi, prev, s > 0, increasing);
      uint8_t is_start = !(v == prev);
      write_level(v, is_start, s, e, fit, start);
      count += is_start;
      prev = v;
    }
  }
  return count;
}

/* The solver's block flags of elements [from, to) (opt->solver_blocks): 1 where a stack entry
 * starts and at every element of a run, which PAV left as blocks of their own. Returns how many;
 * flags may be NULL. */
static int64_t entry_starts(const pav_block *st, int64_t k, int64_t from, int64_t to,
                            uint8_t *flags) {
  if (from >= to) return 0;
  int64_t count = 0;
  for (int64_t b = entry_of(st, k, from); b <= k && st[b].start < to; b++) {
    int64_t s = st[b].start > from ? st[b].start : from;
    int64_t e = b < k && st[b + 1].start < to ? st[b + 1].start : to;
    int run = st[b].weight == 0, head = run || s == st[b].start;
    if (flags) {
      memset(flags + s, run, (size_t)(e - s));
      flags[s] = (uint8_t)head;
    }
    count += run ? e - s : head;
  }
  return count;
}

/* The fit and flags of chunk t (the solver's blocks when opt->solver_blocks); returns how many
 * blocks start there. */
static int64_t expand_chunk(const pav_block *st, int64_t k, const double *y, const gpuiso_opts *opt,
                            const int64_t *bound, int t, const double *prev, double *fit,
                            uint8_t *start) {
  int64_t c = expand_range(st, k, y, opt->lo, opt->hi, opt->increasing, bound[t], bound[t + 1],
                           prev[t], fit, opt->solver_blocks ? NULL : start);
  return opt->solver_blocks ? entry_starts(st, k, bound[t], bound[t + 1], start) : c;
}

/* The error for the first invalid element of the row, which is at or before bad (chunks stop
 * at the first they meet, and a later chunk may meet one first). */
static gpuiso_status input_error(const double *y, const double *w, int64_t bad, gpuiso_error *err) {
  for (int64_t i = 0; i < bad; i++) {
    if (!isfinite(y[i]) || (w && !(w[i] >= 0 && w[i] < INFINITY))) {
      bad = i;
      break;
    }
  }
  gpuiso_status s = !isfinite(y[bad]) ? GPUISO_E_Y_NONFINITE
                    : (w[bad] < 0 ? GPUISO_E_W_NEGATIVE : GPUISO_E_W_NONFINITE);
  set_error(err, s, bad, -1);
  return s;
}

/* Pushes chunk t's elements [done, done + GPUISO_POLL_EVERY) of its own onto its stack; returns
 * whether one of them is bad. */
static int push_round(const double *y, const double *w, int increasing, int guarded,
                      const int64_t *bound, int64_t done, int t, pav_block *st, int64_t *top,
                      chunk_sums *sums, int64_t *bad) {
  int64_t from = bound[t] + done, to = from + GPUISO_POLL_EVERY;
  if (to > bound[t + 1]) to = bound[t + 1];
  if (from >= to || bad[t] >= 0) return 0;
  top[t] = push_range(y, w, increasing, guarded, from, to, top[t], st + bound[t], t == 0 ? 0 : -1,
                      &sums[t], &bad[t]);
  return top[t] == -2;
}

/* Pushes every chunk's elements onto its own stack, in rounds of about GPUISO_POLL_EVERY
 * elements a chunk, polling between rounds. */
static gpuiso_status push_chunks(int64_t n, const double *y, const double *w,
                                 const gpuiso_opts *opt, int guarded, int nch, int nth,
                                 const int64_t *bound, pav_block *st, int64_t *top,
                                 chunk_sums *sums, gpuiso_error *err) {
  int64_t bad[GPUISO_MAX_CHUNKS];
  for (int t = 0; t < nch; t++) {
    chunk_sums zero = {0, 0, 0, INFINITY, INFINITY, 0};
    top[t] = -1;
    bad[t] = -1;
    sums[t] = zero;
  }
  int64_t longest = (n + nch - 1) / nch;
  for (int64_t done = 0; done < longest; done += GPUISO_POLL_EVERY) {
    int failed = 0;
    if (nth == 1) { /* no parallel region: in a batch, one per row would cost more than the row */
      for (int t = 0; t < nch; t++)
        failed |= push_round(y, w, opt->increasing, guarded, bound, done, t, st, top, sums, bad);
    } else {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic) reduction(| : failed)
#endif
      for (int t = 0; t < nch; t++)
        failed |= push_round(y, w, opt->increasing, guarded, bound, done, t, st, top, sums, bad);
    }
    if (failed) {
      for (int t = 0; t < nch; t++)
        if (bad[t] >= 0) return input_error(y, w, bad[t], err);
    }
    if (done + GPUISO_POLL_EVERY < longest && poll_interrupt(opt)) {
      set_error(err, GPUISO_E_INTERRUPT, -1, -1);
      return GPUISO_E_INTERRUPT;
    }
  }
  return GPUISO_OK;
}

/* Weights so small that their products with y come near the subnormals lose digits there. The
 * weights times 2^shift, the power of two that brings the largest to [1, 2), give the same fit
 * (exactly) without that loss: returns that shift when it is needed and the scaled sums cannot
 * overflow, else 0. */
static int tiny_weight_shift(const double *w, const chunk_sums *t) {
  if (!w || !(t->max_weight < 1) || !(t->min_abs * t->min_weight < 0x1p-969)) return 0;
  int shift = -ilogb(t->max_weight);
  return t->sum_abs < ldexp(DBL_MAX, -shift - 1) ? shift : 0;
}

static gpuiso_status pav_chunks(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                                int nch, int nth, pav_block *st, double *fit, uint8_t *start,
                                int64_t *nblocks, gpuiso_error *err);

/* pav_chunks on a copy of w times 2^shift (see tiny_weight_shift). */
static gpuiso_status pav_scaled(int64_t n, const double *y, const double *w, int shift,
                                const gpuiso_opts *opt, int nch, int nth, pav_block *st,
                                double *fit, uint8_t *start, int64_t *nblocks, gpuiso_error *err) {
  double *scaled = malloc_dense((size_t)n * sizeof *scaled);
  if (!scaled) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth)
#endif
  for (int64_t i = 0; i < n; i++) scaled[i] = ldexp(w[i], shift);
  gpuiso_status s = pav_chunks(n, y, scaled, opt, nch, nth, st, fit, start, nblocks, err);
  free(scaled);
  return s;
}

/* PAV of a row in nch chunks on nth threads, with a stack of n entries. */
static gpuiso_status pav_chunks(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                                int nch, int nth, pav_block *st, double *fit, uint8_t *start,
                                int64_t *nblocks, gpuiso_error *err) {
  int64_t bound[GPUISO_MAX_CHUNKS + 1], top[GPUISO_MAX_CHUNKS];
  chunk_sums sums[GPUISO_MAX_CHUNKS];
  for (int t = 0; t <= nch; t++) bound[t] = n * t / nch;
  int guarded = 0;
  gpuiso_status s = push_chunks(n, y, w, opt, guarded, nch, nth, bound, st, top, sums, err);
  if (s != GPUISO_OK) return s;
  chunk_sums total = {0, 0, 0, INFINITY, INFINITY, 0};
  for (int t = 0; t < nch; t++) {
    total.sum_abs += sums[t].sum_abs;
    total.max_abs = sums[t].max_abs > total.max_abs ? sums[t].max_abs : total.max_abs;
    total.weight += sums[t].weight;
    total.min_abs = sums[t].min_abs < total.min_abs ? sums[t].min_abs : total.min_abs;
    total.min_weight = sums[t].min_weight < total.min_weight ? sums[t].min_weight : total.min_weight;
    total.max_weight = sums[t].max_weight > total.max_weight ? sums[t].max_weight : total.max_weight;
  }
  if (!isfinite(total.sum_abs) || !isfinite(total.weight)) {
    set_error(err, GPUISO_E_OVERFLOW, -1, -1);
    return GPUISO_E_OVERFLOW;
  }
  int shift = tiny_weight_shift(w, &total);
  if (shift > 0) return pav_scaled(n, y, w, shift, opt, nch, nth, st, fit, start, nblocks, err);
  if (!products_safe(total.max_abs, total.weight, total.min_abs, total.min_weight)) {
    guarded = 1;
    s = push_chunks(n, y, w, opt, guarded, nch, nth, bound, st, top, sums, err);
    if (s != GPUISO_OK) return s;
  }

  /* Push the later chunks' entries onto the first chunk's stack. A chunk's entries sit at its
   * first element's index; the merged stack never has more entries than positive-weight elements
   * before the entry being pushed, so it never overwrites an entry not yet read. */
  int64_t k = top[0];
  for (int t = 1; t < nch; t++) {
    pav_block *ct = st + bound[t];
    if (top[t] < 0) { /* only zero weights: they join the entry on the left */
      if (k >= 0) k = absorb_zero(y, w, st, k, bound[t]);
      continue;
    }
    if (k >= 0 && ct[0].start > bound[t]) k = absorb_zero(y, w, st, k, bound[t]);
    for (int64_t j = 0; j <= top[t]; j++) {
      pav_block e = ct[j];
      int64_t end = j < top[t] ? ct[j + 1].start : bound[t + 1];
      if (k < 0) { /* every earlier weight is zero: they join this entry */
        k = push_first(y, w, st, e.start, 0);
        if (e.weight != 0) {
          st[0] = e;
          st[0].start = 0;
        } else if (end - e.start > 1) { /* the run's first element took the zeros */
          pav_block run = {0, 0, e.start + 1};
          st[++k] = run;
        }
        continue;
      }
      k = push_entry(y, w, opt->increasing, guarded, st, k, e, end);
    }
  }
  if (n > 0 && k < 0) {
    set_error(err, GPUISO_E_W_ALLZERO, -1, -1);
    return GPUISO_E_W_ALLZERO;
  }

  /* Each range's preceding level is read before any range is written (fit may be y). */
  double prev[GPUISO_MAX_CHUNKS];
  for (int t = 0; t < nch; t++)
    prev[t] = bound[t] > 0 ? clipped_level(st, k, y, bound[t] - 1, opt->lo, opt->hi) : NAN;
  int64_t count = 0;
  if (nth == 1) {
    for (int t = 0; t < nch; t++) count += expand_chunk(st, k, y, opt, bound, t, prev, fit, start);
  } else {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic) reduction(+ : count)
#endif
    for (int t = 0; t < nch; t++) count += expand_chunk(st, k, y, opt, bound, t, prev, fit, start);
  }
  if (nblocks) *nblocks = count;
  return GPUISO_OK;
}

/* Chunks of a row of a batch: as many as its length alone gives, so that its fit (whose rounding
 * depends on where the chunks meet) is the same on any number of threads. */
static int batch_row_chunks(int64_t n) {
  int64_t c = n / PAV_MIN_PARALLEL;
  return c < 2 ? 1 : (c > GPUISO_MAX_CHUNKS ? GPUISO_MAX_CHUNKS : (int)c);
}

/* PAV of an unweighted row of one chunk, as pav_chunks fits it but in one pass and without runs:
 * every element is pushed as a block (y, 1) and pooled while it violates the order. With weight 1
 * the tests and sums are those of pav_chunks' runs and blocks (x * 1 is x, and a run's element is
 * pooled as the block (y, 1) would be), so the fit has the same bits; the levels are written
 * from the stack as expand_range writes pooled blocks. Returns 0, leaving fit as it was, for the
 * rows that pav_chunks treats apart: a non-finite y (its error), products that need guarding
 * (see products_safe). */
static GPUISO_ALWAYS_INLINE int pav_plain_dir(int64_t n, const double *y, double lo, double hi,
                                              pav_block *st, double *fit, uint8_t *start,
                                              int64_t *nblocks, const int increasing) {
  /* The top entry in registers, the ones below it on the stack (st[0 .. k - 1]). The checks of
   * y ride along; the fit is written only once they have passed. */
  double max_abs = 0, min_abs = INFINITY;
  int finite = 1;
  double top_sum = y[0], top_weight = 1;
  int64_t top_start = 0, k = 0;
  for (int64_t i = 0; i < n; i++) {
    double yi = y[i], a = fabs(yi);
    finite &= a <= DBL_MAX;
    max_abs = a > max_abs ? a : max_abs;
    min_abs = a > 0 && a < min_abs ? a : min_abs;
    if (i == 0) continue;
    double sum = yi, weight = 1;
    int64_t s = i;
    while (violates(top_sum, top_weight, sum, weight, increasing, 0)) {
      sum += top_sum;
      weight += top_weight;
      s = top_start;
      if (k == 0) goto pooled_all;
      k--;
      top_sum = st[k].sum;
      top_weight = st[k].weight;
      top_start = st[k].start;
    }
    st[k].sum = top_sum;
    st[k].weight = top_weight;
    st[k].start = top_start;
    k++;
  pooled_all:
    top_sum = sum;
    top_weight = weight;
    top_start = s;
  }
  st[k].sum = top_sum;
  st[k].weight = top_weight;
  st[k].start = top_start;
  if (!finite || !products_safe(max_abs, (double)n, min_abs, 1.0)) return 0;
  /* The levels from the stack: expand_range's for pooled blocks over the whole row, without its
   * search for the first entry and its tests for runs and clipping (a sixth of a row of 16). */
  int64_t count = 0;
  double prev = NAN;
  for (int64_t b = 0; b <= k; b++) {
    double v = pooled_level(&st[b], lo, hi, prev, b > 0, increasing);
    uint8_t is_start = !(v == prev);
    write_level(v, is_start, st[b].start, b < k ? st[b + 1].start : n, fit, start);
    count += is_start;
    prev = v;
  }
  if (nblocks) *nblocks = count;
  return 1;
}

static int pav_plain(int64_t n, const double *y, const gpuiso_opts *opt, pav_block *st,
                     double *fit, uint8_t *start, int64_t *nblocks) {
  return opt->increasing ? pav_plain_dir(n, y, opt->lo, opt->hi, st, fit, start, nblocks, 1)
                         : pav_plain_dir(n, y, opt->lo, opt->hi, st, fit, start, nblocks, 0);
}

gpuiso_status pav_row(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                      pav_work *wk, double *fit, uint8_t *start, int64_t *nblocks,
                      gpuiso_error *err) {
  int nch = batch_row_chunks(n);
  if (!w && nch == 1 && !opt->solver_blocks && n > 0 &&
      pav_plain(n, y, opt, wk->stack, fit, start, nblocks))
    return GPUISO_OK;
  return pav_chunks(n, y, w, opt, nch, 1, wk->stack, fit, start, nblocks, err);
}

gpuiso_status fit_row(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                      pav_work *wk, double *fit, uint8_t *start, int64_t *nblocks,
                      gpuiso_error *err) {
  if (opt->engine == GPUISO_HULL) return gpuiso_hull(n, y, w, opt, fit, start, nblocks, err);
  return pav_row(n, y, w, opt, wk, fit, start, nblocks, err);
}

/* PAV of a row in nch chunks on up to nth threads, with a stack of its own. */
static gpuiso_status pav_alone(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                               int64_t nch, int nth, double *fit, uint8_t *start, int64_t *nblocks,
                               gpuiso_error *err) {
  if (nch > n) nch = n > 0 ? n : 1;
  if (nch > GPUISO_MAX_CHUNKS) nch = GPUISO_MAX_CHUNKS;
  if (nth > nch) nth = (int)nch;
  pav_block small[PAV_SMALL_ROW]; /* a short row's stack without malloc's cost (and its faults) */
  if (n <= PAV_SMALL_ROW)
    return pav_chunks(n, y, w, opt, (int)nch, nth, small, fit, start, nblocks, err);
  pav_work wk;
  if (!pav_work_init(&wk, n)) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  gpuiso_status s = pav_chunks(n, y, w, opt, (int)nch, nth, wk.stack, fit, start, nblocks, err);
  pav_work_free(&wk);
  return s;
}

gpuiso_status pav_long_row(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                           double *fit, uint8_t *start, gpuiso_error *err) {
  return pav_alone(n, y, w, opt, batch_row_chunks(n), resolve_threads(opt, n), fit, start, NULL,
                   err);
}

int pav_row_is_long(int64_t n) { return batch_row_chunks(n) > 1; }

gpuiso_status gpuiso_pav(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                         double *fit, uint8_t *start, int64_t *nblocks, gpuiso_error *err) {
  int nth = n < PAV_MIN_PARALLEL ? 1 : resolve_threads(opt, n);
  return pav_alone(n, y, w, opt, opt->chunks > 0 ? opt->chunks : nth, nth, fit, start, nblocks,
                   err);
}

gpuiso_status gpuiso_fit(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                         double *fit, uint8_t *start, int64_t *nblocks, gpuiso_error *err) {
  if (opt->engine == GPUISO_HULL) return gpuiso_hull(n, y, w, opt, fit, start, nblocks, err);
  if (opt->engine == GPUISO_GPU) return gpu_fit(n, y, w, opt, fit, start, nblocks, err);
  return gpuiso_pav(n, y, w, opt, fit, start, nblocks, err);
}

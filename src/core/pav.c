/* Weighted pool adjacent violators, one pass with a stack of blocks.
 *
 * A stack entry is either a pooled block (sum of w * y, weight, start) or a run of elements that no
 * merge has touched (weight 0), whose levels and weights are y and w themselves. Data that are
 * already monotone stay one run, so the stack stays small and a push is one comparison; a merge
 * takes a run's elements from its end one at a time.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int pav_work_init(pav_work *wk, int64_t cap) {
  wk->cap = cap;
  wk->stack = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *wk->stack);
  return wk->stack != NULL;
}

void pav_work_free(pav_work *wk) {
  free(wk->stack);
  wk->stack = NULL;
  wk->cap = 0;
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

/* True when a block of mean sa / wa before one of mean sb / wb must be pooled: the first is not
 * below the second (not above it, decreasing). Equal means pool, so blocks are maximal. Compared
 * by cross products, which keeps divisions off the merge loop; divided where a product
 * overflows. */
static GPUISO_ALWAYS_INLINE int violates(double sa, double wa, double sb, double wb,
                                         const int increasing) {
  double l = sa * wb, r = sb * wa;
  if (!isfinite(l - r)) {
    l = sa / wa;
    r = sb / wb;
  }
  return increasing ? l >= r : l <= r;
}

/* Pushes elements [from, to) onto the stack whose top is st[k]. weighted and increasing are
 * literal constants at every call, so the compiler emits one loop for each combination.
 * Returns the new top index, or -2 with *bad set to the offending element on invalid input. */
static GPUISO_ALWAYS_INLINE int64_t pav_push(const double *y, const double *w, int64_t from,
                                             int64_t to, int64_t k, pav_block *st, double *acc,
                                             const int weighted, const int increasing,
                                             int64_t *bad) {
  double sum_abs = *acc;
  for (int64_t i = from; i < to; i++) {
    double yi = y[i];
    double wi = weighted ? w[i] : 1.0;
    if (!isfinite(yi) || (weighted && !(wi >= 0 && wi < INFINITY))) {
      *bad = i;
      return -2;
    }
    if (weighted && wi == 0) {
      /* Joins the block on its left; a run's last element becomes a pooled block to hold it. */
      if (k >= 0 && st[k].weight == 0) {
        pav_block last = {y[i - 1] * w[i - 1], w[i - 1], i - 1};
        if (st[k].start < i - 1) k++;
        st[k] = last;
      }
      continue;
    }
    sum_abs += wi * fabs(yi);
    if (k < 0) { /* the first positive weight: a run, or a block holding leading zero weights */
      pav_block first = {yi * wi, i == 0 ? 0.0 : wi, 0};
      st[++k] = first;
      continue;
    }
    int top_run = st[k].weight == 0;
    if (!(top_run ? violates(y[i - 1], 1, yi, 1, increasing)
                  : violates(st[k].sum, st[k].weight, yi, 1, increasing))) {
      if (!top_run) {
        if (st[k].start == i - 1) { /* an unmerged element: it and yi start a run */
          st[k].weight = 0;
        } else {
          pav_block single = {yi * wi, wi, i};
          st[++k] = single;
        }
      }
      continue;
    }
    double sum = yi * wi, weight = wi;
    int64_t s = i;
    while (k >= 0) {
      /* Both candidates are loaded so that the choice compiles to conditional moves. */
      int run = st[k].weight == 0;
      double wk = run ? (weighted ? w[s - 1] : 1.0) : st[k].weight;
      double sk = run ? y[s - 1] * wk : st[k].sum;
      int64_t startk = run ? s - 1 : st[k].start;
      if (!violates(sk, wk, sum, weight, increasing)) break;
      sum += sk;
      weight += wk;
      k -= startk == st[k].start;
      s = startk;
    }
    pav_block merged = {sum, weight, s};
    st[++k] = merged;
  }
  *acc = sum_abs;
  return k;
}

static inline double clip(double v, double lo, double hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

gpuiso_status pav_row(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                      pav_work *wk, double *fit, uint8_t *start, int64_t *nblocks,
                      gpuiso_error *err) {
  int64_t k = -1, bad = -1;
  double acc = 0;
  pav_block *st = wk->stack;
  for (int64_t from = 0; from < n; from += GPUISO_POLL_EVERY) {
    int64_t to = n - from > GPUISO_POLL_EVERY ? from + GPUISO_POLL_EVERY : n;
    if (w) {
      k = opt->increasing ? pav_push(y, w, from, to, k, st, &acc, 1, 1, &bad)
                          : pav_push(y, w, from, to, k, st, &acc, 1, 0, &bad);
    } else {
      k = opt->increasing ? pav_push(y, w, from, to, k, st, &acc, 0, 1, &bad)
                          : pav_push(y, w, from, to, k, st, &acc, 0, 0, &bad);
    }
    if (k == -2) {
      gpuiso_status s = !isfinite(y[bad]) ? GPUISO_E_Y_NONFINITE
                        : (w[bad] < 0 ? GPUISO_E_W_NEGATIVE : GPUISO_E_W_NONFINITE);
      set_error(err, s, bad, -1);
      return s;
    }
    if (to < n && poll_interrupt(opt)) {
      set_error(err, GPUISO_E_INTERRUPT, -1, -1);
      return GPUISO_E_INTERRUPT;
    }
  }
  if (n > 0 && k < 0) {
    set_error(err, GPUISO_E_W_ALLZERO, -1, -1);
    return GPUISO_E_W_ALLZERO;
  }
  if (!isfinite(acc)) {
    set_error(err, GPUISO_E_OVERFLOW, -1, -1);
    return GPUISO_E_OVERFLOW;
  }

  /* Expand, first to last. Unclipped, every stack entry and every element of a run starts a
   * block (levels on the stack are strictly monotone). Clipped, an element starts a block when
   * its level differs from the one before it, so blocks that clipping made equal become one. */
  int64_t count = 0;
  int clipped = opt->lo > -INFINITY || opt->hi < INFINITY;
  double prev = NAN;
  for (int64_t b = 0; b <= k; b++) {
    int64_t s = st[b].start, end = b < k ? st[b + 1].start : n;
    if (st[b].weight == 0 && !clipped) {
      memcpy(fit + s, y + s, (size_t)(end - s) * sizeof *fit);
      if (start) memset(start + s, 1, (size_t)(end - s));
      count += end - s;
    } else if (st[b].weight == 0) {
      for (int64_t j = s; j < end; j++) {
        double v = clip(y[j], opt->lo, opt->hi);
        uint8_t is_start = !(v == prev);
        fit[j] = v;
        if (start) start[j] = is_start;
        count += is_start;
        prev = v;
      }
    } else {
      double v = clip(st[b].sum / st[b].weight, opt->lo, opt->hi);
      uint8_t is_start = !clipped || !(v == prev);
      for (int64_t j = s; j < end; j++) fit[j] = v;
      if (start) {
        start[s] = is_start;
        memset(start + s + 1, 0, (size_t)(end - s - 1));
      }
      count += is_start;
      prev = v;
    }
  }
  if (nblocks) *nblocks = count;
  return GPUISO_OK;
}

gpuiso_status gpuiso_pav(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                         double *fit, uint8_t *start, int64_t *nblocks, gpuiso_error *err) {
  pav_work wk;
  if (!pav_work_init(&wk, n)) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  gpuiso_status s = pav_row(n, y, w, opt, &wk, fit, start, nblocks, err);
  pav_work_free(&wk);
  return s;
}

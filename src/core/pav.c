/* Weighted pool adjacent violators, one pass with a stack of blocks.
 *
 * The stack's levels live in the output array (block k's level at fit[k], k <= its start), so a
 * row needs only the block weights and starts besides its output. The expansion at the end runs
 * from the last block down, which never overwrites a level still to be read.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int pav_work_init(pav_work *wk, int64_t cap, int weighted) {
  size_t m = (size_t)(cap > 0 ? cap : 1);
  wk->cap = cap;
  wk->start = malloc(m * sizeof *wk->start);
  wk->weight = weighted ? malloc(m * sizeof *wk->weight) : NULL;
  if (!wk->start || (weighted && !wk->weight)) {
    pav_work_free(wk);
    return 0;
  }
  return 1;
}

void pav_work_free(pav_work *wk) {
  free(wk->start);
  free(wk->weight);
  wk->start = NULL;
  wk->weight = NULL;
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

/* Pushes elements [from, to) onto the stack of k + 1 blocks. weighted and increasing are literal
 * constants at every call, so the compiler emits one specialised loop for each combination.
 * Returns the new top index, or -2 with *bad set to the offending element on invalid input. */
static inline int64_t pav_push(const double *y, const double *w, int64_t from, int64_t to,
                               int64_t k, double *lev, double *wst, int64_t *st, double *acc,
                               const int weighted, const int increasing, int64_t *bad) {
  double sum_abs = *acc;
  for (int64_t i = from; i < to; i++) {
    double level = y[i];
    double wi = weighted ? w[i] : 1.0;
    if (!isfinite(level) || (weighted && !(wi >= 0 && wi < INFINITY))) {
      *bad = i;
      return -2;
    }
    if (weighted && wi == 0) continue; /* joins the block on its left */
    sum_abs += wi * fabs(level);
    int64_t s = k < 0 ? 0 : i;         /* leading zero weights join the first block */
    double weight = weighted ? wi : (double)(i + 1 - s);
    while (k >= 0 && (increasing ? lev[k] >= level : lev[k] <= level)) {
      double wk = weighted ? wst[k] : (double)(s - st[k]);
      double total = wk + weight;
      level = lev[k] + (level - lev[k]) * (weight / total);
      weight = total;
      s = st[k];
      k--;
    }
    k++;
    lev[k] = level;
    st[k] = s;
    if (weighted) wst[k] = weight;
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
  for (int64_t from = 0; from < n; from += GPUISO_POLL_EVERY) {
    int64_t to = n - from > GPUISO_POLL_EVERY ? from + GPUISO_POLL_EVERY : n;
    if (w) {
      k = opt->increasing ? pav_push(y, w, from, to, k, fit, wk->weight, wk->start, &acc, 1, 1, &bad)
                          : pav_push(y, w, from, to, k, fit, wk->weight, wk->start, &acc, 1, 0, &bad);
    } else {
      k = opt->increasing ? pav_push(y, w, from, to, k, fit, NULL, wk->start, &acc, 0, 1, &bad)
                          : pav_push(y, w, from, to, k, fit, NULL, wk->start, &acc, 0, 0, &bad);
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

  /* Expand from the last block down; neighbours whose clipped levels coincide become one block. */
  int64_t end = n, count = 0;
  for (int64_t b = k; b >= 0; b--) {
    int64_t s = wk->start[b];
    double v = clip(fit[b], opt->lo, opt->hi);
    int is_start = b == 0 || clip(fit[b - 1], opt->lo, opt->hi) != v;
    for (int64_t j = s; j < end; j++) fit[j] = v;
    if (start) {
      memset(start + s, 0, (size_t)(end - s));
      start[s] = (uint8_t)is_start;
    }
    count += is_start;
    end = s;
  }
  if (nblocks) *nblocks = count;
  return GPUISO_OK;
}

gpuiso_status gpuiso_pav(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                         double *fit, uint8_t *start, int64_t *nblocks, gpuiso_error *err) {
  pav_work wk;
  if (!pav_work_init(&wk, n, w != NULL)) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  gpuiso_status s = pav_row(n, y, w, opt, &wk, fit, start, nblocks, err);
  pav_work_free(&wk);
  return s;
}

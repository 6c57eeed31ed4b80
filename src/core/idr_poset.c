/* IDR with several covariates: the antitonic fit on the poset of the distinct covariate vectors
 * (see gpuiso_poset) of each threshold's indicators, by the exact solver of idr_mincut.c, and the
 * predictions at new covariate vectors.
 *
 * The exact fit rises with the threshold, so the fit of threshold k lies between those of any
 * lower and higher thresholds. The thresholds are fitted by bisection: threshold k between the
 * nearest two already fitted, lo and hi; a point at 1 in lo or at 0 in hi stays there, and the
 * solver gets lo and hi as bounds, which decide the side of most points in each of its cuts
 * (only points whose bounds straddle the cut's value enter its flow), and split the points with
 * no flow wherever no bounds overlap. With b bisection levels, each level's cuts see the points
 * whose fit moves across a cut's value over 2^-level of the thresholds, so a level costs about
 * one fit without bounds, and the deepest levels (half the thresholds between neighbours) the
 * flows that certify each fitted block. The thresholds are cut into slices, one per thread:
 * each slice fits its last threshold without bounds (the slices in parallel), then bisects
 * between that one and the last of the slice below. A thread whose slice has nothing left takes
 * the widest interval still queued by another (a copy of its two ends), since some slices' fits
 * cost more than others'. Every interval is split at the same threshold whoever fits it, so the
 * fits are the same. Every fit is clamped to its bounds (this only undoes rounding), so the CDFs
 * rise with the threshold. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "idr_poset.h"

/* A threshold already fitted: its fit and weighted counts of y <= t at each point. */
typedef struct solved {
  int64_t k;
  double *fit, *sum;  /* npos each */
  int refs;           /* intervals of the stack that end at it */
  struct solved *spare;
} solved;

/* Thresholds strictly between two fitted ones, still to fit. */
typedef struct {
  solved *lo, *hi;
} interval;

/* The deepest bisection of 2^62 thresholds and one more interval. */
#define MAX_PENDING 64

typedef struct {
  idr_range r;
  int64_t npos;
  solved *spare;   /* fitted thresholds no longer needed, to reuse */
  interval stack[MAX_PENDING];
  int nstack;
  solved *top;     /* the slice's last threshold, fitted first */
  double *fit;     /* npos: the solver's fit */
  double *dense;   /* npos: the fit by slot */
  mincut_work work;
  run_list out;    /* the runs of the thresholds it fitted */
} poset_slice;

typedef struct {
  const gpuiso_poset *g;
  int64_t nthr;
  const int32_t *pos, *slot;
  const double *w;       /* NULL: 1 */
  const double *weight;  /* npos: the weight of each point */
  const int64_t *last;   /* npos: the threshold of each point's last observation */
  const int64_t *first, *order; /* observations by threshold (idr_order) */
  poset_slice *slices;   /* nsl: whose queued intervals an idle slice takes */
  int nsl;
  int32_t *holder;       /* nthr: the slice whose runs hold threshold k's, */
  int64_t *first_run, *nruns; /* where in its out they lie, and how many */
} poset_input;

static solved *solved_new(poset_slice *s) {
  solved *f = s->spare;
  if (f) {
    s->spare = f->spare;
  } else {
    f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->fit = malloc((size_t)s->npos * sizeof *f->fit);
    f->sum = malloc((size_t)s->npos * sizeof *f->sum);
    if (!f->fit || !f->sum) {
      free(f->fit);
      free(f->sum);
      free(f);
      return NULL;
    }
  }
  f->refs = 0;
  f->spare = NULL;
  return f;
}

/* Keeps f for reuse once no queued interval ends at it. */
static void solved_drop(poset_slice *s, solved *f) {
  if (f->refs == 0) {
    f->spare = s->spare;
    s->spare = f;
  }
}

static void solved_release(poset_slice *s, solved *f) {
  f->refs--;
  solved_drop(s, f);
}

static void solved_free_list(solved *f) {
  while (f) {
    solved *next = f->spare;
    free(f->fit);
    free(f->sum);
    free(f);
    f = next;
  }
}

/* Counts the observations of the thresholds after `from->k` up to k into f->sum, starting from
 * from's counts (NULL: none); each point's sum grows in the order of its thresholds, so that it
 * is the same however the thresholds were reached. Exactly the point's weight once all its
 * observations count: its indicator mean is then 1. */
static void count_to(const poset_input *in, const solved *from, int64_t k, solved *f) {
  int64_t npos = in->g->npos, k0 = from ? from->k + 1 : 0;
  if (from) memcpy(f->sum, from->sum, (size_t)npos * sizeof *f->sum);
  else memset(f->sum, 0, (size_t)npos * sizeof *f->sum);
  f->k = k;
  for (int64_t i = in->first[k0]; i < in->first[k + 1]; i++) {
    int64_t o = in->order[i];
    f->sum[in->pos[o]] += in->w ? in->w[o] : 1.0;
  }
  for (int64_t i = in->first[k0]; i < in->first[k + 1]; i++) {
    int32_t p = in->pos[in->order[i]];
    if (in->last[p] <= k) f->sum[p] = in->weight[p];
  }
}

/* The runs of one dense CDF column (slot order), equal neighbours joined. */
static int64_t push_column(run_list *out, const double *col, int64_t npos) {
  int64_t before = out->n;
  for (int64_t p = 0; p < npos; p++) {
    if (p > 0 && col[p] == col[p - 1]) continue;
    if (!runs_push(out, (int32_t)p, col[p])) return -1;
  }
  return out->n - before;
}

/* Stores the runs of the fit of threshold f->k. */
static int store_runs(poset_slice *s, const poset_input *in, const solved *f) {
  for (int64_t p = 0; p < s->npos; p++) s->dense[in->slot[p]] = f->fit[p];
  int64_t at = s->out.n, nr = push_column(&s->out, s->dense, s->npos);
  if (nr < 0) return 0;
  in->holder[f->k] = (int32_t)(s - in->slices);
  in->first_run[f->k] = at;
  in->nruns[f->k] = nr;
  return 1;
}

/* Fits threshold f->k (counts set) between the fitted thresholds lo and hi, the exact fit lying
 * between theirs: a point at 1 in lo or at 0 in hi stays there (the others form a convex set,
 * whose order with those points holds whatever their fit), the rest by the solver with lo and hi
 * as its bounds. */
static int fit_threshold(poset_slice *s, const poset_input *in, const solved *lo, const solved *hi,
                         solved *f) {
  int64_t npos = s->npos, na = 0;
  for (int64_t p = 0; p < npos; p++) {
    if (lo->fit[p] >= 1.0) f->fit[p] = 1.0;
    else if (hi->fit[p] <= 0.0) f->fit[p] = 0.0;
    else s->work.perm[na++] = (int32_t)p;
  }
  mincut_solve(&s->work, in->g, na, f->sum, in->weight, lo->fit, hi->fit, s->fit);
  /* within the bounds and [0, 1]: the exact fit is, so this only undoes rounding */
  for (int64_t i = 0; i < na; i++) {
    int32_t p = s->work.perm[i];
    double v = s->fit[p], a = lo->fit[p], b = hi->fit[p];
    f->fit[p] = v < a ? a : (v > b ? b : v);
  }
  return store_runs(s, in, f);
}

static void push_interval(poset_slice *s, solved *lo, solved *hi) {
  if (hi->k - lo->k < 2) return;
  interval iv = {lo, hi};
  lo->refs++;
  hi->refs++;
  s->stack[s->nstack++] = iv;
}

static int slice_init(poset_slice *s, const poset_input *in, int64_t k0, int64_t k1) {
  memset(s, 0, sizeof *s);
  size_t np = (size_t)in->g->npos;
  s->r.k0 = k0;
  s->r.k1 = k1;
  s->r.next = k0;
  s->npos = in->g->npos;
  s->fit = malloc(np * sizeof *s->fit);
  s->dense = malloc(np * sizeof *s->dense);
  return s->fit && s->dense && mincut_work_init(&s->work, in->g);
}

static void slice_free(poset_slice *s) {
  for (int i = 0; i < s->nstack; i++) {
    solved_release(s, s->stack[i].lo);
    solved_release(s, s->stack[i].hi);
  }
  if (s->top) solved_free_list(s->top);
  solved_free_list(s->spare);
  free(s->fit);
  free(s->dense);
  free(s->out.start);
  free(s->out.value);
  mincut_work_free(&s->work);
}

/* The slice's last threshold, without bounds (the slices' first pass, in parallel). */
static int slice_fit_top(poset_slice *s, const poset_input *in) {
  s->top = solved_new(s);
  if (!s->top) return 0;
  count_to(in, NULL, s->r.k1 - 1, s->top);
  for (int64_t p = 0; p < s->npos; p++) s->work.perm[p] = (int32_t)p;
  mincut_solve(&s->work, in->g, s->npos, s->top->sum, in->weight, NULL, NULL, s->fit);
  for (int64_t p = 0; p < s->npos; p++) {
    double v = s->fit[p];
    s->top->fit[p] = v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v);
  }
  return 1;
}

/* After the first pass (the slices' last fits raised to the one below, which only undoes
 * rounding): stores the last fit's runs and queues the thresholds between it and prev, the last
 * fit of the slice below (NULL for the first slice: the fit 0 below the first threshold). */
static int slice_start(poset_slice *s, const poset_input *in, const solved *prev) {
  solved *top = s->top, *lo = solved_new(s);
  if (!lo) return 0;
  if (!store_runs(s, in, top)) {
    solved_drop(s, lo);
    return 0;
  }
  s->top = NULL;
  if (prev) {
    lo->k = prev->k;
    memcpy(lo->fit, prev->fit, (size_t)s->npos * sizeof *lo->fit);
    memcpy(lo->sum, prev->sum, (size_t)s->npos * sizeof *lo->sum);
  } else {
    lo->k = -1;
    memset(lo->fit, 0, (size_t)s->npos * sizeof *lo->fit);
    memset(lo->sum, 0, (size_t)s->npos * sizeof *lo->sum);
  }
  s->r.next++;
  push_interval(s, lo, top);
  solved_drop(s, lo);
  solved_drop(s, top);
  return 1;
}

/* A copy of f, made by slice s. */
static solved *solved_copy(poset_slice *s, const solved *f) {
  solved *c = solved_new(s);
  if (!c) return NULL;
  c->k = f->k;
  memcpy(c->fit, f->fit, (size_t)s->npos * sizeof *c->fit);
  memcpy(c->sum, f->sum, (size_t)s->npos * sizeof *c->sum);
  return c;
}

/* Queues on s, which has none, the widest interval queued by another slice (the first it
 * queued), its ends copied; returns 0 when out of memory, -1 when no slice has one. */
static int take_interval(poset_slice *s, const poset_input *in) {
  poset_slice *from = NULL;
  for (int t = 0; t < in->nsl; t++) {
    poset_slice *o = &in->slices[t];
    if (o->nstack > 0 && (!from || o->stack[0].hi->k - o->stack[0].lo->k >
                                       from->stack[0].hi->k - from->stack[0].lo->k))
      from = o;
  }
  if (!from) return -1;
  interval iv = from->stack[0];
  solved *lo = solved_copy(s, iv.lo), *hi = lo ? solved_copy(s, iv.hi) : NULL;
  if (!hi) {
    if (lo) solved_drop(s, lo);
    return 0;
  }
  memmove(from->stack, from->stack + 1, (size_t)--from->nstack * sizeof *from->stack);
  solved_release(from, iv.lo);
  solved_release(from, iv.hi);
  push_interval(s, lo, hi);
  solved_drop(s, lo);
  solved_drop(s, hi);
  return 1;
}

/* Pops s's last queued interval, taking one from another slice first where s has none, and a
 * fit for its middle threshold; returns as take_interval. The slices' queues and their fits'
 * counts of uses are changed under one lock. */
static int pop_interval(poset_slice *s, const poset_input *in, interval *iv, solved **mid) {
  int got = 1;
#ifdef _OPENMP
#pragma omp critical(idr_poset_queues)
#endif
  {
    if (s->nstack == 0) got = take_interval(s, in);
    if (got == 1 && !(*mid = solved_new(s))) got = 0;
    if (got == 1) *iv = s->stack[--s->nstack];
  }
  return got;
}

/* Fits the middle threshold of the last queued interval between its ends, and queues the two
 * halves: every threshold is fitted between two near ones, whose fits decide the side of most
 * points in every cut (see mincut_solve). */
static int slice_step(void *slice, const void *input) {
  poset_slice *s = slice;
  const poset_input *in = input;
  interval iv;
  solved *mid;
  int got = pop_interval(s, in, &iv, &mid);
  if (got != 1) return got;
  count_to(in, iv.lo, iv.lo->k + (iv.hi->k - iv.lo->k) / 2, mid);
  int ok = fit_threshold(s, in, iv.lo, iv.hi, mid);
#ifdef _OPENMP
#pragma omp critical(idr_poset_queues)
#endif
  {
    if (ok) {
      push_interval(s, mid, iv.hi);
      push_interval(s, iv.lo, mid);
      solved_release(s, iv.lo);
      solved_release(s, iv.hi);
    } else {
      s->stack[s->nstack++] = iv; /* still queued, for slice_free */
    }
    solved_drop(s, mid);
  }
  if (!ok) return 0;
  s->r.next++;
  return 1;
}

/* Joins the slices' runs in the order of the thresholds. */
static gpuiso_status collect(const poset_input *in, gpuiso_cdf_runs *out) {
  const poset_slice *sl = in->slices;
  int64_t total = 0, nthr = in->nthr;
  for (int t = 0; t < in->nsl; t++) total += sl[t].out.n;
  out->offset = malloc((size_t)(nthr + 1) * sizeof *out->offset);
  out->start = malloc_dense((size_t)(total > 0 ? total : 1) * sizeof *out->start);
  out->value = malloc_dense((size_t)(total > 0 ? total : 1) * sizeof *out->value);
  if (!out->offset || !out->start || !out->value) return GPUISO_E_NOMEM;
  int64_t at = 0;
  out->offset[0] = 0;
  for (int64_t k = 0; k < nthr; k++) {
    const run_list *runs = &sl[in->holder[k]].out;
    int64_t j = in->first_run[k], nr = in->nruns[k];
    memcpy(out->start + at, runs->start + j, (size_t)nr * sizeof *out->start);
    memcpy(out->value + at, runs->value + j, (size_t)nr * sizeof *out->value);
    at += nr;
    out->offset[k + 1] = at;
  }
  return GPUISO_OK;
}

gpuiso_status gpuiso_idr_poset_fit(const gpuiso_poset *g, int64_t n, const int32_t *pos,
                                   const int32_t *thr, const double *w, int64_t nthr,
                                   const int32_t *slot, const gpuiso_opts *opt,
                                   const gpuiso_progress *progress, gpuiso_cdf_runs *out,
                                   gpuiso_error *err) {
  int64_t npos = g->npos;
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
  double *weight = calloc((size_t)npos, sizeof *weight);
  int64_t *last = calloc((size_t)npos, sizeof *last);
  int32_t *holder = malloc((size_t)nthr * sizeof *holder);
  int64_t *first_run = malloc((size_t)nthr * sizeof *first_run);
  int64_t *nruns = malloc((size_t)nthr * sizeof *nruns);
  /* Slices: one per thread. Each fits its last threshold first, all in parallel; then its
   * thresholds by bisection between that one and the last of the slice below. */
  int nth = resolve_threads(opt, nthr * npos);
  int nsl = (int)(nth < nthr ? nth : nthr);
  poset_slice *sl = calloc((size_t)nsl, sizeof *sl);
  int ok = first && order && weight && last && holder && first_run && nruns && sl &&
           idr_order(n, thr, nthr, pos, npos, first, order);
  if (ok) {
    for (int64_t i = 0; i < n; i++) {
      weight[pos[i]] += w ? w[i] : 1.0;
      if (thr[i] > last[pos[i]]) last[pos[i]] = thr[i];
    }
  }
  poset_input in = {g, nthr, pos, slot, w, weight, last, first, order, sl, nsl, holder, first_run, nruns};
  for (int t = 0; ok && t < nsl; t++)
    ok = slice_init(&sl[t], &in, nthr * t / nsl, nthr * (t + 1) / nsl);
  int failed = !ok;
  if (ok) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1) reduction(| : failed)
#endif
    for (int t = 0; t < nsl; t++)
      if (!slice_fit_top(&sl[t], &in)) failed = 1;
  }
  for (int t = 1; !failed && t < nsl; t++)
    for (int64_t p = 0; p < npos; p++)
      if (sl[t].top->fit[p] < sl[t - 1].top->fit[p]) sl[t].top->fit[p] = sl[t - 1].top->fit[p];
  /* from the top, so that each slice still finds the last fit of the one below */
  for (int t = nsl - 1; !failed && t >= 0; t--)
    if (!slice_start(&sl[t], &in, t > 0 ? sl[t - 1].top : NULL)) failed = 1;
  if (failed) e.status = GPUISO_E_NOMEM;
  else if (poll_interrupt(opt)) e.status = GPUISO_E_INTERRUPT;

  /* Thresholds per slice and round between interrupt polls and progress reports: a threshold
   * costs some maximum flows over a part of the points and covers. A round's end waits for the
   * fits still running, some half a fit a thread (at n = 3e3, whose rounds of the other engines'
   * work would hold 2 fits a slice, a sixth of the time): at least 8 fits a slice where that is
   * at most 16 times the other engines' work. */
  if (e.status == GPUISO_OK) {
    double size = (double)npos + (double)g->first[npos];
    double fits = (double)GPUISO_POLL_EVERY * nth / (64.0 * size * nsl);
    int64_t per_round = fits >= 8.0 ? (int64_t)fits : (int64_t)fmax(1.0, fmin(8.0, 16.0 * fits));
    e.status = idr_drive(sl, sizeof *sl, nsl, nth, per_round, slice_step, &in, opt, progress);
  }
  if (e.status == GPUISO_OK) e.status = collect(&in, out);
  for (int t = 0; sl && t < nsl; t++) slice_free(&sl[t]);
  free(sl);
  free(first);
  free(order);
  free(weight);
  free(last);
  free(holder);
  free(first_run);
  free(nruns);
  if (e.status != GPUISO_OK) gpuiso_cdf_runs_free(out);
  if (err) *err = e;
  return e.status;
}

/* ---- Predictions ---- */

static int below_point(const double *a, int64_t sa, const double *b, int64_t sb, int64_t d) {
  for (int64_t j = 0; j < d; j++)
    if (a[j * sa] > b[j * sb]) return 0;
  return 1;
}

/* The greatest fitted points below new point i (up = 1) or the least above it (up = 0), as
 * slots in list (room for npos); returns their number. Going from the top (bottom) of the
 * lexicographic order, a point below (above) the new one is kept unless it lies below (above) a
 * point already kept, which comes later (earlier) in that order. */
static int64_t neighbours(const double *x, int64_t npos, int64_t d, const int32_t *slot,
                          const double *xi, int64_t m, int up, int32_t *pts, int32_t *list) {
  int64_t nk = 0;
  for (int64_t s = 0; s < npos; s++) {
    int64_t p = up ? npos - 1 - s : s;
    int rel = up ? below_point(x + p, npos, xi, m, d) : below_point(xi, m, x + p, npos, d);
    if (!rel) continue;
    int dominated = 0;
    for (int64_t c = 0; c < nk && !dominated; c++)
      dominated = up ? below_point(x + p, npos, x + pts[c], npos, d)
                     : below_point(x + pts[c], npos, x + p, npos, d);
    if (!dominated) pts[nk++] = (int32_t)p;
  }
  for (int64_t c = 0; c < nk; c++) list[c] = slot[pts[c]];
  return nk;
}

gpuiso_status gpuiso_idr_poset_predict(const gpuiso_cdf_runs *fit, int64_t d, const double *x,
                                       const int32_t *slot, int64_t m, const double *xnew,
                                       const double *clim, const gpuiso_opts *opt,
                                       gpuiso_cdf_runs *out, double *lambda, gpuiso_error *err) {
  int64_t npos = fit->npos, nthr = fit->nthr;
  memset(out, 0, sizeof *out);
  out->npos = 2 * m;
  out->nthr = nthr;
  gpuiso_error e = {GPUISO_OK, -1, -1, ""};
  if (m < 1 || 2 * m > INT32_MAX) {
    e.status = GPUISO_E_INTERNAL;
    if (err) *err = e;
    return e.status;
  }
  int nth = resolve_threads(opt, m * npos);
  /* neighbours of each new point: below at nb_first[2i], above at nb_first[2i + 1] */
  int64_t *nb_first = calloc((size_t)(2 * m + 1), sizeof *nb_first);
  int32_t *scratch = malloc((size_t)nth * 2 * (size_t)npos * sizeof *scratch);
  int32_t *nb = NULL;
  int ok = nb_first && scratch;
  for (int pass = 0; ok && pass < 2; pass++) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 16)
#endif
    for (int64_t i = 0; i < m; i++) {
      int32_t *pts = scratch + (size_t)thread_num() * 2 * (size_t)npos, *list = pts + npos;
      for (int up = 1; up >= 0; up--) {
        int64_t c = neighbours(x, npos, d, slot, xnew + i, m, up, pts, list);
        int64_t at = 2 * i + (up ? 0 : 1);
        if (pass == 0) nb_first[at + 1] = c;
        else memcpy(nb + nb_first[at], list, (size_t)c * sizeof *list);
      }
    }
    if (pass == 0) {
      for (int64_t j = 0; j < 2 * m; j++) nb_first[j + 1] += nb_first[j];
      nb = malloc((size_t)(nb_first[2 * m] > 0 ? nb_first[2 * m] : 1) * sizeof *nb);
      ok = nb != NULL;
    }
    if (ok && poll_interrupt(opt)) {
      e.status = GPUISO_E_INTERRUPT;
      break;
    }
  }
  if (ok && e.status == GPUISO_OK) {
    for (int64_t i = 0; i < m; i++) {
      int below = nb_first[2 * i + 1] > nb_first[2 * i];
      int above = nb_first[2 * i + 2] > nb_first[2 * i + 1];
      lambda[i] = below && above ? 0.5 : (above ? 1.0 : 0.0);
    }
  }
  /* By threshold: each thread a contiguous range, its runs joined in order after. */
  run_list *lists = ok ? calloc((size_t)nth, sizeof *lists) : NULL;
  int64_t *nruns = ok ? malloc((size_t)nthr * sizeof *nruns) : NULL;
  double *cols = ok ? malloc((size_t)nth * (size_t)(npos + 2 * m) * sizeof *cols) : NULL;
  ok = ok && lists && nruns && cols;
  int failed = !ok;
  if (ok && e.status == GPUISO_OK) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static) reduction(| : failed)
#endif
    for (int64_t k = 0; k < nthr; k++) {
      int t = thread_num();
      double *F = cols + (size_t)t * (size_t)(npos + 2 * m), *col = F + npos;
      int64_t r0 = fit->offset[k], r1 = fit->offset[k + 1];
      for (int64_t r = r0; r < r1; r++) {
        int64_t end = r + 1 < r1 ? fit->start[r + 1] : npos;
        for (int64_t p = fit->start[r]; p < end; p++) F[p] = fit->value[r];
      }
      for (int64_t i = 0; i < m; i++) {
        int64_t b0 = nb_first[2 * i], b1 = nb_first[2 * i + 1], a1 = nb_first[2 * i + 2];
        double up = 1.0, lo = 0.0;
        for (int64_t j = b0; j < b1; j++) if (F[nb[j]] < up) up = F[nb[j]];
        for (int64_t j = b1; j < a1; j++) if (F[nb[j]] > lo) lo = F[nb[j]];
        if (b0 == a1) up = lo = clim[k];
        col[2 * i] = up;
        col[2 * i + 1] = lo;
      }
      int64_t nr = failed ? -1 : push_column(&lists[t], col, 2 * m);
      if (nr < 0) failed = 1;
      else nruns[k] = nr;
    }
  }
  if (failed && e.status == GPUISO_OK) e.status = GPUISO_E_NOMEM;
  if (e.status == GPUISO_OK) {
    int64_t total = 0;
    for (int t = 0; t < nth; t++) total += lists[t].n;
    out->offset = malloc((size_t)(nthr + 1) * sizeof *out->offset);
    out->start = malloc_dense((size_t)total * sizeof *out->start);
    out->value = malloc_dense((size_t)total * sizeof *out->value);
    if (!out->offset || !out->start || !out->value) {
      e.status = GPUISO_E_NOMEM;
    } else {
      /* schedule(static) gave thread t the t-th contiguous range of thresholds */
      int64_t at = 0;
      for (int t = 0; t < nth; t++) {
        memcpy(out->start + at, lists[t].start, (size_t)lists[t].n * sizeof *out->start);
        memcpy(out->value + at, lists[t].value, (size_t)lists[t].n * sizeof *out->value);
        at += lists[t].n;
      }
      out->offset[0] = 0;
      for (int64_t k = 0; k < nthr; k++) out->offset[k + 1] = out->offset[k] + nruns[k];
    }
  }
  for (int t = 0; lists && t < nth; t++) {
    free(lists[t].start);
    free(lists[t].value);
  }
  free(lists);
  free(nruns);
  free(cols);
  free(nb_first);
  free(nb);
  free(scratch);
  if (e.status != GPUISO_OK) gpuiso_cdf_runs_free(out);
  if (err) *err = e;
  return e.status;
}

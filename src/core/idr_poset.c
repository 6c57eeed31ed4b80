/* IDR with several covariates: the antitonic fit on the poset of the distinct covariate vectors
 * (see gpuiso_poset) of each threshold's indicators, by the exact solver of idr_mincut.c, and the
 * predictions at new covariate vectors.
 *
 * The thresholds are cut into slices swept in increasing order. The fit rises with the
 * threshold, so a point whose fit reached 1 stays at 1: it leaves the problem, and the next
 * threshold solves only the points below 1, an upper set (so convex), whose order constraints
 * with the points at 1 hold whatever their fit. The slices run on the threads; each starts with
 * every point. After the sweep the CDFs are raised, threshold by threshold, to the previous
 * threshold's (this only undoes rounding of weighted sums: the exact fits rise). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "idr_poset.h"

typedef struct {
  int64_t k0, k1, next;
  double *sum;     /* npos: weighted count of y <= t at each point */
  int64_t *left;   /* npos: observations with y > t at each point */
  double *value;   /* npos: the fit at the last threshold */
  double *fit;     /* npos: the solver's fit */
  int32_t *active; /* the points whose fit is below 1 */
  int64_t nactive;
  double *dense;   /* npos: the fit by slot */
  mincut_work work;
  run_list out;
  int64_t *nruns;  /* runs of each threshold of the slice */
} poset_slice;

typedef struct {
  const gpuiso_poset *g;
  int64_t nthr;
  const int32_t *pos, *slot;
  const double *w;      /* NULL: 1 */
  const double *weight; /* npos: the weight of each point */
  const int64_t *count; /* npos: observations at each point */
  const int64_t *first, *order; /* observations by threshold (idr_order) */
} poset_input;

static int slice_init(poset_slice *s, const poset_input *in, int64_t k0, int64_t k1) {
  memset(s, 0, sizeof *s);
  size_t np = (size_t)in->g->npos;
  s->k0 = k0;
  s->k1 = k1;
  s->next = k0;
  s->sum = calloc(np, sizeof *s->sum);
  s->left = malloc(np * sizeof *s->left);
  s->value = calloc(np, sizeof *s->value);
  s->fit = malloc(np * sizeof *s->fit);
  s->active = malloc(np * sizeof *s->active);
  s->dense = malloc(np * sizeof *s->dense);
  s->nruns = malloc((size_t)(k1 - k0 > 0 ? k1 - k0 : 1) * sizeof *s->nruns);
  if (!s->sum || !s->left || !s->value || !s->fit || !s->active || !s->dense || !s->nruns ||
      !mincut_work_init(&s->work, in->g))
    return 0;
  memcpy(s->left, in->count, np * sizeof *s->left);
  for (int64_t i = in->first[0]; i < in->first[k0]; i++) {
    int64_t o = in->order[i];
    int32_t p = in->pos[o];
    s->sum[p] += in->w ? in->w[o] : 1.0;
    s->left[p]--;
  }
  for (size_t p = 0; p < np; p++) {
    if (s->left[p] == 0) s->sum[p] = in->weight[p];
    s->active[p] = (int32_t)p;
  }
  s->nactive = (int64_t)np;
  return 1;
}

static void slice_free(poset_slice *s) {
  free(s->sum);
  free(s->left);
  free(s->value);
  free(s->fit);
  free(s->active);
  free(s->dense);
  free(s->nruns);
  free(s->out.start);
  free(s->out.value);
  mincut_work_free(&s->work);
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

static int slice_step(poset_slice *s, const poset_input *in) {
  int64_t k = s->next++, npos = in->g->npos;
  for (int64_t i = in->first[k]; i < in->first[k + 1]; i++) {
    int64_t o = in->order[i];
    int32_t p = in->pos[o];
    s->sum[p] += in->w ? in->w[o] : 1.0;
    /* exactly the point's weight once all its observations count: its indicator mean is 1 */
    if (--s->left[p] == 0) s->sum[p] = in->weight[p];
  }
  memcpy(s->work.perm, s->active, (size_t)s->nactive * sizeof *s->active);
  mincut_solve(&s->work, in->g, s->nactive, s->sum, in->weight, s->fit);
  int64_t kept = 0;
  for (int64_t i = 0; i < s->nactive; i++) {
    int32_t p = s->active[i];
    double v = s->fit[p];
    v = v < s->value[p] ? s->value[p] : (v > 1.0 ? 1.0 : v);
    s->value[p] = v;
    if (v < 1.0) s->active[kept++] = p;
  }
  s->nactive = kept;
  for (int64_t p = 0; p < npos; p++) s->dense[in->slot[p]] = s->value[p];
  int64_t nr = push_column(&s->out, s->dense, npos);
  if (nr < 0) return 0;
  s->nruns[k - s->k0] = nr;
  return 1;
}

/* Joins the slices' runs, raising each threshold's CDFs to the previous one's. */
static gpuiso_status collect(poset_slice *sl, int nsl, int64_t nthr, int64_t npos,
                             gpuiso_cdf_runs *out) {
  double *prev = calloc((size_t)npos, sizeof *prev), *cur = malloc((size_t)npos * sizeof *cur);
  run_list all = {0, 0, NULL, NULL};
  out->offset = malloc((size_t)(nthr + 1) * sizeof *out->offset);
  int ok = prev && cur && out->offset;
  if (ok) out->offset[0] = 0;
  for (int t = 0; ok && t < nsl; t++) {
    const int32_t *start = sl[t].out.start;
    const double *value = sl[t].out.value;
    for (int64_t k = sl[t].k0; ok && k < sl[t].k1; k++) {
      int64_t nr = sl[t].nruns[k - sl[t].k0];
      for (int64_t j = 0; j < nr; j++) {
        int64_t end = j + 1 < nr ? start[j + 1] : npos;
        for (int64_t p = start[j]; p < end; p++) cur[p] = value[j] < prev[p] ? prev[p] : value[j];
      }
      start += nr;
      value += nr;
      ok = push_column(&all, cur, npos) >= 0;
      out->offset[k + 1] = all.n;
      double *swap = prev;
      prev = cur;
      cur = swap;
    }
  }
  free(prev);
  free(cur);
  out->start = all.start;
  out->value = all.value;
  return ok ? GPUISO_OK : GPUISO_E_NOMEM;
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
  int64_t *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
  double *weight = calloc((size_t)npos, sizeof *weight);
  int64_t *count = calloc((size_t)npos, sizeof *count);
  /* Slices: two per thread, as low thresholds (more points below 1) cost more. */
  int nth = resolve_threads(opt, nthr * npos);
  int64_t want = nth > 1 ? 2 * (int64_t)nth : 1;
  int nsl = (int)(want < nthr ? want : nthr);
  poset_slice *sl = calloc((size_t)nsl, sizeof *sl);
  int ok = first && order && weight && count && sl &&
           idr_order(n, thr, nthr, pos, npos, first, order);
  if (ok) {
    for (int64_t i = 0; i < n; i++) {
      weight[pos[i]] += w ? w[i] : 1.0;
      count[pos[i]]++;
    }
  }
  poset_input in = {g, nthr, pos, slot, w, weight, count, first, order};
  for (int t = 0; ok && t < nsl; t++)
    ok = slice_init(&sl[t], &in, nthr * t / nsl, nthr * (t + 1) / nsl);
  if (!ok) e.status = GPUISO_E_NOMEM;

  /* Thresholds per slice and round between interrupt polls and progress reports: a threshold
   * costs some maximum flows over the points and covers, each some 100 searches of them (a
   * round of one threshold per slice takes about a second at 10^4 points). */
  double size = (double)npos + (double)g->first[npos];
  int64_t per_round = (int64_t)((double)GPUISO_POLL_EVERY * nth / (64.0 * size * nsl)) + 1;
  int64_t longest = (nthr + nsl - 1) / nsl;
  int failed = 0;
  for (int64_t done = 0; e.status == GPUISO_OK && done < longest; done += per_round) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1) reduction(| : failed)
#endif
    for (int t = 0; t < nsl; t++) {
      for (int64_t j = 0; j < per_round && sl[t].next < sl[t].k1; j++)
        if (!slice_step(&sl[t], &in)) { failed = 1; break; }
    }
    if (failed) {
      e.status = GPUISO_E_NOMEM;
    } else if (done + per_round < longest) {
      if (poll_interrupt(opt)) e.status = GPUISO_E_INTERRUPT;
      else if (progress && progress->report) {
        int64_t fitted = 0;
        for (int t = 0; t < nsl; t++) fitted += sl[t].next - sl[t].k0;
        progress->report(progress->ctx, (double)fitted / (double)nthr);
      }
    }
  }
  if (e.status == GPUISO_OK) e.status = collect(sl, nsl, nthr, npos, out);
  for (int t = 0; sl && t < nsl; t++) slice_free(&sl[t]);
  free(sl);
  free(first);
  free(order);
  free(weight);
  free(count);
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
    out->start = malloc((size_t)total * sizeof *out->start);
    out->value = malloc((size_t)total * sizeof *out->value);
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

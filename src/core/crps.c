/* The CRPS of predictive step CDFs (gpuiso_cdf_runs and queries into them):
 *   CRPS(F, y) = integral of (F(t) - 1{t >= y})^2 dt,
 * with F = 0 below the first threshold, constant between thresholds, and taken as 1 after the
 * last one (only [t_last, y) counts there).
 *
 * Few queries: each looks its value up at every threshold. More queries: a sweep over the
 * thresholds follows the values of all positions, which change only where the runs of a
 * threshold differ from those of the one before; while a query's value stays the same its
 * integral is a closed form, added when the value changes. That costs about what the IDR fit
 * cost, not (thresholds x queries). Threads take slices of thresholds.
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

/* (b - a) * c * c for a <= b and c in [0, 1], finite where the product is though b - a
 * overflows (thresholds of opposite signs near the largest double): from halves there, which are
 * exact that far from the subnormals. */
static double span_times(double b, double a, double c) {
  double d = b - a;
  return isinf(d) ? 2 * ((b / 2 - a / 2) * c * c) : d * c * c;
}

/* The integral over [ta, tb) (tb may be infinite: then only [ta, y), where F is taken as 1 on). */
static double crps_interval(double ta, double tb, double f, double y) {
  if (isinf(tb)) return y > ta ? span_times(y, ta, f) : 0.0;
  double a = y < ta ? ta : (y > tb ? tb : y);
  return span_times(a, ta, f) + span_times(tb, a, 1.0 - f);
}

static double threshold_after(const double *thr, int64_t m, int64_t k) {
  return k + 1 < m ? thr[k + 1] : INFINITY;
}

/* Reports the fraction done; nonzero: stop. */
static int report(const gpuiso_progress *progress, double done) {
  return progress && progress->report && progress->report(progress->ctx, done);
}

static gpuiso_status crps_lookup(const gpuiso_cdf_runs *r, const double *thr,
                                 const gpuiso_cdf_query *q, const double *y,
                                 const gpuiso_opts *opt, const gpuiso_progress *progress,
                                 double *out) {
  int64_t m = r->nthr;
  int nth = resolve_threads(opt, q->n * m);
  int64_t per_round = GPUISO_POLL_EVERY / (m + 1) + 1;
  for (int64_t i0 = 0; i0 < q->n; i0 += per_round) {
    int64_t i1 = i0 + per_round < q->n ? i0 + per_round : q->n;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static)
#endif
    for (int64_t i = i0; i < i1; i++) {
      double s = y[i] < thr[0] ? thr[0] - y[i] : 0.0;
      for (int64_t k = 0; k < m; k++)
        s += crps_interval(thr[k], threshold_after(thr, m, k), cdf_query_value(r, q, i, k), y[i]);
      out[i] = s;
    }
    if (i1 < q->n && (poll_interrupt(opt) || report(progress, (double)i1 / (double)q->n)))
      return GPUISO_E_INTERRUPT;
  }
  report(progress, 1.0);
  return GPUISO_OK;
}

/* ---- The sweep ---- */

/* The queries by position (lambda 0) and by pair of positions (p, p + 1), as index lists. */
typedef struct {
  int64_t *at_first, *at;     /* npos + 1, then the queries at each position */
  int64_t *pair_first, *pair; /* npos + 1, then the queries between p and p + 1 */
} query_index;

static int index_queries(const gpuiso_cdf_query *q, int64_t npos, query_index *ix) {
  ix->at_first = calloc((size_t)npos + 1, sizeof *ix->at_first);
  ix->pair_first = calloc((size_t)npos + 1, sizeof *ix->pair_first);
  ix->at = malloc_dense((size_t)q->n * sizeof *ix->at);
  ix->pair = malloc_dense((size_t)q->n * sizeof *ix->pair);
  if (!ix->at_first || !ix->pair_first || !ix->at || !ix->pair) return 0;
  for (int64_t i = 0; i < q->n; i++) (q->lambda[i] > 0 ? ix->pair_first : ix->at_first)[q->pos[i] + 1]++;
  for (int64_t p = 0; p < npos; p++) {
    ix->at_first[p + 1] += ix->at_first[p];
    ix->pair_first[p + 1] += ix->pair_first[p];
  }
  for (int64_t i = 0; i < q->n; i++) {
    int pair = q->lambda[i] > 0;
    int64_t *first = pair ? ix->pair_first : ix->at_first;
    (pair ? ix->pair : ix->at)[first[q->pos[i]]++] = i;
  }
  for (int64_t p = npos; p > 0; p--) { /* undo the fill's shift */
    ix->at_first[p] = ix->at_first[p - 1];
    ix->pair_first[p] = ix->pair_first[p - 1];
  }
  ix->at_first[0] = ix->pair_first[0] = 0;
  return 1;
}

static void free_index(query_index *ix) {
  free(ix->at_first);
  free(ix->at);
  free(ix->pair_first);
  free(ix->pair);
}

/* What the sweep shares, and one slice of thresholds [k0, k1) with its state. */
typedef struct {
  const gpuiso_cdf_runs *r;
  const double *thr, *y;
  const gpuiso_cdf_query *q;
  const query_index *ix;
} sweep_input;

typedef struct {
  int64_t k0, k1, next;
  double *cur;    /* the value of each position now */
  int64_t *since; /* the threshold from which it has had that value */
  double *acc;    /* the integrals closed so far, per query */
} sweep_slice;

static int slice_init(sweep_slice *s, const sweep_input *in, int64_t k0, int64_t k1) {
  int64_t np = in->r->npos;
  s->k0 = k0;
  s->k1 = k1;
  s->next = k0 + 1;
  s->cur = malloc((size_t)np * sizeof *s->cur);
  s->since = malloc((size_t)np * sizeof *s->since);
  s->acc = calloc((size_t)in->q->n, sizeof *s->acc);
  if (!s->cur || !s->since || !s->acc) return 0;
  const gpuiso_cdf_runs *r = in->r;
  for (int64_t j = r->offset[k0]; j < r->offset[k0 + 1]; j++) {
    int64_t end = j + 1 < r->offset[k0 + 1] ? r->start[j + 1] : np;
    for (int64_t p = r->start[j]; p < end; p++) s->cur[p] = r->value[j];
  }
  for (int64_t p = 0; p < np; p++) s->since[p] = k0;
  return 1;
}

static void slice_free(sweep_slice *s) {
  free(s->cur);
  free(s->since);
  free(s->acc);
}

/* Adds the integrals, up to the threshold value t_end, of the queries at p (with p's value since
 * its `since`), and of those between p and p + 1 (since the later of the two). */
static void close_point(sweep_slice *s, const sweep_input *in, int64_t p, double t_end) {
  const query_index *ix = in->ix;
  for (int64_t c = ix->at_first[p]; c < ix->at_first[p + 1]; c++) {
    int64_t i = ix->at[c];
    s->acc[i] += crps_interval(in->thr[s->since[p]], t_end, s->cur[p], in->y[i]);
  }
}

static void close_pair(sweep_slice *s, const sweep_input *in, int64_t p, double t_end) {
  const query_index *ix = in->ix;
  int64_t from = s->since[p] > s->since[p + 1] ? s->since[p] : s->since[p + 1];
  for (int64_t c = ix->pair_first[p]; c < ix->pair_first[p + 1]; c++) {
    int64_t i = ix->pair[c];
    double f = s->cur[p] + in->q->lambda[i] * (s->cur[p + 1] - s->cur[p]);
    s->acc[i] += crps_interval(in->thr[from], t_end, f, in->y[i]);
  }
}

/* Moves the slice to threshold k: the positions whose value changes close their integrals. Only
 * the positions between the first and the last run that differ from threshold k - 1 can change. */
static void slice_step(sweep_slice *s, const sweep_input *in, int64_t k) {
  const gpuiso_cdf_runs *r = in->r;
  const int32_t *s0 = r->start + r->offset[k - 1], *s1 = r->start + r->offset[k];
  const double *v0 = r->value + r->offset[k - 1], *v1 = r->value + r->offset[k];
  int64_t b0 = r->offset[k] - r->offset[k - 1], b1 = r->offset[k + 1] - r->offset[k];
  int64_t i = 0;
  while (i < b0 && i < b1 && s0[i] == s1[i] && v0[i] == v1[i]) i++;
  if (i == b0 && i == b1) return;
  int64_t from = i == 0 ? 0 : s1[i - 1];
  int64_t j0 = b0 - 1, j1 = b1 - 1;
  while (j0 >= i && j1 >= i && s0[j0] == s1[j1] && v0[j0] == v1[j1]) j0--, j1--;
  int64_t to = j1 + 1 < b1 ? s1[j1 + 1] : r->npos;
  int64_t run = i == 0 ? 0 : i - 1;
  double t = in->thr[k];
  for (int64_t p = from; p < to; p++) {
    while (run + 1 < b1 && s1[run + 1] <= p) run++;
    double v = v1[run];
    if (v == s->cur[p]) continue;
    /* A pair closed again at this threshold, after its other end changed, adds nothing: its
     * interval starts and ends at t. */
    close_point(s, in, p, t);
    if (p > 0) close_pair(s, in, p - 1, t);
    if (p + 1 < r->npos) close_pair(s, in, p, t);
    s->cur[p] = v;
    s->since[p] = k;
  }
}

static void slice_finish(sweep_slice *s, const sweep_input *in) {
  double t_end = s->k1 < in->r->nthr ? in->thr[s->k1] : INFINITY;
  for (int64_t p = 0; p < in->r->npos; p++) {
    close_point(s, in, p, t_end);
    if (p + 1 < in->r->npos) close_pair(s, in, p, t_end);
  }
}

static gpuiso_status crps_sweep(const gpuiso_cdf_runs *r, const double *thr,
                                const gpuiso_cdf_query *q, const double *y,
                                const gpuiso_opts *opt, const gpuiso_progress *progress,
                                double *out) {
  int64_t m = r->nthr, np = r->npos;
  int nsl = resolve_threads(opt, m * 64);
  if (m < 256 * (int64_t)nsl) nsl = 1;
  query_index ix = {NULL, NULL, NULL, NULL};
  sweep_slice *sl = calloc((size_t)nsl, sizeof *sl);
  int ok = sl && index_queries(q, np, &ix);
  sweep_input in = {r, thr, y, q, &ix};
  for (int t = 0; ok && t < nsl; t++) ok = slice_init(&sl[t], &in, m * t / nsl, m * (t + 1) / nsl);
  gpuiso_status st = ok ? GPUISO_OK : GPUISO_E_NOMEM;
  int64_t per_round = (int64_t)(GPUISO_POLL_EVERY / cbrt((double)np * (double)np)) + 16;
  int64_t longest = (m + nsl - 1) / nsl;
  for (int64_t done = 0; st == GPUISO_OK && done < longest; done += per_round) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nsl) schedule(static, 1)
#endif
    for (int t = 0; t < nsl; t++) {
      for (int64_t j = 0; j < per_round && sl[t].next < sl[t].k1; j++) slice_step(&sl[t], &in, sl[t].next++);
      if (sl[t].next == sl[t].k1) {
        slice_finish(&sl[t], &in);
        sl[t].next++; /* finished */
      }
    }
    if (done + per_round < longest &&
        (poll_interrupt(opt) || report(progress, (double)(done + per_round) / (double)longest)))
      st = GPUISO_E_INTERRUPT;
  }
  if (st == GPUISO_OK) report(progress, 1.0);
  if (st == GPUISO_OK) {
    for (int64_t i = 0; i < q->n; i++) {
      double s = y[i] < thr[0] ? thr[0] - y[i] : 0.0;
      for (int t = 0; t < nsl; t++) s += sl[t].acc[i];
      out[i] = s;
    }
  }
  for (int t = 0; sl && t < nsl; t++) slice_free(&sl[t]);
  free(sl);
  free_index(&ix);
  return st;
}

gpuiso_status gpuiso_cdf_crps(const gpuiso_cdf_runs *r, const double *thr,
                              const gpuiso_cdf_query *q, const double *y, const gpuiso_opts *opt,
                              const gpuiso_progress *progress, double *out, gpuiso_error *err) {
  gpuiso_status st = GPUISO_OK;
  if (q->n > 0) {
    /* Costs measured on one core: a look-up per query and threshold takes about as long as
     * log2 of the runs per threshold units; the sweep about 3 units per threshold for each of
     * the npos^(2/3) positions a step typically changes, whatever the number of queries. */
    double runs = (double)r->offset[r->nthr] / (double)r->nthr;
    double lookup = (double)q->n * log2(runs + 2.0);
    double sweep = 3.0 * cbrt((double)r->npos * (double)r->npos);
    st = lookup < sweep ? crps_lookup(r, thr, q, y, opt, progress, out)
                        : crps_sweep(r, thr, q, y, opt, progress, out);
  }
  set_error(err, st, -1, -1);
  return st;
}

/* The exact weighted least-squares antitonic regression on a poset by recursive partitioning
 * with minimum cuts (Hochbaum and Queyranne 2003; Spouge, Wan and Wilbur 2003; Luss, Rosset and
 * Shahar 2012). A block B with weighted mean m is constant in the fit exactly when no lower set
 * L of B (closed under going down inside B) has a positive gain sum over L of w_p (y_p - m);
 * otherwise the lower set of greatest gain holds the points whose fit is above m, and the fit on
 * B is the fit on that set and the fit on the rest, each found the same way. That lower set is a
 * maximum-weight closure: the source side of a minimum cut in the network source -> p with
 * capacity gain_p > 0, p -> sink with -gain_p for gain_p < 0, and q -> p unbounded for each cover
 * q of p (a point in the set takes the points below it along). Blocks stay convex, so the covers
 * inside a block carry its whole order.
 *
 * The gains are scaled by the block's weight, gain_p = sum_p W - S w_p (S, W the block's sums),
 * so that for unweighted indicators they are whole numbers and the cuts are exact; a block is
 * split only when its best gain exceeds the rounding of its terms (4 eps sum |sum_p W| + |S w_p|),
 * which a whole-number gain of 1 does for up to some 10^7 observations. Maximum flows by Dinic's algorithm, iteratively (no
 * recursion). The cost is a maximum flow on each block at each level of the recursion: at most
 * (number of distinct fitted values) levels, each over at most all points and covers. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "idr_poset.h"

int mincut_work_init(mincut_work *w, const gpuiso_poset *g) {
  memset(w, 0, sizeof *w);
  size_t np = (size_t)g->npos, ne = 2 * (np + (size_t)g->first[g->npos]);
  w->local = malloc(np * sizeof *w->local);
  w->perm = malloc(np * sizeof *w->perm);
  w->seg = malloc(2 * np * sizeof *w->seg);
  w->to = malloc(ne * sizeof *w->to);
  w->next = malloc(ne * sizeof *w->next);
  w->cap = malloc(ne * sizeof *w->cap);
  w->head = malloc((np + 2) * sizeof *w->head);
  w->level = malloc((np + 2) * sizeof *w->level);
  w->iter = malloc((np + 2) * sizeof *w->iter);
  w->queue = malloc((np + 2) * sizeof *w->queue);
  w->path = malloc((np + 2) * sizeof *w->path);
  w->gain = malloc(np * sizeof *w->gain);
  if (!w->local || !w->perm || !w->seg || !w->to || !w->next || !w->cap || !w->head || !w->level ||
      !w->iter || !w->queue || !w->path || !w->gain)
    return 0;
  for (size_t p = 0; p < np; p++) w->local[p] = -1;
  return 1;
}

void mincut_work_free(mincut_work *w) {
  free(w->local);
  free(w->perm);
  free(w->seg);
  free(w->to);
  free(w->next);
  free(w->cap);
  free(w->head);
  free(w->level);
  free(w->iter);
  free(w->queue);
  free(w->path);
  free(w->gain);
}

static void add_edge(mincut_work *w, int32_t *ne, int32_t from, int32_t to, double cap) {
  int32_t e = *ne;
  w->to[e] = to;
  w->cap[e] = cap;
  w->next[e] = w->head[from];
  w->head[from] = e;
  w->to[e + 1] = from;
  w->cap[e + 1] = 0.0;
  w->next[e + 1] = w->head[to];
  w->head[to] = e + 1;
  *ne = e + 2;
}

/* Levels of the residual network from the source; returns whether the sink is reached. */
static int bfs(mincut_work *w, int32_t nn, int32_t src, int32_t sink) {
  for (int32_t v = 0; v < nn; v++) w->level[v] = -1;
  int32_t qh = 0, qt = 0;
  w->level[src] = 0;
  w->queue[qt++] = src;
  while (qh < qt) {
    int32_t v = w->queue[qh++];
    for (int32_t e = w->head[v]; e >= 0; e = w->next[e]) {
      if (w->cap[e] > 0 && w->level[w->to[e]] < 0) {
        w->level[w->to[e]] = w->level[v] + 1;
        w->queue[qt++] = w->to[e];
      }
    }
  }
  return w->level[sink] >= 0;
}

/* A blocking flow along shortest paths (Dinic's phase), by an explicit path stack. */
static void blocking_flow(mincut_work *w, int32_t nn, int32_t src, int32_t sink) {
  memcpy(w->iter, w->head, (size_t)nn * sizeof *w->iter);
  int32_t top = 0, v = src;
  for (;;) {
    if (v == sink) {
      double f = INFINITY;
      int32_t cut = 0;
      for (int32_t i = 0; i < top; i++)
        if (w->cap[w->path[i]] < f) { f = w->cap[w->path[i]]; cut = i; }
      for (int32_t i = 0; i < top; i++) {
        w->cap[w->path[i]] -= f;
        w->cap[w->path[i] ^ 1] += f;
      }
      top = cut; /* back to the tail of the first saturated edge */
      v = top ? w->to[w->path[top - 1]] : src;
      continue;
    }
    int32_t e = w->iter[v];
    while (e >= 0 && !(w->cap[e] > 0 && w->level[w->to[e]] == w->level[v] + 1)) e = w->next[e];
    w->iter[v] = e;
    if (e >= 0) {
      w->path[top++] = e;
      v = w->to[e];
      continue;
    }
    w->level[v] = -1; /* a dead end for this phase */
    if (top == 0) return;
    top--;
    v = top ? w->to[w->path[top - 1]] : src;
    w->iter[v] = w->next[w->iter[v]];
  }
}

/* Splits the block perm[a .. b) (its points' local indices set): returns the size of the lower
 * set of greatest gain, moved to the front of the segment, or 0 when the block is constant. */
static int64_t cut_block(mincut_work *w, const gpuiso_poset *g, int64_t a, int64_t b,
                         const double *sum, const double *weight, double S, double W) {
  int32_t nb = (int32_t)(b - a), src = nb, sink = nb + 1, nn = nb + 2, ne = 0;
  double total = 0.0, scale = 0.0;
  for (int32_t j = 0; j < nn; j++) w->head[j] = -1;
  for (int32_t j = 0; j < nb; j++) {
    int32_t p = w->perm[a + j];
    double c = sum[p] * W - S * weight[p];
    w->gain[j] = c;
    total += fabs(c);
    scale += fabs(sum[p]) * W + fabs(S) * weight[p];
    if (c > 0) add_edge(w, &ne, src, j, c);
    else if (c < 0) add_edge(w, &ne, j, sink, -c);
  }
  if (total == 0) return 0;
  for (int32_t j = 0; j < nb; j++) {
    int32_t p = w->perm[a + j];
    for (int64_t e = g->first[p]; e < g->first[p + 1]; e++) {
      int32_t q = w->local[g->cover[e]];
      if (q >= 0) add_edge(w, &ne, q, j, INFINITY);
    }
  }
  while (bfs(w, nn, src, sink)) blocking_flow(w, nn, src, sink);
  /* the last search's levels mark the source side */
  double best = 0.0;
  for (int32_t j = 0; j < nb; j++)
    if (w->level[j] >= 0) best += w->gain[j];
  /* a gain within the rounding of the gains' terms is no split (nor is the whole block, whose
   * exact gain is 0) */
  if (!(best > 4 * DBL_EPSILON * scale)) return 0;
  /* partition by the mark of each point; the marks are by local index, so read them first */
  int64_t nh = 0;
  for (int32_t j = 0; j < nb; j++) w->queue[j] = w->level[j] >= 0;
  int32_t *tmp = w->path; /* free now: the points of the rest, in order */
  int64_t nr = 0;
  for (int32_t j = 0; j < nb; j++) {
    int32_t p = w->perm[a + j];
    if (w->queue[j]) w->perm[a + nh++] = p;
    else tmp[nr++] = p;
  }
  memcpy(w->perm + a + nh, tmp, (size_t)nr * sizeof *tmp);
  return nh < nb ? nh : 0;
}

void mincut_solve(mincut_work *w, const gpuiso_poset *g, int64_t nb, const double *sum,
                  const double *weight, double *fit) {
  int64_t nseg = 0;
  if (nb > 0) {
    w->seg[0] = 0;
    w->seg[1] = nb;
    nseg = 1;
  }
  while (nseg > 0) {
    nseg--;
    int64_t a = w->seg[2 * nseg], b = w->seg[2 * nseg + 1];
    double S = 0.0, W = 0.0;
    for (int64_t i = a; i < b; i++) {
      int32_t p = w->perm[i];
      S += sum[p];
      W += weight[p];
      w->local[p] = (int32_t)(i - a);
    }
    int64_t nh = b - a > 1 ? cut_block(w, g, a, b, sum, weight, S, W) : 0;
    for (int64_t i = a; i < b; i++) w->local[w->perm[i]] = -1;
    if (nh == 0) {
      double m = S / W;
      for (int64_t i = a; i < b; i++) fit[w->perm[i]] = m;
      continue;
    }
    w->seg[2 * nseg] = a;
    w->seg[2 * nseg + 1] = a + nh;
    w->seg[2 * nseg + 2] = a + nh;
    w->seg[2 * nseg + 3] = b;
    nseg += 2;
  }
}

gpuiso_status gpuiso_poset_antitonic(const gpuiso_poset *g, const double *sum, const double *weight,
                                     const gpuiso_opts *opt, double *fit, gpuiso_error *err) {
  (void)opt;
  gpuiso_error e = {GPUISO_OK, -1, -1, ""};
  mincut_work w;
  if (!mincut_work_init(&w, g)) {
    e.status = GPUISO_E_NOMEM;
  } else {
    for (int64_t p = 0; p < g->npos; p++) w.perm[p] = (int32_t)p;
    mincut_solve(&w, g, g->npos, sum, weight, fit);
  }
  mincut_work_free(&w);
  if (err) *err = e;
  return e.status;
}

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
 * which a whole-number gain of 1 does for up to some 10^7 observations. Maximum flows by Dinic's
 * algorithm, iteratively (no recursion), its searches stopping at the sink's level, on the
 * network laid out by node. The cost is a maximum flow on each block at each level of the
 * recursion: at most (number of distinct fitted values) levels, each over at most all points and
 * covers. Bounds on the fit known in advance (IDR's neighbouring thresholds) take the points
 * whose side they decide out of each flow, and split a block without a flow where no bounds
 * overlap (see mincut_solve). */
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
  w->rev = malloc(ne * sizeof *w->rev);
  w->cap = malloc(ne * sizeof *w->cap);
  w->efrom = malloc(ne / 2 * sizeof *w->efrom);
  w->eto = malloc(ne / 2 * sizeof *w->eto);
  w->ecap = malloc(ne / 2 * sizeof *w->ecap);
  w->head = malloc((np + 3) * sizeof *w->head);
  w->level = malloc((np + 2) * sizeof *w->level);
  w->iter = malloc((np + 2) * sizeof *w->iter);
  w->queue = malloc((np + 3) * sizeof *w->queue); /* one more: bfs writes past its last node */
  w->path = malloc((np + 2) * sizeof *w->path);
  w->admissible = malloc(ne * sizeof *w->admissible);
  w->adm_end = malloc((np + 2) * sizeof *w->adm_end);
  w->gain = malloc(np * sizeof *w->gain);
  w->node = malloc(np * sizeof *w->node);
  w->free_pt = malloc(np * sizeof *w->free_pt);
  w->by_hi = malloc(2 * np * sizeof *w->by_hi);
  if (!w->local || !w->perm || !w->seg || !w->to || !w->rev || !w->cap ||
      !w->efrom || !w->eto || !w->ecap || !w->head || !w->level ||
      !w->iter || !w->queue || !w->path || !w->admissible || !w->adm_end || !w->gain || !w->node || !w->free_pt || !w->by_hi)
    return 0;
  for (size_t p = 0; p < np; p++) w->local[p] = -1;
  return 1;
}

void mincut_work_free(mincut_work *w) {
  free(w->local);
  free(w->perm);
  free(w->seg);
  free(w->to);
  free(w->rev);
  free(w->cap);
  free(w->efrom);
  free(w->eto);
  free(w->ecap);
  free(w->head);
  free(w->level);
  free(w->iter);
  free(w->queue);
  free(w->path);
  free(w->admissible);
  free(w->adm_end);
  free(w->gain);
  free(w->node);
  free(w->free_pt);
  free(w->by_hi);
}

/* Lists an edge of the network; build_network() lays them out. */
static void add_edge(mincut_work *w, int32_t *ne, int32_t from, int32_t to, double cap) {
  w->efrom[*ne] = from;
  w->eto[*ne] = to;
  w->ecap[*ne] = cap;
  (*ne)++;
}

/* The residual network of the ne listed edges over nn nodes, by node (the arcs out of v are
 * head[v] .. head[v + 1]): each edge gives an arc and its reverse arc rev[e], of capacity 0.
 * The searches then read each node's arcs in one run of memory. */
static void build_network(mincut_work *w, int32_t nn, int32_t ne) {
  int32_t *at = w->iter; /* free until the flow */
  memset(w->head, 0, (size_t)(nn + 1) * sizeof *w->head);
  for (int32_t e = 0; e < ne; e++) {
    w->head[w->efrom[e] + 1]++;
    w->head[w->eto[e] + 1]++;
  }
  for (int32_t v = 0; v < nn; v++) w->head[v + 1] += w->head[v];
  memcpy(at, w->head, (size_t)nn * sizeof *at);
  for (int32_t e = 0; e < ne; e++) {
    int32_t a = at[w->efrom[e]]++, b = at[w->eto[e]]++;
    w->to[a] = w->eto[e];
    w->cap[a] = w->ecap[e];
    w->rev[a] = b;
    w->to[b] = w->efrom[e];
    w->cap[b] = 0.0;
    w->rev[b] = a;
  }
}

/* Levels of the residual network from the source, up to the sink's (the phase uses no deeper
 * node); returns whether the sink is reached. When it is not, the levels mark every node the
 * source reaches. */
static int bfs(mincut_work *w, int32_t nn, int32_t src, int32_t sink) {
  int32_t *level = w->level, *queue = w->queue, *adm = w->admissible, *first = w->iter, *end = w->adm_end;
  const int32_t *head = w->head, *to = w->to;
  const double *cap = w->cap;
  for (int32_t v = 0; v < nn; v++) level[v] = -1, first[v] = end[v] = 0;
  int32_t qh = 0, qt = 0, na = 0;
  level[src] = 0;
  queue[qt++] = src;
  while (qh < qt) {
    int32_t v = queue[qh++], next = level[v] + 1;
    if (level[sink] >= 0 && next > level[sink]) break;
    /* Without branches: whether an arc has capacity left and reaches a new node follows no
     * pattern a predictor learns (a branch cost some 40% of the search). The level graph's
     * arcs out of v are known here too: the nodes of level next are found from level
     * next - 1 alone, so an arc of v reaches one exactly when its node is new or already
     * at level next. */
    first[v] = na;
    for (int32_t e = head[v]; e < head[v + 1]; e++) {
      int32_t u = to[e];
      int open = cap[e] > 0, fresh = level[u] < 0;
      adm[na] = e;
      na += open & (fresh | (level[u] == next));
      queue[qt] = u;
      qt += open & fresh;
      level[u] = open & fresh ? next : level[u];
    }
    end[v] = na;
  }
  return level[sink] >= 0;
}

/* A blocking flow along shortest paths (Dinic's phase), by an explicit path stack, over the
 * level graph's arcs that bfs listed (saturated ones and dead ends skipped as met). */
static void blocking_flow(mincut_work *w, int32_t src, int32_t sink) {
  const int32_t *adm = w->admissible;
  int32_t top = 0, v = src;
  for (;;) {
    if (v == sink) {
      double f = INFINITY;
      int32_t cut = 0;
      for (int32_t i = 0; i < top; i++)
        if (w->cap[w->path[i]] < f) { f = w->cap[w->path[i]]; cut = i; }
      for (int32_t i = 0; i < top; i++) {
        w->cap[w->path[i]] -= f;
        w->cap[w->rev[w->path[i]]] += f;
      }
      top = cut; /* back to the tail of the first saturated edge */
      v = top ? w->to[w->path[top - 1]] : src;
      continue;
    }
    int32_t i = w->iter[v], end = w->adm_end[v];
    while (i < end && !((w->cap[adm[i]] > 0) & (w->level[w->to[adm[i]]] >= 0))) i++;
    w->iter[v] = i;
    if (i < end) {
      w->path[top++] = adm[i];
      v = w->to[adm[i]];
      continue;
    }
    w->level[v] = -1; /* a dead end for this phase */
    if (top == 0) return;
    top--;
    v = top ? w->to[w->path[top - 1]] : src;
    w->iter[v]++;
  }
}

/* A point's side in the cut of a block at its mean m, known from bounds lo <= fit <= hi: the
 * fit is above m where lo > m, at most m where hi <= m. The margin keeps rounding of the bounds
 * and of m (sums of up to some 10^7 weighted terms) from deciding a side. */
#define SIDE_MARGIN 1e-9
enum { SIDE_FREE = 0, SIDE_ABOVE = -1, SIDE_BELOW = -2 };

/* Splits the block perm[a .. b) (its points' local indices set): returns the size of the lower
 * set of greatest gain, moved to the front of the segment, or 0 when the block is constant.
 * With bounds, the points whose side they decide leave the network: the lower set holds those
 * above m and some of the rest, the greatest gain over the rest's lower sets. The points above
 * m form a lower set of the block (lo is antitonic: a point below one with lo > m has lo > m
 * too) and those at most m an upper set, so no point left in the network lies above one fixed
 * above m or below one fixed at most m, and the covers among the rest carry all constraints. */
static int64_t cut_block(mincut_work *w, const gpuiso_poset *g, int64_t a, int64_t b,
                         const double *sum, const double *weight, double S, double W,
                         const double *lo, const double *hi) {
  int32_t nb = (int32_t)(b - a), nf = 0;
  double m = S / W, total = 0.0, scale = 0.0, forced = 0.0;
  /* the bounds fix every point at one value, m's: the block is constant (no flow needed) */
  int fixed = lo != NULL;
  for (int32_t j = 0; j < nb; j++) {
    int32_t p = w->perm[a + j];
    double c = sum[p] * W - S * weight[p];
    w->gain[j] = c;
    total += fabs(c);
    scale += fabs(sum[p]) * W + fabs(S) * weight[p];
    int32_t node = nf;
    if (lo && lo[p] > m + SIDE_MARGIN) node = SIDE_ABOVE;
    else if (lo && hi[p] < m - SIDE_MARGIN) node = SIDE_BELOW;
    w->node[j] = node;
    if (node == SIDE_ABOVE) forced += c;
    if (node >= 0) w->free_pt[nf++] = j;
    fixed = fixed && node >= 0 && lo[p] == hi[p] && lo[p] == lo[w->perm[a]];
  }
  if (total == 0 || fixed) return 0;
  int32_t src = nf, sink = nf + 1, nn = nf + 2, ne = 0;
  for (int32_t f = 0; f < nf; f++) {
    int32_t j = w->free_pt[f], p = w->perm[a + j];
    double c = w->gain[j];
    if (c > 0) add_edge(w, &ne, src, f, c);
    else if (c < 0) add_edge(w, &ne, f, sink, -c);
    for (int64_t e = g->first[p]; e < g->first[p + 1]; e++) {
      int32_t q = w->local[g->cover[e]];
      if (q >= 0 && w->node[q] >= 0) add_edge(w, &ne, w->node[q], f, INFINITY);
    }
  }
  if (nf > 0) {
    build_network(w, nn, ne);
    while (bfs(w, nn, src, sink)) blocking_flow(w, src, sink);
  }
  /* the last search's levels mark the source side */
  double best = forced;
  for (int32_t f = 0; f < nf; f++)
    if (w->level[f] >= 0) best += w->gain[w->free_pt[f]];
  /* a gain within the rounding of the gains' terms is no split (nor is the whole block, whose
   * exact gain is 0) */
  if (!(best > 4 * DBL_EPSILON * scale)) return 0;
  /* partition by the side of each point (read first: the marks are by local index), stably, so
   * that every block lists its points in increasing order and sums them in that order */
  int64_t nh = 0;
  for (int32_t j = 0; j < nb; j++)
    w->queue[j] = w->node[j] == SIDE_ABOVE || (w->node[j] >= 0 && w->level[w->node[j]] >= 0);
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

/* Splits perm[0 .. nb) at every value c that no point's bounds [lo, hi] come near: the points
 * above c are those with lo > c, the fit above c, and the rest below, so the parts (the
 * components of the overlapping bounds) are fitted apart with no flow. Each part keeps its
 * points in increasing order. Returns the parts' number, as segments on w->seg. */
static int64_t split_at_gaps(mincut_work *w, int64_t nb, const double *lo, const double *hi) {
  /* by decreasing hi (the complement of its order-preserving key), ties in perm's order: the
   * radix sort is stable */
  key_tag *by_hi = w->by_hi;
  for (int64_t i = 0; i < nb; i++) {
    by_hi[i].key = ~double_key(hi[w->perm[i]]);
    by_hi[i].tag = w->perm[i];
  }
  sort_keys_serial(by_hi, by_hi + nb, nb);
  int32_t part = 0;
  double low = lo[by_hi[0].tag];
  for (int64_t i = 0; i < nb; i++) {
    int32_t p = (int32_t)by_hi[i].tag;
    if (hi[p] + 2 * SIDE_MARGIN < low) part++;
    if (lo[p] < low || hi[p] + 2 * SIDE_MARGIN < low) low = lo[p];
    w->local[p] = part; /* the part, for the count below (reset after) */
  }
  int64_t nparts = part + 1;
  int64_t *at = w->seg; /* the parts' ends, then their segments */
  memset(at, 0, (size_t)(nparts + 1) * sizeof *at);
  for (int64_t i = 0; i < nb; i++) at[w->local[w->perm[i]] + 1]++;
  for (int64_t c = 0; c < nparts; c++) at[c + 1] += at[c];
  int32_t *tmp = w->path;
  int64_t *fill = (int64_t *)w->by_hi; /* free now */
  memcpy(fill, at, (size_t)nparts * sizeof *fill);
  for (int64_t i = 0; i < nb; i++) {
    int32_t p = w->perm[i];
    tmp[fill[w->local[p]]++] = p;
    w->local[p] = -1;
  }
  memcpy(w->perm, tmp, (size_t)nb * sizeof *tmp);
  for (int64_t c = nparts - 1; c >= 0; c--) {
    at[2 * c + 1] = at[c + 1];
    at[2 * c] = at[c];
  }
  return nparts;
}

void mincut_solve(mincut_work *w, const gpuiso_poset *g, int64_t nb, const double *sum,
                  const double *weight, const double *lo, const double *hi, double *fit) {
  int64_t nseg = 0;
  if (nb > 0 && lo) {
    nseg = split_at_gaps(w, nb, lo, hi);
  } else if (nb > 0) {
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
    int64_t nh = b - a > 1 ? cut_block(w, g, a, b, sum, weight, S, W, lo, hi) : 0;
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
    mincut_solve(&w, g, g->npos, sum, weight, NULL, NULL, fit);
  }
  mincut_work_free(&w);
  if (err) *err = e;
  return e.status;
}

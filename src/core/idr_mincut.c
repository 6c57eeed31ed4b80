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
 * so that for unweighted indicators they are whole numbers and the cuts are exact. S and W are
 * summed as pairs of doubles and the gains formed from exact products, so that each is within a
 * rounding of itself and eps^2 of its terms, not eps of them: a heavy point's gain, a difference
 * of terms some 1e14 times a light point's where the weights span 1e+-7, then no longer hides the
 * light point's. A block is split only when the gain of its best lower set exceeds 8 eps^2 of
 * that set's terms, sum |sum_p W| + |S w_p| (a whole-number gain of 1 always does). Maximum
 * preflows by push-relabel on the network laid out by node, the cut read from them. The cost is a
 * maximum flow on each block at each level of the recursion: at most (number of distinct fitted
 * values) levels, each over at most all points and covers. Bounds on the fit known in advance
 * (IDR's neighbouring thresholds) take the points whose side they decide out of each flow, and
 * split a block without a flow where no bounds overlap (see mincut_solve). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hull/geometry.h"
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
  w->label = malloc((np + 2) * sizeof *w->label);
  w->current = malloc((np + 2) * sizeof *w->current);
  w->excess = malloc((np + 2) * sizeof *w->excess);
  w->count = malloc((np + 2) * sizeof *w->count);
  w->queue = malloc((np + 2) * sizeof *w->queue);
  w->fifo = malloc((np + 2) * sizeof *w->fifo);
  w->queued = malloc(np + 2);
  w->in_source = malloc(np + 2);
  w->gain = malloc(np * sizeof *w->gain);
  w->node = malloc(np * sizeof *w->node);
  w->free_pt = malloc(np * sizeof *w->free_pt);
  w->by_hi = malloc(2 * np * sizeof *w->by_hi);
  if (!w->local || !w->perm || !w->seg || !w->to || !w->rev || !w->cap || !w->efrom || !w->eto ||
      !w->ecap || !w->head || !w->label || !w->current || !w->excess || !w->count || !w->queue ||
      !w->fifo || !w->queued || !w->in_source || !w->gain || !w->node || !w->free_pt || !w->by_hi)
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
  free(w->label);
  free(w->current);
  free(w->excess);
  free(w->count);
  free(w->queue);
  free(w->fifo);
  free(w->queued);
  free(w->in_source);
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
  int32_t *at = w->current; /* free until the flow */
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

/* Exact distances to the sink in the residual network, by a search back from it; nn (the number
 * of nodes) for the nodes that cannot reach it and for the source. Resets the current arcs and
 * the counts of labels. */
static void global_relabel(mincut_work *w, int32_t nn, int32_t src, int32_t sink) {
  int32_t *label = w->label, *queue = w->queue, *count = w->count;
  const int32_t *head = w->head, *to = w->to, *rev = w->rev;
  for (int32_t v = 0; v < nn; v++) {
    label[v] = nn;
    count[v] = 0;
    w->current[v] = head[v];
  }
  int32_t qh = 0, qt = 0;
  label[sink] = 0;
  queue[qt++] = sink;
  while (qh < qt) {
    int32_t v = queue[qh++];
    count[label[v]]++;
    for (int32_t a = head[v]; a < head[v + 1]; a++) {
      int32_t u = to[a];
      if (label[u] == nn && u != src && w->cap[rev[a]] > 0) {
        label[u] = label[v] + 1;
        queue[qt++] = u;
      }
    }
  }
}

/* Node v raised to one more than its lowest residual neighbour (nn where it has none, the
 * source's label: v can no longer reach the sink). The gap rule: where v was the last node of
 * its label, no node above that label reaches the sink either, and all go to nn. */
static void relabel(mincut_work *w, int32_t nn, int32_t src, int32_t v) {
  int32_t *label = w->label, *count = w->count, old = label[v], low = nn;
  for (int32_t a = w->head[v]; a < w->head[v + 1]; a++)
    if (w->cap[a] > 0 && label[w->to[a]] < low) low = label[w->to[a]];
  w->current[v] = w->head[v];
  if (--count[old] == 0) {
    for (int32_t u = 0; u < nn; u++)
      if (u != src && label[u] > old && label[u] < nn) {
        count[label[u]]--;
        label[u] = nn;
      }
    low = nn;
  }
  label[v] = low < nn ? low + 1 : nn;
  if (label[v] < nn) count[label[v]]++;
}

/* A maximum preflow by push-relabel (Goldberg and Tarjan 1988): the source's arcs saturated,
 * active nodes (with excess, below label nn) discharged first in, first out, along arcs to a
 * node one label lower, exact labels from global_relabel at the start and after every nn
 * relabels. Dinic's algorithm took some 8 searches of the whole network a cut here; this visits
 * the network about half as often. Pushes move min(excess, capacity), so that an emptied node or
 * a saturated arc is exactly 0. */
static void max_preflow(mincut_work *w, int32_t nn, int32_t src, int32_t sink) {
  int32_t *label = w->label, *current = w->current, *fifo = w->fifo;
  double *excess = w->excess, *cap = w->cap;
  unsigned char *queued = w->queued;
  const int32_t *head = w->head, *to = w->to, *rev = w->rev;
  int32_t qh = 0, qn = 0, relabels = 0;
  for (int32_t v = 0; v < nn; v++) excess[v] = 0, queued[v] = 0;
  global_relabel(w, nn, src, sink);
  for (int32_t a = head[src]; a < head[src + 1]; a++) {
    int32_t u = to[a];
    excess[u] += cap[a];
    cap[rev[a]] += cap[a];
    cap[a] = 0;
    if (!queued[u] && u != sink) queued[u] = 1, fifo[qn++] = u;
  }
  while (qn > 0) {
    int32_t v = fifo[qh];
    qh = qh + 1 == nn ? 0 : qh + 1;
    qn--;
    queued[v] = 0;
    while (excess[v] > 0 && label[v] < nn) {
      int32_t a = current[v], end = head[v + 1], down = label[v] - 1;
      for (; a < end; a++) {
        int32_t u = to[a];
        if (!(cap[a] > 0 && label[u] == down)) continue;
        double f = excess[v] < cap[a] ? excess[v] : cap[a];
        cap[a] -= f;
        cap[rev[a]] += f;
        excess[v] -= f;
        excess[u] += f;
        if (!queued[u] && u != sink) {
          queued[u] = 1;
          int32_t at = qh + qn++;
          fifo[at < nn ? at : at - nn] = u;
        }
        if (excess[v] == 0) break;
      }
      current[v] = a;
      if (excess[v] == 0) break;
      relabel(w, nn, src, v);
      if (++relabels == nn) {
        relabels = 0;
        global_relabel(w, nn, src, sink);
      }
    }
  }
}

/* The source side of the minimum cut nearest the source, in in_source: the nodes that the
 * source or a node with excess reaches in the residual network of a maximum preflow. (Every
 * minimum cut has all excess on its source side and no residual arc out of it, so it holds
 * these nodes; and they form a minimum cut, their capacity out being the flow into the sink.)
 * Any positive excess counts, as any positive capacity did in Dinic's last search: a threshold
 * for the block's rounding would drop the genuine excess of a light point. */
static void source_side(mincut_work *w, int32_t nn, int32_t src, int32_t sink) {
  unsigned char *in = w->in_source;
  int32_t *queue = w->queue, qh = 0, qt = 0;
  for (int32_t v = 0; v < nn; v++) {
    in[v] = v == src || (v != sink && w->excess[v] > 0);
    if (in[v]) queue[qt++] = v;
  }
  while (qh < qt) {
    int32_t v = queue[qh++];
    for (int32_t a = w->head[v]; a < w->head[v + 1]; a++) {
      int32_t u = w->to[a];
      if (!in[u] && w->cap[a] > 0) in[u] = 1, queue[qt++] = u;
    }
  }
}

/* A point's side in the cut of a block at its mean m, known from bounds lo <= fit <= hi: the
 * fit is above m where lo > m, at most m where hi <= m. The margin keeps rounding of the bounds
 * and of m (sums of up to some 10^7 weighted terms) from deciding a side. */
#define SIDE_MARGIN 1e-9
enum { SIDE_FREE = 0, SIDE_ABOVE = -1, SIDE_BELOW = -2 };

/* The gain of a point in a block of sums S and W (pairs): sum W - S weight, from exact products,
 * within a rounding of itself and eps^2 of its terms. */
static double block_gain(double sum, double weight, dd S, dd W) {
  dd u = dd_two_prod(sum, W.hi), v = dd_two_prod(S.hi, weight);
  return (u.hi - v.hi) + ((u.lo + sum * W.lo) - (v.lo + S.lo * weight));
}

/* Splits the block perm[a .. b) (its points' local indices set): returns the size of the lower
 * set of greatest gain, moved to the front of the segment, or 0 when the block is constant.
 * With bounds, the points whose side they decide leave the network: the lower set holds those
 * above m and some of the rest, the greatest gain over the rest's lower sets. The points above
 * m form a lower set of the block (lo is antitonic: a point below one with lo > m has lo > m
 * too) and those at most m an upper set, so no point left in the network lies above one fixed
 * above m or below one fixed at most m, and the covers among the rest carry all constraints. */
static int64_t cut_block(mincut_work *w, const gpuiso_poset *g, int64_t a, int64_t b,
                         const double *sum, const double *weight, dd S, dd W,
                         const double *lo, const double *hi) {
  int32_t nb = (int32_t)(b - a), nf = 0;
  double m = S.hi / W.hi, total = 0.0;
  /* the bounds fix every point at one value, m's: the block is constant (no flow needed) */
  int fixed = lo != NULL;
  for (int32_t j = 0; j < nb; j++) {
    int32_t p = w->perm[a + j];
    double c = block_gain(sum[p], weight[p], S, W);
    w->gain[j] = c;
    total += fabs(c);
    int32_t node = nf;
    if (lo && lo[p] > m + SIDE_MARGIN) node = SIDE_ABOVE;
    else if (lo && hi[p] < m - SIDE_MARGIN) node = SIDE_BELOW;
    w->node[j] = node;
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
    max_preflow(w, nn, src, sink);
    source_side(w, nn, src, sink);
  }
  /* The lower set found: its gain, summed compensated, against the rounding of its own terms
   * (block_gain): a gain within it is no split, nor is the whole block's, exactly 0. A set's
   * own terms, not the block's, so that light points split off as heavy ones do. */
  dd best = {0, 0};
  double terms = 0;
  for (int32_t j = 0; j < nb; j++) {
    int32_t p = w->perm[a + j];
    w->queue[j] = w->node[j] == SIDE_ABOVE || (w->node[j] >= 0 && w->in_source[w->node[j]]);
    if (!w->queue[j]) continue;
    best = dd_add_d(best, w->gain[j]);
    terms += fabs(sum[p]) * W.hi + fabs(S.hi) * weight[p];
  }
  if (!(best.hi > 8 * DBL_EPSILON * DBL_EPSILON * terms)) return 0;
  /* partition by the side of each point (read above: the marks are by local index), stably, so
   * that every block lists its points in increasing order and sums them in that order */
  int64_t nh = 0;
  int32_t *tmp = w->fifo; /* free now: the points of the rest, in order */
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
  int32_t *tmp = w->fifo;
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
    dd Sc = {0, 0}, Wc = {0, 0}; /* pairs: the gains' rounding is then their own */
    for (int64_t i = a; i < b; i++) {
      int32_t p = w->perm[i];
      Sc = dd_add_d(Sc, sum[p]);
      Wc = dd_add_d(Wc, weight[p]);
      w->local[p] = (int32_t)(i - a);
    }
    double S = Sc.hi, W = Wc.hi;
    int64_t nh = b - a > 1 ? cut_block(w, g, a, b, sum, weight, Sc, Wc, lo, hi) : 0;
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

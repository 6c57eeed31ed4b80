/* Merging lower hulls held as segment lists (paper, sections 3.3 and 4), shared by the CPU hull
 * engine and the CUDA kernels.
 *
 * Chunk j writes its hull once, to slot j of the vertex arrays (slots.h). A node of the merge tree
 * is a list of segments (chunk, first, last), at most one per chunk, stored in the descriptor
 * slots of its chunks starting at its first chunk's. Merging two nodes finds their bridge (a capped walk from
 * the shared point, then a nested bisection), cuts two segments and moves the right list's tail
 * down; no vertex is copied.
 */
#ifndef GPUISO_HULL_MERGE_H
#define GPUISO_HULL_MERGE_H

#include "slots.h"

typedef struct {
  int64_t chunk, first, last; /* vertices first..last of the chunk's slot */
} hull_segment;

/* A vertex of a list: segment t of the list, position p in that segment's slot. */
typedef struct {
  int64_t t, p;
} hull_pos;

static inline GPUISO_HD hull_vertex hull_at(const hull_slots *v, const hull_segment *list,
                                            hull_pos q) {
  return hull_vertex_at(v, list[q.t].chunk * v->slot + q.p);
}

/* The point index of a vertex: the element whose block it starts, when it is one. */
static inline GPUISO_HD int64_t hull_index(const hull_slots *v, const hull_segment *list,
                                           hull_pos q) {
  return hull_entry_index(v, list[q.t].chunk * v->slot + q.p);
}

static inline GPUISO_HD hull_pos hull_prev(const hull_segment *list, hull_pos q) {
  if (q.p > list[q.t].first) {
    q.p--;
  } else {
    q.t--;
    q.p = list[q.t].last;
  }
  return q;
}

static inline GPUISO_HD hull_pos hull_next(const hull_segment *list, hull_pos q) {
  if (q.p < list[q.t].last) {
    q.p++;
  } else {
    q.t++;
    q.p = list[q.t].first;
  }
  return q;
}

static inline GPUISO_HD int hull_before(hull_pos a, hull_pos b) {
  return a.t < b.t || (a.t == b.t && a.p < b.p);
}

/* The first and the last vertex of list (nseg segments). */
static inline GPUISO_HD hull_pos hull_list_first(const hull_segment *list) {
  hull_pos q = {0, list[0].first};
  return q;
}

static inline GPUISO_HD hull_pos hull_list_last(const hull_segment *list, int64_t nseg) {
  hull_pos q = {nseg - 1, list[nseg - 1].last};
  return q;
}

/* The first and the last position of segment t of list between lo and hi: lo's (or the
 * segment's first vertex) and hi's (or its last). */
static inline GPUISO_HD int64_t hull_span_first(const hull_segment *list, int64_t t, hull_pos lo) {
  return t == lo.t ? lo.p : list[t].first;
}

static inline GPUISO_HD int64_t hull_span_last(const hull_segment *list, int64_t t, hull_pos hi) {
  return t == hi.t ? hi.p : list[t].last;
}

/* The first position q in [lo, hi] of list whose predicate is false, for a predicate that is
 * true and then false along the list (hi when it is true up to hi). Bisection first over the
 * segments, by their first vertex, then within one. The predicate: kind 0, "the tangent from a
 * to the list lies further right": orient(a, q, next(q)) <= 0; kind 1, "the bridge to list b
 * (over [blo, bhi]) starts further right": orient(q, next(q), tangent from q) > 0. */
static inline GPUISO_HD int hull_pred(const hull_slots *v, const hull_segment *list, hull_pos q,
                                      hull_pos hi, int kind, hull_vertex a,
                                      const hull_segment *blist, hull_pos blo, hull_pos bhi);

static inline GPUISO_HD hull_pos hull_first_false(const hull_slots *v, const hull_segment *list,
                                                  hull_pos lo, hull_pos hi, int kind, hull_vertex a,
                                                  const hull_segment *blist, hull_pos blo,
                                                  hull_pos bhi) {
  /* over segments lo.t + 1 .. hi.t, probed at their first vertex */
  int64_t t0 = lo.t, t1 = hi.t;
  while (t0 < t1) {
    int64_t mid = t0 + (t1 - t0 + 1) / 2;
    hull_pos q = {mid, list[mid].first};
    if (hull_pred(v, list, q, hi, kind, a, blist, blo, bhi)) t0 = mid;
    else t1 = mid - 1;
  }
  int64_t p0 = hull_span_first(list, t0, lo), p1 = hull_span_last(list, t0, hi);
  while (p0 < p1) {
    int64_t mid = p0 + (p1 - p0) / 2;
    hull_pos q = {t0, mid};
    if (hull_pred(v, list, q, hi, kind, a, blist, blo, bhi)) p0 = mid + 1;
    else p1 = mid;
  }
  hull_pos r = {t0, p0};
  if (hull_pred(v, list, r, hi, kind, a, blist, blo, bhi) && hull_before(r, hi)) r = hull_next(list, r);
  return r;
}

static inline GPUISO_HD int hull_pred(const hull_slots *v, const hull_segment *list, hull_pos q,
                                      hull_pos hi, int kind, hull_vertex a,
                                      const hull_segment *blist, hull_pos blo, hull_pos bhi) {
  if (!hull_before(q, hi)) return 0;
  hull_pos n = hull_next(list, q);
  if (kind == 0) return hull_orient_vertices(v, a, hull_at(v, list, q), hull_at(v, list, n)) <= 0;
  hull_vertex aq = hull_at(v, list, q);
  hull_pos t = hull_first_false(v, blist, blo, bhi, 0, aq, blist, blo, bhi);
  return hull_orient_vertices(v, aq, hull_at(v, list, n), hull_at(v, blist, t)) > 0;
}

/* Whether merging a (na segments) and b (nb) is one of the cases of nodes whose points all
 * coincide (their elements all weigh zero), which hull_merge settles without a search. */
static inline GPUISO_HD int hull_merge_trivial(const hull_segment *a, int64_t na, const hull_segment *b,
                                               int64_t nb) {
  return (nb == 1 && b[0].first == b[0].last) || (na == 1 && a[0].first == a[0].last);
}

/* The bridge of a non-trivial merge of a and b by the walk from their shared point, at most cap
 * steps: *alpha in a and *beta in b. Returns 1 when the walk ran out: the bridge then lies in a
 * up to *alpha and in b from *beta on, for the nested bisection. */
static inline GPUISO_HD int hull_walk(const hull_slots *v, const hull_segment *a, int64_t na,
                                      const hull_segment *b, int64_t nb, int64_t cap, hull_pos *alpha_out,
                                      hull_pos *beta_out) {
  hull_pos s = hull_list_last(a, na), bs = hull_list_first(b); /* the shared point, last of a and first of b */
  hull_pos alpha = hull_prev(a, s), beta = hull_next(b, bs);
  hull_pos bend = hull_list_last(b, nb), astart = hull_list_first(a);
  int64_t steps = 0;
  if (hull_orient_vertices(v, hull_at(v, a, alpha), hull_at(v, a, s), hull_at(v, b, beta)) > 0) {
    beta = bs; /* convex at the shared point: it stays once, as b's first vertex, whose index is
                  the later one when zero weights repeat the point */
  } else {
    /* The ends walk in turns, each as far as it goes. An end that cannot move once the other has
     * gone as far as it can leaves the bridge found: a second pass of it would not move either
     * (the first end alone may find its place at once, before the second has moved). Passes are
     * at most steps + 2. One loop, a turn an iteration, whichever end moves: the merges of a
     * warp's threads then test their turns together, where a loop an end had the threads on
     * different ends take their turns one after the other. */
    for (int side = 0, tries = 0, moved = 0; steps <= cap;) {
      int more = side == 0 ? hull_before(astart, alpha) : hull_before(beta, bend);
      if (more) { /* side 0: alpha's vertex before, alpha, beta; side 1: alpha, beta, beta's after */
        hull_pos p = side == 0 ? hull_prev(a, alpha) : alpha, q = side == 0 ? alpha : beta;
        hull_pos r = side == 0 ? beta : hull_next(b, beta);
        more = hull_orient_vertices(v, hull_at(v, a, p), hull_at(v, side == 0 ? a : b, q), hull_at(v, b, r)) <= 0;
        if (more) {
          if (side == 0) alpha = p;
          else beta = r;
          moved = 1;
          steps++;
        }
      }
      if (!more) { /* the pass ends: the first is always followed by the second */
        if (!moved && tries > 0) break;
        side ^= 1, tries++, moved = 0;
      }
    }
  }
  *alpha_out = alpha;
  *beta_out = beta;
  return steps > cap;
}

/* Cuts a at alpha and appends b's segments from beta's on, cut at beta, into a; returns the merged
 * list's length. */
static inline GPUISO_HD int64_t hull_cut(hull_segment *a, hull_pos alpha, const hull_segment *b, int64_t nb,
                                         hull_pos beta) {
  a[alpha.t].last = alpha.p;
  int64_t out = alpha.t + 1;
  for (int64_t t = beta.t; t < nb; t++) {
    hull_segment g = b[t];
    if (t == beta.t) g.first = beta.p;
    a[out++] = g;
  }
  return out;
}

/* Merges the node whose list of na segments is at a with its right neighbour, whose list of nb
 * segments is at b (b after a in the descriptor array), into a. Walks at most cap steps before it
 * searches. Returns the merged list's length. */
static inline GPUISO_HD int64_t hull_merge(const hull_slots *v, hull_segment *a, int64_t na,
                                           const hull_segment *b, int64_t nb, int64_t cap) {
  /* A node whose points all coincide is one vertex, the shared point: it only passes on its later
   * index. */
  if (nb == 1 && b[0].first == b[0].last) {
    if (na == 1 && a[0].first == a[0].last) {
      a[0] = b[0];
      return 1;
    }
    hull_pos before = hull_prev(a, hull_list_last(a, na));
    a[before.t].last = before.p;
    a[before.t + 1] = b[0];
    return before.t + 2;
  }
  if (na == 1 && a[0].first == a[0].last) {
    for (int64_t t = 0; t < nb; t++) a[t] = b[t];
    return nb;
  }
  hull_pos alpha, beta;
  if (hull_walk(v, a, na, b, nb, cap, &alpha, &beta)) { /* nested bisection over what the walk left */
    hull_vertex none = {0, 0, {{0, 0}, {0, 0}}, 0};
    hull_pos bend = hull_list_last(b, nb), astart = hull_list_first(a);
    alpha = hull_first_false(v, a, astart, alpha, 1, none, b, beta, bend);
    beta = hull_first_false(v, b, beta, bend, 0, hull_at(v, a, alpha), b, beta, bend);
  }
  return hull_cut(a, alpha, b, nb, beta);
}

/* The vertex of list between positions lo and hi with the largest point index at or below i, or
 * lo when all lie above i; the vertex sought by hull_locate must lie there (a range found by
 * searches for smaller and larger indices). Bisection over segments lo.t + 1 .. hi.t by their
 * first vertex, then within one, over the positions its ends' indices allow: within a slot the
 * indices rise by at least one a position, so that the vertex lies at most i - index(p0)
 * positions after p0 and at least index(p1) - i before p1 (found at once where every element is a
 * vertex). */
static inline GPUISO_HD hull_pos hull_locate_in(const hull_slots *v, const hull_segment *list, hull_pos lo,
                                                hull_pos hi, int64_t i) {
  int64_t t0 = lo.t, t1 = hi.t;
  while (t0 < t1) {
    int64_t mid = t0 + (t1 - t0 + 1) / 2;
    if (hull_entry_index(v, list[mid].chunk * v->slot + list[mid].first) <= i) t0 = mid;
    else t1 = mid - 1;
  }
  int64_t p0 = hull_span_first(list, t0, lo), p1 = hull_span_last(list, t0, hi), base = list[t0].chunk * v->slot;
  if (p0 < p1) {
    int64_t i0 = hull_entry_index(v, base + p0), i1 = hull_entry_index(v, base + p1);
    int64_t up = p0 + (i > i0 ? i - i0 : 0), down = p1 - (i1 > i ? i1 - i : 0);
    if (up < p1) p1 = up;
    if (down > p0) p0 = down;
  }
  while (p0 < p1) {
    int64_t mid = p0 + (p1 - p0 + 1) / 2;
    if (hull_entry_index(v, base + mid) <= i) p0 = mid;
    else p1 = mid - 1;
  }
  hull_pos q = {t0, p0};
  return q;
}

/* The vertex of list (nseg segments) with the largest point index at or below i, or the first
 * vertex when all lie above i: where the reconstruction of the elements from i on starts. */
static inline GPUISO_HD hull_pos hull_locate(const hull_slots *v, const hull_segment *list,
                                             int64_t nseg, int64_t i) {
  return hull_locate_in(v, list, hull_list_first(list), hull_list_last(list, nseg), i);
}

#endif

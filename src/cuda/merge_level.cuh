/* The merge levels (paper, section 4): at span s, the node at a row's chunk j (a multiple of 2s)
 * takes in the node at chunk j + s, as in the CPU engine, by the shared segment-list merge
 * (hull/merge.h); one launch serves every row. The simple path takes a thread per chunk, idle
 * where no merge starts. The fast path lists each level's merges on the host (merge_node: the
 * left node of each), so that a launch covers its live merges only: a thread per merge at levels
 * of at least WARP_MERGE_BELOW merges, else a warp per merge, whose lanes walk the two ends at
 * once (pair_walk), search 32 candidates a step (warp_first_false) and move the right list's tail
 * together. A wide row's merges are of its chains on the steps (wide_rows.cuh), a thread each.
 */
#ifndef GPUISO_CUDA_MERGE_LEVEL_CUH
#define GPUISO_CUDA_MERGE_LEVEL_CUH

#include "wide_rows.cuh"

/* A warp per merge below this many merges a level, a thread per merge from it on: on an H200 the
 * warps ran every level of up to 5,000 merges faster (rows of 1e4 to 1e7: the merges 17 to 31%,
 * the fits 2 to 10% faster than from 256 on), the threads the levels of rows of 1e8 (warps for
 * all of its levels: the fit 7% slower), where more merges than the device holds warps wait
 * (tools/bench/RESULTS.md, 2026-12-04). Tests set it lower to meet both kinds in little data. */
#ifndef WARP_MERGE_BELOW
#define WARP_MERGE_BELOW 6000
#endif
#define MERGE_WARPS 4 /* merges a block of merge_warp_kernel runs */
/* Threads a block of the thread-per-merge levels: their kernel takes 132 registers (nvcc 13.0,
 * sm_90), so that an SM holds three blocks of 128 (12 warps) where it would hold one of 256. */
#define MERGE_THREADS 128

/* hull_first_false with a warp (warp_last_true): over the segments, the last whose first vertex
 * passes; within it, the first vertex that fails, the one after the last that passes. Every lane
 * returns the same position. */
static SIMT_DEVICE hull_pos warp_first_false(const hull_slots *v, const hull_segment *list, hull_pos lo,
                                             hull_pos hi, int kind, hull_vertex a, const hull_segment *blist,
                                             hull_pos blo, hull_pos bhi) {
  int64_t t = warp_last_true(lo.t, hi.t, [&](int64_t c) {
    hull_pos q = {c, list[c].first};
    return hull_pred(v, list, q, hi, kind, a, blist, blo, bhi);
  });
  int64_t p0 = hull_span_first(list, t, lo), p1 = hull_span_last(list, t, hi);
  hull_pos r = {t, 1 + warp_last_true(p0 - 1, p1 - 1, [&](int64_t c) { /* p1 itself untested, as one lane's */
                  hull_pos q = {t, c};
                  return hull_pred(v, list, q, hi, kind, a, blist, blo, bhi);
                })};
  if (hull_pred(v, list, r, hi, kind, a, blist, blo, bhi) && hull_before(r, hi)) r = hull_next(list, r);
  return r;
}

/* Vertices of each segment near the shared point that warm_merge asks L1 for. On a row of 1e7
 * noise (the CPU hull engine's merges) the walks' visits lay within them but for 0.07 a side of
 * a merge, where 4 left 1.5 out: the lists of the first levels are one segment of a chunk's
 * hull, those of the upper ones 16 to 127 segments of a few vertices, of which a walk crosses
 * about 5. */
#define WALK_WINDOW 8

/* The lines of segment g's WALK_WINDOW vertices nearest the shared point (its last ones in a, its
 * first in b): their words, their values and their chunk's first point. */
static SIMT_DEVICE void warm_segment(const hull_slots *v, hull_segment g, int in_a) {
  int64_t p0 = g.first, p1 = g.last, e0 = g.chunk * v->slot;
  if (p1 - p0 >= WALK_WINDOW) {
    if (in_a) p0 = p1 - (WALK_WINDOW - 1);
    else p1 = p0 + (WALK_WINDOW - 1);
  }
  simt::prefetch(v->vi + e0 + p0);
  simt::prefetch(v->vi + e0 + p1);
  simt::prefetch(hull_slot_s(v, e0 + p0));
  simt::prefetch(hull_slot_s(v, e0 + p1));
  simt::prefetch(v->starts + g.chunk);
}

/* What a merge reads one load after another, asked of L1 at once by `lanes` threads (a warp's
 * lanes, or one thread alone): thread `lane` the vertices by the shared point of a's segment that
 * many from its end and of b's that many from its start (warm_segment), and the threads together
 * the rest of b's segments, which the tail move reads; so that the walk's turns and the tail's
 * rounds wait on L1, not each on a global load. The upper levels' few merges are such chains: 35
 * to 47 us a level, much the same whatever its size (tools/bench/RESULTS.md, 2026-12-04). A
 * thread's merge of the lower levels (lists under 16 segments, a walk crossing under one a side)
 * warms the two segments by the shared point. */
static SIMT_DEVICE void warm_merge(const hull_slots *v, const hull_segment *a, int64_t na, const hull_segment *b,
                                   int64_t nb, int64_t lane, int64_t lanes) {
  if (lane < na) warm_segment(v, a[na - 1 - lane], 1);
  if (lane < nb) warm_segment(v, b[lane], 0);
  /* b's segments past the threads' own, line by line from the one holding segment `lanes` to the
   * one holding its last byte */
  uintptr_t first = (uintptr_t)(b + lanes) & ~(uintptr_t)(SIMT_LINE - 1), last = (uintptr_t)(b + nb) - 1;
  for (uintptr_t at = first + lane * SIMT_LINE; nb > lanes && at <= last; at += lanes * SIMT_LINE)
    simt::prefetch((const void *)at);
}

/* Merge m of the level: node[m]'s chunk takes in the one span after it (node NULL: m is a chunk,
 * which merges when a merge starts there). */
template <typename T>
struct merge_step {
  solver_view<T> v;
  int64_t span;
  const int64_t *node;
  SIMT_DEVICE void operator()(int64_t m) const {
    int64_t g = node ? node[m] : m;
    int64_t r = v.chunk_row[g], j = g - v.chunk_base[r], count = v.chunk_base[r + 1] - v.chunk_base[r];
    if (j % (2 * span) != 0 || j + span >= count || row_failed(v, r)) return;
    if (v.rows[r].wide) {
      wide_merge(v, r, j, span);
      return;
    }
    hull_slots slots = view_slots(v, r);
    hull_segment *a = v.seg + g, *b = v.seg + g + span;
    int64_t na = v.nseg[g], nb = v.nseg[g + span];
    if (node) warm_merge(&slots, a, na, b, nb, 0, 1); /* the fast path's; the simple path as it was */
    v.nseg[g] = hull_merge(&slots, a, na, b, nb, v.cap);
  }
};

/* The position q of the lane's partner (lane ^ 1), every lane of the warp calling it. */
static SIMT_DEVICE hull_pos partner_pos(hull_pos q) {
  hull_pos f = {simt::shfl_xor(SIMT_FULL_MASK, q.t, 1), simt::shfl_xor(SIMT_FULL_MASK, q.p, 1)};
  return f;
}

/* hull_walk (hull/merge.h) by the lanes of a warp, every lane calling it: the even lanes walk the
 * left end and the odd ones the right end (side), both ends at once, as the lane kernels' merges
 * (short_merges, short_rows.cuh): each end steps where hull_walk's end would, against the other
 * end as the last step left it (the turn of the three in the row's order at most 0), until
 * neither moves. An end never passes the bridge's, so the walk stops at hull_walk's bridge, the
 * warp waiting on the chain of loads and turns of the longer end's walk where hull_walk's is both
 * ends'. Once an end has taken more than cap steps (hull_walk: both ends together), it returns 1:
 * the bridge lies in a up to *alpha and in b from *beta on, as after hull_walk, for the same
 * bisection. Every lane returns the same. The turn is taken in the order (next, end, other end):
 * the right end's is the reverse of hull_walk's, of the opposite sign (hull_orient_vertices,
 * hull/slots.h), so that it steps where that is at least 0. */
static SIMT_DEVICE int pair_walk(const hull_slots *v, const hull_segment *a, int64_t na, const hull_segment *b,
                                 int64_t nb, int64_t cap, hull_pos *alpha, hull_pos *beta) {
  hull_pos s = hull_list_last(a, na), bs = hull_list_first(b);
  *alpha = hull_prev(a, s), *beta = hull_next(b, bs);
  if (hull_orient_vertices(v, hull_at(v, a, *alpha), hull_at(v, a, s), hull_at(v, b, *beta)) > 0) {
    *beta = bs; /* convex at the shared point, as hull_walk */
    return 0;
  }
  int side = (int)(simt::lane() & 1u);
  const hull_segment *own = side ? b : a, *other = side ? a : b;
  hull_pos e = side ? *beta : *alpha, stop = side ? hull_list_last(b, nb) : hull_list_first(a);
  hull_vertex ve = hull_at(v, own, e);
  int64_t steps = 0;
  int walking = 1, out = 0;
  while (walking) {
    hull_pos f = partner_pos(e);
    int moved = 0;
    if (steps <= cap && (e.t != stop.t || e.p != stop.p)) {
      hull_pos c = side ? hull_next(b, e) : hull_prev(a, e);
      hull_vertex vc = hull_at(v, own, c);
      int turn = hull_orient_vertices(v, vc, ve, hull_at(v, other, f));
      if (side ? turn >= 0 : turn <= 0) e = c, ve = vc, steps++, moved = 1;
    }
    out = simt::shfl_xor(SIMT_FULL_MASK, (int)(steps > cap), 1) | (steps > cap);
    walking = (simt::shfl_xor(SIMT_FULL_MASK, moved, 1) | moved) && !out;
  }
  hull_pos f = partner_pos(e);
  *alpha = side ? f : e, *beta = side ? e : f;
  return out;
}

/* hull_merge with a warp: the trivial merges as one thread runs them (every lane the same), the
 * walk by pair_walk (warm_merge's lines in L1), the nested bisection by warp_first_false, the
 * tail of b moved by the lanes together (all of a round read before any is written: the moves go
 * down, onto segments not yet read). */
static SIMT_DEVICE int64_t warp_hull_merge(const hull_slots *v, hull_segment *a, int64_t na,
                                           const hull_segment *b, int64_t nb, int64_t cap) {
  unsigned lane = simt::lane();
  if (hull_merge_trivial(a, na, b, nb)) {
    int64_t out = 0;
    simt::sync_warp(); /* the lanes' reads of a and b before lane 0 writes */
    if (lane == 0) out = hull_merge(v, a, na, b, nb, cap);
    return simt::shfl(SIMT_FULL_MASK, out, 0);
  }
  warm_merge(v, a, na, b, nb, lane, SIMT_WARP);
  hull_pos alpha, beta;
  if (pair_walk(v, a, na, b, nb, cap, &alpha, &beta)) {
    hull_vertex none = {0, 0, {{0, 0}, {0, 0}}, 0};
    hull_pos bend = hull_list_last(b, nb), astart = hull_list_first(a);
    alpha = warp_first_false(v, a, astart, alpha, 1, none, b, beta, bend);
    beta = warp_first_false(v, b, beta, bend, 0, hull_at(v, a, alpha), b, beta, bend);
  }
  simt::sync_warp(); /* the lanes' reads of a's segments before its cut */
  if (lane == 0) a[alpha.t].last = alpha.p;
  for (int64_t t0 = beta.t; t0 < nb; t0 += SIMT_WARP) {
    int64_t t = t0 + lane;
    hull_segment g = t < nb ? b[t] : hull_segment{0, 0, 0};
    if (t == beta.t) g.first = beta.p;
    simt::sync_warp();
    if (t < nb) a[alpha.t + 1 + t - beta.t] = g;
    simt::sync_warp();
  }
  return alpha.t + 1 + nb - beta.t;
}

/* A warp per merge of the level (merge_node's entries, count of them). */
template <typename T>
SIMT_KERNEL void merge_warp_kernel(solver_view<T> v, int64_t span, const int64_t *node, int64_t count) {
  int64_t m = (int64_t)simt::block_idx().x * MERGE_WARPS + simt::warp();
  if (m >= count) return; /* the whole warp */
  int64_t g = node[m], r = v.chunk_row[g];
  if (row_failed(v, r)) return; /* the whole warp */
  if (v.rows[r].wide) { /* the whole warp */
    if (simt::lane() == 0) wide_merge(v, r, g - v.chunk_base[r], span);
    return;
  }
  hull_slots slots = view_slots(v, r);
  int64_t n = warp_hull_merge(&slots, v.seg + g, v.nseg[g], v.seg + g + span, v.nseg[g + span], v.cap);
  if (simt::lane() == 0) v.nseg[g] = n;
}

#endif

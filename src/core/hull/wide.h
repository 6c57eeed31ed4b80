/* The hull of a wide row (hull_is_wide), shared by the CPU hull engine and the CUDA kernels: a
 * monotone chain on the steps between vertices, not on the points, so that it keeps their
 * precision where the points' own sums dwarf them (as PAV's block sums). Built as the solver
 * builds hulls: a chain per chunk, in parallel; then neighbouring chains merged in levels (span
 * 1, 2, 4, ... chunks), a merge pooling the blocks about its middle as the one chain over both
 * would; then the levels, a chunk at a time.
 *
 * The chain is a row of blocks, an edge each, kept in place in the row's slot entries (every
 * chunk's slot of the row in turn: at least n + 1 entries, entry i for element i, so that the
 * chunks' entries are disjoint): a block [b, e) of one element keeps nothing, its step (w, w y)
 * is formed again from the element; a block of two or more keeps its step, a pair of pairs, at
 * entries b and b + 1 (W and S; W is the count where unweighted). Both ends link the block to
 * its other end: vi of entries b and e - 1 is its length, or 0 for a block too long for an
 * int32 (HULL_WIDE_LINK_MAX), whose end is then the S of entry b + 2 and start the S of entry
 * e - 1 (a double holds either exactly), entries no step of the block uses. So a walk along the
 * blocks reads only the links, which a GPU warp stages in shared memory (wide_rows.cuh).
 *
 * A merge records the block that it leaves across its middle (hull_wide_cross), so that the
 * block that holds a chunk's first element is found from the records of the merges above it.
 */
#ifndef GPUISO_HULL_WIDE_H
#define GPUISO_HULL_WIDE_H

#include <stddef.h>

#include "chunk.h"

/* The longest block linked by its length; longer ones through the slots (a test sets it low to
 * reach them, tools/ctest/test_wide_links.cpp). */
#ifndef HULL_WIDE_LINK_MAX
#define HULL_WIDE_LINK_MAX INT32_MAX
#endif
#if HULL_WIDE_LINK_MAX < 3
#error "HULL_WIDE_LINK_MAX: a block linked through the slots needs four entries"
#endif

/* The block [start, end) that a merge left across its middle; empty (start = end = the middle)
 * where none does. */
typedef struct {
  int64_t start, end;
} hull_wide_cross;

/* The first element (row-relative) of the block that ends before element e. */
static inline GPUISO_HD int64_t hull_wide_start(const hull_slots *v, int64_t e) {
  int64_t at = v->chunk0 * v->slot + e - 1, len = v->vi[at];
  return len > 0 ? e - len : (int64_t)*hull_slot_s(v, at);
}

/* The end of the block that starts at element b, whose start entry's link (its vi) is `link`. */
static inline GPUISO_HD int64_t hull_wide_end_at(const hull_slots *v, int64_t b, int32_t link) {
  return link > 0 ? b + link : (int64_t)*hull_slot_s(v, v->chunk0 * v->slot + b + 2);
}

/* The end of the block that starts at element b. */
static inline GPUISO_HD int64_t hull_wide_end(const hull_slots *v, int64_t b) {
  return hull_wide_end_at(v, b, v->vi[v->chunk0 * v->slot + b]);
}

static inline GPUISO_HD hull_point hull_wide_step(const hull_slots *v, int64_t b, int64_t e) {
  int64_t at = v->chunk0 * v->slot + b;
  if (e - b == 1) return hull_step(hull_y(v, v->first + b), hull_w(v, v->first + b), v->sign);
  hull_point d = {{v->weighted ? *hull_slot_w(v, at) : (double)(e - b), v->weighted ? *hull_slot_w(v, at + 1) : 0.0},
                  {*hull_slot_s(v, at), *hull_slot_s(v, at + 1)}};
  return d;
}

static inline GPUISO_HD void hull_wide_put(const hull_slots *v, int64_t b, int64_t e, hull_point step) {
  int64_t at = v->chunk0 * v->slot, len = e - b;
  if (len >= 2) {
    if (v->weighted) *hull_slot_w(v, at + b) = step.w.hi, *hull_slot_w(v, at + b + 1) = step.w.lo;
    *hull_slot_s(v, at + b) = step.s.hi, *hull_slot_s(v, at + b + 1) = step.s.lo;
  }
  int32_t link = (int32_t)(len <= HULL_WIDE_LINK_MAX ? len : 0);
  v->vi[at + b] = link, v->vi[at + e - 1] = link;
  if (link == 0) *hull_slot_s(v, at + b + 2) = (double)e, *hull_slot_s(v, at + e - 1) = (double)b;
}

/* Whether `step` pools into the block [under, b) of step top, in the chain over [from, ...): where
 * top's step turns right of it (or along it). An element of zero weight has step zero and so
 * joins the block on its left, as in the PAV engine (the first block, when it leads). The block
 * of zero weight that leads a chain not at the row's start takes no step of positive weight: its
 * elements join the block on their left when the chains merge. */
static inline GPUISO_HD int hull_wide_joins(int64_t from, int64_t under, hull_point top, hull_point step) {
  if (under == from && from > 0 && top.w.hi == 0 && step.w.hi != 0) return 0;
  return hull_turn(top, step) <= 0;
}

/* A block of a chain: its start and its step. */
typedef struct {
  int64_t start;
  hull_point step;
} hull_wide_block;

/* The step that hull_wide_step reads back of the block [b, e) put with `step` (a block of one
 * element forms it again from the element, as its step was formed). */
static inline GPUISO_HD hull_point hull_wide_kept(const hull_slots *v, int64_t b, int64_t e, hull_point step) {
  if (e - b >= 2 && !v->weighted) step.w.hi = (double)(e - b), step.w.lo = 0;
  return step;
}

/* Pools `step`, of the block about to end where the blocks of the chain over [from, b) end, into
 * those on its left while it joins them (hull_wide_joins); returns the pooled block's start.
 * under: the block that ends at b, where the caller holds it (else NULL: read from the slots). */
static inline GPUISO_HD int64_t hull_wide_pool(const hull_slots *v, int64_t from, int64_t b, hull_point *step,
                                               const hull_wide_block *under) {
  while (b > from) {
    hull_wide_block u;
    if (under) {
      u = *under, under = NULL;
    } else {
      u.start = hull_wide_start(v, b);
      u.step = hull_wide_step(v, u.start, b);
    }
    if (!hull_wide_joins(from, u.start, u.step, *step)) break;
    *step = hull_point_add(u.step, *step);
    b = u.start;
  }
  return b;
}

/* The chain over the row's elements [from, to) (a chunk's). The top block [top, i) is held, not
 * put, until a block is pushed on it: most elements join it and write nothing. ones_preset: the
 * chunk's links (vi) are all 1 already, so that a block of one element is not put (on a GPU, a
 * thread per chunk, each store takes a sector of the L2, the chain's bound). The block under
 * the top is held too while known (from its push until a pool takes it in), so that a pool that
 * stops at it reads nothing back from the slots (a load that stalls a GPU thread's chain). */
static inline GPUISO_HD void hull_wide_chain(const hull_slots *v, int64_t from, int64_t to, int ones_preset) {
  if (from >= to) return;
  int64_t top = from;
  hull_point held = hull_step(hull_y(v, v->first + from), hull_w(v, v->first + from), v->sign);
  hull_wide_block under;
  int known = 0;
  for (int64_t i = from + 1; i < to; i++) {
    hull_point step = hull_step(hull_y(v, v->first + i), hull_w(v, v->first + i), v->sign);
    if (hull_wide_joins(from, top, held, step)) {
      step = hull_point_add(held, step);
      int64_t b = hull_wide_pool(v, from, top, &step, known ? &under : NULL);
      known = known && b == top;
      top = b;
    } else {
      if (i - top > 1 || !ones_preset) hull_wide_put(v, top, i, held);
      under.start = top, under.step = hull_wide_kept(v, top, i, held);
      known = 1;
      top = i;
    }
    held = step;
  }
  if (to - top > 1 || !ones_preset) hull_wide_put(v, top, to, held);
}

/* Merges the chains over [from, mid) and [mid, to) into the chain over [from, to), in place: the
 * right chain's blocks in turn pool into the blocks on their left, as in the chain, until one
 * pools none (the blocks after it are the right chain's). Work in proportion to the blocks
 * pooled, plus one. *cross gets the block then across mid. */
static inline GPUISO_HD void hull_wide_merge(const hull_slots *v, int64_t from, int64_t mid, int64_t to,
                                             hull_wide_cross *cross) {
  hull_wide_cross c = {mid, mid};
  for (int64_t b = mid; b < to;) {
    int64_t e = hull_wide_end(v, b);
    hull_point step = hull_wide_step(v, b, e);
    int64_t start = hull_wide_pool(v, from, b, &step, NULL);
    if (start == b) break;
    hull_wide_put(v, start, e, step);
    c.start = start, c.end = e;
    b = e;
  }
  *cross = c;
}

/* The start of the merged chain's block that holds the first element of chunk j of m (chunk
 * elements each), from the merges' records (cross[k]: the merge whose middle is chunk k's first
 * element): before the merge at chunk j's start, no block crosses it; at that merge and each
 * above it, the block left across the merge's middle holds the element or leaves its block be. */
static inline GPUISO_HD int64_t hull_wide_first(const hull_wide_cross *cross, int64_t j, int64_t m, int64_t chunk) {
  int64_t i = j * chunk, b = i;
  for (int64_t span = j & -j; j > 0 && span < m; span *= 2) {
    int64_t mid = (j & ~(2 * span - 1)) + span; /* the middle of the merge at span over chunk j */
    if (mid < m && cross[mid].start <= i && i < cross[mid].end) b = cross[mid].start;
  }
  return b;
}

/* The level of the block [b, e): sign times its step's slope. */
static inline GPUISO_HD double hull_wide_level(const hull_slots *v, int64_t b, int64_t e) {
  hull_point d = hull_wide_step(v, b, e);
  return v->sign * hull_quotient(d.s, d.w);
}

#endif

/* The hull of a wide row (hull_is_wide), shared by the CPU hull engine and the CUDA kernels: one
 * monotone chain over the row that decides on the steps between vertices, not on the points,
 * so that it keeps their precision where the points' own sums dwarf them (as PAV's block sums).
 *
 * The chain is a stack of blocks, an edge each, kept in place in the row's slot entries (every
 * chunk's slot of the row in turn: at least n + 1 entries, entry i for element i): a block
 * [b, e) of one element keeps nothing, its step (w, w y) is formed again from the element; a
 * block of two or more keeps its step, a pair of pairs, at entries b and b + 1 (W and S; W is
 * the count where unweighted). Entry e - 1 links the block to its start: vi is its length, 1 or
 * 2, or 0 for longer blocks, whose start is then its S (a double holds it exactly), an entry
 * no step of the block uses.
 */
#ifndef GPUISO_HULL_WIDE_H
#define GPUISO_HULL_WIDE_H

#include "chunk.h"

/* The first element (row-relative) of the block that ends before element e. */
static inline GPUISO_HD int64_t hull_wide_start(const hull_slots *v, int64_t e) {
  int64_t at = v->chunk0 * v->slot + e - 1, len = v->vi[at];
  return len > 0 ? e - len : (int64_t)*hull_slot_s(v, at);
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
  v->vi[at + e - 1] = (int32_t)(len <= 2 ? len : 0);
  if (len > 2) *hull_slot_s(v, at + e - 1) = (double)b;
}

/* The chain over the row's n elements: a step turning right of (or along) the top block's joins
 * it, and the merged step is tested against the block under, until one turns left. An element
 * of zero weight has step zero and so joins the block on its left, as in the PAV engine (the
 * first block, when it leads). Returns the number of blocks. */
static inline GPUISO_HD int64_t hull_wide_chain(const hull_slots *v, int64_t n) {
  int64_t blocks = 0;
  for (int64_t i = 0; i < n; i++) {
    hull_point step = hull_step(hull_y(v, v->first + i), hull_w(v, v->first + i), v->sign);
    int64_t b = i;
    while (b > 0) {
      int64_t under = hull_wide_start(v, b);
      hull_point top = hull_wide_step(v, under, b);
      if (hull_turn(top, step) > 0) break;
      step = hull_point_add(top, step);
      b = under;
      blocks--;
    }
    hull_wide_put(v, b, i + 1, step);
    blocks++;
  }
  return blocks;
}

/* The block of the chain that ends before element e: *b gets its start; returns its level, sign
 * times its step's slope. */
static inline GPUISO_HD double hull_wide_block(const hull_slots *v, int64_t e, int64_t *b) {
  *b = hull_wide_start(v, e);
  hull_point d = hull_wide_step(v, *b, e);
  return v->sign * hull_quotient(d.s, d.w);
}

#endif

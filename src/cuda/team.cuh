/* The lanes that fit one row together, and their collectives (CUB's warp and block layers, sized
 * to a row of the lane kernels, short_rows.cuh):
 *   warp_team   the lanes [lane0, lane0 + lanes) of a warp, a power of two aligned to its size,
 *               several rows to a warp: shuffles only;
 *   block_team  the first `lanes` threads of a block (whole warps), one row, the other warps idle:
 *               shuffles within warps, a word per warp in shared memory across them;
 *   lane_team   either, by the block's size.
 * reduce gives every lane of the team the same bits (commutative steps in the same order; for
 * an operation that is not commutative to the bit, as double-double sums, take the total of
 * block_team's exclusive_scan); exclusive_scan gives each lane the values of the lanes before it,
 * combined in order. Every
 * thread of the warp (warp_team) or block (block_team) calls each collective, idle ones included,
 * so that the collectives keep step whatever a row's state; a team's `span` is the most lanes a
 * row can have in it, the bound of loops around collectives.
 */
#ifndef GPUISO_CUDA_TEAM_CUH
#define GPUISO_CUDA_TEAM_CUH

#include <string.h>

#include "simt.cuh"

/* Shuffles of any value made of 64-bit words (doubles, integers, points), word by word. */
template <typename V, class Shuffle>
static SIMT_DEVICE V shuffle_words(V x, Shuffle shuffle) {
  static_assert(sizeof(V) % sizeof(uint64_t) == 0, "a value of whole 64-bit words");
  uint64_t word[sizeof(V) / sizeof(uint64_t)];
  memcpy(word, &x, sizeof x);
  for (unsigned k = 0; k < sizeof word / sizeof word[0]; k++) word[k] = shuffle(word[k]);
  memcpy(&x, word, sizeof x);
  return x;
}

template <typename V>
static SIMT_DEVICE V shfl_up_value(V x, unsigned delta) {
  return shuffle_words(x, [delta](uint64_t u) { return simt::shfl_up(SIMT_FULL_MASK, u, delta); });
}

template <typename V>
static SIMT_DEVICE V shfl_xor_value(V x, int lane_mask) {
  return shuffle_words(x, [lane_mask](uint64_t u) { return simt::shfl_xor(SIMT_FULL_MASK, u, lane_mask); });
}

struct warp_team {
  int lane0, lanes; /* lanes 0: an idle lane */
  static const int span = SIMT_WARP;

  SIMT_DEVICE void sync() const { simt::sync_warp(); }

  /* Whether x holds in any lane of the warp, every team of it: the kernels of warp teams run a
   * warp a block. */
  SIMT_DEVICE int block_any(int x) const { return simt::ballot(SIMT_FULL_MASK, x) != 0; }

  /* An xor butterfly over the team's lanes. */
  template <typename V, class Op>
  SIMT_DEVICE V reduce(V x, Op op) const {
    for (int m = 1; m < SIMT_WARP; m *= 2) {
      V o = shfl_xor_value(x, m);
      if (m < lanes) x = op(x, o);
    }
    return x;
  }

  template <typename V, class Op>
  SIMT_DEVICE V exclusive_scan(V x, Op op, V identity) const {
    int q = (int)simt::lane() - lane0;
    for (unsigned d = 1; d < SIMT_WARP; d *= 2) {
      V o = shfl_up_value(x, d);
      if (q >= (int)d) x = op(o, x);
    }
    V before = shfl_up_value(x, 1);
    return q == 0 ? identity : before;
  }
};

/* A block's row: scratch holds a value per warp of the block (the largest value a collective
 * carries: BLOCK_TEAM_WORD bytes). */
#define BLOCK_TEAM_WORD 32

struct block_team {
  int lanes;             /* a multiple of the warp */
  unsigned char *scratch; /* shared: BLOCK_TEAM_WORD bytes per warp of the block */
  int span;              /* the block's threads */

  SIMT_DEVICE void sync() const { simt::sync_block(); }

  /* Whether x holds in any thread of the block (all `span` of them, idle ones too). */
  SIMT_DEVICE int block_any(int x) const {
    int any = simt::ballot(SIMT_FULL_MASK, x) != 0, *slot = slots<int>();
    if (simt::lane() == 0) slot[simt::warp()] = any;
    simt::sync_block();
    for (int t = 0; t < span / SIMT_WARP; t++) any |= slot[t];
    simt::sync_block(); /* the slots are free again */
    return any;
  }

  template <typename V>
  SIMT_DEVICE V *slots() const {
    static_assert(sizeof(V) <= BLOCK_TEAM_WORD, "a value of a scratch word");
    return reinterpret_cast<V *>(scratch);
  }

  template <typename V, class Op>
  SIMT_DEVICE V reduce(V x, Op op) const {
    for (int m = 1; m < SIMT_WARP; m *= 2) x = op(x, shfl_xor_value(x, m));
    V *slot = slots<V>();
    if (simt::lane() == 0) slot[simt::warp()] = x;
    simt::sync_block();
    V r = slot[0];
    for (int t = 1; t < lanes / SIMT_WARP; t++) r = op(r, slot[t]);
    simt::sync_block(); /* the slots are free again */
    return r;
  }

  template <typename V, class Op>
  SIMT_DEVICE V exclusive_scan(V x, Op op, V identity) const {
    V total;
    return exclusive_scan(x, op, identity, &total);
  }

  /* ... and the combination of all the team's values, the same bits in every thread. */
  template <typename V, class Op>
  SIMT_DEVICE V exclusive_scan(V x, Op op, V identity, V *total) const {
    unsigned lane = simt::lane(), warp = simt::warp();
    for (unsigned d = 1; d < SIMT_WARP; d *= 2) {
      V o = shfl_up_value(x, d);
      if (lane >= d) x = op(o, x);
    }
    V *slot = slots<V>();
    if (lane == SIMT_WARP - 1) slot[warp] = x;
    simt::sync_block();
    V prefix = identity, all = slot[0];
    for (unsigned t = 0; t < warp; t++) prefix = op(prefix, slot[t]);
    for (int t = 1; t < lanes / SIMT_WARP; t++) all = op(all, slot[t]);
    simt::sync_block();
    *total = all;
    V before = shfl_up_value(x, 1);
    return lane == 0 ? prefix : op(prefix, before);
  }
};

/* The team of a lane kernel whose blocks are either one warp (a warp_team: rows packed several to
 * it) or whole warps for one row (a block_team), by the block's size: one kernel serves both, each
 * collective choosing alike in every thread of the block, the lane hulls and merges between them
 * the same code (short_rows.cuh). */
struct lane_team {
  warp_team warp;
  block_team block;
  int span; /* the block's threads, as block's */

  SIMT_DEVICE int one_warp() const { return span == SIMT_WARP; }
  SIMT_DEVICE void sync() const { one_warp() ? warp.sync() : block.sync(); }
  SIMT_DEVICE int block_any(int x) const { return one_warp() ? warp.block_any(x) : block.block_any(x); }

  template <typename V, class Op>
  SIMT_DEVICE V reduce(V x, Op op) const {
    return one_warp() ? warp.reduce(x, op) : block.reduce(x, op);
  }

  template <typename V, class Op>
  SIMT_DEVICE V exclusive_scan(V x, Op op, V identity) const {
    return one_warp() ? warp.exclusive_scan(x, op, identity) : block.exclusive_scan(x, op, identity);
  }
};

/* The last candidate c in (lo, hi] whose pred(c) holds, or lo where none does, for a predicate
 * that holds and then fails along the range: each step the warp's lanes test 32 candidates spread
 * over it, and a ballot narrows it to the one between the last that holds and the first that
 * fails, some 33 times smaller (a bisection takes five steps for one of these). Every lane of the
 * warp calls it, and all get the same. */
template <class Pred>
static SIMT_DEVICE int64_t warp_last_true(int64_t lo, int64_t hi, Pred pred) {
  unsigned lane = simt::lane();
  while (lo < hi) {
    int64_t c = lo + ((hi - lo) * (lane + 1) + SIMT_WARP - 1) / SIMT_WARP; /* lane 31's is hi */
    int yes = simt::popc(simt::ballot(SIMT_FULL_MASK, pred(c)));
    int64_t below = simt::shfl(SIMT_FULL_MASK, c, yes > 0 ? yes - 1 : 0);
    int64_t above = simt::shfl(SIMT_FULL_MASK, c, yes < SIMT_WARP ? yes : SIMT_WARP - 1);
    hi = yes < SIMT_WARP ? above - 1 : hi;
    lo = yes > 0 ? below : lo;
  }
  return lo;
}

#endif

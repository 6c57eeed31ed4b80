/* The rows over BLOCK_ROW_MAX that the chunk hulls flag wide (hull_is_wide: their points may not
 * hold their steps), fitted as the CPU engine fits them (hull/wide.h), to the same bits: a thread
 * per chunk builds the chunk's chain on the steps in the row's slots; the merge levels
 * (merge_level.cuh) merge a wide row's chains, a thread per merge, each merge's record kept in
 * the row's segment descriptors (which its chunks' hulls no longer need); then a thread per chunk
 * finds the block that holds its first element from those records and gives each of its elements
 * its block's level. The reconstruction (fit_step) passes these rows by.
 *
 * The fast path gives the levels a warp per chunk (wide_level_warp_kernel): a thread per chunk
 * took the walk along its blocks' links from global memory one load at a time, and stored the
 * levels 32 chunks apart, a cache line each (2.8 ms of the increasing row of 1e8 on an H200).
 */
#ifndef GPUISO_CUDA_WIDE_ROWS_CUH
#define GPUISO_CUDA_WIDE_ROWS_CUH

#include "reconstruct.cuh"
#include "team.cuh"
#include "view.cuh"

/* Row r's merge records, an entry a chunk (in the 24 bytes of its segment descriptor). */
template <typename T>
static inline GPUISO_HD hull_wide_cross *wide_cross(const solver_view<T> &v, int64_t r) {
  return (hull_wide_cross *)(v.seg + v.chunk_base[r]);
}

/* Per chunk of a wide row: its chain. */
template <typename T>
struct wide_chain_step {
  solver_view<T> v;
  int ones_preset; /* hull_wide_chain's: wide_chain_kernel's */
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t from, to, r = chunk_range(v, g, &from, &to);
    if (!v.rows[r].wide) return;
    hull_slots slots = view_slots(v, r);
    hull_wide_chain(&slots, from - v.offsets[r], to - v.offsets[r], ones_preset);
  }
};

/* wide_chain_step for 32 chunks a warp, lane L chunk 32 w + L of warp w (of the grid), for
 * wide_level_warp_kernel, which stages every link (vi) of a chunk's elements (the chain writes
 * only its blocks' ends): the warp first sets them to 1 in its wide chunks, striped, so that the
 * chain need not link its blocks of one element (hull_wide_chain's ones_preset), most of the
 * blocks of the rows that are wide for their length alone. */
template <typename T>
SIMT_KERNEL void wide_chain_kernel(solver_view<T> v) {
  int64_t g0 = ((int64_t)simt::block_idx().x * FIT_WARPS + simt::warp()) * SIMT_WARP;
  int lane = (int)simt::lane();
  for (int64_t g = g0; g < g0 + SIMT_WARP && g < v.nchunks; g++) {
    int64_t from, to, r = chunk_range(v, g, &from, &to);
    if (!v.rows[r].wide) continue;
    hull_slots slots = view_slots(v, r);
    int32_t *links = slots.vi + slots.chunk0 * slots.slot + (from - v.offsets[r]);
    for (int64_t k = lane; k < to - from; k += SIMT_WARP) links[k] = 1;
  }
  simt::sync_warp();
  if (g0 + lane < v.nchunks) wide_chain_step<T>{v, 1}(g0 + lane);
}

/* The merge at span of wide row r's chains at chunks g and g + span (chunk j of the row). */
template <typename T>
static SIMT_DEVICE void wide_merge(const solver_view<T> &v, int64_t r, int64_t j, int64_t span) {
  int64_t len = v.offsets[r + 1] - v.offsets[r], to = (j + 2 * span) * v.chunk;
  hull_slots slots = view_slots(v, r);
  hull_wide_merge(&slots, j * v.chunk, (j + span) * v.chunk, to < len ? to : len, wide_cross(v, r) + j + span);
}

/* Per chunk of a wide row: the levels of its elements, and the solver's blocks. */
template <typename T>
struct wide_level_step {
  solver_view<T> v;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t from, to, r = chunk_range(v, g, &from, &to);
    if (!v.rows[r].wide) return;
    hull_slots slots = view_slots(v, r);
    int64_t o = v.offsets[r], m = v.chunk_base[r + 1] - v.chunk_base[r];
    for (int64_t b = hull_wide_first(wide_cross(v, r), g - v.chunk_base[r], m, v.chunk), e; o + b < to; b = e) {
      e = hull_wide_end(&slots, b);
      T z = (T)clip(hull_wide_level(&slots, b, e), v.lo, v.hi);
      int64_t i = o + b > from ? o + b : from, stop = o + e < to ? o + e : to;
      for (int64_t k = i; k < stop; k++) v.fit[k] = z;
      if (v.edge_start)
        for (int64_t k = i; k < stop; k++) v.edge_start[k] = k == o + b;
    }
  }
};

/* The first block start after element offset q of a chunk (offsets from the chunk's first
 * element; q may be before it) among the starts marked in the chunk's mask (a bit an element,
 * n elements), or -1 where none is. */
static SIMT_DEVICE int wide_next_start(const unsigned *marks, int64_t q, int64_t n) {
  int64_t p = q < 0 ? 0 : q + 1;
  for (int k = (int)(p / SIMT_WARP); k * SIMT_WARP < n; k++) {
    unsigned word = k == p / SIMT_WARP ? marks[k] & (~0u << (p % SIMT_WARP)) : marks[k];
    if (word) return k * SIMT_WARP + simt::ffs(word) - 1;
  }
  return -1;
}

/* wide_level_step for chunk t of up to FIT_TILE elements, by a warp, to the same bits. The warp
 * stages the chunk's links (the slot entries' vi, one per element) in its tile and walks the
 * blocks from the one that holds the chunk's first element (hull_wide_first), 32 elements (a
 * word) at a time, all lanes together: a ballot marks the word's blocks of one element, so that
 * a run of them is one step of the walk (every element of the increasing row of 1e8 in doubles
 * is its own block: a lane walking alone issued 55,000 instructions a chunk), and a longer block
 * takes the link of its start from its lane (its length; only a block too long for an int32
 * reads its end from the slots). Lane L keeps word L's mask of block starts, a bit an element.
 * Lane L then takes the elements 32 L to 32 L + 31, as
 * fit_warp_kernel's lanes take theirs: the block that holds its first element is the last start
 * before it (a scan over the lanes' words of the mask), each block ends at the next start, and
 * each block's level (hull_wide_level) goes to its elements in the tile (which the links no
 * longer need), written out striped. */
template <typename T>
SIMT_KERNEL void wide_level_warp_kernel(solver_view<T> v, int64_t count) {
  SIMT_SHARED(T, tiles, FIT_WARPS * FIT_TILE);
  SIMT_SHARED(unsigned, mark_tiles, FIT_WARPS * SIMT_WARP);
  static_assert(sizeof(T) >= sizeof(int32_t), "a link in a tile's element");
  int64_t t = (int64_t)simt::block_idx().x * FIT_WARPS + simt::warp(), from, to;
  if (t >= count) return;
  int64_t r = piece_range(v, t, FIT_TILE, &from, &to);
  if (from == to || !v.rows[r].wide) return; /* the whole warp */
  T *tile = tiles + simt::warp() * FIT_TILE;
  int32_t *links = (int32_t *)tile;
  unsigned *marks = mark_tiles + simt::warp() * SIMT_WARP;
  int lane = (int)simt::lane();
  hull_slots slots = view_slots(v, r);
  int64_t o = v.offsets[r], f = from - o, n = to - from, at = slots.chunk0 * slots.slot + f;
  for (int64_t k = lane; k < n; k += SIMT_WARP) links[k] = v.vi[at + k];
  int64_t m = v.chunk_base[r + 1] - v.chunk_base[r]; /* the row's chunks; tile t is chunk t */
  int64_t first = hull_wide_first(wide_cross(v, r), t - v.chunk_base[r], m, v.chunk);
  simt::sync_warp();
  int64_t walk = first < f ? hull_wide_end(&slots, first) - f : 0; /* the next block start, from element f */
  unsigned mine = 0;
  for (int64_t base = 0; base < n; base += SIMT_WARP) {
    int32_t link = base + lane < n ? links[base + lane] : 0;
    unsigned ones = simt::ballot(SIMT_FULL_MASK, link == 1), word = 0;
    while (walk < base + SIMT_WARP && walk < n) {
      int q = (int)(walk - base);
      unsigned rest = ~(ones >> q); /* its zeros: the run of blocks of one element from q */
      int run = rest ? simt::ffs(rest) - 1 : SIMT_WARP;
      if (run > 0) {
        word |= (run == SIMT_WARP ? ~0u : (1u << run) - 1) << q;
        walk += run;
      } else {
        word |= 1u << q;
        walk = hull_wide_end_at(&slots, f + walk, simt::shfl(SIMT_FULL_MASK, link, q)) - f;
      }
    }
    if (lane == base / SIMT_WARP) mine = word;
  }
  marks[lane] = mine;
  simt::sync_warp();
  warp_team team = {0, SIMT_WARP};
  int64_t last = mine ? lane * SIMT_WARP + 31 - simt::clz(mine) : -1;
  last = team.exclusive_scan(last, [](int64_t a, int64_t c) { return a > c ? a : c; }, (int64_t)-1);
  int64_t p = lane * SIMT_WARP, end = p + SIMT_WARP < n ? p + SIMT_WARP : n;
  int64_t b = mine & 1 ? f + p : last >= 0 ? f + last : first;
  while (p < end) {
    int next = wide_next_start(marks, b - f, n);
    int64_t e = next >= 0 ? f + next : hull_wide_end(&slots, b);
    T z = (T)clip(hull_wide_level(&slots, b, e), v.lo, v.hi);
    for (; p < end && p < e - f; p++) tile[lane * SIMT_WARP + ((p % SIMT_WARP) ^ lane)] = z;
    b = e;
  }
  simt::sync_warp();
  for (int k = 0; k < SIMT_WARP && k * SIMT_WARP + lane < n; k++) {
    int64_t i = from + k * SIMT_WARP + lane;
    v.fit[i] = tile[k * SIMT_WARP + (lane ^ k)];
    if (v.edge_start) v.edge_start[i] = marks[k] >> lane & 1;
  }
}

#endif

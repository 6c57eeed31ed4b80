/* The reconstruction: a thread per piece of a chunk (the simple path: a thread per chunk) finds
 * its row's root hull vertex at or before its first element and gives every element the level of
 * the edge above it (as hull.c); the solver's blocks (solver_blocks) are those edges, flagged
 * here. Then, as in the CPU engine, a level that rounding put on the wrong side of the one before
 * takes that one (rare: for each flagged row), and otherwise block starts are where the level
 * changes.
 *
 * The fast path runs these passes a warp per tile of FIT_TILE elements of a chunk (a chunk of
 * 1024 is one tile). In fit_warp_kernel a lane takes a piece of 32 consecutive elements, as a
 * thread of the simple path takes its chunk; the lanes' stores of one step would then be 32
 * elements apart, a cache line each. Instead each lane puts its levels in the warp's tile in
 * shared memory, and the warp writes the tile out striped, lane L the elements L, L + 32, ...:
 * each store of the warp is 32 consecutive elements (CUB's warp store through a transpose). The
 * passes over the levels read and write striped outright.
 */
#ifndef GPUISO_CUDA_RECONSTRUCT_CUH
#define GPUISO_CUDA_RECONSTRUCT_CUH

#include "launch.cuh"
#include "team.cuh"
#include "view.cuh"

#define FIT_TILE (SIMT_WARP * SIMT_WARP) /* the elements of a warp of the fast path's passes */
#define FIT_WARPS 4                      /* tiles a block of them takes */

template <typename T>
struct fit_step {
  solver_view<T> v;
  int64_t piece;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t i, end;
    int64_t r = piece_range(v, g, piece, &i, &end);
    if (i == end || v.rows[r].wide || row_failed(v, r)) return; /* a wide row's levels are wide_level_step's */
    const hull_segment *root = v.seg + v.chunk_base[r];
    hull_slots slots = view_slots(v, r);
    hull_pos q = hull_locate(&slots, root, v.nseg[v.chunk_base[r]], i);
    while (i < end) {
      int64_t ri;
      int head = hull_block_start(&slots, root, q, i, v.offsets[r]);
      T z = (T)clip(hull_edge(&slots, root, q, v.sign, &q, &ri), v.lo, v.hi);
      int64_t stop = ri < end ? ri : end;
      if (v.edge_start)
        for (int64_t k = i; k < stop; k++) v.edge_start[k] = k == i && head;
      for (; i < stop; i++) v.fit[i] = z;
    }
  }
};

/* Per piece: flags its row when a level steps against the direction, the element before the
 * piece included. */
template <typename T>
struct steps_step {
  solver_view<T> v;
  int64_t piece;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t from, to;
    int64_t r = piece_range(v, g, piece, &from, &to);
    if (row_failed(v, r)) return;
    for (int64_t i = from > v.offsets[r] ? from : from + 1; i < to; i++) {
      if (steps_against(v, v.fit[i - 1], v.fit[i])) {
        raise_flag(&v.rows[r].stepped);
        return;
      }
    }
  }
};

/* Per flagged row: a running maximum (minimum, decreasing). */
template <typename T>
struct unstep_step {
  solver_view<T> v;
  SIMT_DEVICE void operator()(int64_t r) const {
    if (!v.rows[r].stepped) return;
    for (int64_t i = v.offsets[r] + 1; i < v.offsets[r + 1]; i++)
      if (steps_against(v, v.fit[i - 1], v.fit[i])) v.fit[i] = v.fit[i - 1];
  }
};

/* Per piece: 1 at the first element of each block. */
template <typename T>
struct block_start_step {
  solver_view<T> v;
  int64_t piece;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t from, to;
    int64_t r = piece_range(v, g, piece, &from, &to);
    if (row_failed(v, r)) return;
    for (int64_t i = from; i < to; i++) v.start[i] = i == v.offsets[r] || v.fit[i] != v.fit[i - 1];
  }
};

/* The fast path's passes: tile t (piece_range's piece t of FIT_TILE elements), the whole warp out
 * where t is past the last tile. */

/* hull_locate_in with a warp (warp_last_true, over the segments and then within one): every lane
 * gets the same vertex, in a few steps of 32 loads at once where a lane's bisection takes one
 * load after another. */
static SIMT_DEVICE hull_pos warp_locate_in(const hull_slots *v, const hull_segment *list, hull_pos lo, hull_pos hi,
                                           int64_t i) {
  int64_t t = warp_last_true(lo.t, hi.t, [&](int64_t c) {
    return hull_entry_index(v, list[c].chunk * v->slot + list[c].first) <= i;
  });
  int64_t base = list[t].chunk * v->slot;
  hull_pos q = {t, warp_last_true(hull_span_first(list, t, lo), hull_span_last(list, t, hi),
                                  [&](int64_t c) { return hull_entry_index(v, base + c) <= i; })};
  return q;
}

/* The levels of tile t's elements and their solver block flags: lane L's piece of 32 from
 * element 32 L, walked as fit_step walks it (the same calls on the same vertices, so the same
 * bits), an element a step so that the lanes' stores to the tile go together. The tile holds
 * lane L's element j at L * 32 + (j ^ L): the lanes' stores of a step, and the warp's loads of
 * a row of 32, fall in different banks (doubles: a half warp's). */
template <typename T>
SIMT_KERNEL void fit_warp_kernel(solver_view<T> v, int64_t count) {
  SIMT_SHARED(T, tiles, FIT_WARPS * FIT_TILE);
  SIMT_SHARED(unsigned, head_tiles, FIT_WARPS * SIMT_WARP); /* a lane's flags, a bit an element */
  int64_t t = (int64_t)simt::block_idx().x * FIT_WARPS + simt::warp(), from, to;
  if (t >= count) return;
  int64_t r = piece_range(v, t, FIT_TILE, &from, &to);
  if (from == to || v.rows[r].wide || row_failed(v, r)) return; /* the whole warp; a wide row's levels are wide_level_step's */
  T *tile = tiles + simt::warp() * FIT_TILE;
  unsigned *heads = head_tiles + simt::warp() * SIMT_WARP;
  int lane = (int)simt::lane();
  unsigned mine = 0;
  int64_t i = from + lane * SIMT_WARP, end = i + SIMT_WARP < to ? i + SIMT_WARP : to;
  const hull_segment *root = v.seg + v.chunk_base[r];
  hull_slots slots = view_slots(v, r);
  /* The root's vertices at the tile's first and last elements, found by the warp (the latter only
   * where the former's edge ends within the tile); each lane's lies between them: one vertex in
   * most tiles, as many as elements in the most. */
  hull_pos last = hull_list_last(root, v.nseg[v.chunk_base[r]]);
  hull_pos lo = warp_locate_in(&slots, root, hull_list_first(root), last, from), hi = lo;
  if (hull_before(lo, last) && hull_index(&slots, root, hull_next(root, lo)) < to)
    hi = warp_locate_in(&slots, root, hull_next(root, lo), last, to - 1);
  if (i < end) {
    hull_pos q = hull_locate_in(&slots, root, lo, hi, i);
    int64_t ri = i; /* where the edge from q ends: here, the first edge is yet to take */
    T z = 0;
    for (int j = 0; j < SIMT_WARP && i + j < end; j++) {
      if (ri <= i + j) {
        int head;
        do { /* past any edge that ends at once, as fit_step's loop passes it */
          head = hull_block_start(&slots, root, q, i + j, v.offsets[r]);
          z = (T)clip(hull_edge(&slots, root, q, v.sign, &q, &ri), v.lo, v.hi);
        } while (ri <= i + j);
        mine |= (unsigned)head << j;
      }
      tile[lane * SIMT_WARP + (j ^ lane)] = z;
    }
  }
  heads[lane] = mine;
  simt::sync_warp();
  for (int k = 0; k < SIMT_WARP && from + k * SIMT_WARP + lane < to; k++) {
    int64_t e = from + k * SIMT_WARP + lane;
    v.fit[e] = tile[k * SIMT_WARP + (lane ^ k)];
    if (v.edge_start) v.edge_start[e] = heads[k] >> lane & 1;
  }
}

/* steps_step's flags: the comparisons of tile t's elements with the ones before them, all of them
 * (stopping at the first step made each load wait for the comparison before it). */
template <typename T>
SIMT_KERNEL void steps_warp_kernel(solver_view<T> v, int64_t count) {
  int64_t t = (int64_t)simt::block_idx().x * FIT_WARPS + simt::warp(), from, to;
  if (t >= count) return;
  int64_t r = piece_range(v, t, FIT_TILE, &from, &to);
  if (row_failed(v, r)) return; /* the whole warp */
  int64_t row_first = v.offsets[r];
  int stepped = 0;
  for (int64_t i = from + simt::lane(); i < to; i += SIMT_WARP)
    stepped |= i > row_first && steps_against(v, v.fit[i - 1], v.fit[i]);
  if (simt::any(SIMT_FULL_MASK, stepped) && simt::lane() == 0) raise_flag(&v.rows[r].stepped);
}

/* block_start_step's flags of tile t's elements. */
template <typename T>
SIMT_KERNEL void block_start_warp_kernel(solver_view<T> v, int64_t count) {
  int64_t t = (int64_t)simt::block_idx().x * FIT_WARPS + simt::warp(), from, to;
  if (t >= count) return;
  int64_t r = piece_range(v, t, FIT_TILE, &from, &to);
  if (row_failed(v, r)) return; /* the whole warp */
  for (int64_t i = from + simt::lane(); i < to; i += SIMT_WARP)
    v.start[i] = i == v.offsets[r] || v.fit[i] != v.fit[i - 1];
}

/* One of the fast path's passes over the view's tiles (none without chunks). */
template <class Exec, typename T>
static gpuiso_status tile_launch(Exec &ex, const char *name, void (*kernel)(solver_view<T>, int64_t),
                                 solver_view<T> v) {
  int64_t count = v.nchunks * ((v.chunk + FIT_TILE - 1) / FIT_TILE);
  if (count == 0) return GPUISO_OK;
  return ex.launch(name, kernel, grid_of((count + FIT_WARPS - 1) / FIT_WARPS), dim3(FIT_WARPS * SIMT_WARP),
                   0, v, count);
}

#endif

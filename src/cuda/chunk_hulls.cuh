/* The fast path's chunk stage for rows over BLOCK_ROW_MAX (paper, section 3.3). A warp per chunk
 * sums it, each lane every 32nd element (coalesced), the lanes' totals reduced; a warp per chunk
 * of up to a warp's 1024 elements builds the chunk's hull as the lane kernels build a short row's
 * (short_rows.cuh: the elements staged in shared memory, lane hulls in bit masks, merged in
 * rounds) on its chunk-relative points, and writes it once to the chunk's vertex slot
 * (hull/slots.h): each lane its mask's vertices, at the place the scan of the lanes' counts gives,
 * the last lane the chunk's end point. The chunk's node of the merge tree is the one segment of
 * that hull, as chunk_hull_step's. A chunk that makes its row wide (hull_is_wide) flags the row,
 * as chunk_hull_step does, for wide_rows.cuh. As the lane kernels, a filtered instance and an
 * exact one for the chunks that it leaves (lane_retry).
 */
#ifndef GPUISO_CUDA_CHUNK_HULLS_CUH
#define GPUISO_CUDA_CHUNK_HULLS_CUH

#include "short_rows.cuh"

#define TOTALS_WARPS 8 /* chunks a block of chunk_totals_kernel sums */
#define TOTALS_LOADS 4 /* 16-byte groups a lane loads before it adds them: loads in flight for the bandwidth */

/* Per chunk: its totals at scale 1, validating its elements (totals_step's, in another order).
 * The lanes take the chunk's 16-byte groups aligned in memory in turn (lane q groups q, q + 32,
 * ..., as row_groups: a warp's load is 512 consecutive bytes, a float4 or a double2 a lane), each
 * lane TOTALS_LOADS groups at once (a float32 chunk of 1,024 aligned in two rounds: 64 bytes a
 * lane in flight, twice the 8 floats before, at 70 to 76 registers where 8 groups took 110 to
 * 114), then adds their elements in order. An element a load, 8 at once, took 0.334 ms for 1e8
 * floats on an H200 (tools/bench/RESULTS.md, 2026-12-04), a quarter of its bandwidth. */
template <typename T>
SIMT_KERNEL void chunk_totals_kernel(solver_view<T> v) {
  const int G = ELEMENT_GROUP(T);
  int64_t g = (int64_t)simt::block_idx().x * TOTALS_WARPS + simt::warp();
  unsigned lane = simt::lane();
  chunk_total c = chunk_total_none();
  c.bad = INT64_MAX;
  if (g < v.nchunks) {
    int64_t from, to;
    chunk_range(v, g, &from, &to);
    const T *y = v.y + from, *w = v.w ? v.w + from : NULL;
    int64_t n = to - from, round = TOTALS_LOADS * SIMT_WARP * G; /* elements a round of the warp's loads */
    for (int64_t e0 = (int64_t)lane * G - group_lead(y); e0 < n && c.bad == INT64_MAX; e0 += round) {
      T yg[TOTALS_LOADS][G], wg[TOTALS_LOADS][G];
      for (int u = 0; u < TOTALS_LOADS; u++) {
        int64_t e = e0 + u * SIMT_WARP * G;
        element_group(y, e, n, yg[u]);
        if (w) element_group(w, e, n, wg[u]);
      }
      for (int u = 0; u < TOTALS_LOADS && c.bad == INT64_MAX; u++)
        for (int h = 0; h < G; h++) {
          int64_t i = e0 + u * SIMT_WARP * G + h;
          if (i < 0 || i >= n) continue;
          int added = w ? chunk_total_add(&c, (double)yg[u][h], (double)wg[u][h], 1.0, v.sign)
                        : chunk_total_add_unit(&c, (double)yg[u][h], v.sign);
          if (!added) {
            c.bad = from + i;
            break;
          }
        }
    }
  }
  warp_team warp = {0, SIMT_WARP};
  c = warp.reduce(c, [](chunk_total a, chunk_total b) {
    chunk_total t = {dd_add(a.w, b.w), dd_add(a.s, b.s), a.sum_abs + b.sum_abs,
                     a.max_w > b.max_w ? a.max_w : b.max_w, a.min_w < b.min_w ? a.min_w : b.min_w,
                     a.bad < b.bad ? a.bad : b.bad};
    return t;
  });
  if (c.bad == INT64_MAX) c.bad = -1;
  if (g < v.nchunks && lane == 0) v.tot[g] = c; /* the lanes' sums differ in their last bits */
}

/* The last point that coincides with point k of the chunk [from, to): past the zero weights
 * after it. */
template <typename T>
static SIMT_DEVICE int64_t coinciding_end(const solver_view<T> &v, int64_t from, int64_t to, int64_t k) {
  while (v.w && from + k < to && v.w[from + k] == 0) k++;
  return k;
}

/* The dynamic shared memory of chunk_hulls_kernel: a chunk's points, the masks (9.75 KB unweighted,
 * 18.4 KB weighted). */
static inline GPUISO_HD size_t chunk_hulls_shared(int weighted) { return lane_shared_bytes(SIMT_WARP, weighted, 0); }

/* Chunk g's hull (chunk_hulls_kernel); 0 where left to the exact kernel (lane_hulls). */
template <typename T, class Sums, bool Weighted, bool Exact>
static SIMT_DEVICE int chunk_hull(const solver_view<T> &v, int64_t g) {
  unsigned char *scratch;
  short_shared sh = lane_shared_at<Weighted>(simt::dynamic_shared<unsigned char>(), SIMT_WARP, 0, &scratch);
  int64_t from, to;
  int64_t r = chunk_range(v, g, &from, &to);
  int n = (int)(to - from); /* up to SHORT_ROW_MAX */
  if (row_failed(v, r)) return 1; /* the whole warp */
  if (chunk_makes_wide(v, g, r)) { /* the whole warp */
    if (simt::lane() == 0) raise_flag(&v.rows[r].wide);
    return 1;
  }
  int lanes = short_row_lanes(n), q = (int)simt::lane();
  short_lane me = q < lanes ? lane_in_row(r, from, n, 0, lanes, q) : idle_lane();
  warp_team team = {0, lanes};
  int ok = me.row >= 0;
  hull_slots hs = lane_slots(v, sh, me, v.rows[r].scale); /* the chunk-relative points, as the slots keep them */
  lane_stage<T, warp_team, Weighted>(v, sh, team, me);
  lane_points_as<T, warp_team, Sums, Weighted>(v, sh, team, me, ok, v.rows[r].scale);
  if (!lane_hulls<Weighted, Exact>(sh, hs, team, me, ok)) return 0;

  /* the vertices in order: each lane's mask bits, then the end point. Points that coincide (zero
   * weights between them) are one vertex, with the last point's index, as hull_push keeps it: the
   * merges in rounds may have kept another of them (unweighted, none coincide). Each point
   * chunk-relative, its exact sums where it was rounded: where any was, every lane forms all of
   * its vertices again in one pass over its elements, staged again in shared memory, not one
   * global load after another (the same sums as its points' pairs, so the same vertices). */
  unsigned mask = ok && me.count > 0 ? sh.masks[q] : 0u, keep = mask;
  for (unsigned m = Weighted ? mask : 0u; m; m &= m - 1) {
    int k = q * SIMT_WARP + simt::ffs(m) - 1;
    if (short_next_vertex(sh, me, k, me.used, n) <= coinciding_end(v, from, to, k)) keep &= ~(m & -m);
  }
  int last = ok && q == me.used - 1; /* the lane that writes the end point */
  unsigned rounded = ok && me.count > 0 ? sh.rounded[q] : 0u; /* bit k - 1: point k */
  int again = team.block_any((rounded & keep >> 1) != 0 || (last && short_vertex(sh, me, n).rounded));
  hull_slots sums = again ? lane_restage<T, warp_team, Weighted>(v, sh, team, me, hs) : hs;
  hull_point run = {{0, 0}, {0, 0}}; /* the sums to the lane's last vertex, its point index k0 */
  int64_t k0 = 0;
  int64_t at = team.exclusive_scan((int64_t)simt::popc(keep), [](int64_t a, int64_t b) { return a + b; }, (int64_t)0);
  hull_slots slots = view_slots(v, r);
  int64_t e0 = g * slots.slot;
  auto put = [&](int k, int64_t index) { /* point k, the vertex of element `index`, to the next entry */
    hull_vertex p = short_vertex(sh, me, k);
    p.rounded |= again;
    p = hull_vertex_exact_from(&sums, p, run, k0, 1);
    run = p.rel, k0 = p.k;
    hull_slot_put(&slots, e0 + at++, hull_vertex_point(&hs, p, 0), index);
  };
  for (unsigned m = keep; m; m &= m - 1) {
    int k = q * SIMT_WARP + simt::ffs(m) - 1;
    put(k, coinciding_end(v, from, to, k));
  }
  if (last) {
    put(n, n);
    chunk_node(v, g, at);
  }
  return 1;
}

/* A warp per chunk (a block each): not Exact, the chunks whose filters decide every turn, the
 * others listed in retry for the Exact instance (lane_retry). */
template <typename T, class Sums, bool Weighted, bool Exact>
SIMT_KERNEL LANE_BOUNDS(SIMT_WARP) void chunk_hulls_kernel(solver_view<T> v, lane_retry retry) {
  lane_blocks<Exact>(retry, [&](unsigned g) { return chunk_hull<T, Sums, Weighted, Exact>(v, g); });
}

#endif

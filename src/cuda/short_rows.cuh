/* Short rows, packed several to a warp (paper, sections 3.1, 3.2 and 3.5): the fast path's
 * kernel for rows of up to SHORT_ROW_MAX elements. A row of n elements takes the smallest power
 * of two L of lanes with 32 L >= n, aligned to L within its warp (short_row_place); the host packs
 * the rows in order. Within a warp, every lane:
 *   1. checks its 32 elements and the row's totals (butterfly reductions over the row's lanes);
 *   2. forms its points of the cumulative sum diagram in shared memory, from the scan of the
 *      lanes' totals;
 *   3. builds its lane hull by monotone chain with the stack in a 32-bit mask (bit k: point k of
 *      the lane), the entry under the top found by count-leading-zeros;
 *   4. in rounds, the first lane of each pair of neighbouring groups of lanes finds their bridge
 *      by walking from the shared point and clears the mask bits strictly between its ends;
 *   5. gives each of its elements the slope of the hull edge above it (a zero weight the level of
 *      the nearest positive weight on its left, else on its right), a running maximum keeping
 *      rounding from stepping against the direction, clipped, written once; and its block
 *      flags: the solver's blocks (edge_start), or where the level changes (start).
 * Every warp collective is reached by all 32 lanes, whatever their row's state, so that idle and
 * failed lanes keep step. A warp per block: its points take 33 KB of shared memory.
 */
#ifndef GPUISO_CUDA_SHORT_ROWS_CUH
#define GPUISO_CUDA_SHORT_ROWS_CUH

#include "chunks.cuh"

#define SHORT_ROW_MAX 512

/* Lanes a row of n elements takes (0 for an empty row). */
static inline GPUISO_HD int short_row_lanes(int64_t n) {
  int lanes = n > 0 ? 1 : 0;
  while (32 * (int64_t)lanes < n) lanes *= 2;
  return lanes;
}

/* The first lane of a row of `lanes` lanes placed after the lanes before `used`, aligned to its
 * size, or -1 when it does not fit in the warp. */
static inline GPUISO_HD int short_row_place(int used, int lanes) {
  if (lanes == 0) return used;
  int at = (used + lanes - 1) / lanes * lanes;
  return at + lanes <= SIMT_WARP ? at : -1;
}

/* A lane's row and elements. */
struct short_lane {
  int64_t row;       /* -1: an idle lane */
  int64_t from, n;   /* the row's first element and its length */
  int lane0, lanes;  /* the row's first lane in the warp and its lanes */
  int q, used;       /* this lane within the row; lanes holding elements */
  int64_t first, count; /* this lane's elements */
};

template <typename T>
static SIMT_DEVICE short_lane short_lane_of(const solver_view<T> &v, const int64_t *pack_first,
                                            int64_t pack, unsigned lane) {
  short_lane me = {-1, 0, 0, 0, 0, 0, 0, 0, 0};
  int used = 0;
  for (int64_t r = pack_first[pack]; r < pack_first[pack + 1]; r++) {
    int64_t n = v.offsets[r + 1] - v.offsets[r];
    int lanes = short_row_lanes(n), at = short_row_place(used, lanes);
    used = at + lanes;
    if ((int)lane < at || (int)lane >= at + lanes) continue;
    me.row = r, me.from = v.offsets[r], me.n = n, me.lane0 = at, me.lanes = lanes;
    me.q = (int)lane - at;
    me.used = (int)((n + SIMT_WARP - 1) / SIMT_WARP);
    me.first = me.from + (int64_t)me.q * SIMT_WARP;
    int64_t left = me.from + n - me.first;
    me.count = left < 0 ? 0 : (left < SIMT_WARP ? left : SIMT_WARP);
  }
  return me;
}

/* The warp's shared memory: points by lane (point k of lane j at j * 32 + k, its row's point
 * 32 q + k), each row's end point by its first lane, the lanes' hull masks. */
struct short_shared {
  hull_point *pts, *ends;
  unsigned *masks;
};

/* Point p (0..n) of the lane's row. */
static SIMT_DEVICE hull_point short_point(const short_shared &sh, const short_lane &me, int64_t p) {
  if (p == me.n) return sh.ends[me.lane0];
  return sh.pts[(me.lane0 + (int)(p / SIMT_WARP)) * SIMT_WARP + (int)(p % SIMT_WARP)];
}

/* The last hull vertex before point p, in the row's lanes from lo on; -1 if none. */
static SIMT_DEVICE int64_t short_prev_vertex(const short_shared &sh, const short_lane &me, int64_t p,
                                             int lo) {
  int j = (int)(p / SIMT_WARP), k = (int)(p % SIMT_WARP);
  if (j < me.used) {
    unsigned m = sh.masks[me.lane0 + j] & ((1u << k) - 1u);
    if (m) return (int64_t)j * SIMT_WARP + 31 - simt::clz(m);
  }
  for (int t = (j < me.used ? j : me.used) - 1; t >= lo; t--) {
    unsigned m = sh.masks[me.lane0 + t];
    if (m) return (int64_t)t * SIMT_WARP + 31 - simt::clz(m);
  }
  return -1;
}

/* The first hull vertex after point p, in the row's lanes before hi; end if none. */
static SIMT_DEVICE int64_t short_next_vertex(const short_shared &sh, const short_lane &me, int64_t p,
                                             int hi, int64_t end) {
  int j = (int)(p / SIMT_WARP), k = (int)(p % SIMT_WARP);
  if (j < hi) {
    unsigned m = sh.masks[me.lane0 + j] & ~((2u << k) - 1u); /* k = 31: 2u << 31 is 0, no bit */
    if (m) return (int64_t)j * SIMT_WARP + simt::ffs(m) - 1;
  }
  for (int t = j + 1; t < hi; t++) {
    unsigned m = sh.masks[me.lane0 + t];
    if (m) return (int64_t)t * SIMT_WARP + simt::ffs(m) - 1;
  }
  return end;
}

/* The lane's hull over its points 0..count (count: the next lane's first point or the row's end,
 * which the mask leaves implicit), as a mask of point bits. */
static SIMT_DEVICE unsigned short_lane_hull(const short_shared &sh, const short_lane &me) {
  int64_t base = (int64_t)me.q * SIMT_WARP;
  unsigned mask = 1;
  int top = 0, under = -1;
  hull_point pt = short_point(sh, me, base), pu = pt;
  for (int k = 1; k <= (int)me.count; k++) {
    hull_point pk = short_point(sh, me, base + k);
    while (under >= 0 && hull_orient(pu, pt, pk) <= 0) { /* pop: the top is no vertex */
      mask &= ~(1u << top);
      top = under, pt = pu;
      unsigned below = mask & ((1u << top) - 1u);
      under = below ? 31 - simt::clz(below) : -1;
      if (under >= 0) pu = short_point(sh, me, base + under);
    }
    if (k < (int)me.count) mask |= 1u << k;
    under = top, pu = pt;
    top = k, pt = pk;
  }
  return mask;
}

/* The merge of the row's lanes [q, q + size) and [q + size, q + 2 size): the bridge found by
 * walking from their shared point, the bits strictly between its ends cleared. */
static SIMT_DEVICE void short_merge(const short_shared &sh, const short_lane &me, int size) {
  int q = me.q, hi = q + 2 * size < me.used ? q + 2 * size : me.used;
  int64_t lo = (int64_t)q * SIMT_WARP, s = lo + (int64_t)size * SIMT_WARP;
  int64_t end = lo + 2 * (int64_t)size * SIMT_WARP < me.n ? lo + 2 * (int64_t)size * SIMT_WARP : me.n;
  int64_t a = short_prev_vertex(sh, me, s, q), b = short_next_vertex(sh, me, s, hi, end);
  hull_point pa = short_point(sh, me, a), pb = short_point(sh, me, b);
  if (hull_orient(pa, short_point(sh, me, s), pb) > 0) return; /* convex at s: s stays */
  for (int moved = 1; moved;) {
    moved = 0;
    while (a > lo) {
      int64_t a2 = short_prev_vertex(sh, me, a, q);
      hull_point p2 = short_point(sh, me, a2);
      if (hull_orient(p2, pa, pb) > 0) break;
      a = a2, pa = p2, moved = 1;
    }
    while (b < end) {
      int64_t b2 = short_next_vertex(sh, me, b, hi, end);
      hull_point p2 = short_point(sh, me, b2);
      if (hull_orient(pa, pb, p2) > 0) break;
      b = b2, pb = p2, moved = 1;
    }
  }
  for (int t = q; t < hi; t++) {
    int64_t first = (int64_t)t * SIMT_WARP;
    unsigned keep = 0;
    for (int k = 0; k < SIMT_WARP; k++) keep |= (unsigned)(first + k <= a || first + k >= b) << k;
    sh.masks[me.lane0 + t] &= keep;
  }
}

/* The signed level of element i of the row (0-based): the slope of the hull edge above it. */
static SIMT_DEVICE double short_edge_level(const short_shared &sh, const short_lane &me, int64_t i) {
  int64_t u = short_prev_vertex(sh, me, i + 1, 0), w = short_next_vertex(sh, me, i, me.used, me.n);
  return hull_slope(short_point(sh, me, u), short_point(sh, me, w));
}

/* A reduction over the row's lanes (an xor butterfly: every lane gets the same bits). */
template <typename V, class Op>
static SIMT_DEVICE V short_row_reduce(const short_lane &me, V x, Op op) {
  for (int m = 1; m < SIMT_WARP; m *= 2) {
    V o = simt::shfl_xor(SIMT_FULL_MASK, x, m);
    if (m < me.lanes) x = op(x, o);
  }
  return x;
}

/* The value of the lane `d` places before in the row, through a full-warp shuffle. */
template <typename V>
static SIMT_DEVICE V short_from_before(V x, unsigned d) { return simt::shfl_up(SIMT_FULL_MASK, x, d); }

static SIMT_DEVICE hull_point short_point_from_before(hull_point p, unsigned d) {
  hull_point o;
  o.w.hi = short_from_before(p.w.hi, d), o.w.lo = short_from_before(p.w.lo, d);
  o.s.hi = short_from_before(p.s.hi, d), o.s.lo = short_from_before(p.s.lo, d);
  return o;
}

template <typename T>
SIMT_KERNEL void short_rows_kernel(solver_view<T> v, const int64_t *pack_first) {
  SIMT_SHARED(hull_point, pts, SIMT_WARP * SIMT_WARP);
  SIMT_SHARED(hull_point, ends, SIMT_WARP);
  SIMT_SHARED(unsigned, masks, SIMT_WARP);
  short_shared sh = {pts, ends, masks};
  unsigned lane = simt::lane();
  short_lane me = short_lane_of(v, pack_first, simt::block_idx().x, lane);

  /* 1. the checks and the row's scale */
  chunk_total c = chunk_total_of(v, me.first, me.first + me.count, 1.0);
  int64_t bad = short_row_reduce(me, c.bad < 0 ? INT64_MAX : c.bad, [](int64_t x, int64_t y) { return x < y ? x : y; });
  double max_w = short_row_reduce(me, c.max_w, [](double x, double y) { return x > y ? x : y; });
  double sum_abs = short_row_reduce(me, c.sum_abs, [](double x, double y) { return x + y; });
  row_state st = {1.0, 0, GPUISO_OK, -1, 0};
  if (bad != INT64_MAX) st.status = element_status(v, bad), st.index = bad;
  else if (!isfinite(sum_abs)) st.status = GPUISO_E_OVERFLOW;
  else if (max_w == 0) st.status = GPUISO_E_W_ALLZERO;
  if (v.w && max_w > 0) {
    int e = 0;
    frexp(max_w, &e);
    st.scale = ldexp(1.0, -(e < -1023 ? -1023 : e)); /* a double, as hull.c's */
  }
  int ok = me.row >= 0 && st.status == GPUISO_OK;
  if (me.row >= 0 && me.q == 0 && me.n > 0) {
    v.rows[me.row] = st;
    if (st.status != GPUISO_OK) lower_failed_row(v.failed_row, me.row);
  }

  /* 2. the points: the lanes' totals scanned, then each lane's points from its start */
  hull_point run = {{0, 0}, {0, 0}};
  for (int64_t i = me.first; ok && i < me.first + me.count; i++)
    run = hull_advance(run, (double)v.y[i], v.w ? (double)v.w[i] * st.scale : 1.0, v.sign);
  for (unsigned d = 1; d < SIMT_WARP; d *= 2) {
    hull_point o = short_point_from_before(run, d);
    if (me.q >= (int)d) run = hull_point{dd_add(o.w, run.w), dd_add(o.s, run.s)};
  }
  hull_point p = short_point_from_before(run, 1);
  if (me.q == 0) p = hull_point{{0, 0}, {0, 0}};
  for (int64_t k = 0; ok && k < me.count; k++) {
    int64_t i = me.first + k;
    sh.pts[lane * SIMT_WARP + k] = p;
    p = hull_advance(p, (double)v.y[i], v.w ? (double)v.w[i] * st.scale : 1.0, v.sign);
  }
  if (ok && me.q == me.used - 1) sh.ends[me.lane0] = p;
  simt::sync_warp();

  /* 3. the lane hulls, 4. their merges in rounds */
  if (ok && me.count > 0) sh.masks[lane] = short_lane_hull(sh, me);
  simt::sync_warp();
  for (int size = 1; size < SIMT_WARP; size *= 2) {
    if (ok && me.q % (2 * size) == 0 && me.q + size < me.used) short_merge(sh, me, size);
    simt::sync_warp();
  }

  /* 5. the levels, zero weights, the running maximum, clipped and written */
  double level[SIMT_WARP], top = -INFINITY;
  for (int64_t k = 0; ok && k < me.count; k++) {
    int64_t i = me.first + k - me.from, j = i;
    if (v.w && v.w[me.first + k] == 0) {
      while (j > 0 && v.w[me.from + j] == 0) j--;
      while (j < me.n - 1 && v.w[me.from + j] == 0) j++;
    }
    level[k] = short_edge_level(sh, me, j);
    top = level[k] > top ? level[k] : top;
  }
  for (unsigned d = 1; d < SIMT_WARP; d *= 2) {
    double o = short_from_before(top, d);
    if (me.q >= (int)d) top = o > top ? o : top;
  }
  double before = short_from_before(top, 1);
  if (me.q == 0) before = -INFINITY;
  for (int64_t k = 0; ok && k < me.count; k++) {
    before = level[k] > before ? level[k] : before;
    v.fit[me.first + k] = (T)clip(v.sign * before, v.lo, v.hi);
  }
  if (v.edge_start) { /* the solver's blocks: from a vertex, past the zero weights on it */
    for (int64_t k = 0; ok && k < me.count; k++) {
      int64_t i = me.first + k - me.from, before = i - 1;
      while (before >= 0 && v.w && v.w[me.from + before] == 0) before--;
      int positive = !v.w || v.w[me.from + i] > 0;
      v.edge_start[me.from + i] = i == 0 || (positive && before >= 0 && short_prev_vertex(sh, me, i + 1, 0) > before);
    }
  } else if (v.start) { /* the level changes, once every lane has written its levels */
    simt::sync_warp();
    for (int64_t i = me.first; ok && i < me.first + me.count; i++)
      v.start[i] = i == me.from || v.fit[i] != v.fit[i - 1];
  }
}

#endif

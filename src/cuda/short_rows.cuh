/* The lane kernels of the fast path (paper, sections 3.1, 3.2 and 3.5), for rows of up to
 * BLOCK_ROW_MAX elements. A row of n elements takes the smallest power of two L of lanes with
 * 32 L >= n. Rows of up to a warp (SHORT_ROW_MAX) are packed several to a warp, each aligned to
 * its L within the warp (short_row_place), in order; longer ones take a block of L threads (two or
 * four warps) each: two launches of lane_rows_kernel. The row's lanes form a team (team.cuh's
 * lane_team), and every lane:
 *   1. loads the row's elements into shared memory with the team, in striped 16-byte groups
 *      (row_groups), then checks its 32 elements and the row's totals (reductions over the team);
 *   2. forms its points of the cumulative sum diagram in shared memory: its sums from its first
 *      point rounded to doubles (short_shared), in place of its elements, its first point from
 *      the scan of the lanes' totals;
 *   3. builds its lane hull by monotone chain with the stack in a 32-bit mask (bit k: point k of
 *      the lane), the entry under the top found by count-leading-zeros;
 *   4. in rounds, merges each pair of neighbouring groups of lanes: two lanes find their bridge
 *      by walking its two ends at once from the shared point, and the first clears the mask bits
 *      strictly between its ends (short_merges);
 *   5. gives each of its elements the slope of the hull edge above it (a zero weight the level of
 *      the nearest positive weight on its left, else on its right), a running maximum keeping
 *      rounding from stepping against the direction, clipped, staged in shared memory and
 *      written once by the team in striped groups; and its block flags: the solver's blocks
 *      (edge_start), or where the level changes (start).
 * A wide row (hull_is_wide: its points may not hold its steps) is instead one chain on the
 * steps by its first lane, as the CPU engine's (short_wide_chain), between steps 1 and 5.
 * Every collective is reached by all threads of the warp or block, whatever their row's state, so
 * that idle and failed lanes keep step. The turns and levels are those of the chunk vertex slots
 * (hull/slots.h, a lane for a chunk): filtered under an error bound on the rounded sums, else
 * decided exactly on the coordinates where they and their differences are exact
 * (exact_coord_orient), else on the exact sums, formed again from the lane's elements. Each
 * kernel runs as two instances (lane_retry): the filtered one (Exact false) on every block, which
 * leaves a block whose turns need the exact sums to the exact one, so that the exact sums'
 * registers stay out of the blocks that do not need them (most: noise, trends, float32 data and
 * ties of exact sums, as 0/1 data). A point takes 8 bytes of shared memory unweighted (its W is
 * its index), 16 weighted, and a lane 56 or 76 more (its start, bounds, point 0 and bits): 9.75
 * or 18.4 KB for a warp, 39 or 73.5 KB for a block of four.
 * Unweighted batches run their own instances of the kernels (Weighted false): their turns take W
 * exact, with no error terms, and the weights' reductions and scans drop out. A row's points are
 * ints (BLOCK_ROW_MAX).
 */
#ifndef GPUISO_CUDA_SHORT_ROWS_CUH
#define GPUISO_CUDA_SHORT_ROWS_CUH

#include <limits.h>

#include "chunks.cuh"
#include "hull/slots.h"
#include "lane_sums.cuh"
#include "team.cuh"

static_assert(SHORT_ROW_MAX == SIMT_WARP * SIMT_WARP && BLOCK_ROW_MAX == 4 * SHORT_ROW_MAX,
              "a warp holds rows of up to 32 lanes, a block of four warps the longer ones");

/* The lane kernels' registers, capped so that GPUISO_LANE_WARPS warps fit an SM: 16 (128
 * registers, with no spill but 12 to 32 bytes in the weighted exact instances) by default, which on an H200
 * ran the lane kernels' shapes 2 to 14% faster than the compiler's choice (121 to 138 registers
 * under nvcc 13.0: 13 to 16 warps) and most of them faster than 20 or 24 warps (with spills), the
 * fits bit for bit the same (tools/bench/RESULTS.md, 2026-12-04); 0 leaves them to the compiler,
 * tools/gpu-check's second build. The cap binds the exact instances alone now (lane_retry). */
#ifndef GPUISO_LANE_WARPS
#define GPUISO_LANE_WARPS 16
#endif
#if GPUISO_LANE_WARPS > 0
static_assert(GPUISO_LANE_WARPS % 4 == 0, "GPUISO_LANE_WARPS: whole blocks of four warps an SM");
#define LANE_BOUNDS(threads) SIMT_BOUNDS(threads, GPUISO_LANE_WARPS * SIMT_WARP / (threads))
#else
#define LANE_BOUNDS(threads)
#endif

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
  int64_t row;      /* -1: an idle lane */
  int64_t from;     /* the row's first element */
  int n;            /* its length (up to BLOCK_ROW_MAX: the row's points fit an int) */
  int lane0, lanes; /* the row's first lane in the warp and its lanes */
  int q, used;      /* this lane within the row; lanes holding elements */
  int64_t first;    /* this lane's elements: count from first */
  int count;
};

/* Lane q of row r's elements from..from + n (the row, or a chunk of it), of `lanes` lanes from
 * lane0 on. */
static SIMT_DEVICE short_lane lane_in_row(int64_t r, int64_t from, int n, int lane0, int lanes, int q) {
  short_lane me;
  me.row = r, me.from = from, me.n = n, me.lane0 = lane0, me.lanes = lanes, me.q = q;
  me.used = (n + SIMT_WARP - 1) / SIMT_WARP;
  me.first = me.from + q * SIMT_WARP;
  int left = n - q * SIMT_WARP;
  me.count = left < 0 ? 0 : (left < SIMT_WARP ? left : SIMT_WARP);
  return me;
}

static SIMT_DEVICE short_lane idle_lane() {
  short_lane me = {-1, 0, 0, 0, 0, 0, 0, 0, 0};
  return me;
}

/* The lane's row among the warp's pack: rows pack_row[pack_first[pack]..pack_first[pack + 1]). */
template <typename T>
static SIMT_DEVICE short_lane short_lane_of(const solver_view<T> &v, const int64_t *pack_row,
                                            const int64_t *pack_first, int64_t pack, unsigned lane) {
  int used = 0;
  for (int64_t k = pack_first[pack]; k < pack_first[pack + 1]; k++) {
    int64_t r = pack_row[k], n = v.offsets[r + 1] - v.offsets[r];
    int lanes = short_row_lanes(n), at = short_row_place(used, lanes);
    used = at + lanes;
    if ((int)lane >= at && (int)lane < at + lanes) return lane_in_row(r, v.offsets[r], (int)n, at, lanes, (int)lane - at);
  }
  return idle_lane();
}

/* Thread t of the block of row r. */
template <typename T>
static SIMT_DEVICE short_lane block_lane_of(const solver_view<T> &v, int64_t r, int t) {
  int64_t n = v.offsets[r + 1] - v.offsets[r];
  int lanes = short_row_lanes(n);
  return t < lanes ? lane_in_row(r, v.offsets[r], (int)n, 0, lanes, t) : idle_lane();
}

/* The lanes' shared memory (paper, section 6): each lane's first point, a pair of pairs from the
 * scan of the lanes' totals, and bounds on its points' errors as the merges' walks take them
 * (lane_bound); its points 0..32 (point k of the row's lane j: the row's point
 * 32 j + k) as their sums from that first point, each coordinate rounded to a double, in slots
 * of LANE_SLOTS a lane (short_slot; point 0 zero; W only for a weighted batch: unweighted, it is
 * the point's index within its lane, exact); a bit per point 1..32 where the rounding was not
 * exact; the lanes' hull masks; weighted, a bit per element of weight zero (whose point coincides
 * with the one before). 8 bytes a point unweighted, 16 weighted, and 56 (76) a lane. The
 * predicates and levels take the points as hull/slots.h takes a chunk's vertices, the lane its
 * chunk. */
/* A lane's slots: its points 0..32, one more than its elements, so that the lanes of a warp,
 * which reach their k-th points at once, find them in different banks of the shared memory (32
 * apart, all in one); point 32 is also the next lane's point 0, which that lane keeps as zero. */
#define LANE_SLOTS (SIMT_WARP + 1)
/* Bounds on the errors of a point's coordinates W and S as the filters take them (coord_orient):
 * in shared memory, those of a lane's points relative to the row's first point (walk_to). */
struct lane_bound {
  double w, s;
};

struct short_shared {
  hull_point *starts;        /* by lane */
  double *bounds;            /* by lane: its lane_bound's S, then weighted its W (unweighted, W is exact) */
  double *s, *w;             /* by slot (the elements staged first, the fit last); w NULL: an unweighted batch */
  unsigned *rounded, *masks; /* by lane (rounded: last, the bits of the solver's blocks, lane_write) */
  unsigned *zeros;           /* by lane; NULL: an unweighted batch */
};

/* The bytes of a short_shared for `threads` lanes, with `scratch` bytes (a multiple of 8)
 * between the points and the bit masks. */
static inline GPUISO_HD size_t lane_shared_bytes(int threads, int weighted, size_t scratch) {
  size_t lane = sizeof(hull_point) + (1 + LANE_SLOTS) * sizeof(double) * (weighted ? 2 : 1) +
                (weighted ? 3 : 2) * sizeof(unsigned);
  return (size_t)threads * lane + scratch;
}

/* The short_shared laid out from `base` as lane_shared_bytes sizes it; *scratch its scratch. */
template <bool Weighted>
static SIMT_DEVICE short_shared lane_shared_at(unsigned char *base, int threads, size_t scratch_bytes,
                                               unsigned char **scratch) {
  int slots = threads * LANE_SLOTS, words = Weighted ? 2 : 1; /* doubles a bound and a slot */
  short_shared sh;
  sh.starts = reinterpret_cast<hull_point *>(base);
  sh.bounds = reinterpret_cast<double *>(sh.starts + threads);
  sh.s = sh.bounds + words * threads;
  sh.w = Weighted ? sh.s + slots : NULL;
  *scratch = reinterpret_cast<unsigned char *>(sh.s + words * slots);
  sh.rounded = reinterpret_cast<unsigned *>(*scratch + scratch_bytes);
  sh.masks = sh.rounded + threads;
  sh.zeros = Weighted ? sh.masks + threads : NULL;
  return sh;
}

/* The slot of the row's point p >= 1, as point k = 1..32 of lane j: at j LANE_SLOTS + k. */
static SIMT_DEVICE int short_slot(const short_lane &me, int p) {
  int j = (p - 1) / SIMT_WARP;
  return (me.lane0 + j) * LANE_SLOTS + p - j * SIMT_WARP;
}

/* The bit of a lane's point k in its rounding bits (point 0, the lane's origin, is exact). */
static SIMT_DEVICE unsigned point_rounded(unsigned rounded, int k) { return k > 0 ? rounded >> (k - 1) & 1u : 0u; }

/* Point k (0..32) of lane j, whose point 0 is at slot `base` and whose rounding bits are
 * `rounded`, as a vertex of the slots' predicates: every k issues the same loads, point 0's
 * zeros too, so the lane hull's loop has no branch around them (short_lane_hull). */
static SIMT_DEVICE hull_vertex lane_point(const short_shared &sh, int j, int base, unsigned rounded, int k) {
  hull_vertex q = {j, k, {{sh.w ? sh.w[base + k] : (double)k, 0}, {sh.s[base + k], 0}}, (int)point_rounded(rounded, k)};
  return q;
}

/* Point k (0..32) of the row's lane j. */
static SIMT_DEVICE hull_vertex lane_vertex(const short_shared &sh, const short_lane &me, int j, int k) {
  return lane_point(sh, j, (me.lane0 + j) * LANE_SLOTS, sh.rounded[me.lane0 + j], k);
}

/* Point p (0..n) of the lane's row: point 0 of its lane, the row's end the last lane's last. */
static SIMT_DEVICE hull_vertex short_vertex(const short_shared &sh, const short_lane &me, int p) {
  int j = p / SIMT_WARP < me.used ? p / SIMT_WARP : me.used - 1;
  return lane_vertex(sh, me, j, p - j * SIMT_WARP);
}

/* The lane's row as the slots' predicates take it: its lanes the chunks, their first points
 * the starts, the elements to form a point again from. */
template <typename T>
static SIMT_DEVICE hull_slots lane_slots(const solver_view<T> &v, const short_shared &sh, const short_lane &me,
                                         double scale) {
  hull_slots hs = {sh.starts + me.lane0, NULL, v.w != NULL, NULL, SIMT_WARP, SIMT_WARP, 0, me.from,
                   v.y, v.w, sizeof(T) == sizeof(float), scale, v.sign};
  return hs;
}

/* The step of a wide row's block of elements (before, k] (short_wide_chain): of one element
 * formed again from it, of more kept as pairs in the slots of points k - 1 and k, which are no
 * vertices (hull/wide.h's scheme; W the count where unweighted). */
template <typename T>
static SIMT_DEVICE hull_point wide_step(const solver_view<T> &v, const short_shared &sh, const short_lane &me,
                                        int before, int k, double scale) {
  if (k - before == 1)
    return hull_step((double)v.y[me.from + k - 1], v.w ? (double)v.w[me.from + k - 1] * scale : 1.0, v.sign);
  int i = short_slot(me, k - 1), j = short_slot(me, k);
  hull_point st;
  st.w.hi = sh.w ? sh.w[i] : (double)(k - before);
  st.w.lo = sh.w ? sh.w[j] : 0.0;
  st.s.hi = sh.s[i];
  st.s.lo = sh.s[j];
  return st;
}

static SIMT_DEVICE void wide_put(const short_shared &sh, const short_lane &me, int before, int k,
                                 hull_point st) {
  if (k - before == 1) return;
  int i = short_slot(me, k - 1), j = short_slot(me, k);
  sh.s[i] = st.s.hi, sh.s[j] = st.s.lo;
  if (sh.w) sh.w[i] = st.w.hi, sh.w[j] = st.w.lo;
}

/* Marks point p (below n, whose end point the masks leave implicit) a vertex or not. */
static SIMT_DEVICE void short_mark(const short_shared &sh, const short_lane &me, int p, int on) {
  if (p == me.n) return;
  unsigned bit = 1u << p % SIMT_WARP, *m = sh.masks + me.lane0 + p / SIMT_WARP;
  *m = on ? *m | bit : *m & ~bit;
}

/* The first of the row's lanes from lane j on in direction dir (-1 or 1), lane j left out and
 * lane stop too, that holds a hull vertex (-1 if none), *m its mask. */
static SIMT_DEVICE int lane_with_vertex(const short_shared &sh, const short_lane &me, int j, int dir, int stop,
                                        unsigned *m) {
  for (int t = j + dir; (t - stop) * dir < 0; t += dir)
    if ((*m = sh.masks[me.lane0 + t]) != 0) return t;
  return -1;
}

/* The bits of a lane's mask word on side dir (-1 below, 1 above) of its point k. */
static SIMT_DEVICE unsigned bits_beside(int k, int dir) {
  return dir < 0 ? (1u << k) - 1u : ~((2u << k) - 1u); /* k = 31: 2u << 31 is 0, no bit above */
}

/* The lane of the hull vertex nearest a point of lane j in direction dir (-1 or 1), *m on entry
 * lane j's bits on that side of the point: j where *m has one, else lane_with_vertex's (up to
 * stop, left out; -1 if none), *m then its word; *p that vertex (where there is one). The one
 * search of short_prev_vertex, short_next_vertex and the walks' steps (walk_step). */
static SIMT_DEVICE int nearest_vertex(const short_shared &sh, const short_lane &me, int j, int dir, int stop,
                                      unsigned *m, int *p) {
  int t = *m ? j : lane_with_vertex(sh, me, j, dir, stop, m);
  if (t >= 0) *p = t * SIMT_WARP + (dir < 0 ? 31 - simt::clz(*m) : simt::ffs(*m) - 1);
  return t;
}

/* The last hull vertex before point p, in the row's lanes from lo on; -1 if none. */
static SIMT_DEVICE int short_prev_vertex(const short_shared &sh, const short_lane &me, int p, int lo) {
  int j = p / SIMT_WARP, in = j < me.used, vertex;
  unsigned m = in ? sh.masks[me.lane0 + j] & bits_beside(p % SIMT_WARP, -1) : 0u;
  return nearest_vertex(sh, me, in ? j : me.used, -1, lo - 1, &m, &vertex) >= 0 ? vertex : -1;
}

/* The first hull vertex after point p, in the row's lanes before hi; end if none. */
static SIMT_DEVICE int short_next_vertex(const short_shared &sh, const short_lane &me, int p, int hi, int end) {
  int j = p / SIMT_WARP, vertex;
  unsigned m = j < hi ? sh.masks[me.lane0 + j] & bits_beside(p % SIMT_WARP, 1) : 0u;
  return nearest_vertex(sh, me, j, 1, hi, &m, &vertex) >= 0 ? vertex : end;
}

/* A point of the row as the lane kernels' filters take it: each coordinate a double, within its
 * lane_bound of the point the exact predicates take (hull_orient_exact_vertices). */
struct lane_coord {
  double w, s;
};

/* A point of the lane's own, as lane_point gives it, relative to the lane's first point; its
 * errors are the lane's (own_error). Unweighted, W is the point's index, exact. */
static SIMT_DEVICE lane_coord own_coord(hull_vertex a) {
  lane_coord c = {a.rel.w.hi, a.rel.s.hi};
  return c;
}

/* Bounds on the errors of all the lane's own points: hull_round_error's of the largest
 * of its rounded points, so that the lane hull's loop carries no error a point. Zero, with no
 * load, for a lane none of whose points was rounded, as with float32 data of a few binades. */
template <bool Weighted>
static SIMT_DEVICE lane_bound own_error(const short_shared &sh, int base, unsigned rounded) {
  double w = 0, s = 0;
  for (unsigned m = rounded; m; m &= m - 1) { /* bit b: point b + 1, at slot base + b + 1 */
    int slot = base + simt::ffs(m);
    s = fmax(s, fabs(sh.s[slot]));
    if (Weighted) w = fmax(w, fabs(sh.w[slot]));
  }
  lane_bound e = {0x1p-52 * w, 0x1p-52 * s};
  return e;
}

/* The bound on the error of every coordinate of a lane's points relative to the row's first point
 * as the walks form them (walk_to: the lane's start's high part plus the lane-relative coordinate,
 * rounded once), from the start and the largest magnitude m of the lane-relative ones: the
 * rounding of the sum (2u of |start.hi| + m, which bounds it), the start's low part, and
 * hull_coord_error's terms (the rounding of rel, taken as rounded, and the pair additions of
 * hull_vertex_point: under 2^-100 of the terms), in fewer operations. */
static SIMT_DEVICE double row_bound(dd start, double m) {
  return 0x1p-52 * (fabs(start.hi) + m) + (fabs(start.lo) + 0x1p-100 * fabs(start.hi)) +
         (0x1p-52 + 0x1p-100) * m;
}

/* Lane j's bounds in shared memory: S's, then weighted W's. */
template <bool Weighted>
static SIMT_DEVICE double *lane_bounds_at(const short_shared &sh, int j) {
  return sh.bounds + (Weighted ? 2 : 1) * j;
}

/* Lane j's bounds (row_bound's), as lane_points stored them; unweighted, W's is 0. */
template <bool Weighted>
static SIMT_DEVICE lane_bound lane_bound_of(const short_shared &sh, int j) {
  const double *e = lane_bounds_at<Weighted>(sh, j);
  lane_bound b = {Weighted ? e[1] : 0, e[0]};
  return b;
}

/* The filter of the lane kernels' turns on three points within the bounds ea, eb and ec of their
 * coordinates: hull_orient's bound (geometry.h), 9u (A1 B2 + B1 A2) for u = 2^-53 (the roundings
 * of the differences and the cross product take 3u of it, 4u weighted), widened by c = 0x1.03p0
 * times the coordinates' errors carried through the cross product, A1 ey2 + A2 ey1 + ex1 (B2 +
 * ey2) + ex2 (B1 + ey1), as the slots' filter widens it, in fewer operations: the bound as A1 (9u
 * B2 + c ey2) + A2 (9u B1 + c ey1), three fmas and a product beside the cross product (itself an
 * fma and a product), c ey hoisted out of a lane hull's loop (own_orient: one bound for its
 * points), then weighted the W errors' terms. The constants 9u = 0x1.2p-50 and c are immediates
 * of the instructions (1e-15 and 1.01 took two moves each a turn). The points are the row's points
 * ia < ib < ic, or in the reverse order (a walk's right end, short_merges), whose turn is the
 * opposite; unweighted, W is the index, so the W differences are the indices' (exact: the doubles
 * a subtraction of the indices as doubles would give), with no errors, and the loops need not
 * carry W. In place of hull_filter_range's bounds on the magnitude: the bound above 2^-950 (9u of
 * hull_filter_range's 2^-900), so that its slack (5u of the magnitude, 1% of the errors' terms)
 * exceeds what an underflow loses (A 2^-1075 in one of its own terms; unweighted, the cross
 * product's products of an integer are exact where they underflow), and det finite: where one of
 * the cross product's products overflows and the other not, det is infinite, while the bound,
 * unweighted, scales the products by 9u before it forms them (an overflow elsewhere makes the
 * bound infinite or NaN, which no |det| exceeds). The sign, or 0 where it cannot decide. */
template <bool Weighted>
static SIMT_DEVICE int coord_orient(int ia, lane_coord a, lane_bound ea, int ib, lane_coord b, lane_bound eb, int ic,
                                    lane_coord c, lane_bound ec) {
  const double rel = 0x1.2p-50, wide = 0x1.03p0; /* 9u; the errors' factor */
  double x1 = Weighted ? b.w - a.w : (double)(ib - ia), y1 = b.s - a.s;
  double x2 = Weighted ? c.w - a.w : (double)(ic - ia), y2 = c.s - a.s;
  double ey1 = ea.s + eb.s, ey2 = ea.s + ec.s;
  double A1 = fabs(x1), B1 = fabs(y1), A2 = fabs(x2), B2 = fabs(y2);
  double det = fma(x1, y2, -(y1 * x2));
  double bound = fma(A2, fma(rel, B1, wide * ey1), A1 * fma(rel, B2, wide * ey2));
  if (Weighted) { /* W's errors too */
    double ex1 = ea.w + eb.w, ex2 = ea.w + ec.w;
    bound += wide * fma(ex1, B2 + ey2, ex2 * (B1 + ey1));
  }
  if (bound > 0x1p-950 && fabs(det) > bound && fabs(det) < INFINITY) return det > 0 ? 1 : -1;
  return 0;
}

/* The exact turn of three points ia < ib < ic (or reversed, as coord_orient's) whose coordinates
 * a, b and c are exact (unweighted, W the indices), where their differences are exact too (the
 * two-sums' errors zero): the sign of the cross product from Kahan's 2x2 determinant with fma,
 * within 2u of it relative (Jeannerod, Louvet and Muller, 2013), so that its sign and its zero
 * are exact, with no product near underflow; else 2, undecided. Turns of exactly zero, which no
 * error bound decides (ties, as runs of equal values, and points that coincide, with zero weights
 * between them), are mostly of this kind. */
template <bool Weighted>
static SIMT_DEVICE int exact_coord_orient(int ia, lane_coord a, int ib, lane_coord b, int ic, lane_coord c) {
  dd y1 = dd_two_sum(b.s, -a.s), y2 = dd_two_sum(c.s, -a.s);
  dd x1 = {(double)(ib - ia), 0}, x2 = {(double)(ic - ia), 0};
  if (Weighted) x1 = dd_two_sum(b.w, -a.w), x2 = dd_two_sum(c.w, -a.w);
  if (y1.lo != 0 || y2.lo != 0 || x1.lo != 0 || x2.lo != 0) return 2;
  if ((x1.hi == 0 && y1.hi == 0) || (x2.hi == 0 && y2.hi == 0)) return 0;
  double q = x1.hi * y2.hi, p = y1.hi * x2.hi;
  int q_ok = x1.hi == 0 || y2.hi == 0 || hull_filter_range(fabs(q));
  int p_ok = y1.hi == 0 || x2.hi == 0 || hull_filter_range(fabs(p));
  if (!q_ok || !p_ok) return 2;
  double det = fma(x1.hi, y2.hi, -p) + fma(-y1.hi, x2.hi, p);
  return (det > 0) - (det < 0);
}

/* Whether a lane's points i < j coincide, by its bits of zero weights (`zeros`: bit e, element e,
 * between points e and e + 1): every element between them of weight zero, so that their sums
 * are the same, exact or rounded. A turn with two such points is zero, which no error bound
 * decides: these are most of the turns left undecided with zero weights. */
static SIMT_DEVICE int coincide(unsigned zeros, int i, int j) {
  unsigned between = (j - i >= SIMT_WARP ? ~0u : (1u << (j - i)) - 1u) << i;
  return (zeros & between) == between;
}

/* The turn of the lane's own points u, t and k (lane_point's, from `base` and `rounded`) from
 * their own_coords within the lane's error bounds e: the filter, else (Exact) the exact points,
 * out of line: only the exact instances reach it, so it takes none of the filtered ones'
 * registers, and inlined at each of its four call sites it added 12% to solver.cu's sm_90 code
 * (tools/bench/RESULTS.md, 2026-12-05, 22:12). The points are loaded again only for it, so that
 * the lane hull's loop carries their coordinates alone. Not Exact, a turn that neither the filter
 * nor exact_coord_orient decides sets *unsure and is taken as a left turn, the block left to the
 * exact kernels (lane_retry). */
template <bool Weighted, bool Exact>
static SIMT_DEVICE int own_orient(const short_shared &sh, const hull_slots &hs, const short_lane &me, int base,
                                  unsigned rounded, lane_bound e, int u, lane_coord cu, int t, lane_coord ct, int k,
                                  lane_coord ck, int *unsure) {
  int turn = coord_orient<Weighted>(u, cu, e, t, ct, e, k, ck, e);
  if (turn) return turn;
  unsigned zeros = Weighted ? sh.zeros[me.lane0 + me.q] : 0u;
  if (Weighted && (coincide(zeros, u, t) || coincide(zeros, t, k))) return 0;
  if (!(point_rounded(rounded, u) | point_rounded(rounded, t) | point_rounded(rounded, k))) {
    turn = exact_coord_orient<Weighted>(u, cu, t, ct, k, ck);
    if (turn != 2) return turn;
  }
  if (!Exact) return *unsure = 1;
  hull_vertex pu = lane_point(sh, me.q, base, rounded, u), pt = lane_point(sh, me.q, base, rounded, t);
  return hull_orient_exact_vertices_cold(&hs, pu, pt, lane_point(sh, me.q, base, rounded, k), 1);
}

/* The lane's hull over its points 0..count (count: the next lane's first point or the row's end,
 * which the mask leaves implicit), as a mask of point bits; every turn on the lane's own points,
 * relative to its first. The monotone chain as one loop (paper, section 3.1): the stack is the
 * mask, its top the highest set bit, the entry under the top the next one (clz). The coordinates
 * of the candidate k, the top and the entry under it stay in registers (own_coord, with the
 * lane's bounds on their errors), and each iteration loads both points it may need next, whatever
 * it then does, before its turn decides between them, and selects: a pop where the top makes no
 * left turn between the entry under it and k (the entry under the new top, the highest bit below
 * the entry under the top), else a push of k (k + 1). So the lanes of a warp issue the same loads
 * in step, with no inner pop loop, and the loads wait alongside the turn, not after it. The turns
 * are a pop loop's, in the same order (the fits stay bit-identical): count pushes and at most
 * count - 1 pops (point 0 stays), at most 2 count - 1 iterations. */
template <bool Weighted, bool Exact>
static SIMT_DEVICE unsigned short_lane_hull(const short_shared &sh, const hull_slots &hs, const short_lane &me,
                                            int *unsure) {
  int count = me.count, top = 0, under = -1, base = (me.lane0 + me.q) * LANE_SLOTS;
  unsigned mask = 1, rounded = sh.rounded[me.lane0 + me.q];
  lane_bound e = own_error<Weighted>(sh, base, rounded);
  lane_coord cu = own_coord(lane_point(sh, me.q, base, rounded, 0)), ct = cu;
  lane_coord ck = own_coord(lane_point(sh, me.q, base, rounded, 1));
  for (int k = 1; k <= count;) {
    int lower = 31 - simt::clz(under > 0 ? mask & bits_beside(under, -1) : 0u); /* -1: none */
    lane_coord c_pop = own_coord(lane_point(sh, me.q, base, rounded, lower < 0 ? 0 : lower));
    lane_coord c_push = own_coord(lane_point(sh, me.q, base, rounded, k + 1 < count ? k + 1 : count));
    /* point 0 alone: a push */
    int pop = under >= 0 &&
              own_orient<Weighted, Exact>(sh, hs, me, base, rounded, e, under, cu, top, ct, k, ck, unsure) <= 0;
    unsigned bit = k < count ? 1u << k : 0u; /* point count stays implicit */
    int below = top;
    mask = pop ? mask & ~(1u << top) : mask | bit;
    top = pop ? under : k;
    under = pop ? lower : below; /* -1: top is point 0 */
    k += !pop;
    lane_coord cn = pop ? c_pop : c_push;
    lane_coord ct2 = pop ? cu : ck;
    cu = pop ? cn : ct;
    ck = pop ? ck : cn;
    ct = ct2;
  }
  return mask;
}

/* The bits of lane t's mask outside the open range (a, b) of the row's points: the points
 * through a and from b on. */
static SIMT_DEVICE unsigned lane_bits_outside(int t, int a, int b) {
  int first = t * SIMT_WARP, upto = a - first + 1, from = b - first; /* bits below upto, from from on */
  unsigned low = upto <= 0 ? 0u : upto >= SIMT_WARP ? ~0u : (1u << upto) - 1u;
  unsigned high = from <= 0 ? ~0u : from >= SIMT_WARP ? 0u : ~0u << from;
  return low | high;
}

/* An end of a bridge walk (short_merges): vertex p of the row, its lane j as short_vertex takes
 * it, that lane's mask word (once the end has stepped, its bits on the end's side of p: all that
 * its steps read), and p's coordinates relative to the row's first point (walk_to). A
 * step within the lane takes the next bit of the word it holds, where short_prev_vertex and
 * short_next_vertex load it again; only a step into another lane loads that lane's word. The
 * lane's first point is loaded at each step, and its bounds at each turn (row_orient): kept in
 * the ends too, the first point and rounding bits took the lane kernels to the cap of 128
 * registers (128 to 166 uncapped) and the merges' instructions up 2%, and the bounds made the
 * weighted ones spill 12 to 16 bytes (tools/bench/RESULTS.md, 2026-12-05). */
struct walk_end {
  int p, j;
  unsigned mask;
  lane_coord c;
};

/* e at point p of its lane (e->j), its slot loaded whatever p, as lane_point does. Its
 * coordinates, for the turns across lanes: one addition a coordinate where
 * hull_orient_vertices_filter takes the differences of the starts' and the points' parts apart,
 * their errors their lane's bounds (row_bound, which row_orient loads). The bounds hold for the
 * points of hull_vertex_point, so the filter decides as hull_orient_exact_vertices does (three
 * points of one lane, which that one takes without their lane's start, turn alike: a translation
 * changes no exact turn). Unweighted, W is p, exact (the lane's start a count, its W its index),
 * which coord_orient takes from the indices: W is left 0. */
template <bool Weighted>
static SIMT_DEVICE void walk_to(const short_shared &sh, const short_lane &me, walk_end *e, int p) {
  int lane = me.lane0 + e->j, slot = lane * LANE_SLOTS + p - e->j * SIMT_WARP;
  const hull_point &start = sh.starts[lane];
  e->p = p;
  e->c.w = Weighted ? start.w.hi + sh.w[slot] : 0;
  e->c.s = start.s.hi + sh.s[slot];
}

/* Whether the walk's end e has its exact coordinates: its point's own (not rounded) and its lane's
 * start's (no low part), their sum exact (walk_to). */
template <bool Weighted>
static SIMT_DEVICE int walk_exact(const short_shared &sh, const short_lane &me, const walk_end &e) {
  int lane = me.lane0 + e.j, k = e.p - e.j * SIMT_WARP, slot = lane * LANE_SLOTS + k;
  const hull_point &start = sh.starts[lane];
  int exact = !point_rounded(sh.rounded[lane], k) && start.s.lo == 0 && dd_two_sum(start.s.hi, sh.s[slot]).lo == 0;
  if (Weighted) exact = exact && start.w.lo == 0 && dd_two_sum(start.w.hi, sh.w[slot]).lo == 0;
  return exact;
}

/* The turn of the walks' ends a, b and c (row points in that order or the reverse) from their
 * coordinates, their errors their lanes' bounds (loaded here, so that the walks carry none): the
 * filter, else exact_coord_orient where the ends' coordinates are exact, else the exact points
 * (out of line, as own_orient's), the vertices loaded again only then; not Exact, as
 * own_orient's (a walk's end then stops, short_merges). */
template <bool Weighted, bool Exact>
static SIMT_DEVICE int row_orient(const short_shared &sh, const hull_slots &hs, const short_lane &me,
                                  const walk_end &a, const walk_end &b, const walk_end &c, int *unsure) {
  lane_bound ea = lane_bound_of<Weighted>(sh, me.lane0 + a.j), eb = lane_bound_of<Weighted>(sh, me.lane0 + b.j),
             ec = lane_bound_of<Weighted>(sh, me.lane0 + c.j);
  int turn = coord_orient<Weighted>(a.p, a.c, ea, b.p, b.c, eb, c.p, c.c, ec);
  if (turn) return turn;
  if (walk_exact<Weighted>(sh, me, a) && walk_exact<Weighted>(sh, me, b) && walk_exact<Weighted>(sh, me, c)) {
    turn = exact_coord_orient<Weighted>(a.p, a.c, b.p, b.c, c.p, c.c);
    if (turn != 2) return turn;
  }
  if (!Exact) return *unsure = 1;
  hull_vertex pa = short_vertex(sh, me, a.p), pb = short_vertex(sh, me, b.p), pc = short_vertex(sh, me, c.p);
  return hull_orient_exact_vertices_cold(&hs, pa, pb, pc, hull_vertices_relative(pa, pb, pc));
}

/* e at point p of lane j, whose mask word is `mask` (0 for the merge's end: another merge of the
 * round may be changing that lane's, and no walk steps from the end). */
template <bool Weighted>
static SIMT_DEVICE void walk_enter(const short_shared &sh, const short_lane &me, walk_end *e, int p, int j,
                                   unsigned mask) {
  e->j = j;
  e->mask = mask;
  walk_to<Weighted>(sh, me, e, p);
}

/* e to the vertex next to it in direction dir: before it (-1), in the lanes from lo_lane on (there
 * is one: lo_lane's point 0); after it (1), in the lanes before hi_lane, else to the merge's end.
 * One code for both, so that a pair's two ends step together (short_merges). */
template <bool Weighted>
static SIMT_DEVICE void walk_step(const short_shared &sh, const short_lane &me, walk_end *e, int dir, int lo_lane,
                                  int hi_lane, int end) {
  int k = e->p - e->j * SIMT_WARP, p; /* k below 32 where dir is -1: the left end is never the row's end */
  unsigned m = e->mask & bits_beside(k, dir);
  int t = nearest_vertex(sh, me, e->j, dir, dir < 0 ? lo_lane - 1 : hi_lane, &m, &p);
  if (t >= 0) return walk_enter<Weighted>(sh, me, e, p, t, m);
  if (dir > 0) walk_enter<Weighted>(sh, me, e, end, end / SIMT_WARP < me.used ? end / SIMT_WARP : me.used - 1, 0u);
}

/* The end of a walk that lane `src` of the warp holds (shfl: every lane of the warp calls it);
 * its mask word is left out, only the end's own lane stepping from it. */
template <bool Weighted>
static SIMT_DEVICE walk_end walk_end_of(const walk_end &e, int src) {
  walk_end f;
  f.p = simt::shfl(SIMT_FULL_MASK, e.p, src), f.j = simt::shfl(SIMT_FULL_MASK, e.j, src), f.mask = 0;
  f.c.w = Weighted ? simt::shfl(SIMT_FULL_MASK, e.c.w, src) : 0;
  f.c.s = simt::shfl(SIMT_FULL_MASK, e.c.s, src);
  return f;
}

/* The merges of a round, of the row's lanes [q, q + size) and [q + size, q + 2 size) for q a
 * multiple of 2 size, every lane of the warp calling it: merge k of the row by its lanes 2k and
 * 2k + 1 (a pair of one warp, whatever size: a merge reads its lanes' hulls from shared memory),
 * which find the bridge by walking from the merge's shared point, the left end by lane 2k, the
 * right end by lane 2k + 1, both ends at once: each takes a step where the turn of its next
 * point, itself and the other end allows it, against the other's end as the last step left it,
 * until neither moves. An end never passes the bridge's (a vertex of the merged hull is one of
 * the hull of any of its subsets, whatever the other end), so the walk stops there, where each
 * end is the other's tangent: the bridge that the CPU engine's walk (hull_walk, one end after the
 * other) finds, in about the steps of the longer end where that takes the steps of both (on
 * noise, half the turns a warp waits on, tools/bench/RESULTS.md, 2026-12-06). Not Exact, an end
 * whose turn is undecided stops (the block is left to the exact kernel). Then lane 2k clears
 * the bits strictly between the bridge's ends. A row of two lanes or more starts at an even lane
 * (short_row_place), so that the row's lanes 2k and 2k + 1 are the warp's too. ok: the lane's row
 * is fitted here. */
template <bool Weighted, bool Exact>
static SIMT_DEVICE void short_merges(const short_shared &sh, const hull_slots &hs, const short_lane &me, int size,
                                     int ok, int *unsure) {
  int side = me.q & 1, q = me.q / 2 * 2 * size; /* the lane's end (0 left, 1 right), its merge's first lane */
  int hi = q + 2 * size < me.used ? q + 2 * size : me.used;
  int lo = q * SIMT_WARP, s = lo + size * SIMT_WARP;
  int end = lo + 2 * size * SIMT_WARP < me.n ? lo + 2 * size * SIMT_WARP : me.n;
  int dir = side ? 1 : -1, stop = side ? end : lo; /* e's way, and where it can move no further */
  int walking = ok && q + size < me.used;
  walk_end e = {0, 0, 0u, {0, 0}};
  if (walking) {
    walk_end at_s, a, b;
    walk_enter<Weighted>(sh, me, &at_s, s, q + size, sh.masks[me.lane0 + q + size]);
    a = at_s, b = at_s;
    walk_step<Weighted>(sh, me, &a, -1, q, hi, end);
    walk_step<Weighted>(sh, me, &b, 1, q, hi, end);
    walking = row_orient<Weighted, Exact>(sh, hs, me, a, at_s, b, unsure) <= 0; /* convex at s: s stays */
    e = side ? b : a;
  }
  int merged = walking;
  /* the turn (c, e, f) of e's next c is the left end's (a2, a, b), and the reverse of the right
   * end's (a, b, b2), of the opposite sign: e moves where dir times it is at least 0 */
  while (simt::any(SIMT_FULL_MASK, walking)) {
    walk_end f = walk_end_of<Weighted>(e, simt::lane() ^ 1u);
    int moved = 0;
    if (walking && e.p != stop) {
      walk_end c = e;
      walk_step<Weighted>(sh, me, &c, dir, q, hi, end);
      moved = dir * row_orient<Weighted, Exact>(sh, hs, me, c, e, f, unsure) >= 0;
      if (moved) e = c;
    }
    int pair_moved = moved | simt::shfl_xor(SIMT_FULL_MASK, moved, 1); /* every lane: a collective */
    walking = walking && pair_moved && !*unsure;
  }
  int b = simt::shfl_xor(SIMT_FULL_MASK, e.p, 1), a = e.p; /* lane 2k: the bridge */
  if (!merged || side) return;
  int last = b / SIMT_WARP < hi ? b / SIMT_WARP : hi - 1;
  for (int t = a / SIMT_WARP; t <= last; t++) sh.masks[me.lane0 + t] &= lane_bits_outside(t, a, b);
}

/* The signed level of the elements under the hull edge from point a to point b: the slope of
 * their exact points (the error bound of the rounded ones would allow some 2^-50 of it,
 * hull_vertex_slope's, where the points' own is within a rounding). Unweighted, an edge over one
 * element (every edge of strictly increasing data) takes the element's signed value, without the
 * points and the divisions, where the points are the exact sums (exact_points, lane_points_as;
 * plain_sums' levels are their points'): the difference of its lane's two points where neither
 * was rounded (exact: the value is a double), else hull_unit_slope's value; a value of zero takes
 * the points too, as hull_unit_slope. From the points (summed 0), NaN where that needs the
 * elements (a rounded point: its exact sums, or the element's value); from the elements staged
 * again in the slots (summed 1, hs lane_restage's: every point formed again from its lane's
 * elements, the same sums as the points' pairs, so the same level). */
template <bool Weighted>
static SIMT_DEVICE double short_edge_level(const short_shared &sh, const hull_slots &hs, const short_lane &me,
                                           int exact_points, int a, int b, int summed) {
  double slope = 0;
  if (!Weighted && exact_points && b - a == 1) {
    int j = a / SIMT_WARP, k = a - j * SIMT_WARP, base = (me.lane0 + j) * LANE_SLOTS;
    unsigned rounded = summed ? ~0u : sh.rounded[me.lane0 + j];
    if (!point_rounded(rounded, k) && !point_rounded(rounded, k + 1)) slope = sh.s[base + k + 1] - sh.s[base + k];
    else if (!summed) return NAN;
    else hull_unit_slope(&hs, hull_chunk_first(&hs, j) + k, hull_chunk_first(&hs, j) + k + 1, &slope);
    if (slope != 0) return slope;
  }
  hull_vertex va = short_vertex(sh, me, a), vb = short_vertex(sh, me, b);
  if (summed) va.rounded = vb.rounded = 1; /* the slots hold the elements */
  else if (va.rounded || vb.rounded) return NAN;
  va = hull_vertex_exact(&hs, va), vb = hull_vertex_exact(&hs, vb);
  int relative = va.chunk == vb.chunk;
  return hull_slope(hull_vertex_point(&hs, va, relative), hull_vertex_point(&hs, vb, relative));
}

/* The hull of a wide row (hull_is_wide), by one thread: the monotone chain on the steps,
 * as the CPU engine's chain (hull/wide.h) with the stack in the masks, cleared before,
 * and the steps of its blocks kept by wide_put. */
template <typename T>
static SIMT_DEVICE void short_wide_chain(const solver_view<T> &v, const short_shared &sh, const short_lane &me,
                                         double scale) {
  hull_point step = {{0, 0}, {0, 0}};
  int top = -1, under = -1;
  for (int k = 0;; k++) {
    if (k > 0 && v.w && v.w[me.from + k - 1] == 0) { /* the top vertex takes the later index */
      if (under >= 0) wide_put(sh, me, under, k, wide_step(v, sh, me, under, top, scale));
      short_mark(sh, me, top, 0);
    } else {
      while (under >= 0) {
        hull_point t = wide_step(v, sh, me, under, top, scale);
        if (hull_turn(t, step) > 0) break;
        step = hull_point_add(t, step);
        short_mark(sh, me, top, 0);
        top = under;
        under = short_prev_vertex(sh, me, top, 0);
      }
      if (top >= 0) wide_put(sh, me, top, k, step);
      under = top;
    }
    short_mark(sh, me, k, 1);
    top = k;
    if (k == me.n) break;
    step = hull_step((double)v.y[me.from + k], v.w ? (double)v.w[me.from + k] * scale : 1.0, v.sign);
  }
}

/* The signed level of element i (0-based) of a wide row: of the step of its block (short_wide_chain),
 * as hull_edge gives it. */
template <typename T>
static SIMT_DEVICE double short_wide_level(const solver_view<T> &v, const short_shared &sh, const short_lane &me,
                                          int i, double scale) {
  int before = short_prev_vertex(sh, me, i + 1, 0), k = short_next_vertex(sh, me, i, me.used, me.n);
  hull_point e = wide_step(v, sh, me, before, k, scale);
  return hull_quotient(e.s, e.w);
}

/* The row's elements in groups of ELEMENT_GROUP(T), each group's first element at an address
 * aligned to 16 bytes (a row that is not has a partial first group, as its last may be): f(e) on
 * the first element e (row-relative, maybe negative) of each group the lane takes. The row's
 * lanes take groups q, q + lanes, ... (CUB's striped arrangement), so that a warp's lanes touch
 * consecutive 16 bytes; a lane walking its own 32 elements spread each access of a warp over 32
 * lines (86% of the sectors read were excess, Nsight on an H200, tools/bench/RESULTS.md). */
template <typename T, class F>
static SIMT_DEVICE void row_groups(const T *row, const short_lane &me, F f) {
  int g = ELEMENT_GROUP(T), before = group_lead(row);
  for (int e = me.q * g - before; me.lanes > 0 && e < me.n; e += me.lanes * g) f(e);
}

/* Elements of the row's p (y or w) into the slots, as doubles: element e at its point's slot
 * short_slot(me, e + 1), which lane_points then turns into the sum. */
template <typename T>
static SIMT_DEVICE void stage_elements(const T *p, const short_lane &me, double *slots) {
  const T *row = p + me.from;
  row_groups(row, me, [&](int e) {
    T g[ELEMENT_GROUP(T)];
    element_group(row, e, me.n, g);
    for (int h = 0; h < ELEMENT_GROUP(T); h++)
      if (e + h >= 0 && e + h < me.n) slots[short_slot(me, e + h + 1)] = (double)g[h];
  });
}

/* The team's rows (a row or a chunk each) into the lanes' slots (stage_elements), y and the
 * weights, read from there by the checks (lane_total) and the sums (lane_points). */
template <typename T, class Team, bool Weighted>
static SIMT_DEVICE void lane_stage(const solver_view<T> &v, const short_shared &sh, const Team &team,
                                   const short_lane &me) {
  stage_elements(v.y, me, sh.s);
  if (Weighted) stage_elements(v.w, me, sh.w);
  team.sync();
}

/* The lane's totals at scale 1 from its staged elements (lane_stage), validating them: chunk_total_of's
 * on the lane's elements, in the same order; *zeros its bits of weight zero (bit k: element k), up
 * to the first invalid element. */
template <bool Weighted>
static SIMT_DEVICE chunk_total lane_total(const short_shared &sh, const short_lane &me, double sign,
                                          unsigned *zeros) {
  chunk_total c = chunk_total_none();
  unsigned z = 0;
  int base = (me.lane0 + me.q) * LANE_SLOTS;
  for (int k = 0; k < me.count; k++) {
    double w = Weighted ? sh.w[base + k + 1] : 1.0;
    if (!chunk_total_add(&c, sh.s[base + k + 1], w, 1.0, sign)) {
      c.bad = me.first + k;
      break;
    }
    z |= (unsigned)(w == 0) << k;
  }
  *zeros = z;
  return c;
}

/* The lanes' points of the cumulative sum diagram in shared memory, weights scaled by `scale`:
 * each lane's sums from its first point over its staged elements (lane_stage; Sums, lane_sums.cuh;
 * unweighted, add_unit: the same sums in fewer operations), rounded as the slots round them
 * (hull_round_rel) into the elements' slots, then the lanes' totals scanned for their first
 * points. */
template <typename T, class Team, class Sums, bool Weighted>
static SIMT_DEVICE void lane_points(const solver_view<T> &v, const short_shared &sh, const Team &team,
                                    const short_lane &me, int ok, double scale) {
  hull_point zero = {{0, 0}, {0, 0}};
  Sums run;
  run.begin();
  unsigned rounded = 0, zeros = 0;
  double ms = 0; /* the largest magnitude of the lane-relative S */
  int base = (me.lane0 + me.q) * LANE_SLOTS; /* the slot of the lane's point 0, its origin */
  if (ok && me.count > 0) {
    sh.s[base] = 0;
    if (Weighted) sh.w[base] = 0;
  }
  for (int k = 0; ok && k < me.count; k++) {
    int slot = base + k + 1;
    double y = sh.s[slot];
    if (Weighted) {
      double w = sh.w[slot];
      run.add(y, w * scale, v.sign), zeros |= (unsigned)(w == 0) << k;
    } else {
      run.add_unit(y, v.sign);
    }
    double rw, rs;
    rounded |= (unsigned)hull_round_rel(run.point(), Weighted, &rw, &rs) << k;
    sh.s[slot] = rs;
    ms = fmax(ms, fabs(rs));
    if (Weighted) sh.w[slot] = rw;
  }
  hull_point t = run.point();
  hull_point p = team.exclusive_scan(
      t, [](hull_point a, hull_point b) { return hull_point{dd_add(a.w, b.w), dd_add(a.s, b.s)}; }, zero);
  if (ok && me.count > 0) {
    sh.starts[me.lane0 + me.q] = p, sh.rounded[me.lane0 + me.q] = rounded;
    if (Weighted) sh.zeros[me.lane0 + me.q] = zeros;
    double mw = fabs(t.w.hi) + fabs(t.w.lo); /* the lane's W: the weights are not negative */
    double *e = lane_bounds_at<Weighted>(sh, me.lane0 + me.q);
    e[0] = row_bound(p.s, ms);
    if (Weighted) e[1] = row_bound(p.w, mw);
  }
  team.sync();
}

/* lane_points with the sums that the view asks for: float32's plain_sums where v.plain_sums
 * (exact = FALSE), else Sums (exact_sums; the tests plant faults through it). A branch of the
 * whole launch, out of the loops, so that one kernel serves both modes, where instances of their
 * own added a third to the lane kernels (the instances are what the library's compressed device
 * code pays for). Returns whether the points are the exact sums (Sums::exact). */
template <typename T, class Team, class Sums, bool Weighted>
static SIMT_DEVICE int lane_points_as(const solver_view<T> &v, const short_shared &sh, const Team &team,
                                      const short_lane &me, int ok, double scale) {
  if (sizeof(T) == sizeof(float) && v.plain_sums) { /* float64 has no plain mode: no code for it */
    lane_points<T, Team, plain_sums, Weighted>(v, sh, team, me, ok, scale);
    return plain_sums::exact;
  }
  lane_points<T, Team, Sums, Weighted>(v, sh, team, me, ok, scale);
  return Sums::exact;
}

/* The lane hulls, then their merges in rounds: the row's hull as mask bits. Returns 1, the same
 * in every thread of the block; not Exact, 0 where any of them met a turn that it could not
 * decide (own_orient, row_orient): then the hull is not the row's, and the exact kernels take the
 * block again (lane_retry). */
template <bool Weighted, bool Exact, class Team>
static SIMT_DEVICE int lane_hulls(const short_shared &sh, const hull_slots &hs, const Team &team, const short_lane &me,
                                  int ok) {
  int unsure = 0;
  if (ok && me.count > 0) sh.masks[me.lane0 + me.q] = short_lane_hull<Weighted, Exact>(sh, hs, me, &unsure);
  team.sync();
  if (!Exact && team.block_any(unsure)) return 0; /* no merge then */
  for (int size = 1; size < team.span; size *= 2) {
    short_merges<Weighted, Exact>(sh, hs, me, size, ok, &unsure);
    team.sync();
  }
  return Exact || !team.block_any(unsure);
}

/* The row's fit, staged in the slots as the elements were (stage_elements), to v.fit in the
 * striped groups of row_groups, and its block flags: the solver's blocks from the lanes' bits
 * staged in place of their rounding bits (edge_start), else where the level changes (start). */
template <typename T>
static SIMT_DEVICE void lane_write(const solver_view<T> &v, const short_shared &sh, const short_lane &me) {
  T *fit = v.fit + me.from;
  row_groups(fit, me, [&](int e) {
    T g[ELEMENT_GROUP(T)];
    for (int h = 0; h < ELEMENT_GROUP(T); h++) {
      int i = e + h;
      g[h] = i >= 0 && i < me.n ? (T)sh.s[short_slot(me, i + 1)] : (T)0;
    }
    store_group(fit, e, me.n, g);
    for (int h = 0; h < ELEMENT_GROUP(T); h++) {
      int i = e + h;
      if (i < 0 || i >= me.n) continue;
      if (v.edge_start)
        v.edge_start[me.from + i] = sh.rounded[me.lane0 + i / SIMT_WARP] >> i % SIMT_WARP & 1u;
      else if (v.start)
        v.start[me.from + i] = i == 0 || g[h] != (h > 0 ? g[h - 1] : (T)sh.s[short_slot(me, i)]);
    }
  });
}

/* The team's elements staged again in the slots (lane_stage), over the points once every lane has
 * read them, and the slots' predicates over them, from hs over the row: lane j's elements from
 * its point 1's slot on, doubles (as the float data's converted), so that a rounded point's exact
 * sums are formed from shared memory, not one global load after another. */
template <typename T, class Team, bool Weighted>
static SIMT_DEVICE hull_slots lane_restage(const solver_view<T> &v, const short_shared &sh, const Team &team,
                                           const short_lane &me, hull_slots hs) {
  team.sync();
  lane_stage<T, Team, Weighted>(v, sh, team, me);
  hs.y = sh.s, hs.w = sh.w, hs.single = 0;
  hs.first = (int64_t)me.lane0 * LANE_SLOTS + 1, hs.chunk = LANE_SLOTS;
  return hs;
}

/* Step 5's levels of the lane's elements (a zero weight the level of the nearest positive weight
 * on its left, else on its right, `first`) into level, *top the largest: those of the bits of
 * `only`, from the points (summed 0) or from the elements staged again (summed 1, hs
 * lane_restage's). Returns the bits of the levels left NaN: from the points, those that
 * need the elements (short_edge_level). */
template <bool Weighted, typename T>
static SIMT_DEVICE unsigned lane_levels(const solver_view<T> &v, const short_shared &sh, const hull_slots &hs,
                                        const short_lane &me, int ok, int wide, int exact_points, unsigned zeros,
                                        int positive_before, int first, double scale, unsigned only, int summed,
                                        double *level, double *top) {
  int q0 = me.q * SIMT_WARP; /* the lane's first element within the row */
  unsigned need = 0;
  int edge_end = -1; /* the end of the edge above the last element whose level was taken */
  for (int k = 0, left = positive_before; ok && k < me.count; k++) {
    int i = q0 + k, j = i;
    if (Weighted && zeros >> k & 1u) j = left >= 0 ? left : first;
    else left = i;
    if (!(only >> k & 1u)) continue; /* the elements of an edge are all in `only` or none */
    if (wide) {
      level[k] = short_wide_level(v, sh, me, j, scale);
    } else if (j >= edge_end) { /* j never goes back: the edge changes past its end only */
      int u = j == edge_end ? j : short_prev_vertex(sh, me, j + 1, 0); /* the last edge's end, a vertex */
      edge_end = short_next_vertex(sh, me, j, me.used, me.n);
      level[k] = short_edge_level<Weighted>(sh, hs, me, exact_points, u, edge_end, summed);
    } else {
      level[k] = level[k - 1];
    }
    need |= (unsigned)(level[k] != level[k]) << k; /* NaN (a checked row's levels are numbers) */
    *top = level[k] > *top ? level[k] : *top;
  }
  return need;
}

/* Fits the lane's row, the team's collectives keeping every thread of the warp or block in step.
 * Returns 0 where the block is left to the exact kernels (lane_hulls), having written only its
 * rows' states and failures (step 1), which those write again the same. */
template <typename T, class Team, class Sums, bool Weighted, bool Exact>
static SIMT_DEVICE int fit_lane_row(const solver_view<T> &v, const short_shared &sh, const Team &team,
                                    const short_lane &me) {
  /* 1. the elements into shared memory, the checks and the row's scale */
  lane_stage<T, Team, Weighted>(v, sh, team, me);
  unsigned zeros; /* the lane's elements of weight zero, for step 5 */
  chunk_total c = lane_total<Weighted>(sh, me, v.sign, &zeros);
  int64_t bad = team.reduce(c.bad < 0 ? INT64_MAX : c.bad, [](int64_t x, int64_t y) { return x < y ? x : y; });
  double sum_abs = team.reduce(c.sum_abs, [](double x, double y) { return x + y; });
  double max_w = 1, min_w = 1, total_w = me.n; /* unweighted: every weight 1 */
  if (Weighted) {
    max_w = team.reduce(c.max_w, [](double x, double y) { return x > y ? x : y; });
    min_w = team.reduce(c.min_w, [](double x, double y) { return x < y ? x : y; });
    total_w = team.reduce(c.w.hi, [](double x, double y) { return x + y; }); /* for hull_is_wide */
  }
  row_state st = {1.0, 0, GPUISO_OK, -1, 0};
  if (Weighted && max_w > 0) {
    int e = 0;
    frexp(max_w, &e);
    st.scale = ldexp(1.0, -(e < -1023 ? -1023 : e)); /* a double, as hull.c's */
  }
  if (bad != INT64_MAX) st.status = element_status(v, bad), st.index = bad;
  else if (hull_span_beyond(min_w * st.scale)) st.status = GPUISO_E_W_SPAN;
  else if (!isfinite(sum_abs)) st.status = GPUISO_E_OVERFLOW;
  else if (max_w == 0) st.status = GPUISO_E_W_ALLZERO;
  int ok = me.row >= 0 && st.status == GPUISO_OK;
  if (me.row >= 0 && me.q == 0 && me.n > 0) {
    v.rows[me.row] = st;
    if (st.status != GPUISO_OK) lower_failed_row(v.failed_row, me.row);
  }

  /* 2. the points, 3. the lane hulls, 4. their merges; a wide row's hull by one thread on the
   * steps instead */
  int wide = ok && hull_is_wide(min_w * st.scale, hull_reach(total_w * st.scale, sum_abs * st.scale));
  hull_slots hs = lane_slots(v, sh, me, st.scale);
  int exact_points = lane_points_as<T, Team, Sums, Weighted>(v, sh, team, me, ok && !wide, st.scale);
  if (!lane_hulls<Weighted, Exact>(sh, hs, team, me, ok && !wide)) return 0;
  if (wide && me.count > 0) sh.masks[me.lane0 + me.q] = 0;
  team.sync();
  if (wide && me.q == 0) short_wide_chain(v, sh, me, st.scale);
  team.sync();

  /* 5. the levels, zero weights, the running maximum, clipped and written. The positive weight
   * nearest on the left of each element (row-relative, -1 if none) comes from a scan of the
   * lanes' last ones, the row's first from a reduction (unweighted: the element before, and 0). */
  int q0 = me.q * SIMT_WARP; /* the lane's first element within the row */
  int positive_before = q0 - 1, first = 0;
  if (Weighted) {
    unsigned positive = ok ? ~zeros & (me.count < SIMT_WARP ? (1u << me.count) - 1u : ~0u) : 0u;
    int last = positive ? q0 + 31 - simt::clz(positive) : -1;
    first = positive ? q0 + simt::ffs(positive) - 1 : INT_MAX;
    positive_before = (int)team.exclusive_scan((int64_t)last, [](int64_t a, int64_t b) { return a > b ? a : b; }, (int64_t)-1);
    first = (int)team.reduce((int64_t)first, [](int64_t a, int64_t b) { return a < b ? a : b; });
  }
  double level[SIMT_WARP], top = -INFINITY;
  unsigned again = lane_levels<Weighted>(v, sh, hs, me, ok, wide, exact_points, zeros, positive_before, first,
                                         st.scale, ~0u, 0, level, &top);
  if (team.block_any(again != 0)) /* the elements again, for the levels of rounded points */
    lane_levels<Weighted>(v, sh, lane_restage<T, Team, Weighted>(v, sh, team, me, hs), me, ok, wide, exact_points,
                          zeros, positive_before, first, st.scale, again, 1, level, &top);
  double before = team.exclusive_scan(top, [](double a, double b) { return a > b ? a : b; }, -(double)INFINITY);
  team.sync(); /* every lane has its levels: the slots are free for the fit */
  int base = (me.lane0 + me.q) * LANE_SLOTS;
  for (int k = 0; ok && k < me.count; k++) {
    before = level[k] > before ? level[k] : before;
    sh.s[base + k + 1] = (double)(T)clip(v.sign * before, v.lo, v.hi);
  }
  if (v.edge_start && ok && me.count > 0) { /* the solver's blocks: from a vertex, past the zero weights on it */
    unsigned mask = sh.masks[me.lane0 + me.q], starts = 0;
    for (int k = 0, left = positive_before, vertex = -1; k < me.count; k++) {
      int i = q0 + k;
      if (k == 0) /* the last vertex up to i: found once, then from the lane's own bits */
        vertex = short_prev_vertex(sh, me, i + 1, 0);
      else if (mask >> k & 1u)
        vertex = i;
      int positive = !Weighted || !(zeros >> k & 1u);
      starts |= (unsigned)(i == 0 || (positive && left >= 0 && vertex > left)) << k;
      if (positive) left = i;
    }
    sh.rounded[me.lane0 + me.q] = starts; /* the points' rounding bits are read no more */
  }
  team.sync();
  if (ok) lane_write(v, sh, me);
  return 1;
}

/* The blocks that a lane kernel's filtered instance (Exact false) could not fit, for its exact
 * instance: how many, then which (lane_launch zeroes the count before the filtered launch). Apart,
 * the filtered instances leave out the exact sums' registers: 83 to 96 a thread unweighted, 94 to
 * 110 weighted, under nvcc 13.0 for sm_90, where the exact ones take 124 to 128, so that their
 * shared memory, not their registers, bounds the warps an SM (21 unweighted, where 16). A block
 * listed has run its lane hulls twice. */
struct lane_retry {
  unsigned *count, *list;
};

/* fit(b) on the kernel's blocks b, each fit returning 0 where it left its block: not Exact, the
 * kernel's own block, listed in r where left; Exact, the blocks listed in r, the grid striding
 * over them. */
template <bool Exact, class Fit>
static SIMT_DEVICE void lane_blocks(lane_retry r, Fit fit) {
  if constexpr (Exact) {
    for (unsigned i = simt::block_idx().x; i < *r.count; i += simt::grid_dim().x) {
      fit(r.list[i]);
      simt::sync_block(); /* the shared memory is free again */
    }
  } else {
    unsigned b = simt::block_idx().x;
    if (!fit(b) && simt::thread_rank() == 0) r.list[simt::atomic_add(r.count, 1u)] = b;
  }
}

/* The scratch of lane_rows_kernel's team with `threads` threads: a word a warp across warps, none
 * for one warp. */
static inline GPUISO_HD size_t lane_rows_scratch(int threads) {
  return threads > SIMT_WARP ? (size_t)threads / SIMT_WARP * BLOCK_TEAM_WORD : 0;
}

/* The dynamic shared memory of lane_rows_kernel with `threads` threads: the points, the team's
 * scratch, the masks: 9.75 KB unweighted and 18.4 KB weighted for a warp, 39 KB and 73.5 KB for four. */
static inline GPUISO_HD size_t lane_rows_shared(int threads, int weighted) {
  return lane_shared_bytes(threads, weighted, lane_rows_scratch(threads));
}

/* Rows of up to BLOCK_ROW_MAX elements, one kernel for its two kinds of launch (lane_team):
 * blocks of one warp, each a pack of rows of up to SHORT_ROW_MAX (pack_row[pack_first[b]..
 * pack_first[b + 1]), short_lane_of), and blocks of two or four warps, each a longer row
 * (pack_first NULL: the row pack_row[b]). */
template <typename T, class Sums, bool Weighted, bool Exact>
SIMT_KERNEL LANE_BOUNDS(BLOCK_ROW_MAX / SIMT_WARP) void lane_rows_kernel(solver_view<T> v, const int64_t *pack_row,
                                                                         const int64_t *pack_first, lane_retry retry) {
  lane_blocks<Exact>(retry, [&](unsigned b) {
    int threads = (int)simt::block_dim().x;
    unsigned char *scratch;
    short_shared sh =
        lane_shared_at<Weighted>(simt::dynamic_shared<unsigned char>(), threads, lane_rows_scratch(threads), &scratch);
    short_lane me = pack_first ? short_lane_of(v, pack_row, pack_first, b, simt::lane())
                               : block_lane_of(v, pack_row[b], (int)simt::thread_rank());
    lane_team team = {{me.lane0, me.lanes}, {short_row_lanes(me.n), scratch, threads}, threads};
    return fit_lane_row<T, lane_team, Sums, Weighted, Exact>(v, sh, team, me);
  });
}

#endif

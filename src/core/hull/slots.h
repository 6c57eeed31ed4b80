/* The vertex slots of the chunk hulls in chunk-relative doubles (paper, section 6), shared by the
 * CPU hull engine and the CUDA kernels.
 *
 * A vertex is kept as its point less its chunk's first point, each coordinate rounded to one
 * double, and its point index within the chunk: 20 bytes with weights, 12 without (W is then the
 * index). The chunk's first point is a double-double pair (from the scan of the chunk totals).
 * Predicates and levels are computed from the rounded coordinates with an a-priori bound on their
 * error; where it cannot decide, the vertex's exact chunk-relative pair is formed again from the
 * chunk's elements, so that every decision is the one the pairs of the points would take.
 */
#ifndef GPUISO_HULL_SLOTS_H
#define GPUISO_HULL_SLOTS_H

#include "geometry.h"

/* The largest chunk: twice a point index within it, plus the rounding flag, fits an int32. */
#define HULL_CHUNK_MAX (1 << 30)

/* Edges of at most this many elements take their level from their elements' sums: the rounded
 * coordinates of short edges would lose digits where weights span e^+-8. */
#define HULL_SHORT_EDGE 64

typedef struct {
  const hull_point *starts; /* each chunk's first point */
  double *vd;               /* the vertices' chunk-relative (W, S), rounded; S alone unweighted */
  int weighted;             /* (W is then the point index) */
  int32_t *vi;              /* 2 * (point index within the chunk) + 1 where W or S was rounded */
  int64_t slot, chunk;      /* entries per slot; elements per chunk */
  int64_t chunk0, first;    /* the row's first chunk and first element */
  const void *y, *w;        /* the row's elements (w NULL: all 1), float when single */
  int single;
  double scale, sign;       /* the weights' scale, -1 for a decreasing fit */
} hull_slots;

/* A vertex as the predicates take it: rel is exact, or rounded from the exact one (rounded). */
typedef struct {
  int64_t chunk, k;  /* its chunk and point index within the chunk */
  hull_point rel;    /* its point less the chunk's first point */
  int rounded;
} hull_vertex;

/* Element i of y (w) as a double, the weight scaled. */
static inline GPUISO_HD double hull_y(const hull_slots *v, int64_t i) {
  return v->single ? (double)((const float *)v->y)[i] : ((const double *)v->y)[i];
}

static inline GPUISO_HD double hull_w(const hull_slots *v, int64_t i) {
  if (!v->w) return 1.0;
  return (v->single ? (double)((const float *)v->w)[i] : ((const double *)v->w)[i]) * v->scale;
}

/* The first element of chunk c. */
static inline GPUISO_HD int64_t hull_chunk_first(const hull_slots *v, int64_t c) {
  return v->first + (c - v->chunk0) * v->chunk;
}

/* Elements the exact levels' sums load before they add them (hull_vertices_exact): with 8,
 * fit_warp_kernel takes 118 (float) and 120 (double) registers where it took 114 (nvcc 13.0,
 * sm_90), the same 16 warps an SM in its blocks of four warps. */
#define HULL_SUM_BATCH 8

/* The sums (W, S) of elements [from, to), from p, as hull_advance forms a chunk's points: the
 * same additions in the same order whatever `batch` (1 to HULL_SUM_BATCH, a constant), the
 * elements it loads at once before it adds them. A device thread that sums a chunk so (where
 * the filters cannot decide) waits on each load when it takes them one at a time; a batch has
 * them in flight together, at the cost of its registers. */
static inline GPUISO_HD hull_point hull_sums_by(const hull_slots *v, hull_point p, int64_t from, int64_t to,
                                                int batch) {
  int64_t i = from;
  for (; i + batch <= to; i += batch) {
    double y[HULL_SUM_BATCH], w[HULL_SUM_BATCH];
    for (int k = 0; k < batch; k++) y[k] = hull_y(v, i + k), w[k] = hull_w(v, i + k);
    for (int k = 0; k < batch; k++) p = hull_advance(p, y[k], w[k], v->sign);
  }
  /* the rest, fewer than a batch: none for batches of one, whose callers' code stays as it was */
  for (; batch > 1 && i < to; i++) p = hull_advance(p, hull_y(v, i), hull_w(v, i), v->sign);
  return p;
}

/* hull_sums_by an element at a time: for the lane and chunk kernels, where a batch's registers
 * could cost warps. */
static inline GPUISO_HD hull_point hull_sums(const hull_slots *v, hull_point p, int64_t from, int64_t to) {
  return hull_sums_by(v, p, from, to, 1);
}

/* Slot entry e's W (weighted slots only) and S: side by side, so that a vertex is one load of 16
 * bytes and a chunk's few vertices share their pages. */
static inline GPUISO_HD double *hull_slot_w(const hull_slots *v, int64_t e) { return v->vd + 2 * e; }

static inline GPUISO_HD double *hull_slot_s(const hull_slots *v, int64_t e) {
  return v->vd + (v->weighted ? 2 * e + 1 : e);
}

/* The point index of slot entry e: the element whose block it starts, when it is one. */
static inline GPUISO_HD int64_t hull_entry_index(const hull_slots *v, int64_t e) {
  return hull_chunk_first(v, e / v->slot) + (v->vi[e] >> 1);
}

/* A point relative to its chunk's (or lane's) first point rounded to doubles *rw and *rs: a pair's
 * high part is the nearest double where its low part is zero; otherwise its sum is. Returns
 * whether either coordinate kept (W only where weighted) was rounded. */
static inline GPUISO_HD int hull_round_rel(hull_point rel, int weighted, double *rw, double *rs) {
  *rw = rel.w.hi + rel.w.lo, *rs = rel.s.hi + rel.s.lo;
  return rel.s.lo != 0 || (weighted && rel.w.lo != 0);
}

/* Writes the vertex of point index k within chunk c, at rel from the chunk's first point, to
 * slot entry e, rounded to doubles (hull_round_rel), with the flag where it was rounded. */
static inline GPUISO_HD void hull_slot_put(const hull_slots *v, int64_t e, hull_point rel, int64_t k) {
  double rw, rs;
  int rounded = hull_round_rel(rel, v->weighted, &rw, &rs);
  if (v->weighted) *hull_slot_w(v, e) = rw;
  *hull_slot_s(v, e) = rs;
  v->vi[e] = (int32_t)(2 * k + rounded);
}

static inline GPUISO_HD hull_vertex hull_vertex_at(const hull_slots *v, int64_t e) {
  int64_t k = v->vi[e] >> 1;
  hull_vertex q = {e / v->slot, k, {{v->weighted ? *hull_slot_w(v, e) : (double)k, 0}, {*hull_slot_s(v, e), 0}},
                   v->vi[e] & 1};
  return q;
}

/* The vertex's exact chunk-relative pair where rounded: the sums of its chunk's elements from
 * point k0 (exact, at p) to it, in batches of `batch` (hull_sums_by). */
static inline GPUISO_HD hull_vertex hull_vertex_exact_from(const hull_slots *v, hull_vertex q, hull_point p, int64_t k0,
                                                           int batch) {
  if (!q.rounded) return q;
  int64_t from = hull_chunk_first(v, q.chunk);
  q.rel = hull_sums_by(v, p, from + k0, from + q.k, batch);
  q.rounded = 0;
  return q;
}

/* The vertex's exact chunk-relative pair, formed again from its chunk's elements where rounded. */
static inline GPUISO_HD hull_vertex hull_vertex_exact(const hull_slots *v, hull_vertex q) {
  hull_point zero = {{0, 0}, {0, 0}};
  return hull_vertex_exact_from(v, q, zero, 0, 1);
}

/* Vertices a and b exact (hull_vertex_exact), their sums in batches of HULL_SUM_BATCH elements;
 * where both were rounded in the same chunk, in one pass over its elements: the sums to the
 * farther go on from the nearer's, the same additions in the same order as a pass of its own
 * from the chunk's first element. The two are chosen as values, not pointers, which would put
 * them in a device's local memory. */
static inline GPUISO_HD void hull_vertices_exact(const hull_slots *v, hull_vertex *a, hull_vertex *b) {
  hull_point zero = {{0, 0}, {0, 0}};
  int swap = a->k > b->k, joint = a->chunk == b->chunk && a->rounded && b->rounded;
  hull_vertex nearer = hull_vertex_exact_from(v, swap ? *b : *a, zero, 0, HULL_SUM_BATCH);
  hull_vertex farther = hull_vertex_exact_from(v, swap ? *a : *b, joint ? nearer.rel : zero, joint ? nearer.k : 0,
                                               HULL_SUM_BATCH);
  *a = swap ? farther : nearer, *b = swap ? nearer : farther;
}

/* The vertex's point: relative to its chunk's first point where all the points compared share
 * the chunk (exact), else with the chunk's first point added. */
static inline GPUISO_HD hull_point hull_vertex_point(const hull_slots *v, hull_vertex q, int relative) {
  if (relative) return q.rel;
  hull_point s = v->starts[q.chunk], p = {dd_add(s.w, q.rel.w), dd_add(s.s, q.rel.s)};
  return p;
}

/* A bound on the rounding of a chunk-relative coordinate `rel` (2u of it) where it was rounded. */
static inline GPUISO_HD double hull_round_error(double rel, int rounded) {
  return rounded ? 0x1p-52 * fabs(rel) : 0.0;
}

/* A bound on the error of a coordinate of hull_vertex_point from its chunk's first point `start`
 * and its chunk-relative `rel`: the rounding of rel, and the pair additions (which err by less
 * than 2^-100 of the terms added, with room for the differences taken of them). */
static inline GPUISO_HD double hull_coord_error(double rel, double start, int rounded, int relative) {
  return hull_round_error(rel, rounded) + (relative ? 0.0 : 0x1p-100 * (fabs(start) + fabs(rel)));
}

/* hull_orient on the exact points of three vertices, `relative` where all three share a chunk. */
static inline GPUISO_HD int hull_orient_exact_vertices(const hull_slots *v, hull_vertex a, hull_vertex b,
                                                       hull_vertex c, int relative) {
  a = hull_vertex_exact(v, a), b = hull_vertex_exact(v, b), c = hull_vertex_exact(v, c);
  return hull_orient(hull_vertex_point(v, a, relative), hull_vertex_point(v, b, relative),
                     hull_vertex_point(v, c, relative));
}

/* hull_orient_exact_vertices out of line, so that it leaves the filtered path of its callers
 * lean (and the lane kernels' exact instances small: own_orient and row_orient,
 * src/cuda/short_rows.cuh). */
static GPUISO_COLD GPUISO_HD int hull_orient_exact_vertices_cold(const hull_slots *v, hull_vertex a, hull_vertex b,
                                                                 hull_vertex c, int relative) {
  return hull_orient_exact_vertices(v, a, b, c, relative);
}

/* A coordinate's difference b - a of two vertices, each its chunk's first point's coordinate (a
 * pair; zero where relative) plus its chunk-relative one (a pair), from the parts apart, without
 * forming the points: the high parts' differences and the low parts' added. Each of its six
 * roundings errs by at most u of what it adds, so the value is within 4u m of the exact
 * difference of the parts, for the magnitude *m. */
static inline GPUISO_HD double hull_coord_diff(dd sb, dd rb, dd sa, dd ra, double *m) {
  double h = sb.hi - sa.hi, r = rb.hi - ra.hi;
  *m = fabs(h) + fabs(r) + (fabs(sb.lo) + fabs(sa.lo)) + (fabs(rb.lo) + fabs(ra.lo));
  return h + (r + ((sb.lo - sa.lo) + (rb.lo - ra.lo)));
}

/* The filter of hull_orient_vertices: the cross product of the differences of hull_coord_diff,
 * each within 4u of its magnitude A or B, so the product within 10u (A1 B2 + B1 A2) of the exact
 * one on the parts (1.5e-15 covers it, with the second-order terms), the bound widened by the
 * coordinates' errors (e) carried through the two products. The sign, or 0 where it cannot
 * decide. */
static inline GPUISO_HD int hull_orient_vertices_filter(const hull_slots *v, hull_vertex a, hull_vertex b,
                                                        hull_vertex c, int relative) {
  const hull_point *s = v->starts, none = {{0, 0}, {0, 0}};
  hull_point sa = relative ? none : s[a.chunk], sb = relative ? none : s[b.chunk], sc = relative ? none : s[c.chunk];
  double ewa = hull_coord_error(a.rel.w.hi, sa.w.hi, a.rounded, relative),
         esa = hull_coord_error(a.rel.s.hi, sa.s.hi, a.rounded, relative);
  double ex1 = ewa + hull_coord_error(b.rel.w.hi, sb.w.hi, b.rounded, relative),
         ey1 = esa + hull_coord_error(b.rel.s.hi, sb.s.hi, b.rounded, relative),
         ex2 = ewa + hull_coord_error(c.rel.w.hi, sc.w.hi, c.rounded, relative),
         ey2 = esa + hull_coord_error(c.rel.s.hi, sc.s.hi, c.rounded, relative);
  double A1, B1, A2, B2;
  double x1 = hull_coord_diff(sb.w, b.rel.w, sa.w, a.rel.w, &A1), y1 = hull_coord_diff(sb.s, b.rel.s, sa.s, a.rel.s, &B1),
         x2 = hull_coord_diff(sc.w, c.rel.w, sa.w, a.rel.w, &A2), y2 = hull_coord_diff(sc.s, c.rel.s, sa.s, a.rel.s, &B2);
  double det = x1 * y2 - y1 * x2, mag = A1 * B2 + B1 * A2;
  double bound = 1.5e-15 * mag + 1.01 * (A1 * ey2 + ex1 * (B2 + ey2) + B1 * ex2 + ey1 * (A2 + ex2));
  if (hull_filter_range(mag) && fabs(det) > bound) return det > 0 ? 1 : -1;
  return 0;
}

/* Whether three vertices share a chunk, so that the predicates take them relative to it. */
static inline GPUISO_HD int hull_vertices_relative(hull_vertex a, hull_vertex b, hull_vertex c) {
  return a.chunk == b.chunk && b.chunk == c.chunk;
}

/* hull_orient for vertices: the filter, else the exact points. The three in the reverse order
 * (c left of b left of a) turn exactly the other way: the filter decides only where its sign is
 * the exact one of the points as represented, whichever point it takes the differences from, and
 * the exact points' turn is exact (pair_walk, src/cuda/merge_level.cuh). */
static inline GPUISO_HD int hull_orient_vertices(const hull_slots *v, hull_vertex a, hull_vertex b, hull_vertex c) {
  int relative = hull_vertices_relative(a, b, c);
  int turn = hull_orient_vertices_filter(v, a, b, c, relative);
  return turn ? turn : hull_orient_exact_vertices_cold(v, a, b, c, relative);
}

/* The slope of an edge over the elements [from, to) where that is one element of weight 1
 * (unweighted): its signed value, exact (finite, as a checked row's), to *slope. It is the
 * quotient hull_vertex_slope takes of the element's sums, and the one hull_slope rounds from the
 * points wherever their sums are exact in pairs (every row but those whose values span more bits
 * than a pair holds, where it is the nearer). Returns whether it is taken: not for other edges,
 * nor where zero, the quotient's sign of zero being its own. */
static inline GPUISO_HD int hull_unit_slope(const hull_slots *v, int64_t from, int64_t to, double *slope) {
  if (to - from != 1 || v->w) return 0;
  *slope = v->sign * hull_y(v, from);
  return *slope != 0;
}

/* The level of the elements [ia, ib) under the edge from vertex a to vertex b (their point
 * indices): of short edges from the elements' sums, of longer ones from the rounded
 * coordinates where the error bound allows 2^-50 of it, else from the exact points. */
static inline GPUISO_HD double hull_vertex_slope(const hull_slots *v, hull_vertex a, hull_vertex b,
                                                 int64_t ia, int64_t ib) {
  if (ib - ia <= HULL_SHORT_EDGE) {
    hull_point zero = {{0, 0}, {0, 0}}, d = hull_sums(v, zero, ia, ib);
    return hull_quotient(d.s, d.w);
  }
  int relative = a.chunk == b.chunk;
  hull_point pa = hull_vertex_point(v, a, relative), pb = hull_vertex_point(v, b, relative);
  const hull_point *s = v->starts;
  double ew = hull_coord_error(a.rel.w.hi, s[a.chunk].w.hi, a.rounded, relative) +
              hull_coord_error(b.rel.w.hi, s[b.chunk].w.hi, b.rounded, relative);
  double es = hull_coord_error(a.rel.s.hi, s[a.chunk].s.hi, a.rounded, relative) +
              hull_coord_error(b.rel.s.hi, s[b.chunk].s.hi, b.rounded, relative);
  dd nw = {-pa.w.hi, -pa.w.lo}, ns = {-pa.s.hi, -pa.s.lo};
  dd dw = dd_add(pb.w, nw), ds = dd_add(pb.s, ns);
  double q = hull_quotient(ds, dw);
  if (isfinite(q) && es + fabs(q) * ew <= 0x1p-50 * fabs(q) * dw.hi) return q;
  hull_vertices_exact(v, &a, &b);
  return hull_slope(hull_vertex_point(v, a, relative), hull_vertex_point(v, b, relative));
}

#endif

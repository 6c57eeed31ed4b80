/* The chunk level and the reconstruction of the hull engine, element by element: shared by the
 * CPU engine (hull.c) and the CUDA kernels (src/cuda), which keep only the loops over their own
 * element types.
 */
#ifndef GPUISO_HULL_CHUNK_H
#define GPUISO_HULL_CHUNK_H

#include "merge.h"

typedef struct {
  dd w, s;          /* the chunk's totals */
  double sum_abs;   /* of w * |y| */
  double max_w;     /* the largest weight */
  double min_w;     /* the smallest positive weight (INFINITY: none), unscaled */
  int64_t bad;      /* first invalid element, or -1 */
} chunk_total;

/* The totals of no element. */
static inline GPUISO_HD chunk_total chunk_total_none(void) {
  chunk_total c = {{0, 0}, {0, 0}, 0, 0, INFINITY, -1};
  return c;
}

/* Adds element (yi, wi) to the totals, from the rounded product w * y (as hull_advance), with the weight scaled by
 * scale (a power of two, which changes no slope) and y by sign (-1 for a decreasing fit). Returns
 * 0, adding nothing, when y is not finite or w is not finite and non-negative. */
static inline GPUISO_HD int chunk_total_add(chunk_total *c, double yi, double wi, double scale,
                                            double sign) {
  if (!isfinite(yi) || !(wi >= 0 && wi < INFINITY)) return 0;
  c->sum_abs += wi * fabs(yi);
  c->max_w = wi > c->max_w ? wi : c->max_w;
  c->min_w = wi > 0 && wi < c->min_w ? wi : c->min_w;
  wi *= scale;
  c->w = dd_add_d(c->w, wi);
  c->s = dd_add_d(c->s, wi * (sign * yi));
  return 1;
}

/* chunk_total_add of an element of weight 1 at scale 1 (unweighted data): the same totals in
 * fewer operations, the weights' sum a count (its high part exact, its low part zero), for the
 * device's pass over every element of a batch. */
static inline GPUISO_HD int chunk_total_add_unit(chunk_total *c, double yi, double sign) {
  if (!isfinite(yi)) return 0;
  c->sum_abs += fabs(yi);
  c->max_w = 1, c->min_w = 1;
  c->w.hi += 1;
  c->s = dd_add_d(c->s, sign * yi);
  return 1;
}

/* Whether a row's points may not hold the steps between them to about 1e-12 of the output, so
 * that its hull must be decided on the steps (one chain over the row: wide.h): a double-double
 * sum errs by at most about 2^-94 of the largest magnitude it reaches (reach: the row's total
 * weight or its sum of w |y|, whichever is larger), and the step of one element is at least its weight (min_w: the row's smallest positive one). Both scaled as
 * the weights are. Data of ordinary ranges (weights within e^+-8 of each other, values not far
 * above the weights' scale times 2^50) stay on the points. A row's property, not its chunks', so
 * that the fit does not depend on the chunking. */
static inline GPUISO_HD int hull_is_wide(double min_w, double reach) { return min_w < 0x1p-50 * reach; }

/* Whether a row's weights span more than the hull solver holds: its smallest positive weight,
 * scaled as the weights are (the largest in [1/2, 1)), below the doubles' normal range, where its
 * steps and their products with y keep too few digits for the predicates to be exact (PAV's sums
 * are not scaled so: it fits such rows). A ratio of about 2^1022 (4e307) or more. */
static inline GPUISO_HD int hull_span_beyond(double min_w) { return min_w < 0x1p-1022; }

/* The reach of hull_is_wide from a row's total weight and sum of w |y|, scaled. */
static inline GPUISO_HD double hull_reach(double total_w, double sum_abs) {
  return total_w > sum_abs ? total_w : sum_abs;
}

/* One step of the monotone chain: adds point p, of point index k, to the lower hull of h vertices
 * in vert and index, and returns the new count. Collinear middle points are dropped. repeat: the
 * element before p weighs zero, so p is the last vertex's point again; the vertex takes the later
 * index, so that the element lies under the edge on its left and joins the block there, as in
 * the PAV engine. */
static inline GPUISO_HD int64_t hull_push(hull_point *vert, int64_t *index, int64_t h, hull_point p,
                                          int64_t k, int repeat) {
  if (repeat) {
    index[h - 1] = k;
    return h;
  }
  while (h >= 2 && hull_orient(vert[h - 2], vert[h - 1], p) <= 0) h--;
  vert[h] = p;
  index[h] = k;
  return h + 1;
}

/* hull_push with the stack in chunk c's slot (slots.h), for a thread that has no other memory:
 * p is the exact chunk-relative point of point index k within the chunk, before the one pushed
 * last, the top vertex's until the first pop (so that points on one line, whose rounded
 * coordinates the filter cannot decide, are not formed again from the elements). */
static inline GPUISO_HD int64_t hull_slot_push(const hull_slots *v, int64_t c, int64_t h, hull_point p,
                                               hull_point before, int64_t k, int repeat) {
  int64_t e0 = c * v->slot;
  if (repeat) {
    v->vi[e0 + h - 1] = (int32_t)(2 * k + (v->vi[e0 + h - 1] & 1));
    return h;
  }
  hull_vertex q = {c, k, p, 0}, top = {c, 0, before, 0};
  for (; h >= 2 && hull_orient_vertices(v, hull_vertex_at(v, e0 + h - 2), top, q) <= 0; h--)
    top = hull_vertex_at(v, e0 + h - 2);
  hull_slot_put(v, e0 + h, p, k);
  return h + 1;
}

/* The edge of the root list from its vertex q: *next gets the vertex it ends at and *end that
 * vertex's point index; the elements from q's point index up to *end lie under the edge. Returns
 * their level, sign times the edge's slope (unclipped). An edge over one element of weight 1
 * (every edge of strictly increasing unweighted data) takes hull_unit_slope, without the vertices' loads
 * and the divisions. */
static inline GPUISO_HD double hull_edge(const hull_slots *v, const hull_segment *root, hull_pos q,
                                         double sign, hull_pos *next, int64_t *end) {
  hull_pos r = hull_next(root, q);
  *next = r;
  *end = hull_index(v, root, r);
  int64_t from = hull_index(v, root, q);
  double slope;
  if (hull_unit_slope(v, from, *end, &slope)) return sign * slope;
  return sign * hull_vertex_slope(v, hull_at(v, root, q), hull_at(v, root, r), from, *end);
}

/* Whether element i, the first under the edge from vertex q of the root list, starts one of the
 * solver's blocks: i is the row's first element, or q's point is i's and q is not the first
 * vertex (whose point leading zero weights share: they and it are the first block). */
static inline GPUISO_HD int hull_block_start(const hull_slots *v, const hull_segment *root,
                                             hull_pos q, int64_t i, int64_t first) {
  return i == first || (i == hull_index(v, root, q) && (q.t > 0 || q.p > root[0].first));
}

#endif

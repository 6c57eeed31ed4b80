/* The join of a row fitted in segments (pipeline.cuh, fit_row_segments), on the host: each segment
 * was fitted on the device as a row of its own, giving its levels and its solver blocks; the
 * row's fit pools whole blocks of the segments' fits (pooling in any order ends in the same
 * blocks), so only blocks near the cuts change. At each cut, PAV on blocks: the first block after
 * the cut pools with the blocks on its left while they step against the direction, then with
 * those on its right, as PAV pools elements, deciding on the blocks' steps (W, S as pairs of
 * pairs, hull/geometry.h) summed from their elements, as the hull engine's wide rows (hull/wide.h).
 * Blocks are read from the segments' flags as they are needed, and those pooled are written once,
 * at the end: the work is that of the elements of the blocks pooled or compared, not of the row.
 */
#ifndef GPUISO_CUDA_ROW_JOIN_CUH
#define GPUISO_CUDA_ROW_JOIN_CUH

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hull/chunk.h"
#include "internal.h"

/* Elements [b, e) of the row, their step, and whether the join pooled them (their level is new). */
struct join_block {
  int64_t b, e;
  hull_point step;
  int pooled;
};

/* The row (y, w: NULL where unweighted, weights scaled by `scale`), its fit and the segments'
 * solver block flags, and the stack of the blocks the join has read, in order of position (gaps
 * between them hold blocks it has not read, which keep the segments' fit). */
template <typename T>
struct row_join {
  int64_t n;
  const T *y, *w;
  double scale, sign;
  T *fit;
  uint8_t *flags;
  join_block *stack;
  int64_t top, cap;
};

/* The power of two that brings the row's largest weight near 1, as the hull engine scales its
 * rows (hull.c), so that the steps neither overflow nor lose digits to underflow; 0 where the
 * row's weights span too far for that (hull_span_beyond), though no segment's may. Read from w:
 * the segments' row states hold their scales (the row's is the smallest), but the row PAV kernel
 * keeps no row states. */
template <typename T>
static double join_scale(int64_t n, const T *w) {
  double max_w = 0, min_w = INFINITY;
  for (int64_t i = 0; w && i < n; i++) {
    double wi = (double)w[i];
    if (!(wi > 0 && wi < INFINITY)) continue;
    max_w = wi > max_w ? wi : max_w;
    min_w = wi < min_w ? wi : min_w;
  }
  int e = 0;
  if (max_w > 0) frexp(max_w, &e);
  double scale = ldexp(1.0, e < -1023 ? 1023 : -e);
  return hull_span_beyond(min_w * scale) ? 0 : scale;
}

template <typename T>
static hull_point join_step(const row_join<T> &j, int64_t b, int64_t e) {
  hull_point d = {{0, 0}, {0, 0}};
  for (int64_t i = b; i < e; i++)
    d = hull_point_add(d, hull_step((double)j.y[i], j.w ? (double)j.w[i] * j.scale : 1.0, j.sign));
  return d;
}

/* The block of the segments' fit that ends before element a, not starting before lim. */
template <typename T>
static join_block join_before(const row_join<T> &j, int64_t a, int64_t lim) {
  int64_t b = a - 1;
  while (b > lim && !j.flags[b]) b--;
  join_block k = {b, a, join_step(j, b, a), 0};
  return k;
}

/* The block of the segments' fit that starts at element a, not ending after end. */
template <typename T>
static join_block join_after(const row_join<T> &j, int64_t a, int64_t end) {
  int64_t e = a + 1;
  while (e < end && !j.flags[e]) e++;
  join_block k = {a, e, join_step(j, a, e), 0};
  return k;
}

static join_block join_pool(join_block l, join_block r) {
  join_block k = {l.b, r.e, hull_point_add(l.step, r.step), 1};
  return k;
}

template <typename T>
static int join_push(row_join<T> *j, join_block k) {
  if (j->top == j->cap) {
    int64_t cap = j->cap ? 2 * j->cap : 64;
    join_block *s = (join_block *)realloc(j->stack, (size_t)cap * sizeof *s);
    if (!s) return 0;
    j->stack = s, j->cap = cap;
  }
  j->stack[j->top++] = k;
  return 1;
}

/* The cut before element c, the segment after it ending at d (its blocks not yet joined): PAV on
 * blocks, pooling where the step on the right does not turn left of the one on the left (as
 * hull_wide_chain). Returns 0 out of memory. */
template <typename T>
static int join_cut(row_join<T> *j, int64_t c, int64_t d) {
  join_block cur = join_after(*j, c, d);
  for (;;) {
    while (cur.b > 0) {
      join_block left;
      if (j->top > 0 && j->stack[j->top - 1].e == cur.b) left = j->stack[--j->top];
      else left = join_before(*j, cur.b, j->top > 0 ? j->stack[j->top - 1].e : 0);
      if (hull_turn(left.step, cur.step) > 0) {
        if (!join_push(j, left)) return 0;
        break;
      }
      cur = join_pool(left, cur);
    }
    /* a block pooled with its left now steps less than before, and may meet the one after it */
    if (!cur.pooled || cur.e == d) break;
    join_block right = join_after(*j, cur.e, d);
    if (hull_turn(cur.step, right.step) > 0) break;
    cur = join_pool(cur, right);
  }
  return join_push(j, cur);
}

/* The pooled blocks' levels and flags, written over the segments' fit; then, where a new level's
 * rounding put it on the wrong side of a neighbour's, the running maximum (minimum) of the row, as
 * the engines keep their fits from stepping against the direction. */
template <typename T>
static void join_write(const row_join<T> &j) {
  int stepped = 0;
  for (int64_t k = 0; k < j.top; k++) {
    join_block b = j.stack[k];
    if (!b.pooled) continue;
    T z = (T)(j.sign * hull_quotient(b.step.s, b.step.w));
    for (int64_t i = b.b; i < b.e; i++) j.fit[i] = z;
    memset(j.flags + b.b, 0, (size_t)(b.e - b.b));
    j.flags[b.b] = 1;
  }
  for (int64_t k = 0; k < j.top; k++) {
    join_block b = j.stack[k];
    if (!b.pooled) continue;
    if (b.b > 0) stepped = stepped || j.sign * ((double)j.fit[b.b] - (double)j.fit[b.b - 1]) < 0;
    if (b.e < j.n) stepped = stepped || j.sign * ((double)j.fit[b.e] - (double)j.fit[b.e - 1]) < 0;
  }
  for (int64_t i = 1; stepped && i < j.n; i++)
    if (j.sign * ((double)j.fit[i] - (double)j.fit[i - 1]) < 0) j.fit[i] = j.fit[i - 1];
}

/* Joins a row of n elements fitted in segments starting at cut[0] = 0 < cut[1] < ... <
 * cut[ncuts - 1], the last ending at n: fit and flags (the segments' levels, not clipped, and
 * their solver blocks) become the row's. Returns GPUISO_OK, GPUISO_E_OVERFLOW where the sums of
 * blocks pooled across cuts are not finite, GPUISO_E_W_SPAN (join_scale) or GPUISO_E_NOMEM (err
 * filled). */
template <typename T>
static gpuiso_status join_row(int64_t n, const T *y, const T *w, int increasing, const int64_t *cut,
                              int64_t ncuts, T *fit, uint8_t *flags, gpuiso_error *err) {
  row_join<T> j = {n, y, w, join_scale(n, w), increasing ? 1.0 : -1.0, fit, flags, NULL, 0, 0};
  if (j.scale == 0) {
    set_error(err, GPUISO_E_W_SPAN, -1, 0);
    return GPUISO_E_W_SPAN;
  }
  int ok = 1;
  for (int64_t k = 1; ok && k < ncuts; k++) ok = join_cut(&j, cut[k], k + 1 < ncuts ? cut[k + 1] : n);
  /* sums of blocks pooled across cuts that overflow, where no segment's did */
  gpuiso_status s = ok ? GPUISO_OK : GPUISO_E_NOMEM;
  for (int64_t k = 0; ok && k < j.top; k++)
    if (!isfinite(j.stack[k].step.s.hi) || !isfinite(j.stack[k].step.w.hi)) s = GPUISO_E_OVERFLOW;
  if (s == GPUISO_OK) join_write(j);
  free(j.stack);
  if (s != GPUISO_OK) set_error(err, s, -1, s == GPUISO_E_OVERFLOW ? 0 : -1);
  return s;
}

#endif

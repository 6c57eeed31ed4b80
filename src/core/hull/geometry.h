/* Geometry of the cumulative sum diagram, shared by the CPU hull engine and the CUDA kernels.
 *
 * A point P_k = (W_k, S_k) of a row's diagram is held as a pair of double-double numbers, so that
 * the difference of two points of a long row keeps its precision where a plain double would lose
 * the digits that the running sums carry (absolute sums reach 1e10 while neighbouring points
 * differ by one element). Functions are static inline and marked GPUISO_HD, so gcc compiles them
 * for the CPU and nvcc for the device.
 */
#ifndef GPUISO_HULL_GEOMETRY_H
#define GPUISO_HULL_GEOMETRY_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define GPUISO_HD __host__ __device__
#else
#define GPUISO_HD
#endif

typedef struct {
  double hi, lo;
} dd;

/* a + b exactly, as a rounded sum and its error (Knuth's two-sum). */
static inline GPUISO_HD dd dd_two_sum(double a, double b) {
  double s = a + b, bb = s - a;
  dd r = {s, (a - (s - bb)) + (b - bb)};
  return r;
}

/* a * b exactly, as a rounded product and its error (one fused multiply-add). */
static inline GPUISO_HD dd dd_two_prod(double a, double b) {
  double p = a * b;
  dd r = {p, fma(a, b, -p)};
  return r;
}

static inline GPUISO_HD dd dd_add(dd a, dd b) {
  dd s = dd_two_sum(a.hi, b.hi);
  return dd_two_sum(s.hi, s.lo + a.lo + b.lo);
}

/* a + b for a double b, to the same precision with fewer operations. */
static inline GPUISO_HD dd dd_add_d(dd a, double b) {
  dd s = dd_two_sum(a.hi, b);
  double lo = s.lo + a.lo, hi = s.hi + lo;
  dd r = {hi, lo - (hi - s.hi)};
  return r;
}

static inline GPUISO_HD dd dd_neg(dd a) {
  dd r = {-a.hi, -a.lo};
  return r;
}

static inline GPUISO_HD dd dd_sub(dd a, dd b) { return dd_add(a, dd_neg(b)); }

/* a * b to about 2^-104 relative: the products of the high parts exact, the rest rounded. */
static inline GPUISO_HD dd dd_mul(dd a, dd b) {
  dd p = dd_two_prod(a.hi, b.hi);
  return dd_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}

/* A point of the diagram: W (summed weight) and S (summed weight * y). */
typedef struct {
  dd w, s;
} hull_point;

/* b - a to about one rounding: the high parts of nearby points subtract exactly (Sterbenz), and
 * the low parts add what they carry. */
static inline GPUISO_HD double dd_diff(dd b, dd a) { return (b.hi - a.hi) + (b.lo - a.lo); }

/* Orientation of a, b, c (a left of b left of c): positive when b lies strictly below the chord
 * from a to c, so that b is a vertex of their lower hull; zero when the three are collinear. The
 * cross product of the differences in doubles decides when it is clear of its error bound (a few
 * roundings of each product, taken generously); otherwise it is formed again from the
 * double-double differences and products. */
static inline GPUISO_HD int hull_orient(hull_point a, hull_point b, hull_point c) {
  double x1 = dd_diff(b.w, a.w), y1 = dd_diff(b.s, a.s);
  double x2 = dd_diff(c.w, a.w), y2 = dd_diff(c.s, a.s);
  double l = x1 * y2, r = y1 * x2, det = l - r;
  double bound = 1e-14 * (fabs(l) + fabs(r));
  if (det > bound) return 1;
  if (det < -bound) return -1;
  dd dx1 = dd_sub(b.w, a.w), dy1 = dd_sub(b.s, a.s), dx2 = dd_sub(c.w, a.w), dy2 = dd_sub(c.s, a.s);
  dd d = dd_sub(dd_mul(dx1, dy2), dd_mul(dy1, dx2));
  double v = d.hi + d.lo;
  return (v > 0) - (v < 0);
}

/* Slope of the edge from a to b (a left of b): the level of the elements under it. */
static inline GPUISO_HD double hull_slope(hull_point a, hull_point b) {
  return dd_diff(b.s, a.s) / dd_diff(b.w, a.w);
}

#endif

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
#define GPUISO_COLD __noinline__
#else
#define GPUISO_HD
#define GPUISO_COLD __attribute__((noinline, cold))
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

/* A point of the diagram: W (summed weight) and S (summed weight * y). */
typedef struct {
  dd w, s;
} hull_point;

/* a + b, for points or steps. */
static inline GPUISO_HD hull_point hull_point_add(hull_point a, hull_point b) {
  hull_point r = {dd_add(a.w, b.w), dd_add(a.s, b.s)};
  return r;
}

/* Expansions (Shewchuk, 1997): a value held exactly as a sum of doubles whose magnitudes
 * increase and whose bits do not overlap, so that its sign is its last component's. */
#define HULL_EXP_MAX 64 /* the 64 terms of two products of 4-term differences, at most */

/* Adds double b to expansion e of *n terms, in place, exactly; zero terms are dropped. */
static inline GPUISO_HD void hull_exp_grow(double *e, int *n, double b) {
  int m = 0;
  for (int i = 0; i < *n; i++) {
    dd t = dd_two_sum(b, e[i]);
    b = t.hi;
    if (t.lo != 0) e[m++] = t.lo;
  }
  if (b != 0 || m == 0) e[m++] = b;
  *n = m;
}

/* The exact difference b - a of two pairs, as an expansion of at most 4 terms in d. */
static inline GPUISO_HD int hull_exp_diff(dd b, dd a, double *d) {
  int n = 0;
  hull_exp_grow(d, &n, b.lo);
  hull_exp_grow(d, &n, -a.lo);
  hull_exp_grow(d, &n, b.hi);
  hull_exp_grow(d, &n, -a.hi);
  return n;
}

/* Adds sign * (x * y) of two expansions to e, exactly (two-product of every pair of terms). */
static inline GPUISO_HD void hull_exp_add_product(double *e, int *n, const double *x, int nx,
                                                  const double *y, int ny, double sign) {
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++) {
      dd p = dd_two_prod(sign * x[i], y[j]);
      hull_exp_grow(e, n, p.lo);
      hull_exp_grow(e, n, p.hi);
    }
}

/* The pair nearest an expansion: its two largest terms, renormalised (within 2^-104 of it). */
static inline GPUISO_HD dd hull_exp_pair(const double *e, int n) {
  dd r = {e[n - 1], 0};
  if (n >= 2) {
    double rest = e[n - 2] + (n >= 3 ? e[n - 3] : 0.0);
    r = dd_two_sum(e[n - 1], rest);
  }
  return r;
}

/* The pair nearest b - a (hull_exp_pair of hull_exp_diff), of finite points (the hull engines
 * take no others). Where both are single nonzero doubles (a lane's own points, most vertices) that
 * is their two-sum, taken in the expansion's order: the same pair in fewer operations (the
 * expansion's zero terms, which would give other signs of zero, need a zero high part). */
static inline GPUISO_HD dd hull_pair_diff(dd b, dd a) {
  if (a.lo == 0 && b.lo == 0 && a.hi != 0 && b.hi != 0) return dd_two_sum(-a.hi, b.hi);
  double e[4];
  int n = hull_exp_diff(b, a, e);
  return hull_exp_pair(e, n);
}

/* Scales the vector of expansions (x, y) by the power of two that brings its larger last term
 * to [1/2, 1) where it is below: a cross product keeps its sign, and its two-products stay exact,
 * where products of tiny terms (a weight of 1e-150 scaled with the row's, times a step of 1e-150)
 * would fall below the doubles' range. Never down, so that no term underflows. */
static inline GPUISO_HD void hull_exp_lift(double *x, int nx, double *y, int ny) {
  double m = fmax(fabs(x[nx - 1]), fabs(y[ny - 1]));
  if (!(m > 0 && m < 0.5)) return;
  int e;
  frexp(m, &e);
  for (int i = 0; i < nx; i++) x[i] = ldexp(x[i], -e);
  for (int i = 0; i < ny; i++) y[i] = ldexp(y[i], -e);
}

/* The exact sign of x1 y2 - y1 x2 for four expansions (each vector lifted in place first). */
static inline GPUISO_HD int hull_exp_cross_sign(double *x1, int n1, double *y1, int m1, double *x2,
                                                int n2, double *y2, int m2) {
  hull_exp_lift(x1, n1, y1, m1);
  hull_exp_lift(x2, n2, y2, m2);
  double e[HULL_EXP_MAX];
  int n = 0;
  hull_exp_add_product(e, &n, x1, n1, y2, m2, 1.0);
  hull_exp_add_product(e, &n, y1, m1, x2, n2, -1.0);
  double top = e[n - 1];
  return (top > 0) - (top < 0);
}

/* The exact sign of (b - a) x (c - a) for the represented points. Out of line (GPUISO_COLD),
 * so that its expansions leave the filtered fast path lean. */
static GPUISO_COLD GPUISO_HD int hull_orient_exact(hull_point a, hull_point b, hull_point c) {
  double x1[4], y1[4], x2[4], y2[4];
  int n1 = hull_exp_diff(b.w, a.w, x1), m1 = hull_exp_diff(b.s, a.s, y1);
  int n2 = hull_exp_diff(c.w, a.w, x2), m2 = hull_exp_diff(c.s, a.s, y2);
  return hull_exp_cross_sign(x1, n1, y1, m1, x2, n2, y2, m2);
}

/* Magnitudes at which the filters' products neither underflow nor overflow. */
static inline GPUISO_HD int hull_filter_range(double mag) { return mag > 0x1p-900 && mag < INFINITY; }

/* Orientation of a, b, c (a left of b left of c): positive when b lies strictly below the chord
 * from a to c, so that b is a vertex of their lower hull; zero when the three are collinear. The
 * sign is exact for the points as represented. Filter: the cross product of the differences in
 * doubles, each difference formed from the high parts and the low parts apart, and within
 * 2u (|dhi| + |dlo|) of the exact one; the cross product is then within 6u (A1 B2 + B1 A2) of
 * the exact, for those magnitudes A, B of the four differences, and 1e-15 > 9u covers it. Where
 * the filter cannot decide (or the magnitudes near underflow), the exact sign from expansions. */
static inline GPUISO_HD int hull_orient(hull_point a, hull_point b, hull_point c) {
  double hx1 = b.w.hi - a.w.hi, lx1 = b.w.lo - a.w.lo, hy1 = b.s.hi - a.s.hi, ly1 = b.s.lo - a.s.lo;
  double hx2 = c.w.hi - a.w.hi, lx2 = c.w.lo - a.w.lo, hy2 = c.s.hi - a.s.hi, ly2 = c.s.lo - a.s.lo;
  double x1 = hx1 + lx1, y1 = hy1 + ly1, x2 = hx2 + lx2, y2 = hy2 + ly2;
  double mag = (fabs(hx1) + fabs(lx1)) * (fabs(hy2) + fabs(ly2)) +
               (fabs(hy1) + fabs(ly1)) * (fabs(hx2) + fabs(lx2));
  double det = x1 * y2 - y1 * x2, bound = 1e-15 * mag;
  if (hull_filter_range(mag) && fabs(det) > bound) return det > 0 ? 1 : -1;
  return hull_orient_exact(a, b, c);
}

/* The exact sign of u x v for two steps, from expansions (out of line, as hull_orient_exact). */
static GPUISO_COLD GPUISO_HD int hull_turn_exact(hull_point u, hull_point v) {
  double x1[2], y1[2], x2[2], y2[2];
  int n1 = 0, m1 = 0, n2 = 0, m2 = 0;
  hull_exp_grow(x1, &n1, u.w.lo), hull_exp_grow(x1, &n1, u.w.hi);
  hull_exp_grow(y1, &m1, u.s.lo), hull_exp_grow(y1, &m1, u.s.hi);
  hull_exp_grow(x2, &n2, v.w.lo), hull_exp_grow(x2, &n2, v.w.hi);
  hull_exp_grow(y2, &m2, v.s.lo), hull_exp_grow(y2, &m2, v.s.hi);
  return hull_exp_cross_sign(x1, n1, y1, m1, x2, n2, y2, m2);
}

/* The sign of the cross product u x v = u.w v.s - u.s v.w of two steps of the diagram (vectors
 * between points, held as pairs): positive when v turns left of u, so that the point between
 * them is a vertex of the lower hull. Filter on the high parts, each within u of its pair (the
 * pairs are renormalised): the products are within 3u of the exact ones, and 1e-15 covers the
 * 4u (|l| + |r|) of the difference; else exact, from expansions. */
static inline GPUISO_HD int hull_turn(hull_point u, hull_point v) {
  double l = u.w.hi * v.s.hi, r = u.s.hi * v.w.hi, det = l - r, mag = fabs(l) + fabs(r);
  if (hull_filter_range(mag) && fabs(det) > 1e-15 * mag) return det > 0 ? 1 : -1;
  return hull_turn_exact(u, v);
}

/* The quotient s / w of two pairs, corrected by its remainder: within about one rounding. */
static inline GPUISO_HD double hull_quotient(dd s, dd w) {
  double q = s.hi / w.hi;
  if (!isfinite(q)) return q;
  double r = fma(-q, w.hi, s.hi) + (s.lo - q * w.lo);
  return q + r / w.hi;
}

/* Slope of the edge from a to b (a left of b): the level of the elements under it, from the
 * exact differences of the represented points taken to pairs. */
static inline GPUISO_HD double hull_slope(hull_point a, hull_point b) {
  return hull_quotient(hull_pair_diff(b.s, a.s), hull_pair_diff(b.w, a.w));
}

/* The step of the diagram over an element (yi, wi) whose weight is already scaled: (w, w * y),
 * the product exact as a pair. */
static inline GPUISO_HD hull_point hull_step(double yi, double wi, double sign) {
  double v = sign * yi, p = wi * v;
  hull_point d = {{wi, 0}, {p, wi == 1 ? 0.0 : fma(wi, v, -p)}}; /* no fma where unweighted */
  return d;
}

/* The point after p, past an element (yi, wi) whose weight is already scaled. The product is
 * rounded: the points are then sums of doubles, exact in any order of summation where they span
 * at most 106 bits (ordinary data), so that a row's kernels, whatever their order, and the CPU
 * engine take the same decisions on them; the steps (hull_step), for wide ranges, keep the
 * product exact. */
static inline GPUISO_HD hull_point hull_advance(hull_point p, double yi, double wi, double sign) {
  p.w = dd_add_d(p.w, wi);
  p.s = dd_add_d(p.s, wi * (sign * yi));
  return p;
}

/* hull_advance for a weight of 1, from a point whose W is a count (its low part zero): the same
 * point in fewer operations. */
static inline GPUISO_HD hull_point hull_advance_unit(hull_point p, double yi, double sign) {
  p.w.hi += 1;
  p.s = dd_add_d(p.s, sign * yi);
  return p;
}

#endif

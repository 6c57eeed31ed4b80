/* How a lane of the fast path sums its elements into its points of the cumulative sum diagram
 * (lane_points in short_rows.cuh), each way a type that the launch picks at run time
 * (lane_points_as: plain_sums where v.plain_sums, else the kernel's Sums), with begin, add, point,
 * add_unit (add with a weight of 1, the same sums in fewer operations, for unweighted data) and
 * exact (whether the points are the exact sums, where a pair holds them, so that a level over
 * one element is the element's value, short_edge_level):
 *   exact_sums  double-double sums from the lane's first point (the default, every precision);
 *   plain_sums  float32 sums within the lane, from its first point (a double-double pair, as the
 *               lanes' first points stay pairs from a scan of their totals): the paper's
 *               exact = FALSE for float32. A lane's running sums of up to 32 terms are rounded to
 *               float32, so a point is within about 2^-24 times them of the exact one, and the
 *               turns of the lane hulls and the levels are taken on those points (as doubles, never
 *               rounded again in shared memory): the mode changes the sums, not the layout.
 * plain_sums is used for float32 data only (lane_points_as): float64 has no pairs to drop in the
 * paper. The fit still never steps against its direction (fit_lane_row's running maximum).
 */
#ifndef GPUISO_CUDA_LANE_SUMS_CUH
#define GPUISO_CUDA_LANE_SUMS_CUH

#include "view.cuh"

struct exact_sums {
  static const bool exact = true;
  hull_point at;
  SIMT_DEVICE void begin() { at = hull_point{{0, 0}, {0, 0}}; }
  SIMT_DEVICE hull_point point() const { return at; }
  SIMT_DEVICE void add(double yi, double wi, double sign) { at = hull_advance(at, yi, wi, sign); }
  SIMT_DEVICE void add_unit(double yi, double sign) { at = hull_advance_unit(at, yi, sign); }
};

/* float32 a + b and a * b rounded on their own (no multiply-add, as the executor computes them). */
static inline GPUISO_HD float f32_add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

static inline GPUISO_HD float f32_mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

struct plain_sums {
  static const bool exact = false;
  float w, s;
  SIMT_DEVICE void begin() { w = 0, s = 0; }
  SIMT_DEVICE hull_point point() const { return hull_point{{(double)w, 0}, {(double)s, 0}}; }
  SIMT_DEVICE void add(double yi, double wi, double sign) {
    float wf = (float)wi; /* the float data's weight times a power of two */
    w = f32_add(w, wf);
    s = f32_add(s, f32_mul(wf, (float)(sign * yi)));
  }
  SIMT_DEVICE void add_unit(double yi, double sign) { /* add with a weight of 1: the same sums */
    w = f32_add(w, 1.0f);
    s = f32_add(s, (float)(sign * yi));
  }
};

#endif

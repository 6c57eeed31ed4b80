/* The vector-Jacobian product of isotonic fits (gpuiso_vjp): the fit is the weighted mean of y
 * over its blocks, so the product averages the upstream gradient over them. A pass over a block
 * sums g and w, a second writes the block's derivatives while it is in cache. */
#include "internal.h"

void vjp_row(int64_t n, const double *y, const double *w, const double *fit,
             const uint8_t *start, const double *g, double lo, double hi, double *dy,
             double *dw) {
  for (int64_t b = 0, e; b < n; b = e) {
    dd G = {0, 0}, W = {0, 0};
    for (e = b; e < n && (e == b || !start[e]); e++) {
      if (fit[e] > lo && fit[e] < hi) G = dd_add_d(G, g[e]); /* clipped values do not move */
      W = dd_add_d(W, w ? w[e] : 1.0);
    }
    double ratio = (G.hi + G.lo) / (W.hi + W.lo);
    for (int64_t i = b; i < e; i++) {
      if (dy) dy[i] = (w ? w[i] : 1.0) * ratio;
      if (dw) dw[i] = (y[i] - fit[i]) * ratio;
    }
  }
}

gpuiso_status gpuiso_vjp(int64_t nrows, const int64_t *offsets, const double *y, const double *w,
                         const double *fit, const uint8_t *start, const double *g,
                         const gpuiso_opts *opt, double *dy, double *dw, gpuiso_error *err) {
  set_error(err, GPUISO_OK, -1, -1);
  int nth = resolve_threads(opt, offsets[nrows]);
  if (nth > nrows) nth = nrows > 0 ? (int)nrows : 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 16)
#endif
  for (int64_t r = 0; r < nrows; r++) {
    int64_t o = offsets[r];
    vjp_row(offsets[r + 1] - o, y ? y + o : NULL, w ? w + o : NULL, fit + o, start + o, g + o,
            opt->lo, opt->hi, dy ? dy + o : NULL, dw ? dw + o : NULL);
  }
  return GPUISO_OK;
}

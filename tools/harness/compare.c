#include "compare.h"

#include <math.h>

static double at(gpuiso_precision type, const void *z, int64_t i) {
  return type == GPUISO_SINGLE ? (double)((const float *)z)[i] : ((const double *)z)[i];
}

comparison compare_rows(int64_t nrows, const int64_t *offsets, const double *y, const double *ref,
                        gpuiso_precision type, const void *z, int increasing, int by_max_y) {
  comparison c = {0, -1, 0, 0, 0};
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16)
#endif
  for (int64_t r = 0; r < nrows; r++) {
    int64_t from = offsets[r], to = offsets[r + 1], blocks_z = 0, blocks_ref = 0, steps = 0,
            differ = 0, worst = -1;
    double max_y = 0, dev = 0;
    for (int64_t i = from; by_max_y && i < to; i++) max_y = fabs(y[i]) > max_y ? fabs(y[i]) : max_y;
    for (int64_t i = from; i < to; i++) {
      double zi = at(type, z, i), d = fabs(zi - ref[i]) / (by_max_y ? max_y : 1 + fabs(ref[i]));
      if (d > dev || (isnan(d) && !isnan(dev))) dev = d, worst = i; /* NaN is the worst */
      differ += zi != ref[i];
      if (i == from) continue;
      double zp = at(type, z, i - 1);
      steps += increasing ? zi < zp : zi > zp;
      blocks_z += zi != zp;
      blocks_ref += ref[i] != ref[i - 1];
    }
#ifdef _OPENMP
#pragma omp critical(compare_rows)
#endif
    {
      if (dev > c.max_dev || (isnan(dev) && !isnan(c.max_dev))) c.max_dev = dev, c.worst = worst;
      c.step_downs += steps;
      c.block_rows += blocks_z != blocks_ref;
      c.differ += differ;
    }
  }
  return c;
}

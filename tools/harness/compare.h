/* Comparison of a fit with its reference, row by row: what tools/gpu-check judges and the C
 * tests check. Plain C, no CUDA. */
#ifndef GPUISO_HARNESS_COMPARE_H
#define GPUISO_HARNESS_COMPARE_H

#include <stdint.h>

#include "gpuiso.h"

typedef struct {
  double max_dev;        /* max |z - ref| / scale, scale 1 + |ref| (or the row's max |y|) */
  int64_t worst;         /* where it is */
  int64_t step_downs;    /* neighbours of z in a row that step against the direction */
  int64_t block_rows;    /* rows whose number of blocks (level changes) differs from ref's */
  int64_t differ;        /* elements where z != ref exactly */
} comparison;

/* z holds elements of type (double or float). by_max_y: the scale of the deviation is the row's
 * largest |y| (for the cancellation family, whose values cancel to near zero). */
comparison compare_rows(int64_t nrows, const int64_t *offsets, const double *y, const double *ref,
                        gpuiso_precision type, const void *z, int increasing, int by_max_y);

#endif

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
 * largest |y| (for the bounds of float32's exact = FALSE, which isoreg_gpu()'s help states so, and
 * the row-PAV control's plain double sums on the cancellation family); else 1 + |ref|, issue 11's
 * scale, on every family. */
comparison compare_rows(int64_t nrows, const int64_t *offsets, const double *y, const double *ref,
                        gpuiso_precision type, const void *z, int increasing, int by_max_y);

/* The number of blocks (runs of equal values) of a fit z of elements of type, over every row. */
int64_t count_blocks(int64_t nrows, const int64_t *offsets, gpuiso_precision type, const void *z);

/* Two fits of IDR (gpuiso_cdf_runs) of the same shape: ref (the CPU engine) and got. */
typedef struct {
  double max_dev;         /* max |F_got - F_ref| over every threshold and position */
  int64_t starts_differ;  /* thresholds whose runs start at other positions */
  int64_t steps_differ;   /* thresholds where one fit steps by more than tol and the other not */
  int64_t bad;            /* thresholds where got breaks the shape of a fit: runs not strictly
                             decreasing or outside [0, 1], below the threshold before, or (the
                             last) not one run of 1 */
} runs_comparison;

runs_comparison compare_cdf_runs(const gpuiso_cdf_runs *ref, const gpuiso_cdf_runs *got, double tol);

/* Two sets of calibration curves as blocks (gpuiso_calibrate): ref (the CPU) and got, of ncurves
 * curves whose blocks start at first[k]. */
typedef struct {
  double max_dev;        /* max |level - ref's level| over blocks of curves of the same shape */
  double max_weight_dev; /* max relative difference of their weights */
  int64_t curves_differ; /* curves with other blocks (number, first or last scores) */
} blocks_comparison;

blocks_comparison compare_blocks(int64_t ncurves, const int64_t *ref_first, const gpuiso_block *ref,
                                 const int64_t *first, const gpuiso_block *got);

#endif

/* The data families of the GPU checks (paper, section 7.1) and the stress families of the hull
 * engine's tests (section 7.6), for rows laid out one after another (offsets, as the CUDA
 * engine reads them). Deterministic: element i of a case depends only on the seed and i. Plain C,
 * no CUDA: tools/gpu-check and the C tests (make ctest) share it. */
#ifndef GPUISO_HARNESS_FAMILIES_H
#define GPUISO_HARNESS_FAMILIES_H

#include <stdint.h>

typedef enum {
  FAM_NOISE,        /* a ramp from 0 to 3 plus standard normal noise */
  FAM_INCREASING,   /* strictly increasing: every point a hull vertex */
  FAM_SAWTOOTH,     /* ramps of a random period that drop back, a little noise */
  FAM_CLIFF,        /* increasing, then one value far below */
  FAM_CANCELLATION, /* per 64: 32 x +B, one -32B, 31 small nearly collinear values */
  FAM_ULP,          /* consecutive doubles (floats in single precision) from 1 */
  FAM_COLLINEAR,    /* values on a line */
  FAM_RUNS,         /* runs of 64 equal values, steps of 1e-3 (collinear runs of points) */
  FAM_COUNT
} family_kind;

typedef enum { W_NONE, W_UNIFORM, W_EXTREME, W_ZEROS, W_COUNT } weight_kind;

extern const char *const family_names[FAM_COUNT];
extern const char *const weight_names[W_COUNT];

/* Fills y and, unless wk is W_NONE, w (uniform on [0.01, 1], extreme exp(U(-8, 8)), or 40%
 * zeros with one positive weight kept per row) for the rows of offsets. single: values rounded
 * to float. */
void gen_rows(family_kind f, weight_kind wk, int64_t nrows, const int64_t *offsets, uint64_t seed,
              int single, double *y, double *w);

/* Ragged row lengths from 0 to max_len (empty rows included) adding up to about n in total;
 * returns the number of rows, writing at most cap + 1 offsets. */
int64_t gen_ragged(int64_t n, int64_t max_len, uint64_t seed, int64_t cap, int64_t *offsets);

/* x for a fit on unsorted x with ties: values from n / 4 distinct ones, in random order. */
void gen_x_ties(int64_t n, uint64_t seed, double *x);

/* IDR data as in the benchmark: x ~ U(0, 1), y ~ Gamma(shape 2 + 5x); ties: x rounded to
 * 1/400 and y to 1/16. Writes the rank of each x among the distinct x (pos) and of each y among the
 * distinct y (thr), and sets their counts; w (W_NONE: not written, W_UNIFORM or W_EXTREME). */
void gen_idr(int64_t n, uint64_t seed, int ties, weight_kind wk, int32_t *pos, int32_t *thr,
             double *w, int64_t *npos, int64_t *nthr);

/* Click traffic as in tools/bench/calibrate.R: n scores ~ U(0, 1) in random order (ties: rounded
 * to 1/100) in ngroups groups g of Zipf-like sizes (group k about (k + 1)^-1.1 of the traffic),
 * labels 0/1 with click rate 0.06 * score * (0.5 + ((k + 1) % 3) / 2), about 3% overall; w as
 * gen_rows's weightings (W_ZEROS keeps each group's first weight positive). */
void gen_calibration(int64_t n, int64_t ngroups, uint64_t seed, int ties, weight_kind wk,
                     double *score, double *label, double *w, int *g);

#endif

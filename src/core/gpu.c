/* The CUDA engine behind the double-precision API (gpuiso_fit, batches): rows laid out one after
 * another for gpuiso_cuda_fit_rows, in float32 copies when opt->gpu_precision asks for single
 * precision. Built with or without CUDA (without it, the calls report GPUISO_E_NO_CUDA).
 */
#include <math.h>
#include <stdlib.h>

#include "gpu_plan.h"
#include "internal.h"

static float *to_float(const double *v, int64_t n, int nth) {
  float *f = malloc_dense((size_t)(n > 0 ? n : 1) * sizeof *f);
  if (!f) return NULL;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth)
#endif
  for (int64_t i = 0; i < n; i++) f[i] = (float)v[i];
  return f;
}

gpuiso_status gpu_fit_rows(int64_t nrows, const int64_t *offsets, const double *y, const double *w,
                           const gpuiso_opts *opt_in, double *fit, uint8_t *start, gpuiso_error *err) {
  gpuiso_opts capped = plan_options(opt_in, nrows, offsets);
  const gpuiso_opts *opt = &capped;
  if (opt->gpu_precision != GPUISO_SINGLE)
    return gpuiso_cuda_fit_rows(nrows, offsets, GPUISO_DOUBLE, y, w, opt, fit, start, err);
  int64_t n = offsets[nrows];
  int nth = resolve_threads(opt, n);
  float *yf = to_float(y, n, nth), *wf = w ? to_float(w, n, nth) : NULL;
  float *ff = malloc_dense((size_t)(n > 0 ? n : 1) * sizeof *ff);
  gpuiso_status s = GPUISO_E_NOMEM;
  if (yf && (!w || wf) && ff) s = gpuiso_cuda_fit_rows(nrows, offsets, GPUISO_SINGLE, yf, wf, opt, ff, start, err);
  else set_error(err, s, -1, -1);
  if (s == GPUISO_OK) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth)
#endif
    for (int64_t i = 0; i < n; i++) fit[i] = ff[i];
  }
  free(yf);
  free(wf);
  free(ff);
  return s;
}

gpuiso_status gpu_fit(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                      double *fit, uint8_t *start, int64_t *nblocks, gpuiso_error *err) {
  int64_t offsets[2] = {0, n};
  /* the solver's blocks are counted from its flags: made here when the caller wants none */
  int own = opt->solver_blocks && nblocks && !start;
  uint8_t *flags = own ? malloc_dense((size_t)(n > 0 ? n : 1)) : start;
  gpuiso_status s = GPUISO_E_NOMEM;
  if (own && !flags) set_error(err, s, -1, -1);
  else s = gpu_fit_rows(1, offsets, y, w, opt, fit, flags, err);
  if (s != GPUISO_OK) {
    if (err) err->row = -1; /* one row: no row to name */
  } else if (nblocks) {
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) count += opt->solver_blocks ? flags[i] : i == 0 || fit[i] != fit[i - 1];
    *nblocks = count;
  }
  if (own) free(flags);
  return s;
}

/* The matrix's rows gathered row-major (weights shared by the columns repeated per row), fitted,
 * and scattered back; errors name the element in the matrix's column-major layout. */
gpuiso_status gpu_batch_matrix(int64_t nrow, int64_t ncol, const double *y, const double *w,
                               int64_t w_len, const gpuiso_opts *opt, double *fit, uint8_t *start,
                               gpuiso_error *err) {
  int64_t n = nrow * ncol;
  size_t m = (size_t)(n > 0 ? n : 1);
  int nth = resolve_threads(opt, n);
  int64_t *offsets = malloc(((size_t)nrow + 1) * sizeof *offsets);
  double *yr = malloc_dense(m * sizeof *yr), *fr = malloc_dense(m * sizeof *fr);
  double *wr = w ? malloc_dense(m * sizeof *wr) : NULL;
  uint8_t *sr = start ? malloc_dense(m) : NULL;
  gpuiso_status s = GPUISO_E_NOMEM;
  if (offsets && yr && fr && (!w || wr) && (!start || sr)) {
    int shared_w = w && w_len == ncol && w_len != n;
    for (int64_t r = 0; r <= nrow; r++) offsets[r] = r * ncol;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth)
#endif
    for (int64_t r = 0; r < nrow; r++) {
      for (int64_t j = 0; j < ncol; j++) {
        yr[r * ncol + j] = y[r + j * nrow];
        if (wr) wr[r * ncol + j] = shared_w ? w[j] : w[r + j * nrow];
      }
    }
    s = gpu_fit_rows(nrow, offsets, yr, wr, opt, fr, sr, err);
    if (s == GPUISO_OK) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth)
#endif
      for (int64_t r = 0; r < nrow; r++) {
        for (int64_t j = 0; j < ncol; j++) {
          fit[r + j * nrow] = fr[r * ncol + j];
          if (start) start[r + j * nrow] = sr[r * ncol + j];
        }
      }
    } else if (err && err->index >= 0) {
      err->index = err->index / ncol + (err->index % ncol) * nrow;
    }
  } else {
    set_error(err, s, -1, -1);
  }
  free(offsets);
  free(yr);
  free(fr);
  free(wr);
  free(sr);
  return s;
}

gpuiso_status gpu_check_xy(int64_t n, const double *x, const double *y, const double *w,
                           const gpuiso_opts *opt, gpuiso_error *err) {
  int64_t bad_x = n, bad_value = n;
  int nth = resolve_threads(opt, n);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) reduction(min : bad_x, bad_value)
#endif
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(x[i]) && i < bad_x) bad_x = i;
    if (value_status(y[i], w ? w[i] : 1.0) != GPUISO_OK && i < bad_value) bad_value = i;
  }
  gpuiso_status s = bad_x < n        ? GPUISO_E_X_NONFINITE
                    : bad_value < n ? value_status(y[bad_value], w ? w[bad_value] : 1.0)
                                    : GPUISO_OK;
  set_error(err, s, bad_x < n ? bad_x : (bad_value < n ? bad_value : -1), -1);
  return s;
}

double gpuiso_gpu_workspace_bytes(int64_t nrows, int64_t row_length, gpuiso_precision type, int weighted,
                                  const gpuiso_opts *opt_in) {
  int64_t one_row[2] = {0, row_length}; /* rows of one length take the chunks of one */
  gpuiso_opts opt = plan_options(opt_in, 1, one_row);
  /* the rows' bytes, and a plan's and a slice's fixed parts (fit_rows_host's budget) */
  return (double)nrows * plan_slice_row_bytes(&opt, row_length, row_length, type, weighted, 1) + 2 * ARENA_FIXED_BYTES;
}

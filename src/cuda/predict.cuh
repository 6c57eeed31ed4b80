/* gpuiso_predict on the device (gpuiso_cuda_predict), written over an executor (pipeline.cuh) so
 * that the C tests run it on the CPU (tools/ctest). The curves' blocks (a few hundred per curve,
 * where the scores may be millions) go up once, in plain copies; the new values and their curves
 * go up in slices of `slice`, a thread per value runs the CPU's code (src/core/predict_curve.h: a
 * branch-free binary search over the blocks of its curve, the same doubles), and the values come
 * back, each slice's arrays in pinned slices where they are large (staging.cuh). The interrupt is
 * polled between slices. Device memory: the blocks, plus 20 bytes per value of a slice (12
 * without curves).
 */
#ifndef GPUISO_CUDA_PREDICT_CUH
#define GPUISO_CUDA_PREDICT_CUH

#include "pipeline.cuh"
#include "predict_curve.h"
#include "staging.cuh"

struct predict_step {
  gpuiso_curves cv;  /* device copies of the blocks */
  const double *v;   /* the slice's values */
  const int *curve;  /* their curves; NULL: curve 0 */
  int linear, outside_missing;
  double missing;
  double *out;
  unsigned long long *beyond; /* NULL: not counted */
  SIMT_DEVICE void operator()(int64_t i) const {
    int outside;
    out[i] = predict_at(&cv, v, curve, i, linear, outside_missing, missing, &outside);
    if (outside && beyond) simt::atomic_add(beyond, 1ull);
  }
};

/* gpuiso_cuda_predict over an executor, in slices of `slice` values. */
template <class Exec>
static gpuiso_status predict_device(Exec &ex, const gpuiso_curves *cv, int64_t ncurves, int64_t n,
                                    const double *v, const int *curve, int linear,
                                    int outside_missing, double missing, const gpuiso_opts *opt,
                                    double *out, int64_t *beyond, gpuiso_error *err,
                                    int64_t slice) {
  int64_t nb = cv->first[ncurves], part = n < slice ? n : slice;
  int64_t *first = NULL;
  double *lower = NULL, *upper = NULL, *level = NULL, *dv = NULL, *dout = NULL;
  int *dcurve = NULL;
  unsigned long long *count = NULL, outside = 0;
  staging<Exec> st;
  gpuiso_status s = stage_open(ex, &st, (size_t)part * sizeof *v, resolve_threads(opt, part));
  if (s == GPUISO_OK) s = upload(ex, (const int64_t **)&first, cv->first, ncurves + 1);
  if (s == GPUISO_OK) s = upload(ex, (const double **)&lower, cv->lower, nb);
  if (s == GPUISO_OK) s = upload(ex, (const double **)&upper, cv->upper, nb);
  if (s == GPUISO_OK) s = upload(ex, (const double **)&level, cv->level, nb);
  if (s == GPUISO_OK) s = make(ex, &dv, part);
  if (s == GPUISO_OK && curve) s = make(ex, &dcurve, part);
  if (s == GPUISO_OK) s = make(ex, &dout, part);
  if (s == GPUISO_OK && beyond) s = make(ex, &count, 1);
  if (s == GPUISO_OK && beyond) s = ex.fill(count, 0, sizeof *count);
  predict_step step = {{first, lower, upper, level}, dv, dcurve, linear, outside_missing, missing,
                       dout, count};
  for (int64_t r0 = 0; s == GPUISO_OK && r0 < n; r0 += part) {
    int64_t m = n - r0 < part ? n - r0 : part;
    s = stage_put(ex, &st, dv, v + r0, (size_t)m * sizeof *v, no_slice_work());
    if (s == GPUISO_OK && curve)
      s = stage_put(ex, &st, dcurve, curve + r0, (size_t)m * sizeof *curve, no_slice_work());
    if (s == GPUISO_OK) s = each(ex, step, m);
    if (s == GPUISO_OK) s = stage_get(ex, &st, out + r0, dout, (size_t)m * sizeof *out);
    if (s == GPUISO_OK && r0 + m < n) s = exec_poll(ex, opt, err);
  }
  if (s == GPUISO_OK && beyond) s = ex.get(&outside, count, sizeof outside);
  stage_close(ex, &st);
  drop(ex, &first), drop(ex, &lower), drop(ex, &upper), drop(ex, &level);
  drop(ex, &dv), drop(ex, &dcurve), drop(ex, &dout), drop(ex, &count);
  if (s != GPUISO_OK) return s;
  if (beyond) *beyond = (int64_t)outside;
  set_error(err, GPUISO_OK, -1, -1);
  return GPUISO_OK;
}

#endif

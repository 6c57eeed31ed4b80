/* gpuiso_predict on the device (gpuiso_cuda_predict), written over an executor (pipeline.cuh) so
 * that the C tests run it on the CPU (tools/ctest). The curves' blocks (a few hundred per curve,
 * where the scores may be millions) go up once; the new values and their curves go in parts, a
 * thread per value running the CPU's code (src/core/predict_curve.h: a branch-free binary search
 * over the blocks of its curve, the same doubles). Where the values are large, the parts go
 * through the two lanes and pinned buffers of staging.cuh in turn (stage_parts), so that one
 * part's copies in, another's kernel and a third's copy out run at once. The interrupt is polled
 * between parts. Device memory: the blocks, plus 20 bytes per value of a part on each lane (16
 * without curves).
 */
#ifndef GPUISO_CUDA_PREDICT_CUH
#define GPUISO_CUDA_PREDICT_CUH

#include "pipeline.cuh"
#include "predict_curve.h"
#include "staging.cuh"

struct predict_step {
  gpuiso_curves cv;  /* device copies of the blocks */
  const double *v;   /* the part's values */
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

/* The values in parts on the lanes of st (stage_parts): part k's values, and their curves, through
 * lane k % 2's pinned buffer (the values from 0, the curves after `part` values, the predictions
 * back from 0) into that lane's device arrays (steps[k % 2]); in plain copies on the default
 * stream where st has no buffers. */
template <class Exec>
struct predict_parts {
  Exec &ex;
  staging<Exec> *st;
  predict_step steps[2];
  const double *v;
  const int *curve;
  double *out;
  int64_t n, part;
  const gpuiso_opts *opt;

  gpuiso_status queue(int64_t k, gpuiso_error *err) {
    const predict_step &step = steps[k & 1];
    int64_t r0 = k * part, m = n - r0 < part ? n - r0 : part;
    char *buf = (char *)st->buf[k & 1];
    typename Exec::lane lane = st->lane[k & 1];
    if (k > 0 && poll_interrupt(opt)) {
      set_error(err, GPUISO_E_INTERRUPT, -1, -1);
      return GPUISO_E_INTERRUPT;
    }
    size_t vbytes = (size_t)m * sizeof *v, cbytes = (size_t)m * sizeof *curve;
    char *cbuf = buf ? buf + (size_t)part * sizeof *v : NULL; /* the curves after the values */
    gpuiso_status s;
    if (buf) {
      copy_parallel(buf, v + r0, vbytes, st->threads);
      if (curve) copy_parallel(cbuf, curve + r0, cbytes, st->threads);
      s = ex.put_async((void *)step.v, buf, vbytes, lane);
      if (s == GPUISO_OK && curve) s = ex.put_async((void *)step.curve, cbuf, cbytes, lane);
    } else {
      s = ex.put((void *)step.v, v + r0, vbytes);
      if (s == GPUISO_OK && curve) s = ex.put((void *)step.curve, curve + r0, cbytes);
    }
    ex.use_lane(lane);
    if (s == GPUISO_OK) s = each(ex, step, m);
    ex.use_lane(NULL);
    if (s == GPUISO_OK && buf) s = ex.get_async(buf, step.out, (size_t)m * sizeof *out, lane);
    return s;
  }
  gpuiso_status take(int64_t k, gpuiso_error *) {
    int64_t r0 = k * part, m = n - r0 < part ? n - r0 : part;
    const void *buf = st->buf[k & 1];
    if (!buf) return ex.get(out + r0, steps[k & 1].out, (size_t)m * sizeof *out);
    gpuiso_status s = ex.lane_sync(st->lane[k & 1]);
    if (s == GPUISO_OK) copy_parallel(out + r0, buf, (size_t)m * sizeof *out, st->threads);
    return s;
  }
};

/* gpuiso_cuda_predict over an executor, in parts of at most `part` values (and of what a pinned
 * buffer holds). */
template <class Exec>
static gpuiso_status predict_device(Exec &ex, const gpuiso_curves *cv, int64_t ncurves, int64_t n,
                                    const double *v, const int *curve, int linear,
                                    int outside_missing, double missing, const gpuiso_opts *opt,
                                    double *out, int64_t *beyond, gpuiso_error *err,
                                    int64_t part) {
  int64_t nb = cv->first[ncurves];
  size_t per = sizeof *v + (curve ? sizeof *curve : 0); /* bytes in a value */
  int64_t fits = (int64_t)(STAGE_SLICE / per);
  part = n < part ? n : part;
  part = part < fits ? part : fits;
  part = part > 0 ? part : 1;
  int64_t nparts = (n + part - 1) / part;
  int64_t *first = NULL;
  double *lower = NULL, *upper = NULL, *level = NULL;
  unsigned long long *count = NULL, outside = 0;
  staging<Exec> st;
  predict_parts<Exec> run = {ex, &st, {}, v, curve, out, n, part, opt};
  gpuiso_status s = stage_open(ex, &st, (size_t)part * per, resolve_threads(opt, part));
  if (s == GPUISO_OK) s = stage_upload(ex, &st, (const int64_t **)&first, cv->first, ncurves + 1);
  if (s == GPUISO_OK) s = stage_upload(ex, &st, (const double **)&lower, cv->lower, nb);
  if (s == GPUISO_OK) s = stage_upload(ex, &st, (const double **)&upper, cv->upper, nb);
  if (s == GPUISO_OK) s = stage_upload(ex, &st, (const double **)&level, cv->level, nb);
  if (s == GPUISO_OK && beyond) s = make(ex, &count, 1);
  if (s == GPUISO_OK && beyond) s = ex.fill(count, 0, sizeof *count);
  for (int b = 0; b < (nparts > 1 ? 2 : 1); b++) {
    predict_step &step = run.steps[b];
    step = {{first, lower, upper, level}, NULL, NULL, linear, outside_missing, missing, NULL, count};
    if (s == GPUISO_OK) s = make(ex, (double **)&step.v, part);
    if (s == GPUISO_OK && curve) s = make(ex, (int **)&step.curve, part);
    if (s == GPUISO_OK) s = make(ex, &step.out, part);
  }
  if (s == GPUISO_OK) s = ex.sync(); /* the blocks and the count, on the default stream, before the lanes */
  if (s == GPUISO_OK) s = stage_parts(run, nparts, err);
  if (s == GPUISO_OK && beyond) s = ex.get(&outside, count, sizeof outside);
  stage_close(ex, &st);
  drop(ex, &first), drop(ex, &lower), drop(ex, &upper), drop(ex, &level), drop(ex, &count);
  for (int b = 0; b < 2; b++) {
    drop(ex, (double **)&run.steps[b].v), drop(ex, (int **)&run.steps[b].curve), drop(ex, &run.steps[b].out);
  }
  if (s != GPUISO_OK) return s;
  if (beyond) *beyond = (int64_t)outside;
  set_error(err, GPUISO_OK, -1, -1);
  return GPUISO_OK;
}

#endif

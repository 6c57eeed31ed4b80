/* Predictions of step functions and their linear interpolation at new values.
 *
 * A fitted monotone function is constant on each block, so the first and last x of the blocks
 * say everything about it: a new value is found by binary search over the block starts (a few
 * hundred, where the knots may be millions), in cache, on all threads, with no sort of the new
 * values. The arithmetic is that of R's findInterval and interpolation over the knots, so the
 * values are the same bit for bit.
 */
#include <math.h>

#include "internal.h"
#include "predict_curve.h"

/* A knot joins the block before it where interpolating between the two gives the block's level
 * in every bit: their levels are one finite value of one sign (-0 and 0 apart), and the knot
 * before is not -Inf (from there the fraction is NaN). So a search of the blocks gives what a
 * search of the knots would, as of an edited fit too. */
static int same_block(double x_before, double level_before, double level) {
  return level == level_before && isfinite(level) && !signbit(level) == !signbit(level_before) &&
         x_before != -INFINITY;
}

int gpuiso_knots_sorted(int64_t nk, const double *x) {
  int sorted = nk == 0 || !isnan(x[0]);
  for (int64_t i = 1; i < nk; i++) sorted &= x[i - 1] <= x[i]; /* false for a NaN */
  return sorted;
}

int64_t gpuiso_knot_blocks(int64_t nk, const double *x, const double *level, double *lower,
                           double *upper, double *block_level) {
  if (!gpuiso_knots_sorted(nk, x)) return -1;
  int64_t nb = 0;
  for (int64_t i = 0; i < nk; i++) {
    if (i > 0 && same_block(x[i - 1], level[i - 1], level[i])) {
      if (upper) upper[nb - 1] = x[i];
      continue;
    }
    if (lower) {
      lower[nb] = x[i];
      upper[nb] = x[i];
      block_level[nb] = level[i];
    }
    nb++;
  }
  return nb;
}

/* A round of predictions, r0 .. r1 - 1, in slices; each slice counts its values beyond the
 * curves' ends. */
typedef struct {
  const gpuiso_curves *cv;
  const double *v;
  const int *curve;
  int linear, outside_missing, nslices;
  double missing, *out;
  int64_t r0, r1, beyond[GPUISO_MAX_CHUNKS];
} predict_round;

static void predict_slice(void *ctx, int64_t t, int thread) {
  predict_round *pr = ctx;
  const gpuiso_curves *cv = pr->cv;
  const double *v = pr->v;
  const int *curve = pr->curve;
  int linear = pr->linear, outside_missing = pr->outside_missing;
  double missing = pr->missing, *out = pr->out; /* locals: the stores to out could alias pr */
  int64_t from = pr->r0 + slice_bound(pr->r1 - pr->r0, (int)t, pr->nslices);
  int64_t to = pr->r0 + slice_bound(pr->r1 - pr->r0, (int)t + 1, pr->nslices), beyond = 0;
  for (int64_t i = from; i < to; i++) {
    int beyond_i;
    out[i] = predict_at(cv, v, curve, i, linear, outside_missing, missing, &beyond_i);
    beyond += beyond_i;
  }
  pr->beyond[t] = beyond;
}

gpuiso_status gpuiso_predict(const gpuiso_curves *cv, int64_t n, const double *v,
                             const int *curve, int linear, int outside_missing, double missing,
                             const gpuiso_opts *opt, double *out, int64_t *beyond,
                             gpuiso_error *err) {
  int nth = resolve_threads(opt, n);
  predict_round pr = {.cv = cv, .v = v, .curve = curve, .linear = linear,
                      .outside_missing = outside_missing, .missing = missing, .out = out,
                      .nslices = nth < GPUISO_MAX_CHUNKS ? nth : GPUISO_MAX_CHUNKS};
  int64_t outside = 0;
  for (pr.r0 = 0; pr.r0 < n; pr.r0 += GPUISO_POLL_EVERY) {
    pr.r1 = n - pr.r0 < GPUISO_POLL_EVERY ? n : pr.r0 + GPUISO_POLL_EVERY;
    for_each_piece(pr.nslices, nth, 1, predict_slice, &pr);
    for (int t = 0; t < pr.nslices; t++) outside += pr.beyond[t];
    if (pr.r1 < n && poll_interrupt(opt)) {
      set_error(err, GPUISO_E_INTERRUPT, -1, -1);
      return GPUISO_E_INTERRUPT;
    }
  }
  if (beyond) *beyond = outside;
  set_error(err, GPUISO_OK, -1, -1);
  return GPUISO_OK;
}

/* Wide rows (hull_is_wide: their points cannot hold their steps) through the batch solver,
 * run on the CPU by the SIMT executor under three schedule seeds: the lane kernels' one chain and
 * the long rows' chains per chunk merged in levels (src/cuda/wide_rows.cuh), against the CPU hull
 * engine (hull/wide.h) and the PAV engine. */
#define WARP_MERGE_BELOW 256 /* levels of a thread and of a warp per merge in little data */
#include "batch.h"

/* Rows of the wide families of tests/testthat/helper-exact.R, 10^U(-span, span): signed values
 * (unweighted), weights (noise values) or both. */
static void gen_wide(int kind, double span, int64_t n, double *y, double *w) {
  for (int64_t i = 0; i < n; i++) {
    double u = rand() / (RAND_MAX + 1.0), v = rand() / (RAND_MAX + 1.0);
    double mag = pow(10, span * (2 * u - 1)), sgn = rand() % 2 ? 1 : -1;
    y[i] = kind == 1 ? sin(0.7 * i) + 3.0 * i / n + (v - 0.5) : sgn * mag;
    w[i] = kind == 0 ? 1 : pow(10, span * (2 * v - 1));
  }
}

/* Whether a row is wide (hull_is_wide), as the CPU hull engine finds it: its smallest positive
 * weight against its reach, both scaled by the power of two that brings its largest weight near 1. */
static int row_is_wide(int64_t n, const double *y, const double *w) {
  double max_w = 0, min_w = INFINITY, total = 0, sum_abs = 0;
  for (int64_t i = 0; i < n; i++) {
    double wi = w ? w[i] : 1;
    max_w = fmax(max_w, wi), total += wi, sum_abs += wi * fabs(y[i]);
    if (wi > 0) min_w = fmin(min_w, wi);
  }
  int e = 0;
  if (w) frexp(max_w, &e);
  double scale = ldexp(1.0, e < -1023 ? 1023 : -e);
  return n > 0 && hull_is_wide(min_w * scale, hull_reach(total * scale, sum_abs * scale));
}

/* Wide ranges of values and weights, where the chunks' points cannot hold the steps between them
 * (hull_is_wide): the kernels build such a row's hull as one chain on the steps, as the CPU
 * engine does. Double and single (the data rounded to float, the references on it in double;
 * spans of 1e+-15 and 1e+-30, as floats hold; double also 1e+-150).
 * Against the CPU engine, its wide rows to the bit (single: its fit rounded once), the others
 * within 1e-12 of 1 + |z| (rows of the lane kernels against it in one chunk, long rows with the
 * same chunks), and within 1e-10 against the PAV engine, whose block sums hold these ranges
 * (within 1e-10 of the exact fit: test-precision.R); single, 2^-24 more. */
static void test_wide(void) {
  const int64_t lens[] = {20, 1, 20, 33, 20, 700, 20, 1024, 20, 1500, 4096, 20};
  const int nl = (int)(sizeof lens / sizeof lens[0]);
  int64_t off[4 * nl + 1], R = 0;
  off[0] = 0;
  for (int rep = 0; rep < 4; rep++)
    for (int k = 0; k < nl; k++, R++) off[R + 1] = off[R] + lens[(k + 5 * rep) % nl];
  int64_t longs[4] = {0, 5000, 5001, 14000};
  int64_t n = off[R] > longs[3] ? off[R] : longs[3];
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *ref = (double *)malloc(n * sizeof *ref), *pav = (double *)malloc(n * sizeof *pav);
  double *z = (double *)malloc(n * sizeof *z);
  float *yf = (float *)malloc(n * sizeof *yf), *wf = (float *)malloc(n * sizeof *wf), *zf = (float *)malloc(n * sizeof *zf);
  const char *const kinds[] = {"values", "weights", "values and weights"};
  for (int kind = 0; kind < 3; kind++) {
    for (int span : {15, 30, 150}) { /* 1e+-150: products of steps below the doubles' range */
      for (int layout = 0; layout < 3; layout++) for (int single = 0; single <= (span <= 30); single++) {
        int increasing = (kind + layout + span / 15 + single) % 2;
        int64_t rows = layout ? 3 : R, *o = layout ? longs : off, chunk = layout == 2 ? 16384 : 1024;
        srand((unsigned)(100 * kind + span + 7 * layout));
        gen_wide(kind, span, o[rows], y, w);
        for (int64_t i = 0; single && i < o[rows]; i++) /* the float32 data, the references' too */
          yf[i] = (float)y[i], wf[i] = (float)w[i], y[i] = yf[i], w[i] = wf[i];
        const double *wp = kind ? w : NULL;
        gpuiso_opts opt = options(increasing, layout ? chunk : BLOCK_ROW_MAX, 0);
        reference(rows, o, y, wp, &opt, ref);
        for (int64_t r = 0; r < rows; r++) {
          gpuiso_error e;
          gpuiso_pav(o[r + 1] - o[r], y + o[r], wp ? wp + o[r] : NULL, &opt, pav + o[r], NULL, NULL, &e);
        }
        opt.hull_chunk = layout ? chunk : 0;
        for (int kernel = 0; kernel <= 2; kernel += 2) {
          if (layout == 0 && kernel == GPUISO_GPU_SIMPLE) continue; /* its chunks differ from one */
          opt.gpu_kernel = (gpuiso_gpu_kernel)kernel;
          gpuiso_error e;
          sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
          gpuiso_precision type = single ? GPUISO_SINGLE : GPUISO_DOUBLE;
          gpuiso_status s = single ? fit_rows_host(ex, rows, o, type, yf, wp ? wf : NULL, &opt, zf, NULL, &e)
                                   : fit_rows_host(ex, rows, o, type, y, wp, &opt, z, NULL, &e);
          const void *got = single ? (const void *)zf : (const void *)z;
          comparison c = compare_rows(rows, o, y, ref, type, got, increasing, 0);
          comparison p = compare_rows(rows, o, y, pav, type, got, increasing, 0);
          int64_t wide_differ = 0; /* other rows: the lane kernels' levels of short edges are their
                                      points' slopes, the CPU engine's its elements' sums */
          for (int64_t r = 0; r < rows; r++)
            for (int64_t i = o[r]; i < o[r + 1] && row_is_wide(o[r + 1] - o[r], y + o[r], wp ? wp + o[r] : NULL); i++)
              wide_differ += single ? zf[i] != (float)ref[i] : z[i] != ref[i];
          double rounding = single ? 0x1p-24 : 0; /* float32: the fit rounded once */
          CHECK(s == GPUISO_OK && wide_differ == 0 && c.max_dev <= rounding + 1e-12 && p.max_dev <= rounding + 1e-10 &&
                    c.step_downs == 0 && ex.held == 0,
                "wide %s 1e+-%d, %s, %s, %s kernel: status %d (%s), deviation %g (%lld of wide rows differ), from PAV "
                "%g, %lld step downs",
                kinds[kind], span, layout ? "long rows" : "lane kernels", single ? "single" : "double",
                kernel_names[kernel], (int)s, e.message, c.max_dev, (long long)wide_differ, p.max_dev,
                (long long)c.step_downs);
        }
      }
    }
  }
  free(y); free(w); free(ref); free(pav); free(z); free(yf); free(wf); free(zf);
}

/* Wide rows in chunks (hull/wide.h): rows of 4097, 5000 and 2500 (three chunks of 1024) beside
 * short ones, in chunks of 4, 61 and 1000 (merge levels of a thread and of a warp per merge on the
 * fast path), both directions, double and single: values 10^U(-30, 30) unweighted, weights
 * 10^U(-20, 20), or both, with zero weights (in the long rows) leading the row, leading every
 * third chunk, and filling every sixth (from the third); or unweighted, a trend of 2^40 an
 * element (wide for its values' scale alone), in stretches of 100 strictly increasing (runs of
 * blocks of one element increasing, long blocks decreasing) and noisy (blocks of a few). The kernels, to the bit, the CPU hull engine's fit and
 * solver blocks (single: its fit of the same values, rounded once); the CPU engine within 1e-10
 * of the PAV engine (whose block sums hold these ranges: test-precision.R), and with the solver
 * blocks of the one chain over each row (a chunk of the row's length), its fit within 1e-14; no
 * block starts at a zero weight but at a row's first element (it joins the block on its left). */
static void test_wide_chunks(void) {
  const int64_t lens[] = {4097, 20, 5000, 2500, 1, 33};
  const int R = (int)(sizeof lens / sizeof lens[0]);
  int64_t o[R + 1], n = offsets_of(lens, R, o);
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *ref = (double *)malloc(n * sizeof *ref), *one = (double *)malloc(n * sizeof *one);
  double *pav = (double *)malloc(n * sizeof *pav), *z = (double *)malloc(n * sizeof *z);
  float *yf = (float *)malloc(n * sizeof *yf), *wf = (float *)malloc(n * sizeof *wf), *zf = (float *)malloc(n * sizeof *zf);
  uint8_t *ref_start = (uint8_t *)malloc(n), *one_start = (uint8_t *)malloc(n), *start = (uint8_t *)malloc(n);
  const char *const kinds[] = {"values 1e+-30", "weights 1e+-20", "values 1e+-30 and weights 1e+-20",
                               "a trend of 2^40 an element"};
  const int64_t chunks[] = {4, 61, 1000}; /* a chunk's last word of 32 in part */
  for (int kind = 0; kind < 4; kind++)
    for (int c = 0; c < 3; c++)
      for (int single = 0; single <= 1; single++) {
        int64_t C = chunks[c];
        int weighted = kind == 1 || kind == 2;
        int increasing = (kind + c + single) % 2;
        srand((unsigned)(31 * kind + c + 7 * single));
        for (int64_t i = 0; i < n; i++) {
          double u = rand() / (RAND_MAX + 1.0), v = rand() / (RAND_MAX + 1.0), sgn = rand() % 2 ? 1 : -1;
          y[i] = kind == 1   ? sin(0.7 * i) + 3.0 * i / n + (u - 0.5)
                 : kind == 3 ? ldexp(i / 3.0 + (i / 100 % 2 ? 2 * (u - 0.5) : 0), 40)
                             : sgn * pow(10, 30 * (2 * u - 1));
          w[i] = weighted ? pow(10, 20 * (2 * v - 1)) : 1;
        }
        for (int r = 0; weighted && r < R; r++)
          for (int64_t k = 0; lens[r] > 100 && k * C < lens[r]; k++) { /* the long rows */
            int64_t zeros = k % 6 == 2 ? C : k % 3 == 0 ? 1 + k % 5 : 0;
            for (int64_t i = o[r] + k * C; i < o[r] + k * C + zeros && i < o[r + 1]; i++) w[i] = 0;
          }
        for (int64_t i = 0; i < n; i++) {
          yf[i] = (float)y[i], wf[i] = (float)w[i];
          if (single) y[i] = yf[i], w[i] = wf[i];
        }
        const double *wp = weighted ? w : NULL;
        gpuiso_opts opt = options(increasing, C, 0);
        opt.solver_blocks = 1;
        int64_t wide_rows = 0, zero_starts = 0;
        for (int r = 0; r < R; r++) {
          gpuiso_error e;
          int64_t len = lens[r];
          const double *wr = wp ? wp + o[r] : NULL;
          gpuiso_opts whole = opt;
          whole.hull_chunk = len;
          gpuiso_hull(len, y + o[r], wr, &opt, ref + o[r], ref_start + o[r], NULL, &e);
          gpuiso_hull(len, y + o[r], wr, &whole, one + o[r], one_start + o[r], NULL, &e);
          gpuiso_pav(len, y + o[r], wr, &opt, pav + o[r], NULL, NULL, &e);
          wide_rows += len > BLOCK_ROW_MAX && row_is_wide(len, y + o[r], wr);
          for (int64_t i = o[r] + 1; wp && i < o[r + 1]; i++) zero_starts += w[i] == 0 && ref_start[i];
        }
        comparison p = compare_rows(R, o, y, pav, GPUISO_DOUBLE, ref, increasing, 0);
        comparison h = compare_rows(R, o, y, one, GPUISO_DOUBLE, ref, increasing, 0);
        int64_t blocks_differ = 0;
        for (int64_t i = 0; i < n; i++) blocks_differ += ref_start[i] != one_start[i];
        CHECK(wide_rows == 2 && p.max_dev <= 1e-10 && p.step_downs == 0 && h.max_dev <= 1e-14 && blocks_differ == 0 &&
                  zero_starts == 0,
              "wide rows in chunks, %s, chunk %lld, %s, CPU hull engine: %lld long wide rows, deviation %g from PAV, "
              "%g from one chain (%lld solver block flags differ), %lld blocks start at a zero weight",
              kinds[kind], (long long)C, increasing ? "increasing" : "decreasing", (long long)wide_rows, p.max_dev,
              h.max_dev, (long long)blocks_differ, (long long)zero_starts);
        for (int kernel = 0; kernel <= 2; kernel += 2) {
          opt.gpu_kernel = (gpuiso_gpu_kernel)kernel;
          gpuiso_error e;
          sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
          gpuiso_status s = single ? fit_rows_host(ex, R, o, GPUISO_SINGLE, yf, wp ? wf : NULL, &opt, zf, start, &e)
                                   : fit_rows_host(ex, R, o, GPUISO_DOUBLE, y, wp, &opt, z, start, &e);
          int64_t differ = 0, flags_differ = 0;
          for (int64_t i = 0; i < n; i++) {
            differ += single ? zf[i] != (float)ref[i] : memcmp(&z[i], &ref[i], sizeof z[i]) != 0;
            flags_differ += start[i] != ref_start[i];
          }
          CHECK(s == GPUISO_OK && differ == 0 && flags_differ == 0 && ex.held == 0,
                "wide rows in chunks, %s, chunk %lld, %s, %s, %s kernel: status %d (%s), %lld elements and %lld "
                "solver block flags differ from the CPU hull engine's, %lld buffers held",
                kinds[kind], (long long)C, increasing ? "increasing" : "decreasing", single ? "single" : "double",
                kernel_names[kernel], (int)s, e.message, (long long)differ, (long long)flags_differ, (long long)ex.held);
        }
      }
  free(y); free(w); free(ref); free(one); free(pav); free(z); free(yf); free(wf); free(zf);
  free(ref_start); free(one_start); free(start);
}

int main(void) {
  static void (*const tests[])(void) = {test_wide, test_wide_chunks};
  return run_under_seeds(tests, (int)(sizeof tests / sizeof tests[0]), "the CUDA engine on the CPU");
}

/* The CUDA engine's host side and kernel steps (src/cuda/pipeline.cuh), run on the CPU by an
 * SIMT executor (tools/simt) under three schedule seeds: layouts of many rows, both precisions,
 * all kernels, the compact slots, slices, the row passes, the error reports, interrupts, and that
 * every buffer is released on every path. Against the CPU hull engine, on the families of
 * tools/gpu-check (tools/harness). The lane kernels' rows are test_short_rows', the wide rows
 * test_wide_rows'. The per-row passes stride over the rows with a few blocks. */
#define ROW_SCAN_ROW_BLOCKS 7
#define WARP_MERGE_BELOW 256 /* levels of a thread and of a warp per merge in little data */

#include <vector>

#include "batch.h"

static void test_families(void) {
  int64_t off[400];
  int64_t nrows = gen_ragged(20000, 300, 7, 300, off); /* ragged, empty rows included */
  int64_t one[2] = {0, 6000};
  int64_t three[4] = {0, 5000, 5001, 12000}; /* chunks of 8: levels of a thread and of a warp per merge */
  int64_t n = off[nrows] > three[3] ? off[nrows] : three[3];
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *ref = (double *)malloc(n * sizeof *ref), *z = (double *)malloc(n * sizeof *z);
  float *yf = (float *)malloc(n * sizeof *yf), *wf = (float *)malloc(n * sizeof *wf);
  float *zf = (float *)malloc(n * sizeof *zf);
  uint8_t *start = (uint8_t *)malloc(n);
  const char *const layouts[] = {"ragged rows", "one row", "three rows"};
  for (int layout = 0; layout < 3; layout++) {
    int64_t R = layout == 2 ? 3 : layout ? 1 : nrows, *o = layout == 2 ? three : layout ? one : off, N = o[R];
    for (int f = 0; f < FAM_COUNT; f++) {
      for (int wk = 0; wk < W_COUNT; wk++) {
        for (int single = 0; single <= 1; single++) {
          int increasing = (f + wk + single) % 2;
          gen_rows((family_kind)f, (weight_kind)wk, R, o, 11 + f, single, y, w);
          const double *wp = wk == W_NONE ? NULL : w;
          gpuiso_opts opt = options(increasing, layout == 2 ? 8 : layout ? 32 : 16, 1 + wk % 2);
          reference(R, o, y, wp, &opt, ref);
          for (int64_t i = 0; i < N; i++) yf[i] = (float)y[i], wf[i] = (float)w[i];
          for (int kernel = layout == 2 ? 2 : 0; kernel <= 2; kernel++) {
            opt.gpu_kernel = (gpuiso_gpu_kernel)kernel;
            gpuiso_error e;
            sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
            gpuiso_status s =
                single ? fit_rows_host(ex, R, o, GPUISO_SINGLE, yf, wp ? wf : NULL, &opt, zf, start, &e)
                       : fit_rows_host(ex, R, o, GPUISO_DOUBLE, y, wp, &opt, z, start, &e);
            /* relative to 1 + |z|, but the row-PAV control on the cancellation family: its block
             * sums are plain doubles, as the PAV engine's, whose small means lose digits there
             * (test-precision.R), so there on the scale of the data */
            comparison c = compare_rows(R, o, y, ref, single ? GPUISO_SINGLE : GPUISO_DOUBLE,
                                        single ? (void *)zf : (void *)z, increasing,
                                        f == FAM_CANCELLATION && kernel == GPUISO_GPU_ROW_PAV);
            int flags_ok = 1;
            for (int64_t r = 0; r < R; r++)
              for (int64_t i = o[r]; i < o[r + 1]; i++)
                flags_ok = flags_ok && start[i] == (i == o[r] || (single ? zf[i] != zf[i - 1] : z[i] != z[i - 1]));
            /* the simple path is the CPU engine's arithmetic in the same order: equal in double;
             * in single, the same values rounded once. The fast path sums in other orders (the
             * lanes' and the blocks' scans) and never steps down, in either precision. */
            double tol = (single ? 0x1p-24 : 0) + (kernel ? 1e-12 : 0);
            int blocks_ok = kernel || single || c.block_rows == 0;
            CHECK(s == GPUISO_OK && c.max_dev <= tol && (kernel == GPUISO_GPU_ROW_PAV || (single && kernel == GPUISO_GPU_SIMPLE) || c.step_downs == 0) &&
                      blocks_ok && flags_ok && ex.held == 0,
                  "%s %s weights, %s, %s, %s kernel: status %d (%s), deviation %g, %lld step downs, "
                  "%lld rows of other block counts, %lld buffers held",
                  family_names[f], weight_names[wk], layouts[layout],
                  single ? "single" : "double", kernel_names[kernel], (int)s, e.message, c.max_dev,
                  (long long)c.step_downs, (long long)c.block_rows, (long long)ex.held);
          }
        }
      }
    }
  }
  free(y); free(w); free(ref); free(z); free(yf); free(wf); free(zf); free(start);
}

/* Weights all below 2^-1023: the scale that brings them near 1 is no double; the solver's
 * kernels against the CPU hull engine (the row-PAV control scales nothing). */
static void test_tiny_weights(void) {
  int64_t off[4] = {0, 3, 40, 700};
  double y[700], w[700], ref[700], z[700];
  for (int i = 0; i < 700; i++) y[i] = sin(0.37 * i) + 0.001 * i, w[i] = 1e-310 * (1 + i % 5);
  gpuiso_opts opt = options(1, 16, 2);
  reference(3, off, y, w, &opt, ref);
  for (int kernel = 0; kernel <= 2; kernel += 2) {
    opt.gpu_kernel = (gpuiso_gpu_kernel)kernel;
    gpuiso_error e;
    sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
    int64_t rows = kernel == GPUISO_GPU_FAST ? 2 : 3; /* short rows only, for the fast kernel */
    gpuiso_status s = fit_rows_host(ex, rows, off, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
    comparison c = compare_rows(rows, off, y, ref, GPUISO_DOUBLE, z, 1, 0);
    CHECK(s == GPUISO_OK && c.max_dev <= 1e-12 && c.step_downs == 0,
          "weights below 2^-1023, %s kernel: status %d (%s), deviation %g", kernel_names[kernel], (int)s,
          e.message, c.max_dev);
  }
}

/* A batch larger than the memory free runs in slices of rows: the same fit as in one slice,
 * errors named by the batch's row and element, nothing held. */
static void test_slices(void) {
  int64_t off[60];
  int64_t nrows = gen_ragged(6000, 600, 3, 50, off);
  int64_t n = off[nrows];
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *ref = (double *)malloc(n * sizeof *ref), *z = (double *)malloc(n * sizeof *z);
  uint8_t *start = (uint8_t *)malloc(n), *ref_start = (uint8_t *)malloc(n);
  gen_rows(FAM_SAWTOOTH, W_EXTREME, nrows, off, 3, 0, y, w);
  for (int kernel = 0; kernel <= 2; kernel += 2) {
    gpuiso_opts opt = options(1, 0, 0);
    opt.gpu_kernel = (gpuiso_gpu_kernel)kernel;
    gpuiso_error e;
    sim_exec whole = {&e, 0, 0, 0, 0, sim_seed};
    gpuiso_status s = fit_rows_host(whole, nrows, off, GPUISO_DOUBLE, y, w, &opt, ref, ref_start, &e);
    /* room for about a tenth of the batch, beside a slice's fixed parts */
    double need = 0;
    for (int64_t r = 0; r < nrows; r++)
      need += plan_slice_row_bytes(&opt, 600, off[r + 1] - off[r], GPUISO_DOUBLE, 1, 1);
    size_t memory = (size_t)((need / 10 + 3 * ARENA_FIXED_BYTES) / SLICE_SHARE);
    sim_exec sliced = {&e, 0, 0, 0, memory, sim_seed};
    gpuiso_status s2 = fit_rows_host(sliced, nrows, off, GPUISO_DOUBLE, y, w, &opt, z, start, &e);
    double dev = 0;
    int64_t flags = 0;
    for (int64_t i = 0; i < n; i++) dev = fmax(dev, fabs(z[i] - ref[i])), flags += start[i] != ref_start[i];
    CHECK(s == GPUISO_OK && s2 == GPUISO_OK && dev == 0 && flags == 0 && sliced.allocs > 5 * whole.allocs &&
              sliced.held == 0,
          "%s kernel in slices: status %d, %d, deviation %g, %lld flags differ, %lld and %lld allocations, %lld held",
          kernel_names[kernel], (int)s, (int)s2, dev, (long long)flags, (long long)whole.allocs,
          (long long)sliced.allocs, (long long)sliced.held);
    int64_t bad = off[nrows - 3] + 2;
    double keep = w[bad];
    w[bad] = -1;
    sim_exec failing = {&e, 0, 0, 0, memory, sim_seed};
    s = fit_rows_host(failing, nrows, off, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
    CHECK(s == GPUISO_E_W_NEGATIVE && e.row == nrows - 3 && e.index == bad && failing.held == 0,
          "%s kernel, a negative weight in a later slice: status %d, row %lld, index %lld", kernel_names[kernel],
          (int)s, (long long)e.row, (long long)e.index);
    w[bad] = keep;
  }
  free(y); free(w); free(ref); free(z); free(start); free(ref_start);
}

/* A fast-path plan of three rows with chunks of `chunk` and a device fit of their off[3] elements,
 * for the passes over a fit's levels (released by level_plan_release, on failure too). */
struct level_plan {
  gpuiso_cuda_plan p;
  double *fit;
  solver_view<double> v;
};

static gpuiso_status level_plan_init(sim_exec &ex, level_plan *lp, const int64_t *off, int sign, int64_t chunk,
                                     gpuiso_error *e) {
  gpuiso_opts opt = options(sign > 0, chunk, 0);
  opt.gpu_kernel = GPUISO_GPU_FAST;
  lp->fit = NULL;
  gpuiso_status s = plan_init(ex, &lp->p, 3, off, GPUISO_DOUBLE, 0, &opt, e);
  if (s == GPUISO_OK) s = make(ex, &lp->fit, off[3]);
  lp->v = plan_view(&lp->p, (const double *)NULL, (const double *)NULL, lp->fit, NULL);
  return s;
}

static void level_plan_release(sim_exec &ex, level_plan *lp) {
  ex.release(lp->fit);
  plan_release(ex, &lp->p);
}

/* The rows of o fitted with opt on the simple path (k = 0) and the fast path (k = 1): statuses
 * and errors. */
template <typename T>
static void fit_both_paths(int nrows, const int64_t *o, const T *y, const T *w, gpuiso_opts opt, T *z,
                           gpuiso_status st[2], gpuiso_error e[2]) {
  gpuiso_precision type = sizeof(T) == sizeof(float) ? GPUISO_SINGLE : GPUISO_DOUBLE;
  for (int fast = 0; fast <= 1; fast++) {
    opt.gpu_kernel = fast ? GPUISO_GPU_FAST : GPUISO_GPU_SIMPLE;
    sim_exec ex = {&e[fast], 0, 0, 0, 0, sim_seed};
    st[fast] = fit_rows_host(ex, nrows, o, type, y, w, &opt, z, NULL, &e[fast]);
  }
}

/* The fast path's block-per-row passes against the simple path's thread-per-row steps: the
 * running maximum (minimum) of flagged rows to the bit, and the checks of long rows. */
static void test_row_scans(void) {
  int64_t off[4] = {0, 4200, 4200, 9000}; /* over BLOCK_ROW_MAX, chunks of 3: rows of 6 and 7 tiles */
  static double fit[9000], a[9000], b[9000];
  for (int i = 0; i < 9000; i++) fit[i] = sin(0.01 * i) + 0.001 * i + (i % 7 == 3 ? -0.5 : 0);
  row_state rows[3] = {{1, 0, GPUISO_OK, -1, 1}, {1, 0, GPUISO_OK, -1, 1}, {1, 0, GPUISO_OK, -1, 0}};
  for (int sign = -1; sign <= 1; sign += 2) {
    gpuiso_error e;
    sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
    level_plan lp;
    gpuiso_status s = level_plan_init(ex, &lp, off, sign, 3, &e);
    const solver_view<double> &v = lp.v;
    if (s == GPUISO_OK) s = ex.put(v.rows, rows, sizeof rows);
    if (s == GPUISO_OK) s = ex.put(v.fit, fit, sizeof fit);
    if (s == GPUISO_OK) s = each(ex, unstep_step<double>{v}, 3);
    if (s == GPUISO_OK) s = ex.get(a, v.fit, sizeof a);
    if (s == GPUISO_OK) s = ex.put(v.fit, fit, sizeof fit);
    if (s == GPUISO_OK) s = scan_row_unstep(ex, v);
    if (s == GPUISO_OK) s = ex.get(b, v.fit, sizeof b);
    int64_t differ = 0, changed = 0;
    for (int i = 0; i < 9000; i++) differ += memcmp(&a[i], &b[i], sizeof a[i]) != 0, changed += a[i] != fit[i];
    CHECK(s == GPUISO_OK && lp.p.ntiles == 13 && differ == 0 && changed > 100,
          "running %s in tiles: status %d (%s), %lld tiles, %lld differ of %lld changed",
          sign > 0 ? "maximum" : "minimum", (int)s, e.message, (long long)lp.p.ntiles, (long long)differ,
          (long long)changed);
    level_plan_release(ex, &lp);
  }

  /* errors in rows over BLOCK_ROW_MAX: the row and element, as the simple path names them */
  int64_t lo[4] = {0, 5000, 11000, 16000};
  int64_t n = lo[3];
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w), *z = (double *)malloc(n * sizeof *z);
  for (int64_t i = 0; i < n; i++) y[i] = sin(0.3 * i), w[i] = 1;
  gpuiso_opts opt = options(1, 0, 0);
  for (int c = 0; c < 5; c++) {
    int64_t at = c == 0 ? 9000 : c == 1 ? 12345 : -1;
    if (c == 0) y[at] = NAN;
    if (c == 1) w[at] = -2;
    if (c == 2) for (int64_t i = lo[1]; i < lo[2]; i++) w[i] = 0;
    if (c == 3) for (int64_t i = lo[2]; i < lo[3]; i++) y[i] = 1e306, w[i] = 1e10;
    if (c == 4) w[lo[1] + 3000] = 0x1p-1030, w[lo[0] + 7] = 0x1p-1000; /* row 0 within the range */
    gpuiso_status want[5] = {GPUISO_E_Y_NONFINITE, GPUISO_E_W_NEGATIVE, GPUISO_E_W_ALLZERO, GPUISO_E_OVERFLOW,
                             GPUISO_E_W_SPAN};
    int64_t want_row[5] = {1, 2, 1, 2, 1};
    gpuiso_error e[2];
    gpuiso_status s[2];
    fit_both_paths(3, lo, y, w, opt, z, s, e);
    CHECK(s[1] == want[c] && s[0] == s[1] && e[1].row == want_row[c] && e[0].row == e[1].row &&
              e[0].index == e[1].index && e[1].index == (c < 2 ? at : -1),
          "long rows, error %d: fast status %d row %lld index %lld, simple status %d row %lld index %lld", c,
          (int)s[1], (long long)e[1].row, (long long)e[1].index, (int)s[0], (long long)e[0].row, (long long)e[0].index);
    if (c == 0) y[at] = 0;
    if (c == 1) w[at] = 1;
    if (c == 2) for (int64_t i = lo[1]; i < lo[2]; i++) w[i] = 1;
    if (c == 3) for (int64_t i = lo[2]; i < lo[3]; i++) y[i] = sin(0.3 * i), w[i] = 1;
  }
  free(y); free(w); free(z);
}

/* Errors in unweighted rows over BLOCK_ROW_MAX: the row and first element that the fast path
 * names, as the simple path names them, in both precisions (float32 with exact = FALSE too), in
 * chunks of 1024 and of 256 (8 lanes a chunk, so that some of a warp's lanes are idle); values
 * that are not finite in one lane, in two lanes of a chunk and in two chunks, and sums too large
 * for a double in a chunk and only across chunks (1024 values of 1e305 sum to 1.024e308). */
static void test_unweighted_errors(void) {
  const int64_t lo[4] = {0, 5000, 11000, 16000}, n = lo[3];
  struct {
    int64_t at[2];  /* positions of values not finite (-1: none) */
    double big;     /* row 2's values, where not 0 */
    gpuiso_status want;
    int64_t row, index;
  } cases[] = {{{9000, -1}, 0, GPUISO_E_Y_NONFINITE, 1, 9000},
               {{9000, 8990}, 0, GPUISO_E_Y_NONFINITE, 1, 8990},
               {{8993, 8990}, 0, GPUISO_E_Y_NONFINITE, 1, 8990},
               {{15000, 12345}, 0, GPUISO_E_Y_NONFINITE, 2, 12345},
               {{10999, 5001}, 0, GPUISO_E_Y_NONFINITE, 1, 5001},
               {{-1, -1}, 1e306, GPUISO_E_OVERFLOW, 2, -1},
               {{-1, -1}, 1e305, GPUISO_E_OVERFLOW, 2, -1}};
  std::vector<double> y(n), z(n);
  std::vector<float> yf(n), zf(n);
  for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++)
    for (int mode = 0; mode < 3; mode++) /* double, single, single with exact = FALSE */
      for (int64_t chunk = 256; chunk <= 1024; chunk *= 4) {
        int single = mode > 0;
        if (single && cases[c].big != 0) continue; /* float32 sums do not overflow a double */
        for (int64_t i = 0; i < n; i++) y[i] = i >= lo[2] && cases[c].big != 0 ? cases[c].big : sin(0.3 * i);
        for (int k = 0; k < 2; k++)
          if (cases[c].at[k] >= 0) y[cases[c].at[k]] = k ? -INFINITY : NAN;
        for (int64_t i = 0; i < n; i++) yf[i] = (float)y[i];
        gpuiso_opts opt = options(1, chunk, 0);
        opt.gpu_plain_sums = mode == 2;
        gpuiso_error e[2];
        gpuiso_status s[2];
        if (single) fit_both_paths(3, lo, yf.data(), (const float *)NULL, opt, zf.data(), s, e);
        else fit_both_paths(3, lo, y.data(), (const double *)NULL, opt, z.data(), s, e);
        CHECK(s[1] == cases[c].want && s[0] == s[1] && e[1].row == cases[c].row && e[0].row == e[1].row &&
                  e[1].index == cases[c].index && e[0].index == e[1].index,
              "unweighted long rows, error %d, %s, chunk %lld: fast status %d (%s) row %lld index %lld, simple "
              "status %d (%s) row %lld index %lld", c,
              mode == 2 ? "single, exact = FALSE" : single ? "single" : "double", (long long)chunk, (int)s[1],
              e[1].message, (long long)e[1].row, (long long)e[1].index, (int)s[0], e[0].message, (long long)e[0].row,
              (long long)e[0].index);
      }
}

/* The executor, noting which of the lane and chunk kernels a fit launched. */
struct route_log : sim_exec {
  int lanes, chunks;
  template <class... P, class... A>
  gpuiso_status launch(const char *name, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, A... args) {
    lanes += !strcmp(name, "short_rows_kernel") || !strcmp(name, "block_rows_kernel");
    chunks += !strcmp(name, "chunk_hulls_kernel");
    return sim_exec::launch(name, kernel, grid, block, shared, args...);
  }
};

/* A batch mixing the lane kernels' rows (up to BLOCK_ROW_MAX, empty ones too) with longer ones in
 * chunks, in one plan, on the fast path: every family, weighted or not, both directions, both
 * precisions, against the CPU hull engine; and the first failing row named across the two. */
static void test_mixed_rows(void) {
  const int64_t lens[] = {3, 5000, 0, 700, 1, 4096, 9000, 33, 2000, 4097, 512};
  const int nrows = (int)(sizeof lens / sizeof lens[0]);
  int64_t o[nrows + 1], n = offsets_of(lens, nrows, o);
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *ref = (double *)malloc(n * sizeof *ref), *z = (double *)malloc(n * sizeof *z);
  float *yf = (float *)malloc(n * sizeof *yf), *wf = (float *)malloc(n * sizeof *wf), *zf = (float *)malloc(n * sizeof *zf);
  uint8_t *start = (uint8_t *)malloc(n);
  for (int f = 0; f < FAM_COUNT; f++) {
    for (int wk = 0; wk < W_COUNT; wk++) {
      for (int single = 0; single <= 1; single++) {
        int increasing = (f + wk + single) % 2;
        gen_rows((family_kind)f, (weight_kind)wk, nrows, o, 17 + f, single, y, w);
        const double *wp = wk == W_NONE ? NULL : w;
        gpuiso_opts opt = options(increasing, 0, 0);
        opt.hull_chunk = 1024;
        reference(nrows, o, y, wp, &opt, ref);
        for (int64_t i = 0; i < n; i++) yf[i] = (float)y[i], wf[i] = (float)w[i];
        opt.gpu_kernel = GPUISO_GPU_FAST;
        gpuiso_error e;
        route_log ex = {{&e, 0, 0, 0, 0, sim_seed}, 0, 0};
        gpuiso_status s = single ? fit_rows_host(ex, nrows, o, GPUISO_SINGLE, yf, wp ? wf : NULL, &opt, zf, start, &e)
                                 : fit_rows_host(ex, nrows, o, GPUISO_DOUBLE, y, wp, &opt, z, start, &e);
        comparison c = compare_rows(nrows, o, y, ref, single ? GPUISO_SINGLE : GPUISO_DOUBLE,
                                    single ? (void *)zf : (void *)z, increasing, 0);
        int flags_ok = 1;
        for (int64_t r = 0; r < nrows; r++)
          for (int64_t i = o[r]; i < o[r + 1]; i++)
            flags_ok = flags_ok && start[i] == (i == o[r] || (single ? zf[i] != zf[i - 1] : z[i] != z[i - 1]));
        CHECK(s == GPUISO_OK && c.max_dev <= (single ? 0x1p-24 : 0) + 1e-12 && c.step_downs == 0 && flags_ok &&
                  ex.lanes == 3 && ex.chunks == 1 && ex.held == 0, /* packs, rows of two and of four warps */
              "mixed rows, %s, %s weights, %s: status %d (%s), deviation %g at %lld, %lld step downs, flags %s, "
              "%d lane and %d chunk kernel launches, %lld buffers held",
              family_names[f], weight_names[wk], single ? "single" : "double", (int)s, e.message, c.max_dev,
              (long long)c.worst, (long long)c.step_downs, flags_ok ? "right" : "wrong", ex.lanes, ex.chunks,
              (long long)ex.held);
      }
    }
  }

  /* two bad rows, one of each kind, in either order: the first is named, as the simple path names it */
  for (int64_t i = 0; i < n; i++) y[i] = sin(0.3 * i), w[i] = 1;
  const int bad[2][2] = {{3, 6}, {1, 8}}; /* rows: a lane row before a chunked one, and after */
  for (int k = 0; k < 2; k++) {
    int64_t first = o[bad[k][0]] + 17, second = o[bad[k][1]] + 20;
    y[first] = NAN, w[second] = -1;
    gpuiso_error e[2];
    gpuiso_status st[2];
    fit_both_paths(nrows, o, y, w, options(1, 0, 0), z, st, e);
    CHECK(st[1] == GPUISO_E_Y_NONFINITE && st[0] == st[1] && e[1].row == bad[k][0] && e[1].index == first &&
              e[0].row == e[1].row && e[0].index == e[1].index,
          "mixed rows, bad rows %d and %d: fast status %d row %lld index %lld, simple status %d row %lld index %lld",
          bad[k][0], bad[k][1], (int)st[1], (long long)e[1].row, (long long)e[1].index, (int)st[0],
          (long long)e[0].row, (long long)e[0].index);
    y[first] = 0, w[second] = 1;
  }
  /* a lane row of zero weights before a chunked row with a negative one: the lane row's error */
  for (int64_t i = o[3]; i < o[4]; i++) w[i] = 0;
  w[o[6] + 5] = -1;
  gpuiso_error e[2];
  gpuiso_status st[2];
  fit_both_paths(nrows, o, y, w, options(1, 0, 0), z, st, e);
  CHECK(st[1] == GPUISO_E_W_ALLZERO && st[0] == st[1] && e[1].row == 3 && e[1].index == -1 && e[0].row == 3 &&
            e[0].index == -1,
        "mixed rows, zero weights in a lane row: fast status %d row %lld index %lld, simple status %d row %lld",
        (int)st[1], (long long)e[1].row, (long long)e[1].index, (int)st[0], (long long)e[0].row);
  /* empty rows beside a chunked one and no other: no lane kernel, every row's state the chunks' */
  const int64_t lone[4] = {0, 0, 5000, 5000};
  gen_rows(FAM_SAWTOOTH, W_UNIFORM, 3, lone, 23, 0, y, w);
  gpuiso_opts opt = options(0, 0, 0);
  opt.hull_chunk = 1024;
  reference(3, lone, y, w, &opt, ref);
  opt.gpu_kernel = GPUISO_GPU_FAST;
  gpuiso_error el;
  route_log ex = {{&el, 0, 0, 0, 0, sim_seed}, 0, 0};
  gpuiso_status sl = fit_rows_host(ex, 3, lone, GPUISO_DOUBLE, y, w, &opt, z, start, &el);
  comparison c = compare_rows(3, lone, y, ref, GPUISO_DOUBLE, z, 0, 0);
  CHECK(sl == GPUISO_OK && c.max_dev <= 1e-12 && c.step_downs == 0 && ex.lanes == 0 && ex.chunks == 1 && ex.held == 0,
        "mixed rows, empty rows beside a chunked one: status %d (%s), deviation %g, %d lane and %d chunk kernel "
        "launches", (int)sl, el.message, c.max_dev, ex.lanes, ex.chunks);
  free(y); free(w); free(ref); free(z); free(yf); free(wf); free(zf); free(start);
}

static int stop_now(void *ctx) { return --*(int *)ctx < 0; }

static void test_errors(void) {
  int64_t off[5] = {0, 10, 10, 40, 100};
  double y[100], w[100], z[100];
  for (int i = 0; i < 100; i++) y[i] = sin(i), w[i] = 1;
  gpuiso_opts opt = options(1, 8, 2);
  gpuiso_error e;
  sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
  y[50] = NAN;
  y[20] = INFINITY;
  gpuiso_status s = fit_rows_host(ex, 4, off, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
  CHECK(s == GPUISO_E_Y_NONFINITE && e.row == 2 && e.index == 20 && ex.held == 0,
        "first bad row: status %d row %lld index %lld", (int)s, (long long)e.row, (long long)e.index);
  y[20] = 0;
  y[50] = 0;
  w[33] = -1;
  s = fit_rows_host(ex, 4, off, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
  CHECK(s == GPUISO_E_W_NEGATIVE && e.row == 2 && e.index == 33, "negative weight");
  w[33] = 1;
  for (int i = 40; i < 100; i++) w[i] = 0;
  s = fit_rows_host(ex, 4, off, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
  CHECK(s == GPUISO_E_W_ALLZERO && e.row == 3 && e.index == -1, "all-zero row");
  for (int i = 40; i < 100; i++) w[i] = 1, y[i] = 1e307;
  s = fit_rows_host(ex, 4, off, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
  CHECK(s == GPUISO_E_OVERFLOW && e.row == 3, "overflow");
  for (int i = 40; i < 100; i++) y[i] = i;
  /* weights spanning past 2^1022 (hull_span_beyond) in a lane row, and to 2^1020 in the one before */
  w[45] = 0x1p-1030, w[20] = 0x1p-1020;
  s = fit_rows_host(ex, 4, off, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
  CHECK(s == GPUISO_E_W_SPAN && e.row == 3 && e.index == -1, "weights spanning 2^1030: status %d row %lld",
        (int)s, (long long)e.row);
  w[45] = w[20] = 1;

  /* an interrupt at the poll (once the data are in: the kernels are queued without a wait), and
   * a failure at each allocation: nothing stays held */
  int left = 1000;
  gpuiso_interrupt intr = {stop_now, &left};
  opt.interrupt = &intr;
  s = fit_rows_host(ex, 4, off, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
  CHECK(s == GPUISO_OK && left == 999, "one poll: status %d, %d polls", (int)s, 1000 - left);
  left = 0;
  s = fit_rows_host(ex, 4, off, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
  CHECK(s == GPUISO_E_INTERRUPT && ex.held == 0, "interrupt at the poll: status %d, %lld held", (int)s,
        (long long)ex.held);
  opt.interrupt = NULL;
  sim_exec counter = {&e, 0, 0, 0, 0, sim_seed};
  s = fit_rows_host(counter, 4, off, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
  int64_t count = counter.allocs;
  CHECK(s == GPUISO_OK, "fit after errors: status %d", (int)s);
  for (int64_t k = 1; k <= count; k++) {
    sim_exec fx = {&e, 0, 0, k, 0, sim_seed};
    s = fit_rows_host(fx, 4, off, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
    CHECK(s == GPUISO_E_NOMEM && fx.held == 0, "allocation %lld failing: status %d, %lld held",
          (long long)k, (int)s, (long long)fx.held);
  }
}

/* A step that writes nothing: the launch of a grid over CUDA's limit must fail before it runs. */
struct idle_step {
  SIMT_DEVICE void operator()(int64_t) const {}
};

/* Grids of more blocks than CUDA launches (2^31 - 1 in x) are refused as a configuration error,
 * not cut to their count's low bits (2^32 + 3 blocks would be 3). */
static void test_grids(void) {
  CHECK(grid_of(7).x == 7 && grid_of(((int64_t)1 << 31) - 1).x == 0x7fffffffu &&
            grid_of((int64_t)1 << 31).x == 1u << 31 && grid_of(((int64_t)1 << 32) + 3).x == 1u << 31,
        "grid_of: %u, %u", grid_of(7).x, grid_of(((int64_t)1 << 32) + 3).x);
  gpuiso_error e;
  sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
  gpuiso_status s = ex.launch("idle", each_kernel<idle_step>, grid_of(((int64_t)1 << 32) + 3), dim3(32), 0,
                              idle_step{}, (int64_t)1);
  if (s == GPUISO_OK) s = ex.sync();
  CHECK(s == GPUISO_E_CUDA && strstr(e.message, "grid") != NULL, "a grid of 2^32 + 3 blocks: status %d (%s)", (int)s,
        e.message);
}

/* The number of elements flagged as block starts. */
static int64_t count_flags(int64_t n, const uint8_t *start) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) k += start[i];
  return k;
}

/* The compact slots (hull/slots.h) on rows of 1025, 2049 and 5000 over several chunks, both
 * directions, double and single, weighted or not, the simple and the fast kernels.
 * Noise with weights e^+-8 (or none): the levels of short edges, from their elements' sums, within
 * 1e-12 of the PAV engine (from the rounded coordinates they would be about 1e-7 off), and to the
 * bit the CPU hull engine's on the simple path in double.
 * Rows on one line (one value, weights powers of two): the points are exactly collinear, their
 * rounded coordinates not, so the filter can decide no orientation of three vertices and every one
 * is decided exactly: one solver block a row (the exact fit's one level). With a dip of 2^-40 at
 * one element (double), below the filter's reach: two (the prefix up to it pooled, the rest). */
static void test_compact_slots(void) {
  int64_t off[4] = {0, 1025, 3074, 8074}, n = off[3];
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *ref = (double *)malloc(n * sizeof *ref), *pav = (double *)malloc(n * sizeof *pav);
  double *z = (double *)malloc(n * sizeof *z);
  float *yf = (float *)malloc(n * sizeof *yf), *wf = (float *)malloc(n * sizeof *wf), *zf = (float *)malloc(n * sizeof *zf);
  uint8_t *start = (uint8_t *)malloc(n), *ref_start = (uint8_t *)malloc(n);
  const char *const kinds[] = {"noise", "one line", "one line with a dip"};
  for (int kind = 0; kind < 3; kind++)
    for (int weighted = 0; weighted <= 1; weighted++)
      for (int single = 0; single <= (kind == 2 ? 0 : 1); single++)
        for (int increasing = 0; increasing <= 1; increasing++)
          for (int64_t chunk = 64; chunk <= 1024; chunk *= 16) {
            if (kind == 0) {
              gen_rows(FAM_NOISE, weighted ? W_EXTREME : W_NONE, 3, off, 40 + increasing, single, y, w);
            } else {
              srand((unsigned)(10 * kind + weighted));
              for (int64_t i = 0; i < n; i++) y[i] = single ? (double)0.1f : 0.1, w[i] = ldexp(1.0, rand() % 17 - 8);
              for (int r = 0; kind == 2 && r < 3; r++) y[off[r] + 700] *= 1 - (increasing ? 1 : -1) * 0x1p-40;
            }
            for (int64_t i = 0; single && i < n; i++) y[i] = (float)y[i], w[i] = (float)w[i];
            const double *wp = weighted ? w : NULL;
            gpuiso_opts opt = options(increasing, chunk, 0);
            opt.solver_blocks = 1;
            for (int64_t r = 0; r < 3; r++) {
              gpuiso_error e;
              int64_t o0 = off[r], len = off[r + 1] - o0;
              gpuiso_hull(len, y + o0, wp ? wp + o0 : NULL, &opt, ref + o0, ref_start + o0, NULL, &e);
              gpuiso_pav(len, y + o0, wp ? wp + o0 : NULL, &opt, pav + o0, NULL, NULL, &e);
            }
            for (int64_t i = 0; i < n; i++) yf[i] = (float)y[i], wf[i] = (float)w[i];
            int64_t want = kind == 0 ? -1 : (kind == 1 ? 3 : 6); /* solver blocks of the three rows */
            comparison h = compare_rows(3, off, y, pav, GPUISO_DOUBLE, ref, increasing, 0);
            CHECK(h.max_dev <= 1e-12 && (want < 0 || count_flags(n, ref_start) == want),
                  "compact slots, %s, %s, %s, chunk %lld, CPU hull engine: deviation from PAV %g, %lld solver blocks",
                  kinds[kind], weighted ? "weighted" : "unweighted", increasing ? "increasing" : "decreasing",
                  (long long)chunk, h.max_dev, (long long)count_flags(n, ref_start));
            for (int kernel = 0; kernel <= 2; kernel += 2) {
              opt.gpu_kernel = (gpuiso_gpu_kernel)kernel;
              gpuiso_error e;
              sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
              gpuiso_status s = single ? fit_rows_host(ex, 3, off, GPUISO_SINGLE, yf, wp ? wf : NULL, &opt, zf, start, &e)
                                       : fit_rows_host(ex, 3, off, GPUISO_DOUBLE, y, wp, &opt, z, start, &e);
              const void *got = single ? (const void *)zf : (const void *)z;
              gpuiso_precision type = single ? GPUISO_SINGLE : GPUISO_DOUBLE;
              comparison c = compare_rows(3, off, y, ref, type, got, increasing, 0);
              comparison p = compare_rows(3, off, y, pav, type, got, increasing, 0);
              int64_t flags_differ = 0;
              for (int64_t i = 0; i < n; i++) flags_differ += start[i] != ref_start[i];
              double tol = single ? 0x1p-24 : 1e-12;
              int bitwise = !single && kernel == GPUISO_GPU_SIMPLE;
              CHECK(s == GPUISO_OK && (bitwise ? c.differ == 0 : c.max_dev <= tol) && p.max_dev <= tol &&
                        flags_differ == 0 && ex.held == 0,
                    "compact slots, %s, %s, %s, %s, chunk %lld, %s kernel: status %d (%s), deviation %g from the "
                    "CPU hull engine (%lld differ), %g from PAV, %lld solver block flags differ",
                    kinds[kind], weighted ? "weighted" : "unweighted", single ? "single" : "double",
                    increasing ? "increasing" : "decreasing", (long long)chunk, kernel_names[kernel], (int)s,
                    e.message, c.max_dev, (long long)c.differ, p.max_dev, (long long)flags_differ);
            }
          }
  free(y); free(w); free(ref); free(pav); free(z); free(yf); free(wf); free(zf); free(start); free(ref_start);
}

/* The fast path's reconstruction, a warp per tile (fit_warp_kernel), against the simple path's
 * thread per piece (fit_step) with pieces of 32, the lanes' pieces, on the same hulls: the same
 * levels and solver block flags to the bit, and nothing written in a wide row (the last). Rows
 * and chunks that end part way through a tile and a piece, chunks of several tiles and chunks
 * not of whole pieces, both precisions, with zero weights and without weights; tiles under one
 * edge (noise) and of a vertex an element (increasing), where the lanes' vertices lie apart. */
template <typename T>
static void check_fit_tiles(int64_t chunk, family_kind family, int weighted, int blocks) {
  const int64_t off[7] = {0, 5000, 5001, 5001, 5033, 13000, 19000}, n = off[6];
  const gpuiso_precision type = sizeof(T) == sizeof(float) ? GPUISO_SINGLE : GPUISO_DOUBLE;
  double *yd = (double *)malloc(n * sizeof *yd), *wd = (double *)malloc(n * sizeof *wd);
  T *y = (T *)malloc(n * sizeof *y), *w = (T *)malloc(n * sizeof *w), *fit[2];
  uint8_t *start[2];
  gen_rows(family, weighted ? W_ZEROS : W_NONE, 6, off, 5, type == GPUISO_SINGLE, yd, wd);
  srand(5);
  for (int64_t i = off[5]; i < n; i++) yd[i] = (rand() % 2 ? 1 : -1) * pow(10, 60.0 * rand() / RAND_MAX - 30);
  for (int64_t i = 0; i < n; i++) y[i] = (T)yd[i], w[i] = (T)wd[i];
  gpuiso_opts opt = options(1, chunk, 0);
  opt.gpu_kernel = GPUISO_GPU_FAST;
  opt.solver_blocks = blocks;
  gpuiso_error e;
  sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
  gpuiso_cuda_plan p;
  const T *dy = NULL, *dw = NULL;
  T *dfit[3] = {NULL, NULL, NULL};
  uint8_t *dstart[3] = {NULL, NULL, NULL};
  row_state rows[6];
  gpuiso_status s = plan_init(ex, &p, 6, off, type, weighted, &opt, &e);
  staging<sim_exec> plain = {}; /* no pinned buffers: plain copies */
  if (s == GPUISO_OK) s = stage_upload(ex, &plain, &dy, y, n);
  if (s == GPUISO_OK) s = stage_upload(ex, &plain, &dw, weighted ? w : NULL, n);
  for (int k = 0; k < 3; k++) {
    if (s == GPUISO_OK) s = make(ex, &dfit[k], n);
    if (s == GPUISO_OK) s = make(ex, &dstart[k], n);
    if (s == GPUISO_OK && k > 0) s = ex.fill(dfit[k], 0x5a, n * sizeof(T));
    if (s == GPUISO_OK && k > 0) s = ex.fill(dstart[k], 0x5a, n);
  }
  if (s == GPUISO_OK) s = plan_fit(ex, &p, dy, dw, dfit[0], dstart[0], &e); /* the hulls */
  solver_view<T> simple = plan_view(&p, dy, dw, dfit[1], dstart[1]), fast = plan_view(&p, dy, dw, dfit[2], dstart[2]);
  if (s == GPUISO_OK) s = each(ex, fit_step<T>{simple, SIMT_WARP}, p.nchunks * ((chunk + SIMT_WARP - 1) / SIMT_WARP));
  if (s == GPUISO_OK) s = tile_launch(ex, "fit_warp_kernel", fit_warp_kernel<T>, fast);
  for (int k = 0; k < 2; k++) {
    fit[k] = (T *)malloc(n * sizeof(T)), start[k] = (uint8_t *)malloc(n);
    if (s == GPUISO_OK) s = ex.get(fit[k], dfit[k + 1], n * sizeof(T));
    if (s == GPUISO_OK) s = ex.get(start[k], dstart[k + 1], n);
  }
  if (s == GPUISO_OK) s = ex.get(rows, simple.rows, sizeof rows);
  /* wrong: written where not due (a wide row, or a row of the lane kernels), or not where due */
  int64_t differ = 0, wrong = 0, heads = 0, wide = 0;
  const uint8_t fill[8] = {0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a};
  for (int64_t r = 0; s == GPUISO_OK && r < 6; r++) {
    wide += rows[r].wide != 0;
    int due = !rows[r].wide && !plan_on_lanes(&opt, off[r + 1] - off[r]);
    for (int64_t i = off[r]; i < off[r + 1]; i++) {
      differ += memcmp(&fit[0][i], &fit[1][i], sizeof(T)) != 0 || start[0][i] != start[1][i];
      wrong += (memcmp(&fit[1][i], fill, sizeof(T)) == 0) != !due;
      wrong += (start[1][i] == 0x5a) != (!due || !blocks);
      heads += start[1][i] == 1;
    }
  }
  CHECK(s == GPUISO_OK && wide == 1 && rows[5].wide && differ == 0 && wrong == 0 && (blocks ? heads > 10 : heads == 0),
        "fit_warp_kernel against fit_step, %s, %s, chunk %lld, %s, %s: status %d (%s), %lld wide rows, %lld "
        "elements differ, %lld written where not due or not where due, %lld block starts",
        family_names[family], type == GPUISO_SINGLE ? "single" : "double", (long long)chunk,
        weighted ? "zero weights" : "unweighted",
        blocks ? "solver blocks" : "no flags", (int)s, e.message, (long long)wide, (long long)differ, (long long)wrong,
        (long long)heads);
  ex.release((void *)dy);
  ex.release((void *)dw);
  for (int k = 0; k < 3; k++) ex.release(dfit[k]), ex.release(dstart[k]);
  plan_release(ex, &p);
  free(yd); free(wd); free(y); free(w);
  for (int k = 0; k < 2; k++) free(fit[k]), free(start[k]);
}

static void test_fit_tiles(void) {
  const int64_t chunks[3] = {100, 1024, 3000};
  for (int c = 0; c < 3; c++)
    for (int weighted = 0; weighted <= 1; weighted++) {
      family_kind family = weighted ? FAM_SAWTOOTH : FAM_NOISE;
      check_fit_tiles<float>(chunks[c], family, weighted, !weighted);
      check_fit_tiles<double>(chunks[c], family, weighted, weighted);
      check_fit_tiles<float>(chunks[c], FAM_INCREASING, weighted, weighted);
      check_fit_tiles<double>(chunks[c], FAM_INCREASING, weighted, !weighted);
    }
}

/* The flags of rows whose levels step against the direction, which the running maximum (minimum)
 * mends: the fast path's (steps_warp_kernel) and the simple path's (steps_step), on fits that keep
 * their direction but at one element, at lane and tile boundaries and a row's ends, and at a row's
 * first element (no step: the element before is another row's). */
static void test_steps(void) {
  int64_t off[4] = {0, 4200, 4200, 9000};
  const int64_t at[] = {-1, 1, 31, 32, 1023, 1024, 1025, 2048, 4199, 4200, 4201, 5224, 8999};
  static double fit[9000];
  for (int sign = -1; sign <= 1; sign += 2) {
    for (int64_t chunk : {3, 1024}) {
      gpuiso_error e;
      sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
      level_plan lp;
      gpuiso_status s = level_plan_init(ex, &lp, off, sign, chunk, &e);
      const solver_view<double> &v = lp.v;
      int64_t wrong = 0;
      for (int64_t k : at) {
        for (int i = 0; i < 9000; i++) fit[i] = sign * 0.001 * i;
        if (k > 0) fit[k] = fit[k - 1] - sign;
        int want[3] = {k > 0 && k < off[1], 0, k > off[2]};
        for (int fast = 0; fast <= 1; fast++) {
          row_state rows[3];
          for (row_state &r : rows) r = row_state{1, 0, GPUISO_OK, -1, 0, 0, 0};
          if (s == GPUISO_OK) s = ex.put(v.rows, rows, sizeof rows);
          if (s == GPUISO_OK) s = ex.put(v.fit, fit, sizeof fit);
          if (s == GPUISO_OK)
            s = fast ? tile_launch(ex, "steps_warp_kernel", steps_warp_kernel<double>, v)
                     : each(ex, steps_step<double>{v, lp.p.chunk}, lp.p.nchunks);
          if (s == GPUISO_OK) s = ex.get(rows, v.rows, sizeof rows);
          for (int r = 0; r < 3; r++) wrong += s == GPUISO_OK && rows[r].stepped != want[r];
        }
      }
      CHECK(s == GPUISO_OK && wrong == 0,
            "steps against the %s direction, chunks of %lld: status %d (%s), %lld flags wrong",
            sign > 0 ? "increasing" : "decreasing", (long long)chunk, (int)s, e.message, (long long)wrong);
      level_plan_release(ex, &lp);
    }
  }
}

int main(void) {
  static void (*const tests[])(void) = {test_compact_slots, test_mixed_rows, test_families, test_tiny_weights,
                                        test_slices, test_row_scans, test_unweighted_errors, test_steps,
                                        test_errors, test_fit_tiles, test_grids};
  return run_under_seeds(tests, (int)(sizeof tests / sizeof tests[0]), "the CUDA engine on the CPU");
}

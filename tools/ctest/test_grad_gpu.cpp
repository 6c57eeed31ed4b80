/* The gradients of the CUDA engine (src/cuda/vjp.cuh, soft.cuh, and the solver's block flags of
 * pipeline.cuh), run on the CPU by the SIMT executor (tools/simt) under its schedule seeds,
 * against the CPU engines: the device's solver blocks against the hull engine's, the backward
 * pass on ragged rows whose blocks cross tiles (both precisions, weights, clipping) against
 * gpuiso_vjp, soft ranks and sorts against gpuiso_soft, and every buffer released on every path.
 * Host arrays go in and out in many pinned slices (staging.cuh), the last one short.
 */
#define STAGE_SLICE ((size_t)8 * 111) /* 111 doubles a slice: many slices, the last one short */
#define STAGE_DIRECT ((size_t)0)       /* staged however small */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"
#include "host_fit.cuh"
#include "soft.cuh"

extern "C" {
#include "families.h"
}

#include "check.h"
#include "sim_test.h"

static gpuiso_opts options(int increasing, int64_t chunk) {
  gpuiso_opts o = test_options(increasing, 1);
  o.hull_chunk = chunk;
  o.solver_blocks = 1;
  return o;
}

static uint64_t lcg = 12345;
static double unif(void) {
  lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
  return ((lcg >> 11) + 0.5) / 9007199254740992.0;
}

static double rel(double a, double b) { return fabs(a - b) / (1 + fabs(b)); }

/* Rows of lengths around the tile size and across several tiles, then ragged short ones. */
static int64_t layout(int64_t *off) {
  static const int64_t len[] = {0, 1, 31, 32, 33, 1023, 1024, 1025, 2100, 4200, 3, 0, 700};
  int64_t r = 0;
  off[0] = 0;
  for (size_t k = 0; k < sizeof len / sizeof len[0]; k++, r++) off[r + 1] = off[r] + len[k];
  int64_t base = off[r], more = gen_ragged(3000, 200, 5, 60, off + r);
  for (int64_t k = 0; k <= more; k++) off[r + k] += base;
  return r + more;
}

static void test_solver_blocks(void) {
  int64_t off[100];
  int64_t R = layout(off), n = off[R];
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *z = (double *)malloc(n * sizeof *z), *zl = (double *)malloc(n * sizeof *zl);
  double *ref = (double *)malloc(n * sizeof *ref);
  uint8_t *s = (uint8_t *)malloc(n), *sref = (uint8_t *)malloc(n), *sl = (uint8_t *)malloc(n);
  for (int f = 0; f < FAM_COUNT; f += 2) {
    for (int wk = 0; wk < W_COUNT; wk++) {
      gen_rows((family_kind)f, (weight_kind)wk, R, off, 3 + f, 0, y, w);
      const double *wp = wk == W_NONE ? NULL : w;
      gpuiso_opts o = options((f + wk) % 2, 64);
      for (int64_t r = 0; r < R; r++) {
        gpuiso_error e;
        gpuiso_hull(off[r + 1] - off[r], y + off[r], wp ? wp + off[r] : NULL, &o, ref + off[r],
                    sref + off[r], NULL, &e);
      }
      gpuiso_error e;
      sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
      gpuiso_status st = fit_rows_host(ex, R, off, GPUISO_DOUBLE, y, wp, &o, z, s, &e);
      o.solver_blocks = 0;
      sim_exec ex2 = {&e, 0, 0, 0, 0, sim_seed};
      gpuiso_status st2 = fit_rows_host(ex2, R, off, GPUISO_DOUBLE, y, wp, &o, zl, sl, &e);
      CHECK(st == GPUISO_OK && st2 == GPUISO_OK && memcmp(s, sref, n) == 0 &&
                memcmp(z, ref, n * sizeof *z) == 0 && memcmp(z, zl, n * sizeof *z) == 0 &&
                ex.held == 0,
            "%s %s weights: device solver blocks and fit against the hull engine's", family_names[f],
            weight_names[wk]);
    }
  }
  free(y), free(w), free(z), free(zl), free(ref), free(s), free(sref), free(sl);
}

static void test_vjp(void) {
  int64_t off[100];
  int64_t R = layout(off), n = off[R];
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *z = (double *)malloc(n * sizeof *z), *g = (double *)malloc(n * sizeof *g);
  double *dy = (double *)malloc(n * sizeof *dy), *dw = (double *)malloc(n * sizeof *dw);
  double *ry = (double *)malloc(n * sizeof *ry), *rw = (double *)malloc(n * sizeof *rw);
  float *f32[6];
  for (int k = 0; k < 6; k++) f32[k] = (float *)malloc(n * sizeof(float));
  uint8_t *s = (uint8_t *)malloc(n);
  for (int f = 0; f < FAM_COUNT; f++) {
    for (int wk = 0; wk < W_COUNT; wk++) {
      for (int single = 0; single <= 1; single++) {
        gen_rows((family_kind)f, (weight_kind)wk, R, off, 7 + f + wk, single, y, w);
        const double *wp = wk == W_NONE ? NULL : w;
        gpuiso_opts o = options((f + wk + single) % 2, 0);
        if (f == FAM_NOISE) o.lo = 0.5, o.hi = 2.5; /* clipped fits: g counts 0 there */
        gpuiso_error e;
        for (int64_t r = 0; r < R; r++) /* the fit (in float for single) and its blocks */
          gpuiso_pav(off[r + 1] - off[r], y + off[r], wp ? wp + off[r] : NULL, &o, z + off[r],
                     s + off[r], NULL, &e);
        for (int64_t i = 0; i < n; i++) {
          g[i] = 2 * unif() - 1;
          if (single) z[i] = (float)z[i], g[i] = (float)g[i];
        }
        gpuiso_vjp(R, off, y, wp, z, s, g, &o, ry, rw, &e);
        sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
        gpuiso_status st;
        double worst = 0;
        if (single) {
          for (int64_t i = 0; i < n; i++)
            f32[0][i] = (float)y[i], f32[1][i] = (float)w[i], f32[2][i] = (float)z[i], f32[3][i] = (float)g[i];
          st = vjp_host(ex, R, off, f32[0], wp ? f32[1] : (float *)NULL, f32[2], s, f32[3], &o,
                        f32[4], f32[5], &e);
          for (int64_t i = 0; i < n; i++)
            worst = fmax(worst, fmax(rel(f32[4][i], ry[i]), rel(f32[5][i], rw[i])) / 0x1p-22);
        } else {
          st = vjp_host(ex, R, off, y, wp, z, s, g, &o, dy, dw, &e);
          for (int64_t i = 0; i < n; i++) worst = fmax(worst, fmax(rel(dy[i], ry[i]), rel(dw[i], rw[i])) / 1e-12);
        }
        CHECK(st == GPUISO_OK && worst <= 1 && ex.held == 0,
              "%s %s weights, %s: vjp against the CPU's: status %d, deviation %g of the tolerance, "
              "%lld held", family_names[f], weight_names[wk], single ? "single" : "double", (int)st,
              worst, (long long)ex.held);
      }
    }
  }
  /* one block over a row of several tiles: every derivative the mean of g */
  int64_t one[2] = {0, 5000};
  for (int64_t i = 0; i < 5000; i++) y[i] = 1.0, g[i] = (double)(i % 7), s[i] = i == 0;
  gpuiso_opts o = options(1, 0);
  gpuiso_error e;
  sim_sliced ex = {{&e, 0, 0, 0, 0, sim_seed}, 0, 0};
  gpuiso_status st = vjp_host(ex, 1, one, y, (const double *)NULL, y, s, g, &o, dy, (double *)NULL, &e);
  double mean = 0, worst = 0;
  for (int64_t i = 0; i < 5000; i++) mean += g[i] / 5000;
  for (int64_t i = 0; i < 5000; i++) worst = fmax(worst, fabs(dy[i] - mean));
  CHECK(st == GPUISO_OK && worst < 1e-12 && ex.slices_in > 1 && ex.slices_out > 1,
        "one block across tiles: status %d, deviation %g, %lld slices in, %lld out", (int)st, worst,
        (long long)ex.slices_in, (long long)ex.slices_out);

  /* every allocation failing in turn: nothing stays held */
  sim_exec counter = {&e, 0, 0, 0, 0, sim_seed};
  vjp_host(counter, R, off, y, w, z, s, g, &o, dy, dw, &e);
  for (int64_t k = 1; k <= counter.allocs; k++) {
    sim_exec fx = {&e, 0, 0, k, 0, sim_seed};
    st = vjp_host(fx, R, off, y, w, z, s, g, &o, dy, dw, &e);
    CHECK(st == GPUISO_E_NOMEM && fx.held == 0, "vjp, allocation %lld failing: status %d, %lld held",
          (long long)k, (int)st, (long long)fx.held);
  }
  free(y), free(w), free(z), free(g), free(dy), free(dw), free(ry), free(rw), free(s);
  for (int k = 0; k < 6; k++) free(f32[k]);
}

static int stop_now(void *ctx) { return --*(int *)ctx < 0; }

static void test_soft(void) {
  static const int64_t shapes[][2] = {{1, 3000}, {7, 200}, {40, 33}, {3, 1}};
  static const double eps[] = {1e-3, 1, 100};
  for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
    int64_t nrow = shapes[sh][0], ncol = shapes[sh][1], n = nrow * ncol;
    double *x = (double *)malloc(n * sizeof *x), *g = (double *)malloc(n * sizeof *g);
    double *out = (double *)malloc(n * sizeof *out), *ref = (double *)malloc(n * sizeof *ref);
    for (int64_t i = 0; i < n; i++) x[i] = 3 * unif() - 1, g[i] = unif() - 0.5;
    for (int kind = 0; kind < 2; kind++) {
      for (int dec = 0; dec < 2; dec++) {
        for (int back = 0; back < 2; back++) {
          double e_ = eps[(sh + kind + dec + back) % 3];
          gpuiso_opts o = options(1, 64);
          gpuiso_error e;
          gpuiso_soft((gpuiso_soft_kind)kind, nrow, ncol, x, back ? g : NULL, e_, dec, &o, ref, &e);
          sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
          gpuiso_status st = soft_device(ex, (gpuiso_soft_kind)kind, nrow, ncol, x, back ? g : NULL,
                                         e_, dec, &o, out, &e);
          double worst = 0;
          for (int64_t i = 0; i < n; i++) worst = fmax(worst, rel(out[i], ref[i]));
          CHECK(st == GPUISO_OK && worst < 1e-9 && ex.held == 0,
                "soft %s, %lld x %lld, %s, %s, epsilon %g: status %d, deviation %g, %lld held",
                kind ? "sort" : "rank", (long long)nrow, (long long)ncol,
                dec ? "decreasing" : "increasing", back ? "backward" : "forward", e_, (int)st, worst,
                (long long)ex.held);
        }
      }
    }
    free(x), free(g), free(out), free(ref);
  }

  /* failures at each allocation and interrupts: nothing stays held */
  double x[600], g[600], out[600];
  for (int i = 0; i < 600; i++) x[i] = unif(), g[i] = unif();
  gpuiso_opts o = options(1, 64);
  gpuiso_error e;
  sim_sliced counter = {{&e, 0, 0, 0, 0, sim_seed}, 0, 0};
  gpuiso_status st = soft_device(counter, GPUISO_SOFT_RANK, 6, 100, x, g, 1.0, 0, &o, out, &e);
  CHECK(st == GPUISO_OK && counter.slices_in > 1 && counter.slices_out > 1,
        "soft rank backward: status %d, %lld slices in, %lld out", (int)st, (long long)counter.slices_in,
        (long long)counter.slices_out);
  for (int64_t k = 1; k <= counter.allocs; k++) {
    sim_exec fx = {&e, 0, 0, k, 0, sim_seed};
    st = soft_device(fx, GPUISO_SOFT_RANK, 6, 100, x, g, 1.0, 0, &o, out, &e);
    CHECK(st == GPUISO_E_NOMEM && fx.held == 0, "soft, allocation %lld failing: status %d, %lld held",
          (long long)k, (int)st, (long long)fx.held);
  }
  int left = 0;
  gpuiso_interrupt intr = {stop_now, &left};
  o.interrupt = &intr;
  sim_exec ix = {&e, 0, 0, 0, 0, sim_seed};
  st = soft_device(ix, GPUISO_SOFT_SORT, 6, 100, x, NULL, 1.0, 0, &o, out, &e);
  CHECK(st == GPUISO_E_INTERRUPT && ix.held == 0, "soft, interrupted: status %d, %lld held", (int)st,
        (long long)ix.held);
}

int main(void) {
  static void (*const tests[])(void) = {test_solver_blocks, test_vjp, test_soft};
  return run_under_seeds(tests, (int)(sizeof tests / sizeof tests[0]), "the gradients of the CUDA engine on the CPU");
}

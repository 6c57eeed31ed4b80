/* Standalone tests of the C core (no R): PAV against the min-max formula, chunked rows, clipping,
 * errors, the sort and tie pooling against a plain stable sort, batches against row-by-row
 * fits (long rows against the single-row fit in the same chunks), and predictions over block
 * ends against a knot-by-knot search; the chunk of a CUDA plan against every chunk it could take.
 * Prints one line per failure and a closing
 * "ctest: N passed, N failed". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_plan.h"
#include "gpuiso.h"
#include "hull/chunk.h"
#include "hull/geometry.h"
#include "internal.h"

#include "check.h"

static double unif(void) { return (rand() + 0.5) / ((double)RAND_MAX + 1); }

static gpuiso_opts options(int increasing, int nthreads, int chunks) {
  gpuiso_opts o = {.increasing = increasing, .lo = -INFINITY, .hi = INFINITY, .nthreads = nthreads,
                   .chunks = chunks};
  return o;
}

/* The fit by the min-max formula over the positive weights (decreasing: the mirror), each
 * zero-weight element taking the level of the nearest positive weight on its left (the first
 * one's when there is none). */
static void reference(int n, const double *y, const double *w, int increasing, double *z) {
  int pos[64], m = 0;
  for (int i = 0; i < n; i++)
    if (!w || w[i] > 0) pos[m++] = i;
  double level[64];
  for (int a = 0; a < m; a++) {
    double best = -INFINITY;
    for (int s = 0; s <= a; s++) {
      double low = INFINITY;
      for (int t = a; t < m; t++) {
        double sw = 0, swy = 0;
        for (int u = s; u <= t; u++) {
          double wi = w ? w[pos[u]] : 1, yi = increasing ? y[pos[u]] : -y[pos[u]];
          sw += wi;
          swy += wi * yi;
        }
        if (swy / sw < low) low = swy / sw;
      }
      if (low > best) best = low;
    }
    level[a] = increasing ? best : -best;
  }
  for (int i = 0, a = -1; i < n; i++) {
    while (a + 1 < m && pos[a + 1] <= i) a++;
    z[i] = level[a < 0 ? 0 : a];
  }
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-12 * (1 + fabs(b)); }

static void test_pav_small(void) {
  double y[64], w[64], z[64], ref[64];
  uint8_t start[64];
  for (int rep = 0; rep < 3000; rep++) {
    int n = 1 + rand() % 12, weighted = rep % 3 != 0, increasing = rep % 2;
    for (int i = 0; i < n; i++) {
      y[i] = rep % 5 == 0 ? (double)(rand() % 4) : 3 * unif() - 1.5 + 0.2 * i;
      w[i] = rep % 7 == 0 && unif() < 0.3 ? 0 : unif() + 0.01;
    }
    if (weighted) w[rand() % n] = 1;
    reference(n, y, weighted ? w : NULL, increasing, ref);
    for (int chunks = 1; chunks <= n; chunks += 1 + rep % 3) {
      gpuiso_opts o = options(increasing, 1 + rep % 2, chunks);
      gpuiso_error e;
      int64_t nb = -1;
      gpuiso_status s = gpuiso_pav(n, y, weighted ? w : NULL, &o, z, start, &nb, &e);
      int ok = s == GPUISO_OK, blocks = 0;
      for (int i = 0; ok && i < n; i++) {
        ok = close_to(z[i], ref[i]);
        int changes = i == 0 || z[i] != z[i - 1];
        ok = ok && start[i] == changes;
        blocks += changes;
      }
      CHECK(ok && nb == blocks, "pav rep %d n %d chunks %d weighted %d increasing %d", rep, n,
            chunks, weighted, increasing);
    }
  }
}

static void test_clip_and_errors(void) {
  double y[6] = {5, 1, 3, 2, 8, 7}, z[6], w[6] = {1, 1, 1, 1, 1, 1};
  uint8_t start[6];
  int64_t nb;
  gpuiso_error e;
  gpuiso_opts o = options(1, 1, 0);
  o.lo = 3;
  o.hi = 7;
  CHECK(gpuiso_pav(6, y, NULL, &o, z, start, &nb, &e) == GPUISO_OK, "clip status");
  /* unclipped fit: 2.75 x4, 7.5 x2 -> clipped 3 x4, 7 x2 */
  CHECK(z[0] == 3 && z[3] == 3 && z[4] == 7 && z[5] == 7 && nb == 2, "clip values %g %g", z[0], z[4]);

  o = options(1, 1, 0);
  y[2] = NAN;
  CHECK(gpuiso_pav(6, y, NULL, &o, z, start, &nb, &e) == GPUISO_E_Y_NONFINITE && e.index == 2,
        "NaN y at %lld", (long long)e.index);
  y[2] = 3;
  w[4] = -1;
  CHECK(gpuiso_pav(6, y, w, &o, z, start, &nb, &e) == GPUISO_E_W_NEGATIVE && e.index == 4,
        "negative w at %lld", (long long)e.index);
  for (int i = 0; i < 6; i++) w[i] = 0;
  CHECK(gpuiso_pav(6, y, w, &o, z, start, &nb, &e) == GPUISO_E_W_ALLZERO, "all zero weights");
  double big[20];
  for (int i = 0; i < 20; i++) big[i] = 1e307;
  double zb[20];
  uint8_t sb[20];
  CHECK(gpuiso_pav(20, big, NULL, &o, zb, sb, &nb, &e) == GPUISO_E_OVERFLOW, "overflow");
}

/* Stable sort of indices by x (insertion sort on a copy), for the reference of a fit on x. */
static void reference_xy(int n, const double *x, const double *y, const double *w, double *z) {
  int *ord = malloc(n * sizeof *ord);
  for (int i = 0; i < n; i++) {
    int j = i;
    for (; j > 0 && x[ord[j - 1]] > x[i]; j--) ord[j] = ord[j - 1];
    ord[j] = i;
  }
  double *ys = malloc(n * sizeof *ys), *ws = malloc(n * sizeof *ws), *zs = malloc(n * sizeof *zs);
  int *knot = malloc(n * sizeof *knot), k = -1;
  for (int p = 0; p < n; p++) {
    int i = ord[p];
    if (p == 0 || x[i] != x[ord[p - 1]]) {
      k++;
      ys[k] = ws[k] = 0;
    }
    ws[k] += w[i];
    ys[k] += w[i] * y[i];
    knot[i] = k;
  }
  for (int d = 0; d <= k; d++) ys[d] /= ws[d];
  gpuiso_opts o = options(1, 1, 1);
  int64_t nb;
  gpuiso_error e;
  uint8_t *st = malloc(k + 1);
  gpuiso_pav(k + 1, ys, ws, &o, zs, st, &nb, &e);
  for (int i = 0; i < n; i++) z[i] = zs[knot[i]];
  free(ord);
  free(ys);
  free(ws);
  free(zs);
  free(knot);
  free(st);
}

static void test_sorted_fits(void) {
  const int n = 3000;
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
  double *z = malloc(n * sizeof *z), *ref = malloc(n * sizeof *ref);
  double *kx = malloc(n * sizeof *kx), *kl = malloc(n * sizeof *kl), *kw = malloc(n * sizeof *kw);
  uint8_t *ks = malloc(n);
  for (int kind = 0; kind < 6; kind++) {
    for (int i = 0; i < n; i++) {
      switch (kind) {
      case 0: x[i] = unif(); break;                              /* distinct, narrow exponents */
      case 1: x[i] = (double)(rand() % 50); break;               /* heavy ties */
      case 2: x[i] = (unif() - 0.5) * 1e6; break;                /* negatives */
      case 3: x[i] = rand() % 2 ? 0.0 : -0.0; break;             /* -0 and 0 are one value */
      case 4: x[i] = ldexp(unif(), rand() % 600 - 300) * (rand() % 2 ? 1 : -1); break; /* wide range */
      default: x[i] = (double)(n - i); break;                    /* reversed */
      }
      y[i] = x[i] * 1e-3 + unif();
      w[i] = unif();
    }
    reference_xy(n, x, y, w, ref);
    for (int threads = 1; threads <= 2; threads++) {
      gpuiso_opts o = options(1, threads, 0);
      gpuiso_sorted *s;
      int64_t nk;
      gpuiso_error e;
      int ok = gpuiso_sort_xy(n, x, y, w, &o, &s, &nk, &e) == GPUISO_OK;
      gpuiso_knots kn = {nk, kx, kl, kw, ks, 0};
      ok = ok && gpuiso_fit_sorted(s, &o, z, &kn, &e) == GPUISO_OK;
      gpuiso_sorted_free(s);
      for (int i = 0; ok && i < n; i++) ok = close_to(z[i], ref[i]);
      for (int64_t d = 1; ok && d < nk; d++) ok = kx[d - 1] < kx[d];
      CHECK(ok, "fit on x, kind %d, %d threads", kind, threads);
    }
  }
  x[17] = INFINITY;
  gpuiso_opts o = options(1, 1, 0);
  gpuiso_sorted *s;
  int64_t nk;
  gpuiso_error e;
  CHECK(gpuiso_sort_xy(n, x, y, w, &o, &s, &nk, &e) == GPUISO_E_X_NONFINITE && e.index == 17,
        "infinite x at %lld", (long long)e.index);
  free(x); free(y); free(w); free(z); free(ref); free(kx); free(kl); free(kw); free(ks);
}

/* Fits on x called from the threads of the caller's own parallel region, one thread each within
 * it: each fit's scratch must be its own, not picked by the caller's thread number. */
static void test_sorts_in_callers_threads(void) {
  enum { callers = 4 };
  const int sizes[2] = {3000, 20000};
  for (int k = 0; k < 2; k++) {
    int n = sizes[k];
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
    double *ref = malloc(n * sizeof *ref), *z = malloc((size_t)callers * n * sizeof *z);
    for (int i = 0; i < n; i++) {
      x[i] = unif();
      y[i] = x[i] + unif();
      w[i] = unif();
    }
    reference_xy(n, x, y, w, ref);
    int ok[callers] = {0};
#ifdef _OPENMP
#pragma omp parallel for num_threads(callers) schedule(static, 1)
#endif
    for (int t = 0; t < callers; t++) {
      gpuiso_opts o = options(1, 1, 0);
      gpuiso_sorted *s;
      int64_t nk;
      gpuiso_error e;
      double *kx = malloc(n * sizeof *kx), *kl = malloc(n * sizeof *kl), *kw = malloc(n * sizeof *kw);
      uint8_t *ks = malloc(n);
      int sorted = gpuiso_sort_xy(n, x, y, w, &o, &s, &nk, &e) == GPUISO_OK;
      gpuiso_knots kn = {sorted ? nk : 0, kx, kl, kw, ks, 0};
      int good = sorted && gpuiso_fit_sorted(s, &o, z + (size_t)t * n, &kn, &e) == GPUISO_OK;
      if (sorted) gpuiso_sorted_free(s);
      for (int i = 0; good && i < n; i++) good = close_to(z[(size_t)t * n + i], ref[i]);
      ok[t] = good;
      free(kx); free(kl); free(kw); free(ks);
    }
    for (int t = 0; t < callers; t++) CHECK(ok[t], "fit on x of %d in the caller's thread %d", n, t);
    free(x); free(y); free(w); free(ref); free(z);
  }
}

/* Curves per group from one sort: each group's knots against a fit of the group alone (the same
 * sums in the same order, so equal to the bit). Group 5 is empty. */
static void test_grouped_fits(void) {
  const int n = 40000, ngroups = 13; /* above GPUISO_MIN_PARALLEL: two threads run */
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
  double *gx = malloc(n * sizeof *gx), *gy = malloc(n * sizeof *gy), *gw = malloc(n * sizeof *gw);
  double *kx = malloc(n * sizeof *kx), *kl = malloc(n * sizeof *kl), *kw = malloc(n * sizeof *kw);
  double *rx = malloc(n * sizeof *rx), *rl = malloc(n * sizeof *rl), *rw = malloc(n * sizeof *rw);
  double *gz = malloc(n * sizeof *gz);
  uint8_t *ks = malloc(n), *rs = malloc(n);
  int *g = malloc(n * sizeof *g);
  int64_t offset[14];
  for (int i = 0; i < n; i++) {
    g[i] = rand() % 12;
    g[i] += g[i] >= 5;
    x[i] = i % 3 ? unif() : (double)(rand() % 40) / 40; /* ties within and across groups */
    y[i] = unif() < x[i] ? 1 : 0;
    w[i] = unif() < 0.05 ? 0 : unif();
  }
  for (int threads = 1; threads <= 2; threads++) {
    gpuiso_opts o = options(1, threads, 0);
    gpuiso_sorted *s;
    gpuiso_grouped *gr = NULL;
    int64_t nk;
    gpuiso_error e;
    int ok = gpuiso_sort_groups_xy(n, x, y, w, g, ngroups, &o, &s, &nk, &e) == GPUISO_OK &&
             gpuiso_group_sorted(s, &o, &gr, &nk, &e) == GPUISO_OK;
    gpuiso_knots kn = {nk, kx, kl, kw, ks, 0};
    ok = ok && gpuiso_fit_grouped(gr, &o, offset, &kn, &e) == GPUISO_OK;
    gpuiso_grouped_free(gr);
    ok = ok && offset[5] == offset[6] && offset[ngroups] == nk;
    /* the same records give the pooled fit, in input order, as a sort without groups */
    gpuiso_knots pooled = {0, rx, rl, rw, rs, 0};
    ok = ok && gpuiso_fit_sorted(s, &o, gz, &pooled, &e) == GPUISO_OK;
    gpuiso_sorted_free(s);
    ok = ok && gpuiso_sort_xy(n, x, y, w, &o, &s, &nk, &e) == GPUISO_OK &&
         gpuiso_fit_sorted(s, &o, gy, &pooled, &e) == GPUISO_OK;
    gpuiso_sorted_free(s);
    for (int i = 0; ok && i < n; i++) ok = gz[i] == gy[i];
    int64_t blocks = 0;
    for (int k = 0; ok && k < ngroups; k++) {
      int len = 0;
      for (int i = 0; i < n; i++)
        if (g[i] == k) gx[len] = x[i], gy[len] = y[i], gw[len] = w[i], len++;
      if (len == 0) continue;
      int64_t rk;
      gpuiso_knots ref = {0, rx, rl, rw, rs, 0};
      ok = gpuiso_sort_xy(len, gx, gy, gw, &o, &s, &rk, &e) == GPUISO_OK &&
           gpuiso_fit_sorted(s, &o, NULL, &ref, &e) == GPUISO_OK && rk == offset[k + 1] - offset[k];
      gpuiso_sorted_free(s);
      for (int64_t d = 0; ok && d < rk; d++) {
        int64_t p = offset[k] + d;
        ok = kx[p] == rx[d] && kl[p] == rl[d] && kw[p] == rw[d] && ks[p] == rs[d];
      }
      blocks += ref.nblocks;
    }
    CHECK(ok && blocks == kn.nblocks, "curves per group, %d threads", threads);
  }
  /* a group whose weights are all zero is reported by its number */
  for (int i = 0; i < n; i++)
    if (g[i] == 7) w[i] = 0;
  gpuiso_opts o = options(1, 1, 0);
  gpuiso_sorted *s;
  gpuiso_grouped *gr = NULL;
  int64_t nk;
  gpuiso_error e;
  int ok = gpuiso_sort_groups_xy(n, x, y, w, g, ngroups, &o, &s, &nk, &e) == GPUISO_OK &&
           gpuiso_group_sorted(s, &o, &gr, &nk, &e) == GPUISO_OK;
  gpuiso_knots kn = {nk, kx, kl, kw, ks, 0};
  CHECK(ok && gpuiso_fit_grouped(gr, &o, offset, &kn, &e) == GPUISO_E_W_ALLZERO && e.row == 7,
        "all-zero weights in group %lld", (long long)e.row);
  gpuiso_grouped_free(gr);
  gpuiso_sorted_free(s);
  /* a negative weight is found while pooling, and reported by its element and group */
  w[123] = -1;
  ok = gpuiso_sort_groups_xy(n, x, y, w, g, ngroups, &o, &s, &nk, &e) == GPUISO_OK &&
       gpuiso_group_sorted(s, &o, &gr, &nk, &e) == GPUISO_OK;
  CHECK(ok && gpuiso_fit_grouped(gr, &o, offset, &kn, &e) == GPUISO_E_W_NEGATIVE &&
            e.index == 123 && e.row == g[123],
        "negative weight at %lld, group %lld", (long long)e.index, (long long)e.row);
  gpuiso_grouped_free(gr);
  gpuiso_sorted_free(s);
  free(x); free(y); free(w); free(gx); free(gy); free(gw); free(kx); free(kl); free(kw);
  free(rx); free(rl); free(rw); free(gz); free(ks); free(rs); free(g);
}

static void test_batches(void) {
  const int nrow = 37, ncol = 53, n = nrow * ncol;
  double *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w), *z = malloc(n * sizeof *z);
  double row_y[53], row_w[53], row_z[53];
  uint8_t *start = malloc(n), row_s[53];
  int *g = malloc(n * sizeof *g);
  for (int i = 0; i < n; i++) {
    y[i] = unif() + 0.01 * (i / nrow);
    w[i] = unif() < 0.1 ? 0 : unif();
    g[i] = rand() % 11;
  }
  for (int threads = 1; threads <= 2; threads++) {
    gpuiso_opts o = options(0, threads, 0);
    gpuiso_error e;
    int ok = gpuiso_batch_matrix(nrow, ncol, y, w, n, &o, z, start, &e) == GPUISO_OK;
    for (int r = 0; ok && r < nrow; r++) {
      for (int j = 0; j < ncol; j++) row_y[j] = y[r + j * nrow], row_w[j] = w[r + j * nrow];
      int64_t nb;
      gpuiso_pav(ncol, row_y, row_w, &o, row_z, row_s, &nb, &e);
      for (int j = 0; ok && j < ncol; j++)
        ok = z[r + j * nrow] == row_z[j] && start[r + j * nrow] == row_s[j];
    }
    CHECK(ok, "matrix rows, %d threads", threads);

    /* each group against its own fit */
    ok = gpuiso_batch_groups(n, g, 11, y, w, &o, z, start, &e) == GPUISO_OK;
    double *gy = malloc(n * sizeof *gy), *gw = malloc(n * sizeof *gw), *gz = malloc(n * sizeof *gz);
    uint8_t *gs = malloc(n);
    for (int k = 0; ok && k < 11; k++) {
      int len = 0;
      for (int i = 0; i < n; i++)
        if (g[i] == k) gy[len] = y[i], gw[len] = w[i], len++;
      int64_t nb;
      gpuiso_pav(len, gy, gw, &o, gz, gs, &nb, &e);
      for (int i = 0, p = 0; ok && i < n; i++)
        if (g[i] == k) ok = z[i] == gz[p] && start[i] == gs[p], p++;
    }
    CHECK(ok, "groups, %d threads", threads);
    free(gy); free(gw); free(gz); free(gs);
  }
  free(y); free(w); free(z); free(start); free(g);
}

/* The data families of the paper (section 7.1) and its stress families (section 7.6). */
static void family(int kind, int n, double *y, double *w, int weighted) {
  double c = 0;
  for (int i = 0; i < n; i++) {
    switch (kind) {
    case 0: y[i] = 3.0 * i / n + 2 * (unif() - 0.5); break;              /* noise */
    case 1: c += 0.01 + unif(); y[i] = c; break;                          /* increasing */
    case 2: y[i] = (i % 17) / 17.0 + 0.01 * unif(); break;                /* sawtooth */
    case 3: y[i] = i == n - 1 ? -10.0 * n : i; break;                     /* cliff */
    case 4: { /* cancellation: per 64, 32 x +B, one -32B, 31 small nearly collinear */
      double B = 1e6;
      int r = i % 64;
      y[i] = r < 32 ? B : (r == 32 ? -32 * B : 1e-3 * r + 1e-9 * unif());
      break;
    }
    case 5: y[i] = 1 + 2.0 * i; break;                                    /* exactly collinear */
    default: y[i] = nextafter(1.0 + 1e-3 * (i / 64), 2.0); break;        /* nearly equal */
    }
    w[i] = weighted == 3 ? (unif() < 0.4 ? 0 : unif())
           : weighted == 2 ? exp(16 * unif() - 8) : (weighted ? unif() + 0.01 : 1);
  }
}

static void test_hull(void) {
  const int n = 2000;
  double *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
  double *zp = malloc(n * sizeof *zp), *zh = malloc(n * sizeof *zh);
  uint8_t *sp = malloc(n), *sh = malloc(n);
  double worst = 0;
  for (int kind = 0; kind < 7; kind++) {
    for (int weighted = 0; weighted <= 3; weighted++) { /* none, uniform, extreme, with zeros */
      for (int increasing = 0; increasing <= 1; increasing++) {
        family(kind, n, y, w, weighted);
        const double *wp = weighted ? w : NULL; /* unit weights as NULL, the unweighted path */
        gpuiso_opts o = options(increasing, 1, 1);
        gpuiso_error e;
        int64_t nbp, nbh;
        gpuiso_pav(n, y, wp, &o, zp, sp, &nbp, &e);
        double ymax = 0;
        for (int i = 0; i < n; i++) ymax = fabs(y[i]) > ymax ? fabs(y[i]) : ymax;
        int chunks[] = {4, 8, 32, 1024}, caps[] = {1, 2, 64};
        for (int a = 0; a < 4; a++) {
          for (int b = 0; b < 3; b++) {
            o.hull_chunk = chunks[a];
            o.hull_walk_cap = caps[b];
            o.nthreads = 1 + (a + b) % 2;
            int ok = gpuiso_hull(n, y, wp, &o, zh, sh, &nbh, &e) == GPUISO_OK;
            double dev = 0;
            for (int i = 0; ok && i < n; i++) {
              double d = fabs(zh[i] - zp[i]) / (1 + fabs(zp[i]));
              dev = d > dev ? d : dev;
            }
            if (kind != 4 && dev > worst) worst = dev;
            /* the cancellation family is compared on the scale of max |y| */
            double tol = kind == 4 ? 1e-12 * ymax : 1e-12;
            CHECK(ok && dev <= tol, "hull kind %d weighted %d increasing %d C %d T %d: deviation %g",
                  kind, weighted, increasing, chunks[a], caps[b], dev);
          }
        }
      }
    }
  }
  printf("hull: largest |z - z_pav| / (1 + |z_pav|) outside the cancellation family: %.3g\n", worst);
  free(y); free(w); free(zp); free(zh); free(sp); free(sh);
}

/* Data at the edges of double precision, each fitted exactly: subnormal weights (their products
 * with y near the subnormals lose digits unless the weights are scaled first), a hull chunk far
 * longer than the row, and bad values met in x order but reported in input order. */
static void test_edges(void) {
  double y[3] = {0.7, 0.123456789, 0.3}, z[3], exact = (0.7 + 0.123456789 + 0.3) / 3;
  double tiny[4] = {1e-320, 5e-324, 0x1p-1023, 1e-310};
  gpuiso_error e;
  int64_t nb;
  for (int t = 0; t < 4; t++) {
    double w[3] = {tiny[t], tiny[t], tiny[t]};
    for (int hull = 0; hull <= 1; hull++) {
      gpuiso_opts o = options(1, 1, 0);
      gpuiso_status st = hull ? gpuiso_hull(3, y, w, &o, z, NULL, &nb, &e)
                              : gpuiso_pav(3, y, w, &o, z, NULL, &nb, &e);
      CHECK(st == GPUISO_OK && fabs(z[0] - exact) <= 4e-16 && z[2] == z[0] && nb == 1,
            "%s with weights %g: status %d, %.17g", hull ? "hull" : "pav", tiny[t], (int)st, z[0]);
    }
  }
  /* tied x with tiny weights: the knot's mean from scaled weights */
  double x4[4] = {3, 1, 1, 2}, y4[4] = {0.1, 0.7, 0.123456789, 0.3}, w4[4] = {1e-320, 1e-320, 1e-320, 1e-320};
  gpuiso_opts o = options(1, 1, 0);
  gpuiso_sorted *sorted;
  int64_t nk;
  double z4[4], kx[4], kl[4], kw[4];
  uint8_t ks[4];
  gpuiso_knots kn = {0, kx, kl, kw, ks, 0};
  int ok = gpuiso_sort_xy(4, x4, y4, w4, &o, &sorted, &nk, &e) == GPUISO_OK &&
           gpuiso_fit_sorted(sorted, &o, z4, &kn, &e) == GPUISO_OK;
  if (ok) gpuiso_sorted_free(sorted);
  double m = (0.1 + 0.7 + 0.123456789 + 0.3) / 4; /* all knots pool */
  CHECK(ok && fabs(z4[1] - m) <= 4e-16 && z4[0] == z4[1] && z4[3] == z4[1] && z4[2] == z4[1],
        "tied x, tiny weights: %.17g", z4[1]);
  /* bad values in x order and in input order */
  double xb[3] = {3, 2, 1}, yb[3] = {1, NAN, NAN}, wb[3] = {1, 1, -1};
  ok = gpuiso_sort_xy(3, xb, yb, NULL, &o, &sorted, &nk, &e) == GPUISO_OK;
  CHECK(ok && gpuiso_fit_sorted(sorted, &o, z, &kn, &e) == GPUISO_E_Y_NONFINITE && e.index == 1,
        "NaN y reported at %lld, not 1", (long long)e.index);
  if (ok) gpuiso_sorted_free(sorted);
  yb[1] = yb[2] = 1;
  ok = gpuiso_sort_xy(3, xb, yb, wb, &o, &sorted, &nk, &e) == GPUISO_OK;
  CHECK(ok && gpuiso_fit_sorted(sorted, &o, z, &kn, &e) == GPUISO_E_W_NEGATIVE && e.index == 2,
        "negative w reported at %lld, not 2", (long long)e.index);
  if (ok) gpuiso_sorted_free(sorted);
  /* a hull chunk of 10^9 points on a row of 5000: the chunk is the row */
  enum { N = 5000 };
  double *yl = malloc(N * sizeof *yl), *zp = malloc(N * sizeof *zp), *zh = malloc(N * sizeof *zh);
  for (int i = 0; i < N; i++) yl[i] = unif() + i * 1e-4;
  o = options(1, 1, 0);
  gpuiso_pav(N, yl, NULL, &o, zp, NULL, &nb, &e);
  o.hull_chunk = 1000000000;
  ok = gpuiso_hull(N, yl, NULL, &o, zh, NULL, &nb, &e) == GPUISO_OK;
  double dev = 0;
  for (int i = 0; ok && i < N; i++) dev = fabs(zh[i] - zp[i]) > dev ? fabs(zh[i] - zp[i]) : dev;
  CHECK(ok && dev <= 1e-12, "hull with a chunk of 1e9 on %d points: deviation %g", N, dev);
  free(yl); free(zp); free(zh);
}

/* Rows of 2^19 elements and more are split by their length alone: a lone row (on all threads) and
 * a row beside another (one thread each) equal the single-row fit in as many chunks, bit for bit. */
static void test_long_rows(void) {
  const int n = 600000; /* two chunks of 2^18 or more */
  double *y = malloc(2 * (size_t)n * sizeof *y), *w = malloc(2 * (size_t)n * sizeof *w);
  double *z = malloc(2 * (size_t)n * sizeof *z), *ref = malloc((size_t)n * sizeof *ref);
  double *row = malloc((size_t)n * sizeof *row);
  for (int i = 0; i < 2 * n; i++) {
    y[i] = (i % n) * 3.0 / n + 2 * (unif() - 0.5);
    w[i] = unif() + 0.01;
  }
  gpuiso_error e;
  gpuiso_opts two_chunks = options(1, 2, 2);
  int ok = gpuiso_pav(n, y, w, &two_chunks, ref, NULL, NULL, &e) == GPUISO_OK;
  for (int threads = 1; threads <= 2; threads++) {
    gpuiso_opts o = options(1, threads, 0);
    ok = ok && gpuiso_batch_matrix(1, n, y, w, n, &o, z, NULL, &e) == GPUISO_OK;
    for (int i = 0; ok && i < n; i++) ok = z[i] == ref[i];
    CHECK(ok, "a lone long row, %d threads", threads);
    /* rows 0 and 1 of a two-row matrix: row 0 is y[0 .. n - 1] */
    double *m = malloc(2 * (size_t)n * sizeof *m), *mw = malloc(2 * (size_t)n * sizeof *mw);
    for (int i = 0; i < n; i++) {
      m[2 * i] = y[i], m[2 * i + 1] = y[n + i];
      mw[2 * i] = w[i], mw[2 * i + 1] = w[n + i];
    }
    ok = ok && gpuiso_batch_matrix(2, n, m, mw, 2 * (int64_t)n, &o, z, NULL, &e) == GPUISO_OK;
    for (int i = 0; ok && i < n; i++) ok = z[2 * i] == ref[i];
    CHECK(ok, "a long row beside another, %d threads", threads);
    for (int i = 0; i < n; i++) row[i] = y[i];
    row[n / 2 + 7] = NAN;
    CHECK(gpuiso_batch_matrix(1, n, row, NULL, 0, &o, z, NULL, &e) == GPUISO_E_Y_NONFINITE &&
              e.index == n / 2 + 7 && e.row == 0,
          "a lone long row's bad element, %d threads", threads);
    free(m);
    free(mw);
  }
  free(y); free(w); free(z); free(ref); free(row);
}

/* The curve of knots (x, level) at v, knot by knot (the earlier R code): the level of the last
 * knot at or below v (the first's below them), linear between neighbouring knots. */
static double knot_value(int nk, const double *x, const double *level, double v, int linear) {
  int at = 0;
  while (at < nk && x[at] <= v) at++;
  if (at == 0) return level[0];
  if (!linear || at == nk) return level[at - 1];
  int j = at - 1;
  double f = (v - x[j]) / (x[j + 1] - x[j]);
  return level[j] + f * (level[j + 1] - level[j]);
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* gpuiso_predict over the blocks of random knots (runs of equal levels, single-knot blocks, ties
 * of x between blocks) against knot_value, bit for bit, on 1 and 2 threads, three curves. */
static void test_predict(void) {
  enum { NK = 400, NQ = 50000, NC = 3 };
  static double x[NC][NK], level[NC][NK], lower[NC * NK], upper[NC * NK], blevel[NC * NK];
  static double v[NQ], out[NQ];
  static int curve[NQ];
  int64_t first[NC + 1] = {0}, nb[NC];
  for (int c = 0; c < NC; c++) {
    double xi = 0, li = 0;
    for (int i = 0; i < NK; i++) {
      xi += unif() < 0.05 ? 0 : unif();           /* a few ties */
      if (i == 0 || unif() < 0.2) li += unif() - 0.3 * c; /* runs; decreasing for c = 2 */
      x[c][i] = xi;
      level[c][i] = c == 2 ? -li : li;
    }
    nb[c] = gpuiso_knot_blocks(NK, x[c], level[c], NULL, NULL, NULL);
    gpuiso_knot_blocks(NK, x[c], level[c], lower + first[c], upper + first[c], blevel + first[c]);
    first[c + 1] = first[c] + nb[c];
  }
  for (int i = 0; i < NQ; i++) {
    curve[i] = rand() % NC;
    double top = x[curve[i]][NK - 1];
    v[i] = i % 10 == 0 ? x[curve[i]][rand() % NK] : (1.2 * unif() - 0.1) * top;
  }
  v[5] = NAN;
  gpuiso_curves cv = {first, lower, upper, blevel};
  for (int linear = 0; linear <= 1; linear++) {
    for (int threads = 1; threads <= 2; threads++) {
      gpuiso_opts o = options(1, threads, 0);
      gpuiso_error e;
      int64_t beyond = -1, want_beyond = 0;
      int ok = gpuiso_predict(&cv, NQ, v, curve, linear, 0, -1.5, &o, out, &beyond, &e) == GPUISO_OK;
      for (int i = 0; ok && i < NQ; i++) {
        int c = curve[i];
        if (isnan(v[i])) {
          ok = out[i] == -1.5;
          continue;
        }
        want_beyond += v[i] < x[c][0] || v[i] > x[c][NK - 1];
        ok = same_bits(out[i], knot_value(NK, x[c], level[c], v[i], linear));
      }
      CHECK(ok && beyond == want_beyond, "predict, linear %d, %d threads", linear, threads);
      ok = gpuiso_predict(&cv, NQ, v, curve, linear, 1, -1.5, &o, out, NULL, &e) == GPUISO_OK;
      for (int i = 0; ok && i < NQ; i++) {
        int c = curve[i];
        if (!isnan(v[i]) && (v[i] < x[c][0] || v[i] > x[c][NK - 1])) ok = out[i] == -1.5;
      }
      CHECK(ok, "predict, outside missing, linear %d, %d threads", linear, threads);
    }
  }
  double unsorted[3] = {0, 2, 1};
  CHECK(gpuiso_knot_blocks(3, unsorted, unsorted, NULL, NULL, NULL) == -1, "unsorted knots");
  /* blocks of one level in every bit: -0 beside 0 two, a block from -Inf none beyond it */
  double kx[5] = {-INFINITY, 1, 2, 3, 4}, zeros[5] = {1, 1, -0.0, 0.0, 0.0};
  CHECK(gpuiso_knot_blocks(5, kx, zeros, NULL, NULL, NULL) == 4, "blocks of -0, 0 and -Inf");
  double tied[4] = {-1, 0, 0, 3}, nan_first[2] = {NAN, 1}, nan_last[2] = {1, NAN};
  CHECK(gpuiso_knots_sorted(4, tied) && gpuiso_knots_sorted(1, tied) &&
            gpuiso_knots_sorted(0, NULL),
        "sorted knots");
  CHECK(!gpuiso_knots_sorted(3, unsorted) && !gpuiso_knots_sorted(2, nan_first) &&
            !gpuiso_knots_sorted(2, nan_last) && !gpuiso_knots_sorted(1, nan_first),
        "unsorted knots and NaN");
}

/* Wide ranges and cancellation, where double-double points and sums lose the small parts: the
 * fits of issue 11's cases, whose exact values are known, from both engines; and the hull's
 * turns, exact on their points where the filter cannot decide. */
static void test_precision(void) {
  struct {
    int n;
    double y[3], w[3], z[3];
  } cases[] = {
    /* a weight of 1e-20 beside 1e20: the middle element pools with the last */
    {3, {-0.9, 1, -0.1}, {1e20, 1e-20, 1}, {-0.9, (1e-20 - 0.1) / (1 + 1e-20), (1e-20 - 0.1) / (1 + 1e-20)}},
    /* -1 after sums of 1e200 */
    {3, {4e199, -1.6e200, -1}, {1, 1, 1}, {(4e199 - 1.6e200) / 2, (4e199 - 1.6e200) / 2, -1}},
    /* (1e30 + 1 - 1e30) / 3, which double sums make 0 (the hull engine only: PAV's block sums
     * are doubles) */
    {3, {1e30, 1, -1e30}, {1, 1, 1}, {1.0 / 3, 1.0 / 3, 1.0 / 3}},
  };
  for (int c = 0; c < 3; c++) {
    for (int hull = c == 2; hull <= 1; hull++) {
      double z[3];
      gpuiso_opts o = options(1, 1, 0);
      gpuiso_error e;
      int64_t nb;
      gpuiso_status st = hull ? gpuiso_hull(cases[c].n, cases[c].y, cases[c].w, &o, z, NULL, &nb, &e)
                              : gpuiso_pav(cases[c].n, cases[c].y, cases[c].w, &o, z, NULL, &nb, &e);
      int ok = st == GPUISO_OK;
      for (int i = 0; ok && i < cases[c].n; i++)
        ok = fabs(z[i] - cases[c].z[i]) <= 1e-15 * (1 + fabs(cases[c].z[i]));
      CHECK(ok, "%s, precision case %d: %.17g %.17g %.17g", hull ? "hull" : "pav", c, z[0], z[1], z[2]);
    }
  }
  /* weights of ratio 2^1023: the hull solver's error, its smallest weight scaled below the normal
   * range (hull_span_beyond), which PAV fits; and at 2^1021, the hull's fit, exact */
  for (int span = 1021; span <= 1023; span += 2) {
    double ys[3] = {0.5, 2, 1}, ws[3] = {1, ldexp(1, -span), ldexp(1, -span)}, z[3];
    for (int hull = 0; hull <= 1; hull++) {
      gpuiso_opts o = options(1, 1, 0);
      gpuiso_error e;
      int64_t nb;
      gpuiso_status st = hull ? gpuiso_hull(3, ys, ws, &o, z, NULL, &nb, &e) : gpuiso_pav(3, ys, ws, &o, z, NULL, &nb, &e);
      int beyond = hull && span > 1022;
      CHECK(beyond ? st == GPUISO_E_W_SPAN && e.index == -1
                   : st == GPUISO_OK && z[0] == 0.5 && z[1] == 1.5 && z[2] == 1.5 && nb == 2,
            "%s, weights of ratio 2^%d: status %d, %.17g %.17g", hull ? "hull" : "pav", span, (int)st, z[0], z[1]);
    }
  }
  /* (1, 1) against the chord from (0, 0) to (2, 2 + 2^-60): below it, though the differences in
   * doubles are collinear; and exactly on the chord to (2, 2) */
  hull_point a = {{0, 0}, {0, 0}}, b = {{1, 0}, {1, 0}}, c1 = {{2, 0}, {2, 0x1p-60}}, c0 = {{2, 0}, {2, 0}};
  CHECK(hull_orient(a, b, c1) == 1 && hull_orient(a, b, c0) == 0,
        "hull_orient: %d (not 1) and %d (not 0)", hull_orient(a, b, c1), hull_orient(a, b, c0));
  /* the slope of an edge whose rise is a low part only */
  hull_point p = {{1e20, 1e-20}, {-9e19, 1e-20}}, q = {{1e20, 2e-20}, {-9e19, 3e-20}};
  double slope = hull_slope(p, q);
  CHECK(fabs(slope - 2) <= 1e-15, "hull_slope of a step below the high parts: %.17g, not 2", slope);
}

/* The parallel copy of the staged transfers: every byte, at lengths around its pieces' cache
 * lines, on 1 to 7 threads, nothing written past the end. */
static void test_copy_parallel(void) {
  enum { N = 5000 };
  static unsigned char src[N], dst[N + 64];
  for (int i = 0; i < N; i++) src[i] = (unsigned char)(i * 131 + 7);
  const size_t lens[] = {0, 1, 63, 64, 65, 127, 448, 449, 4999, 5000};
  int bad = 0;
  for (int nth = 1; nth <= 7; nth++)
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
      memset(dst, 0xEE, sizeof dst);
      copy_parallel(dst, src, lens[k], nth);
      bad += memcmp(dst, src, lens[k]) != 0 || dst[lens[k]] != 0xEE;
    }
  CHECK(bad == 0, "copy_parallel: %d of 70 copies wrong", bad);
}

/* The host's values of a fit that crossed as runs (src/cuda/fit_runs.cuh): each element its run's
 * value to the bit (signed zeros, a NaN's payload), runs of one element to all of them, on 1 to 5
 * threads (more than elements too), in both sizes, nothing written past the end. */
static void test_fill_runs(void) {
  enum { N = 3000 };
  static int64_t first[N + 1];
  static uint64_t value8[N], dst8[N + 1], want8[N];
  static uint32_t value4[N], dst4[N + 1], want4[N];
  int bad = 0, cases = 0;
  for (int rep = 0; rep < 60; rep++) {
    int64_t n = rep < 5 ? rep + 1 : 1 + rand() % N, nruns = 0;
    for (int64_t i = 0; i < n; i++)
      if (i == 0 || rand() % (rep % 3 == 0 ? 1 : 40) == 0) {
        first[nruns] = i;
        double d = rand() % 4 == 0 ? (rand() % 2 ? 0.0 : -0.0) : unif() - 0.5;
        float f = (float)d;
        memcpy(&value8[nruns], &d, 8), memcpy(&value4[nruns], &f, 4);
        if (rand() % 9 == 0) value8[nruns] = 0x7ff8000000000000ull | (uint64_t)rand(), value4[nruns] = 0x7fc00000u | (uint32_t)(rand() & 0xffff);
        nruns++;
      }
    first[nruns] = n;
    for (int64_t k = 0; k < nruns; k++)
      for (int64_t i = first[k]; i < first[k + 1]; i++) want8[i] = value8[k], want4[i] = value4[k];
    for (int nth = 1; nth <= 5; nth++, cases++) {
      memset(dst8, 0xEE, sizeof dst8), memset(dst4, 0xEE, sizeof dst4);
      fill_runs_parallel(dst8, 8, first, value8, nruns, n, nth);
      fill_runs_parallel(dst4, 4, first, value4, nruns, n, nth);
      bad += memcmp(dst8, want8, (size_t)n * 8) != 0 || dst8[n] != 0xEEEEEEEEEEEEEEEEull;
      bad += memcmp(dst4, want4, (size_t)n * 4) != 0 || dst4[n] != 0xEEEEEEEEu;
    }
  }
  CHECK(bad == 0, "fill_runs_parallel: %d of %d fills wrong", bad, 2 * cases);
}

/* The level starts made from a fit's runs (src/cuda/fit_runs.cuh) against their definition on the
 * values: 1 at each row's first element (empty rows among them) and where the value differs from
 * the one before, runs of equal value by value and not by bits (-0 after 0) and NaNs (each
 * differing from the one before) included, in both sizes. */
static void test_level_starts(void) {
  enum { N = 2000 };
  static int64_t first[N + 1], offsets[4 * N];
  static double value8[N], fit8[N];
  static float value4[N], fit4[N];
  static uint8_t got[N], want[N];
  int bad = 0, cases = 0, equal = 0;
  for (int rep = 0; rep < 40; rep++, cases += 2) {
    int64_t n = 1 + rand() % N, nruns = 0, nrows = 0;
    for (int64_t i = 0; i < n; i++)
      if (i == 0 || rand() % 7 == 0) {
        double d = rand() % 3 == 0 ? (rand() % 2 ? 0.0 : -0.0) : rand() % 9 == 0 ? NAN : (double)(rand() % 3);
        first[nruns] = i, value8[nruns] = d, value4[nruns] = (float)d, nruns++;
      }
    first[nruns] = n;
    for (int64_t i = 0; i < n; offsets[nrows++] = i, i += rand() % 50)
      if (rand() % 5 == 0) offsets[nrows++] = i; /* an empty row before */
    offsets[nrows] = n;
    for (int64_t k = 0; k < nruns; k++)
      for (int64_t i = first[k]; i < first[k + 1]; i++) fit8[i] = value8[k], fit4[i] = value4[k];
    for (int size = 4; size <= 8; size += 4) {
      memset(want, 0, sizeof want);
      for (int64_t r = 0; r < nrows; r++)
        for (int64_t i = offsets[r]; i < offsets[r + 1]; i++)
          want[i] = i == offsets[r] || (size == 8 ? fit8[i] != fit8[i - 1] : fit4[i] != fit4[i - 1]);
      for (int64_t k = 1; k < nruns; k++) equal += value8[k] == value8[k - 1];
      memset(got, 0xEE, sizeof got);
      level_starts_from_runs(got, n, nrows, offsets, (size_t)size, first, size == 8 ? (void *)value8 : (void *)value4,
                             nruns, 1 + rep % 4);
      bad += memcmp(got, want, (size_t)n) != 0 || (n < N && got[n] != 0xEE);
    }
  }
  CHECK(bad == 0 && equal > 100, "level_starts_from_runs: %d of %d wrong (%d runs of a value equal to the one before)",
        bad, cases, equal);
}

/* Device bytes of a plan of these rows in chunks of `chunk`, weighted float64 with flags, less
 * the few of the plan itself (plan_slice_row_bytes). */
static double plan_bytes(gpuiso_opts o, int64_t chunk, int64_t nrows, const int64_t *off) {
  int64_t longest = plan_longest(nrows, off);
  double b = 0;
  o.hull_chunk = chunk;
  for (int64_t r = 0; r < nrows; r++) b += plan_slice_row_bytes(&o, longest, off[r + 1] - off[r], GPUISO_DOUBLE, 1, 1);
  return b;
}

/* Whether plan_options gives these rows the chunk of fewest bytes among the ones it tries (the
 * longest row's even chunks, and 1024 down by 8 to 520; the larger on a tie); `what` names them. */
static void check_chunk(const char *what, gpuiso_opts o, int64_t nrows, const int64_t *off) {
  int64_t c = plan_options(&o, nrows, off).hull_chunk, longest = plan_longest(nrows, off);
  int64_t m = (longest + 1023) / 1024, best = (longest + m - 1) / m;
  double fewest = plan_bytes(o, best, nrows, off);
  for (int64_t k = 1024; k >= 520; k -= 8) {
    double b = plan_bytes(o, k, nrows, off);
    if (b < fewest || (b == fewest && k > best)) fewest = b, best = k;
  }
  CHECK(c == best, "%s (%lld rows, the longest %lld): chunk %lld, the fewest bytes with %lld", what, (long long)nrows,
        (long long)longest, (long long)c, (long long)best);
}

/* plan_options: rows of the lane kernels alone in the longest row's even chunks (the simple path
 * chunks them); single rows and ragged batches in the chunk of fewest bytes (check_chunk), at most
 * 48 bytes an element where chunks of 1024 take over 49. */
static void test_plan_chunks(void) {
  gpuiso_opts o = options(1, 1, 0);
  o.gpu_kernel = GPUISO_GPU_FAST;
  static int64_t off[1202];
  off[0] = 0;
  for (int r = 0; r < 1000; r++) off[r + 1] = off[r] + 16;
  off[1001] = off[1000] + 3000;
  CHECK(plan_options(&o, 1001, off).hull_chunk == 1000 && plan_options(&o, 1000, off).hull_chunk == 16,
        "rows of the lane kernels: chunk %lld", (long long)plan_options(&o, 1001, off).hull_chunk);
  const int64_t lens[] = {4097, 5000, 8193, 100001, 1000000, 1048576, 1000000007};
  for (int k = 0; k < 7; k++) {
    int64_t one[2] = {0, lens[k]};
    check_chunk("a row", o, 1, one);
  }
  for (int r = 0; r < 1000; r++) off[r + 1] = off[r] + 4097;
  off[1001] = off[1000] + 1000000;
  int64_t c = plan_options(&o, 1001, off).hull_chunk;
  double now = plan_bytes(o, c, 1001, off) / off[1001], before = plan_bytes(o, 1024, 1001, off) / off[1001];
  CHECK(now <= 48 && before > 49, "1000 rows of 4097 and one of 1e6: %.2f bytes an element in chunks of %lld, %.2f "
        "in chunks of 1024", now, (long long)c, before);
  for (int t = 0; t < 40; t++) {
    int64_t nrows = 1 + rand() % 1200;
    for (int64_t r = 0; r < nrows; r++)
      off[r + 1] = off[r] + (rand() % 3 ? 4097 + rand() % (t % 2 ? 5000 : 300000) : rand() % 4097);
    check_chunk("a ragged batch", o, nrows, off);
  }
}

/* The sums of unweighted data in fewer operations against the general ones with weights of 1:
 * chunk_total_add_unit (the device's chunk totals) against chunk_total_add at scale 1, the same
 * totals bit for bit (chunk_total has no padding) and the same element refused; hull_advance_unit
 * (the lanes' points) against hull_advance, the same points. Values of many scales, so that the
 * pairs' low parts are used. */
static void test_unit_sums(void) {
  for (int rep = 0; rep < 300; rep++) {
    int n = 1 + rand() % 3000, bad = rep % 10 == 0 ? (rep % 30 == 0 ? 0 : rand() % n) : -1, same = 1;
    double sign = rep % 2 ? 1 : -1, scale = ldexp(1, rand() % 200 - 100);
    const double refused[3] = {NAN, -INFINITY, INFINITY};
    chunk_total a = chunk_total_none(), b = chunk_total_none();
    hull_point p = {{0, 0}, {0, 0}}, q = p;
    for (int i = 0; i < n; i++) {
      double y = scale * (unif() - 0.3) * (rep % 3 ? 1 : ldexp(1, rand() % 60 - 30));
      if (rep % 7 == 0 && rand() % 4 == 0) y = rand() % 2 ? 0.0 : -0.0; /* signed zeros */
      if (i == bad) y = refused[rep / 10 % 3];
      int ra = chunk_total_add(&a, y, 1.0, 1.0, sign), rb = chunk_total_add_unit(&b, y, sign);
      same = same && ra == rb;
      if (!ra) break;
      p = hull_advance(p, y, 1.0, sign), q = hull_advance_unit(q, y, sign);
      same = same && memcmp(&p, &q, sizeof p) == 0;
    }
    CHECK(same && memcmp(&a, &b, sizeof a) == 0, "unit sums rep %d: n %d, bad %d", rep, n, bad);
  }
}

/* The levels' shortcuts against the general computations they stand for, bit for bit, on values
 * of many scales, equal values and signed zeros: hull_pair_diff (a two-sum where both pairs are
 * single nonzero doubles) against the expansion's pair; hull_unit_slope (an element's signed
 * value, where nonzero) against the quotient of the element's sums (hull_vertex_slope's) and
 * against hull_slope of two exact points k and k + 1 of a lane (the lane kernels' levels), in
 * both directions, in double and in float; and declining edges of two elements and weighted ones. */
static void test_edge_shortcuts(void) {
  const double zeros[2] = {0.0, -0.0};
  int pairs = 1, sums = 1, points = 1, nsums = 0, npoints = 0, npairs = 0, declined = 0;
  for (int rep = 0; rep < 20000; rep++) {
    double scale = ldexp(1, rand() % 120 - 60);
    double a = scale * (unif() - 0.4), b = rep % 5 == 0 ? -a : scale * (unif() - 0.4) * ldexp(1, rand() % 40 - 20);
    if (rep % 11 == 0) a = zeros[rand() % 2];
    if (rep % 13 == 0) b = zeros[rand() % 2];
    double lo_a = rep % 3 == 0 ? a * 0x1p-60 * unif() : zeros[rand() % 2];
    double lo_b = rep % 4 == 0 ? b * 0x1p-58 * unif() : zeros[rand() % 2];
    dd pa = {a, lo_a}, pb = {a + b, lo_b}, want, got;
    if (rep % 17 == 0) pa.hi = zeros[rand() % 2], pb.hi = zeros[rand() % 2]; /* zeros of either sign */
    double e[4];
    int n = hull_exp_diff(pb, pa, e);
    want = hull_exp_pair(e, n), got = hull_pair_diff(pb, pa);
    pairs = pairs && memcmp(&want, &got, sizeof want) == 0;

    float yf = (float)b;
    hull_slots v;
    memset(&v, 0, sizeof v);
    v.single = rep % 3 == 1, v.y = v.single ? (const void *)&yf : (const void *)&b;
    v.sign = rep % 2 ? 1 : -1, v.scale = 1;
    double slope, w1 = 1, other;
    declined += hull_unit_slope(&v, 0, 2, &other); /* an edge of two elements */
    v.w = v.single ? (const void *)&yf : (const void *)&w1; /* weighted (the pointer alone is checked) */
    declined += hull_unit_slope(&v, 0, 1, &other);
    v.w = NULL;
    if (!hull_unit_slope(&v, 0, 1, &slope)) continue;
    hull_point zero = {{0, 0}, {0, 0}}, d = hull_sums(&v, zero, 0, 1);
    double q = hull_quotient(d.s, d.w);
    sums = sums && memcmp(&q, &slope, sizeof q) == 0, nsums++;
    /* a point and the next, as hull_advance forms them: single doubles (a lane's own points), or
     * pairs (points across a lane's end, a start added), where the pairs hold the sums exactly */
    int k = rand() % 33;
    hull_point p1 = {{k, 0}, {a, 0}};
    if (rep % 2) p1.w = dd_add_d(p1.w, ldexp(1, 60)), p1.s = dd_add_d(p1.s, ldexp(scale, rand() % 60));
    hull_point p2 = hull_advance(p1, hull_y(&v, 0), 1.0, v.sign);
    n = hull_exp_diff(p2.s, p1.s, e);
    double s = hull_slope(p1, p2);
    if (n == 1 && e[0] == slope) points = points && memcmp(&s, &slope, sizeof s) == 0, npoints++, npairs += rep % 2;
  }
  CHECK(pairs, "hull_pair_diff differs from the expansion's pair");
  CHECK(declined == 0, "hull_unit_slope taken for %d edges of two elements or weighted ones", declined);
  CHECK(sums && nsums > 10000, "hull_unit_slope differs from the quotient of the element's sums (%d cases)", nsums);
  CHECK(points && npoints > 5000 && npairs > 2000,
        "hull_unit_slope differs from hull_slope of exact points (%d cases, %d of pairs)", npoints, npairs);
}

/* The exact points' sums against the plain loop of hull_advance from the chunk's first element,
 * bit for bit: hull_sums_by at every batch (lengths off the batches too), and hull_vertices_exact
 * (two vertices in one pass where both were rounded in one chunk) against each vertex's own
 * pass, a vertex not rounded left as it was, on rows whose values span 2^+-150 (floats 2^+-60),
 * so that the pairs round and the order of the sums counts; weighted or not, either direction. */
static hull_point plain_sums(const hull_slots *v, int64_t from, int64_t to) {
  hull_point p = {{0, 0}, {0, 0}};
  for (int64_t i = from; i < to; i++) p = hull_advance(p, hull_y(v, i), hull_w(v, i), v->sign);
  return p;
}

static int same_vertex(hull_vertex a, hull_vertex b) { /* field by field: not the padding */
  return a.chunk == b.chunk && a.k == b.k && a.rounded == b.rounded && memcmp(&a.rel, &b.rel, sizeof a.rel) == 0;
}

static void test_exact_sums(void) {
  enum { N = 600 };
  double y[N], w[N];
  float yf[N], wf[N];
  int sums = 1, pairs = 1, joint = 0, rounded_sums = 0;
  for (int rep = 0; rep < 400; rep++) {
    for (int i = 0; i < N; i++) {
      int span = rep % 5 == 0 ? 120 : 300; /* floats: finite and not subnormal */
      y[i] = (unif() - 0.5) * ldexp(1, rep % 4 ? rand() % span - span / 2 : rand() % 20), yf[i] = (float)y[i];
      w[i] = rep % 3 ? 1.0 : exp(16 * unif() - 8), wf[i] = (float)w[i];
    }
    hull_slots v;
    memset(&v, 0, sizeof v);
    v.single = rep % 5 == 0;
    v.y = v.single ? (const void *)yf : (const void *)y;
    v.w = rep % 3 ? NULL : v.single ? (const void *)wf : (const void *)w;
    v.sign = rep % 2 ? 1 : -1, v.scale = 1, v.chunk = 1 + rand() % 300, v.first = rand() % 10;
    int64_t chunks = (N - v.first) / v.chunk;
    for (int t = 0; t < 20; t++) {
      int64_t from = rand() % N, to = from + rand() % (N - from + 1);
      hull_point want = plain_sums(&v, from, to), zero = {{0, 0}, {0, 0}};
      rounded_sums += want.s.lo != 0;
      for (int batch = 1; batch <= HULL_SUM_BATCH; batch++) {
        hull_point got = hull_sums_by(&v, zero, from, to, batch);
        sums = sums && memcmp(&want, &got, sizeof want) == 0;
      }
      if (chunks < 1) continue;
      hull_point kept = {{0.25, 0}, {-3.5, 0}}; /* a rel that no sum gives, where a vertex is not rounded */
      hull_vertex a = {rand() % chunks, rand() % (v.chunk + 1), kept, rand() % 4 != 0};
      hull_vertex b = {t % 2 ? a.chunk : rand() % chunks, rand() % (v.chunk + 1), kept, rand() % 4 != 0};
      hull_vertex ea = a, eb = b;
      if (a.rounded) ea.rel = plain_sums(&v, hull_chunk_first(&v, a.chunk), hull_chunk_first(&v, a.chunk) + a.k);
      if (b.rounded) eb.rel = plain_sums(&v, hull_chunk_first(&v, b.chunk), hull_chunk_first(&v, b.chunk) + b.k);
      ea.rounded = eb.rounded = 0;
      joint += a.chunk == b.chunk && a.rounded && b.rounded && a.k != b.k;
      hull_vertices_exact(&v, &a, &b);
      pairs = pairs && same_vertex(a, ea) && same_vertex(b, eb);
    }
  }
  CHECK(sums && rounded_sums > 1000, "hull_sums_by differs from hull_advance's loop (%d sums rounded)", rounded_sums);
  CHECK(pairs && joint > 1000, "hull_vertices_exact differs from each vertex's own sums (%d in one pass)", joint);
}

/* The exit status of child process pid, -1 where it did not exit. */
static int child_status(pid_t pid) {
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

/* The record of the process that started CUDA: a process forked before it started may start it
 * itself; the process that started it is not forked; its children and theirs are, whatever
 * they record. */
static void test_cuda_fork(void) {
  CHECK(!gpuiso_cuda_forked(), "forked before CUDA started");
  pid_t before = fork();
  if (before == 0) {
    gpuiso_cuda_started();
    _exit(gpuiso_cuda_forked());
  }
  CHECK(child_status(before) == 0, "a child forked before CUDA started, then starting it: forked");
  gpuiso_cuda_started();
  gpuiso_cuda_started();
  CHECK(!gpuiso_cuda_forked(), "the process that started CUDA counted as forked");
  pid_t child = fork();
  if (child == 0) {
    int code = gpuiso_cuda_forked() ? 0 : 1;
    gpuiso_cuda_started();
    if (!gpuiso_cuda_forked()) code = 2;
    pid_t grandchild = fork();
    if (grandchild == 0) _exit(gpuiso_cuda_forked() ? 0 : 1);
    if (child_status(grandchild) != 0) code = 3;
    _exit(code);
  }
  int code = child_status(child);
  CHECK(code == 0, "a child of the process that started CUDA: code %d (1: not forked; 2: not after "
        "recording; 3: its child not forked)", code);
  CHECK(!gpuiso_cuda_forked(), "the process that started CUDA counted as forked after a fork");
}

int main(void) {
  srand(20261129);
  test_cuda_fork(); /* first: before OpenMP starts threads that a fork would not copy */
  test_copy_parallel();
  test_fill_runs();
  test_level_starts();
  test_pav_small();
  test_clip_and_errors();
  test_sorted_fits();
  test_grouped_fits();
  test_sorts_in_callers_threads();
  test_batches();
  test_long_rows();
  test_predict();
  test_hull();
  test_edges();
  test_precision();
  test_plan_chunks();
  test_unit_sums();
  test_edge_shortcuts();
  test_exact_sums();
  printf("ctest: %d passed, %d failed\n", passed, failed);
  return failed != 0;
}

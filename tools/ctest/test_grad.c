/* Standalone tests of the gradients in the C core: the solver's block flags of each engine
 * (opt.solver_blocks) against the exact partition, with the fitted values unchanged bit for bit;
 * gpuiso_vjp against central finite differences of the fit; soft ranks and sorts against their
 * limits, their sums and finite differences, and the sort order the forward pass keeps for the
 * backward pass (soft_with_order). Prints "ctest: N passed, N failed". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuiso.h"
#include "soft.h"

#include "check.h"

static double unif(void) { return (rand() + 0.5) / ((double)RAND_MAX + 1); }

static gpuiso_opts options(int increasing, gpuiso_engine engine, int chunks) {
  gpuiso_opts o = {.increasing = increasing, .lo = -INFINITY, .hi = INFINITY, .nthreads = 2,
                   .chunks = chunks, .engine = engine, .hull_chunk = 8};
  return o;
}

/* The exact partition of PAV on small integer data, by cross products of integer sums (equal
 * means pool; zero weights join the block before, or the first block). */
static void partition(int n, const double *y, const double *w, int increasing, uint8_t *start) {
  double sum[512], weight[512];
  int first[512], k = -1;
  for (int i = 0; i < n; i++) {
    double wi = w ? w[i] : 1, s = wi * (increasing ? y[i] : -y[i]);
    if (wi == 0 && k >= 0) continue;
    int f = i;
    while (k >= 0 && weight[k] > 0 && sum[k] * wi >= s * weight[k]) {
      s += sum[k];
      wi += weight[k];
      f = first[k--];
    }
    if (k >= 0 && weight[k] == 0) { /* leading zero weights join the first block */
      s += sum[k], wi += weight[k], f = first[k--];
    }
    k++;
    sum[k] = s, weight[k] = wi, first[k] = f;
  }
  for (int i = 0; i < n; i++) start[i] = 0;
  for (int b = 0; b <= k; b++) start[first[b]] = 1;
  start[0] = 1;
}

static void test_solver_blocks(void) {
  double y[400], w[400], z0[400], z1[400];
  uint8_t ref[400], s0[400], s1[400];
  int bad_fit = 0, bad_flags = 0, bad_count = 0, bad_clip = 0, cases = 0;
  for (int rep = 0; rep < 1500; rep++) {
    int n = 1 + rand() % 300, increasing = rep % 2, weighted = rep % 3;
    for (int i = 0; i < n; i++) {
      y[i] = (double)(rand() % 7) + (rep % 4 == 0 ? 0.25 * i : 0);
      w[i] = weighted == 1 ? (double)(rand() % 3) : 1 + rand() % 4;
    }
    if (weighted == 1) w[rand() % n] = 1;
    const double *wp = weighted ? w : NULL;
    partition(n, y, wp, increasing, ref);
    for (int e = 0; e < 4; e++) { /* PAV, PAV in chunks, hull, hull in chunks of 8 */
      gpuiso_opts o = options(increasing, e < 2 ? GPUISO_PAV : GPUISO_HULL, e == 1 ? 5 : 0);
      if (e == 3) o.hull_chunk = 3;
      gpuiso_error err;
      int64_t nb0, nb1;
      gpuiso_fit(n, y, wp, &o, z0, s0, &nb0, &err);
      o.solver_blocks = 1;
      gpuiso_fit(n, y, wp, &o, z1, s1, &nb1, &err);
      int64_t count = 0;
      for (int i = 0; i < n; i++) count += s1[i];
      bad_fit += memcmp(z0, z1, (size_t)n * sizeof *z0) != 0;
      bad_flags += memcmp(s1, ref, (size_t)n) != 0;
      bad_count += count != nb1;
      /* clipping merges levels, not the solver's blocks */
      o.lo = 2;
      o.hi = 4.5;
      gpuiso_fit(n, y, wp, &o, z1, s0, &nb1, &err);
      bad_clip += memcmp(s0, ref, (size_t)n) != 0;
      cases++;
    }
  }
  CHECK(bad_fit == 0, "fits changed by solver_blocks: %d of %d", bad_fit, cases);
  CHECK(bad_flags == 0, "solver blocks differ from the exact partition: %d of %d", bad_flags, cases);
  CHECK(bad_count == 0, "nblocks is not the number of solver blocks: %d of %d", bad_count, cases);
  CHECK(bad_clip == 0, "clipped solver blocks differ: %d of %d", bad_clip, cases);
}

/* The same on unsorted x with ties, through the sort: the knots' flags. */
static void test_solver_blocks_xy(void) {
  double x[300], y[300], z[300], kx[300], kl[300], kw[300];
  uint8_t ks[300], ref[300];
  int bad = 0;
  for (int rep = 0; rep < 300; rep++) {
    int n = 2 + rand() % 250;
    for (int i = 0; i < n; i++) x[i] = rand() % (n / 2 + 1), y[i] = rand() % 5;
    gpuiso_opts o = options(rep % 2, GPUISO_PAV, 0);
    o.solver_blocks = 1;
    gpuiso_sorted *sorted;
    int64_t nk;
    gpuiso_error err;
    gpuiso_sort_xy(n, x, y, NULL, &o, &sorted, &nk, &err);
    gpuiso_knots kn = {nk, kx, kl, kw, ks, 0};
    gpuiso_fit_sorted(sorted, &o, z, &kn, &err);
    /* the knots' means are rational: the partition of the knots' integer sums */
    double sum[300];
    for (int64_t d = 0; d < nk; d++) sum[d] = 0;
    for (int i = 0; i < n; i++) {
      int64_t d = 0;
      while (kx[d] != x[i]) d++;
      sum[d] += y[i];
    }
    double sy[300], sw[300];
    int first[300], k = -1;
    for (int64_t d = 0; d < nk; d++) {
      double s = o.increasing ? sum[d] : -sum[d], wd = kw[d];
      int f = (int)d;
      while (k >= 0 && sy[k] * wd >= s * sw[k]) s += sy[k], wd += sw[k], f = first[k--];
      k++;
      sy[k] = s, sw[k] = wd, first[k] = f;
    }
    for (int64_t d = 0; d < nk; d++) ref[d] = 0;
    for (int b = 0; b <= k; b++) ref[first[b]] = 1;
    bad += memcmp(ref, ks, (size_t)nk) != 0;
    gpuiso_sorted_free(sorted);
  }
  CHECK(bad == 0, "solver blocks of knots differ from the exact partition: %d of 300", bad);
}

/* sum_i g_i z_i(y, w) by the PAV engine. */
static double objective(int n, const double *y, const double *w, const double *g,
                        const gpuiso_opts *o) {
  double z[64], s = 0;
  gpuiso_error err;
  gpuiso_pav(n, y, w, o, z, NULL, NULL, &err);
  for (int i = 0; i < n; i++) s += g[i] * z[i];
  return s;
}

static void test_vjp_fd(void) {
  double y[64], w[64], g[64], z[64], dy[64], dw[64], yp[64], wp[64];
  uint8_t st[64];
  double worst = 0;
  for (int rep = 0; rep < 400; rep++) {
    int n = 1 + rand() % 40;
    gpuiso_opts o = options(rep % 2, GPUISO_PAV, 0);
    o.solver_blocks = 1;
    if (rep % 5 == 0) o.lo = -0.5, o.hi = 0.7;
    for (int i = 0; i < n; i++) {
      y[i] = 2 * unif() - 1 + 0.05 * i;
      w[i] = 0.2 + unif();
      g[i] = 2 * unif() - 1;
    }
    gpuiso_error err;
    gpuiso_pav(n, y, w, &o, z, st, NULL, &err);
    int64_t off[2] = {0, n};
    gpuiso_vjp(1, off, y, w, z, st, g, &o, dy, dw, &err);
    double h = 1e-6;
    for (int i = 0; i < n; i++) {
      memcpy(yp, y, sizeof y);
      memcpy(wp, w, sizeof w);
      yp[i] = y[i] + h;
      double up = objective(n, yp, w, g, &o);
      yp[i] = y[i] - h;
      double fy = (up - objective(n, yp, w, g, &o)) / (2 * h);
      wp[i] = w[i] + h;
      up = objective(n, y, wp, g, &o);
      wp[i] = w[i] - h;
      double fw = (up - objective(n, y, wp, g, &o)) / (2 * h);
      double e = fmax(fabs(fy - dy[i]), fabs(fw - dw[i]));
      worst = e > worst ? e : worst;
    }
  }
  CHECK(worst < 1e-6, "vjp against central differences: worst %g", worst);
}

static void test_soft(void) {
  int n = 7;
  double x[7] = {0.3, -1.2, 2.5, 0.31, 1.1, -0.4, 0.0}, r[7], out[7];
  gpuiso_opts o = options(1, GPUISO_PAV, 0);
  gpuiso_error err;
  /* hard ranks as epsilon -> 0, the mean rank as epsilon -> Inf; ranks sum to n (n + 1) / 2 */
  gpuiso_soft(GPUISO_SOFT_RANK, 1, n, x, NULL, 1e-9, 0, &o, r, &err);
  int hard = 1;
  for (int i = 0; i < n; i++) {
    int rank = 1;
    for (int j = 0; j < n; j++) rank += x[j] < x[i];
    hard = hard && fabs(r[i] - rank) < 1e-6;
  }
  CHECK(hard, "soft ranks tend to the ranks");
  gpuiso_soft(GPUISO_SOFT_RANK, 1, n, x, NULL, 1e9, 0, &o, r, &err);
  double sum = 0, spread = 0;
  for (int i = 0; i < n; i++) sum += r[i], spread = fmax(spread, fabs(r[i] - 4));
  CHECK(spread < 1e-6 && fabs(sum - 28) < 1e-9, "soft ranks tend to (n + 1) / 2: %g", spread);
  gpuiso_soft(GPUISO_SOFT_RANK, 1, n, x, NULL, 0.7, 0, &o, r, &err);
  gpuiso_soft(GPUISO_SOFT_RANK, 1, n, x, NULL, 0.7, 1, &o, out, &err);
  double mirror = 0;
  for (int i = 0; i < n; i++) mirror = fmax(mirror, fabs(out[i] - (n + 1 - r[i])));
  CHECK(mirror < 1e-12, "decreasing ranks are n + 1 minus increasing ones: %g", mirror);
  gpuiso_soft(GPUISO_SOFT_SORT, 1, n, x, NULL, 1e-9, 0, &o, out, &err);
  int sorted = 1;
  for (int i = 0; i + 1 < n; i++) sorted = sorted && out[i] <= out[i + 1];
  CHECK(sorted && fabs(out[0] + 1.2) < 1e-6 && fabs(out[6] - 2.5) < 1e-6, "soft sort tends to sort");
  /* keys (x / epsilon) or n / epsilon far beyond the ranks or x: each element its own segment,
   * so the ranks and the sorted values exactly (the targets once held only the keys: ranks of 0) */
  double sorted_x[7] = {-1.2, -0.4, 0.0, 0.3, 0.31, 1.1, 2.5}, ranks[7] = {4, 1, 7, 5, 6, 2, 3};
  for (int kind = 0; kind < 2; kind++) {
    gpuiso_status st = gpuiso_soft((gpuiso_soft_kind)kind, 1, n, x, NULL, 1e-17, 0, &o, out, &err);
    int exact = st == GPUISO_OK;
    for (int i = 0; i < n; i++) exact = exact && out[i] == (kind ? sorted_x[i] : ranks[i]);
    CHECK(exact, "soft %s at epsilon 1e-17: status %d, %.17g %.17g", kind ? "sort" : "rank", (int)st, out[0], out[1]);
  }
  /* the device fits a row as one segment: beyond 2^23 of the outputs' scale the CPU fits it
   * (without CUDA the device's call fails, the CPU's succeeds) */
  gpuiso_opts dev = options(1, GPUISO_GPU, 0);
  for (int kind = 0; kind < 2; kind++) {
    for (int far = 0; far < 2; far++) {
      double eps = kind == GPUISO_SOFT_RANK ? (far ? 2.5 / 0x1p24 : 2.5 / 0x1p22) : (far ? 7 / 2.5 / 0x1p24 : 7 / 2.5 / 0x1p22);
      gpuiso_status st = gpuiso_soft((gpuiso_soft_kind)kind, 1, n, x, NULL, eps, 0, &dev, out, &err);
      CHECK(st == (far ? GPUISO_OK : GPUISO_E_NO_CUDA), "soft %s on the device, %s 2^23: status %d",
            kind ? "sort" : "rank", far ? "beyond" : "within", (int)st);
    }
  }

  /* vector-Jacobian products against central differences, both kinds and directions */
  double g[7] = {0.5, -1, 0.25, 2, -0.75, 1, 0.1}, dx[7], xp[7], a[7], b[7];
  double worst = 0;
  for (int kind = 0; kind < 2; kind++) {
    for (int dec = 0; dec < 2; dec++) {
      gpuiso_soft((gpuiso_soft_kind)kind, 1, n, x, g, 0.6, dec, &o, dx, &err);
      for (int i = 0; i < n; i++) {
        double h = 1e-6, fp = 0, fm = 0;
        memcpy(xp, x, sizeof x);
        xp[i] = x[i] + h;
        gpuiso_soft((gpuiso_soft_kind)kind, 1, n, xp, NULL, 0.6, dec, &o, a, &err);
        xp[i] = x[i] - h;
        gpuiso_soft((gpuiso_soft_kind)kind, 1, n, xp, NULL, 0.6, dec, &o, b, &err);
        for (int j = 0; j < n; j++) fp += g[j] * a[j], fm += g[j] * b[j];
        worst = fmax(worst, fabs((fp - fm) / (2 * h) - dx[i]));
      }
    }
  }
  CHECK(worst < 1e-6, "soft vjp against central differences: worst %g", worst);

  /* rows of a matrix, with the hull engine, equal rows fitted alone by PAV */
  enum { R = 5, C = 300 };
  static double m[R * C], mo[R * C], row[C], ro[C], mg[R * C], rg[C];
  for (int i = 0; i < R * C; i++) m[i] = 3 * unif(), mg[i] = unif() - 0.5;
  double diff = 0;
  for (int kind = 0; kind < 2; kind++) {
    for (int back = 0; back < 2; back++) {
      gpuiso_opts h = options(1, GPUISO_HULL, 0);
      gpuiso_soft((gpuiso_soft_kind)kind, R, C, m, back ? mg : NULL, 0.05, kind, &h, mo, &err);
      for (int r0 = 0; r0 < R; r0++) {
        for (int j = 0; j < C; j++) row[j] = m[r0 + j * R], rg[j] = mg[r0 + j * R];
        gpuiso_soft((gpuiso_soft_kind)kind, 1, C, row, back ? rg : NULL, 0.05, kind, &o, ro, &err);
        for (int j = 0; j < C; j++) diff = fmax(diff, fabs(ro[j] - mo[r0 + j * R]));
      }
    }
  }
  CHECK(diff < 1e-9, "matrix rows (hull engine) against single rows (PAV): %g", diff);

  x[3] = NAN;
  gpuiso_status s = gpuiso_soft(GPUISO_SOFT_RANK, 1, n, x, NULL, 1, 0, &o, r, &err);
  CHECK(s == GPUISO_E_X_NONFINITE && err.index == 3, "non-finite x: status %d", (int)s);
  x[3] = 1e300;
  s = gpuiso_soft(GPUISO_SOFT_RANK, 1, n, x, NULL, 1e-10, 0, &o, r, &err);
  CHECK(s == GPUISO_E_OVERFLOW && err.index == 3, "x / epsilon overflowing: status %d", (int)s);
}

/* The sort order the forward pass records, against insertion sorts of the keys (from the
 * largest, ties by index); the backward pass given it, bit for bit the one that sorts again; and
 * orders that are not it, found in their row. */
static void test_soft_order(void) {
  enum { R = 130, C = 60 }; /* enough rows for threads to take 16 at a time */
  static double m[R * C], mg[R * C], a[R * C], b[R * C];
  static int32_t order[R * C];
  for (int i = 0; i < R * C; i++) m[i] = round(8 * unif()) / 4, mg[i] = unif() - 0.5; /* ties */
  gpuiso_opts o = options(1, GPUISO_PAV, 0);
  gpuiso_error err;
  for (int kind = 0; kind < 2; kind++) {
    for (int dec = 0; dec < 2; dec++) {
      double eps = dec ? 0.3 : 2;
      int64_t wrong = 0;
      gpuiso_status s = soft_with_order((gpuiso_soft_kind)kind, R, C, m, NULL, eps, dec, &o, order, a,
                                        &wrong, &err);
      gpuiso_soft((gpuiso_soft_kind)kind, R, C, m, NULL, eps, dec, &o, b, &err);
      int same = s == GPUISO_OK && memcmp(a, b, sizeof a) == 0, sorted = 1;
      for (int r = 0; r < R; r++) {
        int ref[C];
        for (int j = 0; j < C; j++) {
          double key = kind == GPUISO_SOFT_RANK && dec ? -m[r + j * R] : m[r + j * R];
          int k = j;
          for (; k > 0 && (kind == GPUISO_SOFT_RANK && dec ? -m[r + ref[k - 1] * R] : m[r + ref[k - 1] * R]) < key; k--)
            ref[k] = ref[k - 1];
          ref[k] = j;
        }
        for (int k = 0; k < C; k++) sorted = sorted && order[r + k * R] == ref[k] + 1;
      }
      CHECK(same && sorted, "soft %s%s: recorded order %s, values %s", kind ? "sort" : "rank",
            dec ? ", decreasing" : "", sorted ? "right" : "wrong", same ? "the same" : "differ");
      s = soft_with_order((gpuiso_soft_kind)kind, R, C, m, mg, eps, dec, &o, order, a, &wrong, &err);
      gpuiso_soft((gpuiso_soft_kind)kind, R, C, m, mg, eps, dec, &o, b, &err);
      CHECK(s == GPUISO_OK && wrong == -1 && memcmp(a, b, sizeof a) == 0,
            "soft %s%s: backward pass given the order (wrong in row %lld)", kind ? "sort" : "rank",
            dec ? ", decreasing" : "", (long long)wrong);
    }
  }
  /* rank, increasing: a tie out of order in row 2, an index out of range in row 1 */
  int64_t wrong = 0;
  soft_with_order(GPUISO_SOFT_RANK, R, C, m, NULL, 1, 0, &o, order, a, &wrong, &err);
  int k = 0;
  while (m[2 + (order[2 + k * R] - 1) * R] != m[2 + (order[2 + (k + 1) * R] - 1) * R]) k++;
  int32_t t = order[2 + k * R];
  order[2 + k * R] = order[2 + (k + 1) * R];
  order[2 + (k + 1) * R] = t;
  soft_with_order(GPUISO_SOFT_RANK, R, C, m, mg, 1, 0, &o, order, a, &wrong, &err);
  CHECK(wrong == 2, "a tie out of order: row %lld", (long long)wrong);
  order[1 + 7 * R] = C + 1;
  soft_with_order(GPUISO_SOFT_RANK, R, C, m, mg, 1, 0, &o, order, a, &wrong, &err);
  CHECK(wrong == 1, "an index out of range: row %lld", (long long)wrong);
}

int main(void) {
  srand(7);
  test_solver_blocks();
  test_solver_blocks_xy();
  test_vjp_fd();
  test_soft();
  test_soft_order();
  printf("ctest: %d passed, %d failed (gradients of the core)\n", passed, failed);
  return failed != 0;
}

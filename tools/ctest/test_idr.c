/* Standalone tests of IDR in the C core (no R): gpuiso_idr_fit against per-threshold antitonic
 * PAV (gpuiso_pav of the pooled indicator means), on one and two threads, and the evaluations of
 * gpuiso_cdf_runs (values, quantiles, CRPS) against direct computations on the dense CDFs; with
 * several covariates the transitive reduction, the poset solver (KKT conditions over all lower
 * sets, PAV on a chain), the poset IDR fit and its predictions against brute force.
 * Prints one line per failure and a closing "ctest: N passed, N failed (idr)". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuiso.h"
#include "idr_poset.h"
#ifdef _OPENMP
#include <omp.h>
#endif

#include "check.h"

static double unif(void) { return (rand() + 0.5) / ((double)RAND_MAX + 1); }

static double cdf_value(const gpuiso_cdf_runs *r, int k, int p);
static int stop_progress(void *ctx, double done);

static gpuiso_opts options(int increasing, int nthreads) {
  gpuiso_opts o = {.increasing = increasing, .lo = -INFINITY, .hi = INFINITY, .nthreads = nthreads};
  return o;
}

/* Dense CDFs (npos x nthr, column-major) by one antitonic PAV per threshold. */
static void reference(int n, const int32_t *pos, const int32_t *thr, const double *w, int npos,
                      int nthr, double *cdf) {
  double *W = calloc(npos, sizeof *W), *mean = malloc(npos * sizeof *mean);
  for (int i = 0; i < n; i++) W[pos[i]] += w[i];
  gpuiso_opts o = options(0, 1);
  for (int k = 0; k < nthr; k++) {
    memset(mean, 0, npos * sizeof *mean);
    for (int i = 0; i < n; i++)
      if (thr[i] <= k) mean[pos[i]] += w[i];
    for (int p = 0; p < npos; p++) mean[p] /= W[p];
    int64_t nb;
    gpuiso_pav(npos, mean, W, &o, cdf + (size_t)k * npos, NULL, &nb, NULL);
  }
  free(W);
  free(mean);
}

/* Random data with every position and threshold used: observation i < npos sits at position i,
 * i < nthr has threshold i; the rest are random. thr follows pos (as IDR data do) or not (long
 * blocks, and low thresholds changing many positions, high ones few). Weights (weighted 0 to 4):
 * 1 or quarters (the hull engine on narrow coordinates, which takes low thresholds by PAV),
 * powers of two over 2^-30 .. 2^30 or Exp(1) (wide coordinates: totals of some 2^70 and 2^90
 * units), or random over 2^-70 .. 2^70 (the sweep: 2^200 units). */
static void make_data(int n, int npos, int nthr, int weighted, int dependent, int32_t *pos,
                      int32_t *thr, double *w) {
  for (int i = 0; i < n; i++) {
    pos[i] = i < npos ? i : rand() % npos;
    double u = dependent ? 0.6 * unif() + 0.4 * (double)pos[i] / npos : unif() * unif();
    thr[i] = i < nthr ? i : (int32_t)(u * nthr);
    w[i] = weighted == 0   ? 1.0
           : weighted == 1 ? 0.25 * (1 + rand() % 8)
           : weighted == 2 ? ldexp(1.0, rand() % 61 - 30)
           : weighted == 3 ? -log(unif())
                           : ldexp(unif(), rand() % 141 - 70);
  }
}

#ifdef IDR_UNITS_WIDE
__extension__ typedef unsigned __int128 wide_magnitude;

/* |x| as 32-bit limbs, least significant first. */
static void limbs_of(idr_units x, uint32_t *l) {
  wide_magnitude m = x < 0 ? -(wide_magnitude)x : (wide_magnitude)x;
  for (int i = 0; i < 4; i++, m >>= 32) l[i] = (uint32_t)m;
}

/* The sign of a b - c d by schoolbook products of 32-bit limbs: a reference independent of
 * units_cross_sign's 64-bit halves. */
static int cross_sign_limbs(idr_units a, idr_units b, idr_units c, idr_units d) {
  int sl = (a > 0) - (a < 0), sr = (c > 0) - (c < 0);
  sl *= (b > 0) - (b < 0);
  sr *= (d > 0) - (d < 0);
  if (sl != sr || sl == 0) return (sl > sr) - (sl < sr);
  uint32_t x[4], y[4], p[2][8];
  for (int side = 0; side < 2; side++) {
    limbs_of(side ? c : a, x);
    limbs_of(side ? d : b, y);
    uint64_t acc[9] = {0};
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) {
        uint64_t q = (uint64_t)x[i] * y[j];
        acc[i + j] += q & 0xffffffffu;
        acc[i + j + 1] += q >> 32;
      }
    for (int k = 0; k < 8; k++) {
      p[side][k] = (uint32_t)acc[k];
      acc[k + 1] += acc[k] >> 32;
    }
  }
  for (int k = 7; k >= 0; k--)
    if (p[0][k] != p[1][k]) return sl * (p[0][k] > p[1][k] ? 1 : -1);
  return 0;
}

static idr_units random_units(int bits) { /* |x| < 2^bits, either sign */
  wide_magnitude m = 0;
  for (int i = 0; i < 8; i++) m = (m << 16) | (unsigned)(rand() & 0xffff);
  idr_units x = (idr_units)(m & (((wide_magnitude)1 << bits) - 1));
  return rand() % 2 ? -x : x;
}

/* units_cross_sign (the hull tree's turns and the pooling's comparisons) against the limbs, on
 * factors of every length up to 2^125 and on products equal or one apart. */
static void test_cross_sign(void) {
  int wrong = 0, wrong_close = 0;
  for (int trial = 0; trial < 200000; trial++) {
    idr_units a = random_units(1 + rand() % 125), b = random_units(1 + rand() % 125);
    idr_units c = random_units(1 + rand() % 125), d = random_units(1 + rand() % 125);
    wrong += units_cross_sign(a, b, c, d) != cross_sign_limbs(a, b, c, d);
    /* c d = a b exactly, then one factor moved by one */
    int k = rand() % 60, e = rand() % 3 - 1;
    idr_units x = random_units(1 + rand() % 64), y = random_units(1 + rand() % 60);
    idr_units near_a = x * ((idr_units)1 << k), near_d = y * ((idr_units)1 << k) + e;
    int want = cross_sign_limbs(near_a, y, x, near_d);
    wrong_close += units_cross_sign(near_a, y, x, near_d) != want;
    wrong_close += e != 0 && x != 0 && want != -((e > 0) - (e < 0)) * ((x > 0) - (x < 0));
  }
  CHECK(wrong == 0, "units_cross_sign: %d of 200000 random signs wrong", wrong);
  CHECK(wrong_close == 0, "units_cross_sign: %d of 200000 near-equal signs wrong", wrong_close);
}
#endif

/* The upper hull of points (W, S) by a monotone chain, without collinear vertices: its
 * vertices' last positions (-1 the origin), the turns by units_cross_sign. */
static int brute_hull(int npos, const idr_units *w, const idr_units *s, int32_t *out) {
  idr_units *pw = malloc((npos + 1) * sizeof *pw), *ps = malloc((npos + 1) * sizeof *ps);
  pw[0] = ps[0] = 0;
  for (int p = 0; p < npos; p++) {
    pw[p + 1] = pw[p] + w[p];
    ps[p + 1] = ps[p] + s[p];
  }
  int m = 0;
  for (int j = 0; j <= npos; j++) {
    while (m >= 2) {
      int a = out[m - 2] + 1, b = out[m - 1] + 1;
      if (units_cross_sign(pw[b] - pw[a], ps[j] - ps[a], ps[b] - ps[a], pw[j] - pw[a]) < 0) break;
      m--;
    }
    out[m++] = j - 1;
  }
  free(pw);
  free(ps);
  return m;
}

/* The IDR sweep's hull tree (cdf_hull.c) against the monotone chain, after building it and
 * after each of many updates of a few or many counts, and its blocks' sums; with narrow
 * coordinates on small integers and, where built, with wide ones on integers near 2^100 whose
 * differences decide the turns (every product past 128 bits). */
static void test_hull_tree(void) {
#ifdef IDR_UNITS_WIDE
  const int kinds = 2;
#else
  const int kinds = 1;
#endif
  for (int trial = 0; trial < 300 * kinds; trial++) {
    int wide = trial % kinds, npos = 1 + rand() % (trial < 100 * kinds ? 12 : 400);
    idr_units base = wide ? (idr_units)ldexp(1.0, 100) : 1; /* weights base + small, counts in */
    idr_units *w = malloc(npos * sizeof *w), *s = calloc(npos, sizeof *s); /* steps of base */
    idr_units *bw = malloc(npos * sizeof *bw), *bs = malloc(npos * sizeof *bs);
    int32_t *got = malloc((npos + 1) * sizeof *got), *want = malloc((npos + 1) * sizeof *want);
    int32_t *changed = malloc(npos * sizeof *changed);
    int *steps = malloc(npos * sizeof *steps), *filled = calloc(npos, sizeof *filled);
    for (int p = 0; p < npos; p++) {
      steps[p] = 1 + rand() % 4;
      w[p] = steps[p] * base + (wide ? rand() % 3 : 0);
      filled[p] = trial % 3 ? rand() % (steps[p] + 1) : 0; /* some start all zero */
      s[p] = filled[p] * base + (wide && filled[p] ? rand() % 2 : 0);
    }
    cdf_hull h;
    CHECK(cdf_hull_init(&h, npos, wide), "hull tree: out of memory");
    cdf_hull_build(&h, w, s);
    for (int round = 0; round < 30; round++) {
      int64_t ng = cdf_hull_vertices(&h, got);
      int nw = brute_hull(npos, w, s, want);
      int same = ng == nw;
      for (int v = 0; same && v < nw; v++) same = got[v] == want[v];
      CHECK(same, "hull tree: trial %d (wide %d) round %d npos %d: %d vertices, want %d", trial,
            wide, round, npos, (int)ng, nw);
      if (same) { /* every block's sums, exact */
        cdf_hull_blocks(&h, got + 1, ng - 1, bw, bs);
        int sums_ok = 1;
        for (int b = 0; b + 1 < nw; b++) {
          idr_units sw = 0, ss = 0;
          for (int p = want[b] + 1; p <= want[b + 1]; p++) {
            sw += w[p];
            ss += s[p];
          }
          sums_ok &= sw == bw[b] && ss == bs[b];
        }
        CHECK(sums_ok, "hull tree: trial %d round %d: block sums differ", trial, round);
      }
      /* raise a few counts, or about half of them */
      int m = 0;
      for (int p = 0; p < npos; p++)
        if (filled[p] < steps[p] && rand() % (round % 4 ? npos : 2) == 0) {
          filled[p]++;
          s[p] += base;
          changed[m++] = p;
        }
      cdf_hull_update(&h, changed, m, s);
    }
    cdf_hull_free(&h);
    free(w); free(s); free(bw); free(bs); free(got); free(want); free(changed); free(steps);
    free(filled);
  }
}

static void test_fit(void) {
  const int sizes[][3] = {{1, 1, 1}, {5, 5, 5}, {40, 10, 7}, {300, 300, 300}, {900, 60, 700},
                          {1500, 150, 100}, {2000, 2000, 1200}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int n = sizes[s][0], npos = sizes[s][1], nthr = sizes[s][2];
    int32_t *pos = malloc(n * sizeof *pos), *thr = malloc(n * sizeof *thr);
    double *w = malloc(n * sizeof *w);
    double *ref = malloc((size_t)npos * nthr * sizeof *ref), *got = malloc((size_t)npos * nthr * sizeof *got);
    for (int kind = 0; kind < 10; kind++) {
      int weighted = kind % 5, dependent = kind < 5;
      make_data(n, npos, nthr, weighted, dependent, pos, thr, w);
      reference(n, pos, thr, w, npos, nthr, ref);
      for (int threads = 1; threads <= 2; threads++) {
        gpuiso_opts o = options(1, threads);
        gpuiso_cdf_runs r;
        gpuiso_error e;
        gpuiso_status st = gpuiso_idr_fit(n, pos, thr, weighted ? w : NULL, npos, nthr, &o, &r, &e);
        CHECK(st == GPUISO_OK, "idr fit n %d status %d", n, (int)st);
        if (st != GPUISO_OK) continue;
        int32_t *qpos = malloc(npos * sizeof *qpos);
        double *lam = calloc(npos, sizeof *lam);
        int64_t *k = malloc(nthr * sizeof *k);
        for (int p = 0; p < npos; p++) qpos[p] = p;
        for (int j = 0; j < nthr; j++) k[j] = j;
        gpuiso_cdf_query q = {npos, qpos, lam};
        gpuiso_cdf_eval(&r, &q, nthr, k, 0, &o, got, NULL);
        double dev = 0;
        int monotone = 1, equal_runs = 1;
        for (int64_t c = 0; c < (int64_t)npos * nthr; c++) {
          double d = fabs(got[c] - ref[c]);
          if (d > dev) dev = d;
          if (c >= npos && got[c] < got[c - npos]) monotone = 0;
        }
        for (int j = 0; j < nthr; j++)
          for (int64_t a = r.offset[j] + 1; a < r.offset[j + 1]; a++)
            if (r.value[a] >= r.value[a - 1]) equal_runs = 0;
        CHECK(dev <= 1e-12, "idr n %d npos %d nthr %d weighted %d dependent %d threads %d: deviation %g",
              n, npos, nthr, weighted, dependent, threads, dev);
        CHECK(monotone, "idr n %d: a CDF decreases in t", n);
        CHECK(equal_runs, "idr n %d: runs of a threshold are not strictly decreasing", n);
        CHECK(got[(size_t)(nthr - 1) * npos] == 1.0, "idr n %d: last threshold is not 1", n);
        free(qpos); free(lam); free(k);
        gpuiso_cdf_runs_free(&r);
      }
    }
    free(pos); free(thr); free(w); free(ref); free(got);
  }
}

/* Levels a few units in the last place apart: each position holds weight 1 + i 2^-52 below
 * the first threshold and 1 + j 2^-52 above, so that the exact levels, which the hull engine
 * pools by, fall strictly while their doubles tie or turn. The runs must still fall strictly
 * and stay within rounding of the per-threshold PAV. */
static void test_fit_close_levels(void) {
  enum { NPOS = 8, N = 2 * NPOS };
  int32_t pos[N], thr[N];
  double w[N], ref[2 * NPOS], got[2 * NPOS];
  int falling = 1;
  double dev = 0;
  for (int trial = 0; trial < 2000; trial++) {
    for (int p = 0; p < NPOS; p++) {
      pos[2 * p] = pos[2 * p + 1] = p;
      thr[2 * p] = 0;
      thr[2 * p + 1] = 1;
      w[2 * p] = 1 + ldexp(rand() % 64, -52);
      w[2 * p + 1] = 1 + ldexp(rand() % 64, -52);
    }
    reference(N, pos, thr, w, NPOS, 2, ref);
    gpuiso_opts o = options(1, 1);
    gpuiso_cdf_runs r;
    if (gpuiso_idr_fit(N, pos, thr, w, NPOS, 2, &o, &r, NULL) != GPUISO_OK) {
      CHECK(0, "idr fit of close levels");
      continue;
    }
    for (int64_t a = 1; a < r.offset[1]; a++) falling &= r.value[a] < r.value[a - 1];
    for (int p = 0; p < NPOS; p++) {
      got[p] = cdf_value(&r, 0, p);
      dev = fmax(dev, fabs(got[p] - ref[p]));
    }
    gpuiso_cdf_runs_free(&r);
  }
  CHECK(falling, "idr with close levels: runs of a threshold do not fall strictly");
  CHECK(dev <= 0x1p-50, "idr with close levels: deviation %g from PAV", dev);
}

/* Integer weights whose total lies just under and just over the narrow coordinates' limit
 * (IDR_NARROW_MAX units): the largest coordinates either instance of the tree takes. */
static void test_fit_unit_limits(void) {
  enum { N = 700, NPOS = 300, NTHR = 250 };
  int32_t pos[N], thr[N];
  double w[N];
  double *ref = malloc((size_t)NPOS * NTHR * sizeof *ref);
  for (int side = 0; side < 2; side++) {
    make_data(N, NPOS, NTHR, 0, side, pos, thr, w);
    /* odd weights (units of 1) totalling 0.9 of the limit, or 3 times it (past 32 bits) */
    double goal = (side ? 3.0 : 0.9) * IDR_NARROW_MAX, total = 0;
    for (int i = 0; i < N; i++) total += w[i] = 1 + 2 * floor(unif() * goal / N);
    reference(N, pos, thr, w, NPOS, NTHR, ref);
    gpuiso_opts o = options(1, 1);
    gpuiso_cdf_runs r;
    CHECK(gpuiso_idr_fit(N, pos, thr, w, NPOS, NTHR, &o, &r, NULL) == GPUISO_OK, "idr fit");
    double dev = 0;
    for (int k = 0; k < NTHR; k++)
      for (int p = 0; p < NPOS; p++) dev = fmax(dev, fabs(cdf_value(&r, k, p) - ref[k * NPOS + p]));
    CHECK(dev <= 1e-12, "idr with a weights' total of %g units: deviation %g", total, dev);
    gpuiso_cdf_runs_free(&r);
  }
  free(ref);
}

/* Weights scaled by powers of two fit the same CDFs bit for bit: the hull engine counts in units
 * of the weights' common power of two, whatever it is (quarters, and Exp(1) weights on wide
 * coordinates), and the scaled Exp(1) weights stay normal doubles. */
static void test_fit_scales(void) {
  enum { N = 600, NPOS = 150, NTHR = 200 };
  int32_t pos[N], thr[N];
  double w[N], scaled[N];
  for (int weighted = 1; weighted <= 3; weighted += 2) {
    make_data(N, NPOS, NTHR, weighted, 0, pos, thr, w);
    gpuiso_opts o = options(1, 1);
    gpuiso_cdf_runs base;
    CHECK(gpuiso_idr_fit(N, pos, thr, w, NPOS, NTHR, &o, &base, NULL) == GPUISO_OK, "idr fit");
    const int scale[] = {-300, 300, 600, -600, 1000, -1000};
    for (int s = 0; s < (weighted == 1 ? 6 : 4); s++) {
      for (int i = 0; i < N; i++) scaled[i] = ldexp(w[i], scale[s]);
      gpuiso_cdf_runs r;
      CHECK(gpuiso_idr_fit(N, pos, thr, scaled, NPOS, NTHR, &o, &r, NULL) == GPUISO_OK, "idr fit");
      int same = memcmp(r.offset, base.offset, (NTHR + 1) * sizeof *r.offset) == 0;
      int64_t runs = base.offset[NTHR];
      same = same && memcmp(r.start, base.start, runs * sizeof *r.start) == 0 &&
             memcmp(r.value, base.value, runs * sizeof *r.value) == 0;
      CHECK(same, "idr with weights (kind %d) scaled by 2^%d: CDFs differ", weighted, scale[s]);
      gpuiso_cdf_runs_free(&r);
    }
    gpuiso_cdf_runs_free(&base);
  }
}

/* Values, quantiles and CRPS of nq interpolated queries on dense CDFs (gpuiso_cdf_runs_dense):
 * few queries look values up, many are swept over the thresholds. */
static void test_queries(int NQ) {
  enum { NR = 50, M = 9 };
  double cdf[NR * M], thr[M];
  for (int j = 0; j < M; j++) thr[j] = j * j * 0.5 - 3;
  for (int i = 0; i < NR; i++) { /* non-decreasing in j, reaching 1 */
    double v = 0;
    for (int j = 0; j < M; j++) {
      v += (j == M - 1) ? 1 - v : (1 - v) * unif() * 0.5;
      cdf[i + j * NR] = (j == M - 1) ? 1.0 : v;
    }
  }
  cdf[0 + 1 * NR] = cdf[0 + 0 * NR]; /* a flat step */
  for (int i = 1; i < NR; i += 2) cdf[i] = cdf[i + NR] = 0; /* zero up to the third threshold */
  gpuiso_cdf_runs r;
  CHECK(gpuiso_cdf_runs_dense(NR, M, cdf, &r, NULL) == GPUISO_OK, "dense runs");
  int32_t *qpos = malloc(NQ * sizeof *qpos);
  double *lam = malloc(NQ * sizeof *lam), *y = malloc(NQ * sizeof *y);
  for (int i = 0; i < NQ; i++) {
    qpos[i] = rand() % (NR - 1);
    lam[i] = (i % 3 == 0) ? 0 : unif();
    y[i] = -5 + 40 * unif();
  }
  gpuiso_cdf_query q = {NQ, qpos, lam};
  gpuiso_opts o = options(1, 1);
  int64_t k[M + 1];
  double *got = malloc((size_t)NQ * (M + 1) * sizeof *got);
  for (int j = 0; j <= M; j++) k[j] = j - 1;
  gpuiso_cdf_eval(&r, &q, M + 1, k, 0, &o, got, NULL);
  double levels[4] = {0, 0.3, 0.77, 1};
  int64_t *kq = malloc((size_t)NQ * 4 * sizeof *kq);
  gpuiso_cdf_quantile(&r, &q, 4, levels, &o, kq, NULL);
  double *crps = malloc(NQ * sizeof *crps);
  gpuiso_cdf_crps(&r, thr, &q, y, &o, NULL, crps, NULL);
  for (int i = 0; i < NQ; i++) {
    double f[M];
    for (int j = 0; j < M; j++) {
      double a = cdf[qpos[i] + j * NR], b = cdf[qpos[i] + 1 + j * NR];
      f[j] = a + lam[i] * (b - a);
      CHECK(fabs(got[i + (j + 1) * NQ] - f[j]) <= 1e-15, "value of query %d at %d", i, j);
    }
    CHECK(got[i] == 0, "query %d below the first threshold", i);
    for (int l = 0; l < 4; l++) {
      int want = 0;
      while (want < M - 1 && (levels[l] > 0 ? f[want] < levels[l] : f[want] <= 0)) want++; /* 0: F > 0 */
      CHECK(kq[i + l * NQ] == want, "quantile %g of query %d: %lld, not %d", levels[l], i,
            (long long)kq[i + l * NQ], want);
    }
    /* CRPS by the masses of the step CDF (another formula than the package's integral) */
    double s = 0, prev = 0;
    for (int j = 0; j < M; j++) {
      double mass = f[j] - prev;
      s += 2 * mass * ((y[i] < thr[j]) - f[j] + mass / 2) * (thr[j] - y[i]);
      prev = f[j];
    }
    CHECK(fabs(crps[i] - s) <= 1e-12 * (1 + fabs(s)), "crps of query %d: %g, not %g", i, crps[i], s);
  }
  gpuiso_cdf_runs_free(&r);
  free(qpos); free(lam); free(y); free(got); free(kq); free(crps);
}

/* A progress report's fractions: how many, the last, and whether they never fell. */
typedef struct {
  int calls, rising;
  double last;
} progress_seen;

static int see_progress(void *ctx, double done) {
  progress_seen *p = ctx;
  if (p->calls++ > 0 && done < p->last) p->rising = 0;
  p->last = done;
  return 0;
}

/* CRPS over thresholds that span more than the largest double, with a finite exact value, by
 * the look-up (one query) and by the sweep (many queries), each reporting its progress. */
static void test_crps_wide(void) {
  enum { NQ = 400 };
  double cdf[2] = {0.5, 1}, thr[2] = {-1e308, 1e308};
  gpuiso_cdf_runs r;
  CHECK(gpuiso_cdf_runs_dense(1, 2, cdf, &r, NULL) == GPUISO_OK, "dense runs");
  int32_t pos[NQ];
  double lam[NQ], y[NQ], out[NQ];
  for (int i = 0; i < NQ; i++) pos[i] = 0, lam[i] = 0, y[i] = i % 2 ? 1e308 : -1e308;
  gpuiso_opts o = options(1, 1);
  for (int64_t n = 1; n <= NQ; n += NQ - 1) {
    gpuiso_cdf_query q = {n, pos, lam};
    progress_seen seen = {0, 1, 0.0};
    gpuiso_progress progress = {see_progress, &seen};
    gpuiso_cdf_crps(&r, thr, &q, y, &o, &progress, out, NULL);
    for (int64_t i = 0; i < n; i++) /* 0.25 over the 2e308 between the thresholds */
      CHECK(out[i] == 5e307, "crps of %lld queries: %g, not 5e307", (long long)n, out[i]);
    CHECK(seen.calls > 0 && seen.rising && seen.last == 1.0,
          "crps of %lld queries: progress reported %d times, last %g", (long long)n, seen.calls,
          seen.last);
  }
  gpuiso_cdf_runs_free(&r);
}

/* A report asking to stop ends the CRPS as an interrupt does, by the look-up (few queries) and
 * by the sweep (many), each in several rounds here: many thresholds and positions. */
static void test_crps_stop(void) {
  enum { NTHR = 3000, NPOS = 1000000, NQ = 30000 };
  int64_t *offset = malloc((NTHR + 1) * sizeof *offset);
  int32_t *start = calloc(NTHR, sizeof *start), *pos = malloc(NQ * sizeof *pos);
  double *value = malloc(NTHR * sizeof *value), *thr = malloc(NTHR * sizeof *thr);
  double *lam = calloc(NQ, sizeof *lam), *y = malloc(NQ * sizeof *y), *out = malloc(NQ * sizeof *out);
  for (int k = 0; k <= NTHR; k++) offset[k] = k; /* one run a threshold */
  for (int k = 0; k < NTHR; k++) value[k] = (k + 1.0) / NTHR, thr[k] = k;
  for (int i = 0; i < NQ; i++) pos[i] = i % NPOS, y[i] = i % NTHR;
  gpuiso_cdf_runs r = {NTHR, NPOS, offset, start, value};
  gpuiso_opts o = options(1, 1);
  const int64_t counts[] = {5000, NQ};
  for (int c = 0; c < 2; c++) {
    gpuiso_cdf_query q = {counts[c], pos, lam};
    int stops = 0;
    gpuiso_progress stop = {stop_progress, &stops};
    gpuiso_error e;
    gpuiso_status st = gpuiso_cdf_crps(&r, thr, &q, y, &o, &stop, out, &e);
    CHECK(st == GPUISO_E_INTERRUPT && e.status == st && stops == 1,
          "crps of %lld queries with a report asking to stop: status %d, %d reports",
          (long long)counts[c], (int)st, stops);
  }
  free(offset); free(start); free(pos); free(value); free(thr); free(lam); free(y); free(out);
}

/* ---- Several covariates (posets) ---- */

/* The value of runs r at threshold k and position p, by a walk over the threshold's runs. */
static double cdf_value(const gpuiso_cdf_runs *r, int k, int p) {
  int64_t j = r->offset[k];
  while (j + 1 < r->offset[k + 1] && r->start[j + 1] <= p) j++;
  return r->value[j];
}

/* npos distinct points of the grid {0..L-1}^d, in lexicographic order (a random subset of the
 * grid enumerated in that order), column-major npos x d. Returns npos. */
/* Whether two fits of nthr thresholds hold the same runs. */
static int same_runs(const gpuiso_cdf_runs *a, const gpuiso_cdf_runs *b, int64_t nthr) {
  int same = a->offset[nthr] == b->offset[nthr];
  for (int64_t j = 0; same && j < a->offset[nthr]; j++)
    same = a->start[j] == b->start[j] && a->value[j] == b->value[j];
  return same;
}

static int grid_points(int d, int L, int want, double *x) {
  int total = 1;
  for (int j = 0; j < d; j++) total *= L;
  int npos = 0;
  for (int c = 0; c < total; c++) {
    int left = total - c;
    if (rand() % left >= want - npos) continue; /* keep want of total, uniformly */
    int code = c;
    for (int j = d - 1; j >= 0; j--) {
      x[npos + j * want] = code % L;
      code /= L;
    }
    npos++;
  }
  /* columns were laid out with stride want; compact to stride npos */
  for (int j = 1; j < d; j++) memmove(x + j * npos, x + j * want, (size_t)npos * sizeof *x);
  return npos;
}

static int leq_pt(const double *x, int npos, int d, int p, int q) {
  for (int j = 0; j < d; j++)
    if (x[p + j * npos] > x[q + j * npos]) return 0;
  return 1;
}

/* The transitive reduction against brute force, by up-set bit rows (rows of one to several
 * words) and by comparisons with the covers found (no bytes for rows). */
static void test_poset_reduce(void) {
  for (int rep = 0; rep < 16; rep++) {
    int d = 1 + rep % 3, L = d == 1 ? 30 : (d == 2 ? 8 : 4), want = d == 1 ? 20 : 40;
    if (rep >= 12) d = 2 + rep % 2, L = d == 2 ? 40 : 9, want = rep < 14 ? 150 : 300;
    double *x = malloc((size_t)want * d * sizeof *x);
    int npos = grid_points(d, L, want, x);
    gpuiso_opts o = options(1, 1 + rep % 2);
    for (int rows = 0; rows <= 1; rows++) {
      gpuiso_poset g;
      CHECK(poset_reduce_within(npos, d, x, &o, rows ? POSET_BITS_MAX : 0, &g, NULL) == GPUISO_OK, "reduce failed");
      int bad = 0;
      for (int p = 0; p < npos; p++) {
        for (int q = 0; q < npos; q++) {
          int cover = p != q && leq_pt(x, npos, d, p, q);
          for (int r = 0; cover && r < npos; r++)
            if (r != p && r != q && leq_pt(x, npos, d, p, r) && leq_pt(x, npos, d, r, q)) cover = 0;
          int listed = 0;
          for (int64_t e = g.first[p]; e < g.first[p + 1]; e++) listed += g.cover[e] == q;
          if (listed != cover) bad++;
        }
        for (int64_t e = g.first[p] + 1; e < g.first[p + 1]; e++) bad += g.cover[e - 1] >= g.cover[e];
      }
      CHECK(bad == 0, "transitive reduction differs from brute force in %d pairs (d = %d, %d points, %s)", bad, d,
            npos, rows ? "bit rows" : "comparisons");
      gpuiso_poset_free(&g);
    }
    free(x);
  }
}

/* Largest violation of the KKT conditions of the antitonic fit f of z (weights W) on a poset of
 * npos <= 16 points: residual sums on level sets, and on every lower set (all subsets tried). */
static double kkt_violation(const double *x, int npos, int d, const double *z, const double *W,
                            const double *f) {
  double worst = 0;
  for (int p = 0; p < npos; p++) {
    double level = 0;
    for (int q = 0; q < npos; q++) level += f[q] == f[p] ? W[q] * (z[q] - f[q]) : 0;
    if (fabs(level) > worst) worst = fabs(level);
    for (int q = 0; q < npos; q++)
      if (leq_pt(x, npos, d, p, q) && f[p] < f[q] && f[q] - f[p] > worst) worst = f[q] - f[p];
  }
  for (long set = 1; set < (1L << npos); set++) {
    int closed = 1;
    for (int q = 0; closed && q < npos; q++) {
      if (!(set >> q & 1)) continue;
      for (int p = 0; closed && p < npos; p++)
        if (!(set >> p & 1) && leq_pt(x, npos, d, p, q)) closed = 0;
    }
    if (!closed) continue;
    double r = 0;
    for (int q = 0; q < npos; q++) if (set >> q & 1) r += W[q] * (z[q] - f[q]);
    if (r > worst) worst = r;
  }
  return worst;
}

static void test_poset_antitonic(void) {
  for (int rep = 0; rep < 30; rep++) {
    int d = 2 + rep % 2, want = 9 + rep % 6;
    double x[64], z[16], W[16], f[16];
    int npos = grid_points(d, d == 2 ? 5 : 3, want, x);
    for (int p = 0; p < npos; p++) {
      W[p] = rep % 3 ? 1 + rand() % 4 : 0.25 + 3 * unif();
      z[p] = rep % 3 && rep % 2 ? (rand() % ((int)W[p] + 1) + 0.0) / (int)W[p] : unif();
    }
    gpuiso_poset g;
    gpuiso_opts o = options(0, 1);
    double sum[16];
    for (int p = 0; p < npos; p++) sum[p] = z[p] * W[p];
    CHECK(gpuiso_poset_reduce(npos, d, x, &o, &g, NULL) == GPUISO_OK, "reduce failed");
    CHECK(gpuiso_poset_antitonic(&g, sum, W, &o, f, NULL) == GPUISO_OK, "solve failed");
    double v = kkt_violation(x, npos, d, z, W, f);
    CHECK(v < 1e-12, "KKT violated by %g (rep %d, %d points)", v, rep, npos);
    gpuiso_poset_free(&g);
  }
  /* weights from 1e-5 to 4e5 (a review's case): points 1 and 7, light, with y = 1, fit 1
   * exactly; their genuine excess in the flow is below the block's rounding of its gains, and a
   * cut that took such excess for none left them at 0.9999971 */
  {
    double x[27] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 1, 0, 1, 0, 0, 3, 4, 0, 2, 0, 1, 2, 0, 2, 4, 0, 0, 4};
    double W[9] = {0x1.bcad50008392cp-2, 0x1.199d619d840adp-15, 0x1.367f4a37d7823p+0,
                   0x1.2d1da8a406e21p+1, 0x1.d9aaaa0884aa7p-10, 0x1.d16bc924822cap+14,
                   0x1.5e839641bc057p+2, 0x1.da78ddf5537ebp-17, 0x1.7e31a79704c4dp+18};
    double sum[9], f[9];
    for (int p = 0; p < 9; p++) sum[p] = p == 2 || p == 4 || p == 6 ? 0 : W[p];
    gpuiso_poset g;
    gpuiso_opts o = options(0, 1);
    CHECK(gpuiso_poset_reduce(9, 3, x, &o, &g, NULL) == GPUISO_OK, "reduce failed");
    CHECK(gpuiso_poset_antitonic(&g, sum, W, &o, f, NULL) == GPUISO_OK, "solve failed");
    CHECK(f[1] == 1 && f[7] == 1, "light points fit %.17g and %.17g, not 1", f[1], f[7]);
    gpuiso_poset_free(&g);
  }
  /* an antichain, the points (i, -i): each point's fit is its own mean, light ones (1e-7 beside
   * 1e7) too; a split's rounding judged by the whole block's terms, not the set's, kept light
   * points in blocks of heavy ones (0.014 off) */
  for (int rep = 0; rep < 20; rep++) {
    int n = 9 + rep;
    double x[2 * 28], W[28], sum[28], f[28], worst = 0;
    for (int p = 0; p < n; p++) {
      x[p] = p, x[p + n] = -p;
      W[p] = rand() % 2 ? 1e7 : 1e-7;
      sum[p] = W[p] * unif();
    }
    gpuiso_poset g;
    gpuiso_opts o = options(0, 1);
    CHECK(gpuiso_poset_reduce(n, 2, x, &o, &g, NULL) == GPUISO_OK && g.first[n] == 0,
          "an antichain has covers");
    gpuiso_poset_antitonic(&g, sum, W, &o, f, NULL);
    for (int p = 0; p < n; p++) worst = fmax(worst, fabs(f[p] - sum[p] / W[p]));
    CHECK(worst < 1e-12, "antichain fit differs from the points' means by %g (%d points)", worst, n);
    gpuiso_poset_free(&g);
  }
  /* chains: the points (i, i) are totally ordered, so the fit is antitonic PAV; weights near 1,
   * and weights of 1e5 and 1e-5 with y of 0.1 and 0.3 */
  for (int wide = 0; wide <= 1; wide++) {
    int n = wide ? 63 : 500;
    double *x = malloc(2 * n * sizeof *x), *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
    double *sum = malloc(n * sizeof *sum), *f = malloc(n * sizeof *f), *ref = malloc(n * sizeof *ref);
    for (int i = 0; i < n; i++) {
      x[i] = x[i + n] = i;
      y[i] = wide ? (rand() % 2 ? 0.1 : 0.3) : unif() - 0.001 * i;
      w[i] = wide ? (rand() % 2 ? 1e5 : 1e-5) : 0.5 + unif();
      sum[i] = y[i] * w[i];
    }
    gpuiso_poset g;
    gpuiso_opts o = options(0, 1);
    int64_t nb;
    gpuiso_poset_reduce(n, 2, x, &o, &g, NULL);
    CHECK(g.first[n] == n - 1, "a chain of %d points has %lld covers", n, (long long)g.first[n]);
    gpuiso_poset_antitonic(&g, sum, w, &o, f, NULL);
    gpuiso_pav(n, y, w, &o, ref, NULL, &nb, NULL);
    double diff = 0;
    for (int i = 0; i < n; i++) diff = fmax(diff, fabs(f[i] - ref[i]) / (1 + fabs(ref[i])));
    CHECK(diff < 1e-12, "chain fit differs from PAV by %g (weights %s)", diff, wide ? "1e+-5" : "near 1");
    gpuiso_poset_free(&g);
    free(x); free(y); free(w); free(sum); free(f); free(ref);
  }
}

/* IDR on a poset against one gpuiso_poset_antitonic per threshold (each threshold is fitted
 * between two others, their fits as bounds: this checks that path against fits without bounds),
 * on 1, 2, 3 and 8 threads (the same runs: other slices, so other bounds; 8 slices on fewer cores
 * take intervals from one another, whose fits must be the same too), stored at a shuffled slot
 * order; and with a constant second coordinate against the one-covariate fit. weighted: 0 none,
 * 1 multiples of 1/4, 2 continuous. */
static void test_poset_fit(int d, int n, int want, int nthr) {
  for (int weighted = 0; weighted < 3; weighted++) {
    double *x = malloc(want * d * sizeof *x);
    int npos = grid_points(d, d == 2 ? 15 : 7, want, x);
    int32_t *pos = malloc(n * sizeof *pos), *thr = malloc(n * sizeof *thr), *slot = malloc(npos * sizeof *slot);
    double *w = malloc(n * sizeof *w);
    for (int i = 0; i < n; i++) {
      pos[i] = i < npos ? i : rand() % npos;
      double u = 0.5 * unif() + 0.25 * (x[pos[i]] + x[pos[i] + npos]) / (d == 2 ? 14 : 6);
      thr[i] = i < nthr ? i : (int32_t)(u * nthr);
      w[i] = weighted == 1 ? 0.25 * (1 + rand() % 8) : (weighted == 2 ? 0.1 + unif() : 1.0);
    }
    for (int p = 0; p < npos; p++) slot[p] = p;
    for (int p = npos - 1; p > 0; p--) { int j = rand() % (p + 1), t = slot[p]; slot[p] = slot[j]; slot[j] = t; }
    gpuiso_poset g;
    gpuiso_opts o1 = options(0, 1), o2 = options(0, 2), o3 = options(0, 3), o8 = options(0, 8);
    gpuiso_poset_reduce(npos, d, x, &o1, &g, NULL);
    gpuiso_cdf_runs r1, r2, r3, r8;
    CHECK(gpuiso_idr_poset_fit(&g, n, pos, thr, weighted ? w : NULL, nthr, slot, &o1, NULL, &r1, NULL) == GPUISO_OK, "fit failed");
    CHECK(gpuiso_idr_poset_fit(&g, n, pos, thr, weighted ? w : NULL, nthr, slot, &o2, NULL, &r2, NULL) == GPUISO_OK, "fit failed");
    CHECK(gpuiso_idr_poset_fit(&g, n, pos, thr, weighted ? w : NULL, nthr, slot, &o3, NULL, &r3, NULL) == GPUISO_OK, "fit failed");
    CHECK(gpuiso_idr_poset_fit(&g, n, pos, thr, weighted ? w : NULL, nthr, slot, &o8, NULL, &r8, NULL) == GPUISO_OK, "fit failed");
    double *W = calloc(npos, sizeof *W), *sum = malloc(npos * sizeof *sum), *f = malloc(npos * sizeof *f);
    for (int i = 0; i < n; i++) W[pos[i]] += w[i];
    double diff = 0, prev_bad = 0;
    int same = same_runs(&r1, &r2, nthr) && same_runs(&r1, &r3, nthr) && same_runs(&r1, &r8, nthr);
    for (int k = 0; k < nthr; k++) {
      memset(sum, 0, npos * sizeof *sum);
      for (int i = 0; i < n; i++) if (thr[i] <= k) sum[pos[i]] += w[i];
      gpuiso_poset_antitonic(&g, sum, W, &o1, f, NULL);
      for (int p = 0; p < npos; p++) {
        double got = cdf_value(&r1, k, slot[p]);
        diff = fmax(diff, fabs(got - f[p]));
        if (k > 0 && got < cdf_value(&r1, k - 1, slot[p])) prev_bad++;
      }
    }
    CHECK(diff < 1e-12, "poset IDR differs from per-threshold fits by %g (d %d, weighted %d)", diff, d, weighted);
    CHECK(prev_bad == 0, "poset IDR falls with the threshold at %g places", prev_bad);
    CHECK(same, "poset IDR differs between 1, 2, 3 and 8 threads (d %d, weighted %d)", d, weighted);
    gpuiso_cdf_runs_free(&r1);
    gpuiso_cdf_runs_free(&r2);
    gpuiso_cdf_runs_free(&r3);
    gpuiso_cdf_runs_free(&r8);
    gpuiso_poset_free(&g);
    if (d != 2) {
      free(x); free(pos); free(thr); free(slot); free(w); free(W); free(sum); free(f);
      continue;
    }
    /* one covariate with a constant second coordinate: the 1-D sweep */
    int np1 = 50;
    double *x1 = malloc(2 * np1 * sizeof *x1);
    int32_t *id = malloc(np1 * sizeof *id);
    for (int p = 0; p < np1; p++) { x1[p] = p; x1[p + np1] = 3; id[p] = p; }
    for (int i = 0; i < n; i++) pos[i] = i < np1 ? i : rand() % np1;
    gpuiso_poset_reduce(np1, 2, x1, &o1, &g, NULL);
    gpuiso_cdf_runs a, b;
    gpuiso_idr_poset_fit(&g, n, pos, thr, weighted ? w : NULL, nthr, id, &o2, NULL, &a, NULL);
    gpuiso_idr_fit(n, pos, thr, weighted ? w : NULL, np1, nthr, &o1, &b, NULL);
    diff = 0;
    for (int k = 0; k < nthr; k++)
      for (int p = 0; p < np1; p++) diff = fmax(diff, fabs(cdf_value(&a, k, p) - cdf_value(&b, k, p)));
    CHECK(diff < 1e-12, "poset IDR of one covariate differs from the sweep by %g", diff);
    gpuiso_cdf_runs_free(&a);
    gpuiso_cdf_runs_free(&b);
    gpuiso_poset_free(&g);
    free(x1); free(id); free(x); free(pos); free(thr); free(slot); free(w); free(W); free(sum); free(f);
  }
}

/* Predictions: bounds over all fitted points below and above (not only the nearest). */
static void test_poset_predict(void) {
  int want = 60, d = 2, nthr = 20, m = 40;
  double *x = malloc(want * d * sizeof *x);
  int npos = grid_points(d, 10, want, x);
  int32_t *slot = malloc(npos * sizeof *slot);
  for (int p = 0; p < npos; p++) slot[p] = npos - 1 - p;
  double *dense = malloc((size_t)npos * nthr * sizeof *dense), clim[20];
  /* antitonic in the order and rising in k: a function of the coordinates' sum */
  for (int k = 0; k < nthr; k++) {
    clim[k] = (k + 1.0) / nthr;
    for (int p = 0; p < npos; p++) {
      double s = x[p] + x[p + npos];
      dense[slot[p] + (size_t)k * npos] = k == nthr - 1 ? 1 : fmin(1, (k + 1.0) / (1 + s) / 4);
    }
  }
  gpuiso_cdf_runs fit, out;
  gpuiso_cdf_runs_dense(npos, nthr, dense, &fit, NULL);
  double *xnew = malloc(m * d * sizeof *xnew), *lambda = malloc(m * sizeof *lambda);
  for (int i = 0; i < m; i++) { xnew[i] = rand() % 13 - 1.5; xnew[i + m] = rand() % 13 - 1.5; }
  gpuiso_opts o = options(0, 2);
  CHECK(gpuiso_idr_poset_predict(&fit, d, x, slot, m, xnew, clim, &o, &out, lambda, NULL) == GPUISO_OK, "predict failed");
  int bad = 0;
  for (int i = 0; i < m; i++) {
    int nb = 0, na = 0;
    for (int k = 0; k < nthr; k++) {
      double up = 1, lo = 0;
      nb = na = 0;
      for (int p = 0; p < npos; p++) {
        double v = dense[slot[p] + (size_t)k * npos];
        if (x[p] <= xnew[i] && x[p + npos] <= xnew[i + m]) { nb++; up = fmin(up, v); }
        if (x[p] >= xnew[i] && x[p + npos] >= xnew[i + m]) { na++; lo = fmax(lo, v); }
      }
      if (!nb && !na) up = lo = clim[k];
      if (cdf_value(&out, k, 2 * i) != up || cdf_value(&out, k, 2 * i + 1) != lo) bad++;
    }
    double want_lambda = nb && na ? 0.5 : (na ? 1 : 0);
    if (lambda[i] != want_lambda) bad++;
  }
  CHECK(bad == 0, "poset predictions differ from brute force in %d places", bad);
  gpuiso_cdf_runs_free(&fit);
  gpuiso_cdf_runs_free(&out);
  free(x); free(slot); free(dense); free(xnew); free(lambda);
}

/* Interrupts and progress of the poset fit: rounds end in polls; a stop at any poll returns
 * GPUISO_E_INTERRUPT with the output freed; progress rises within (0, 1). */
static int poll_count(void *ctx) {
  int *left = ctx;
  return (*left)-- == 0;
}
static int record_progress(void *ctx, double done) {
  double *last = ctx;
  if (!(done > last[0] && done < 1)) last[1] = 1; /* a fraction out of order */
  last[0] = done;
  return 0;
}

/* A report that asks to stop, as R's does when the user interrupts it. */
static int stop_progress(void *ctx, double done) {
  (void)done;
  ++*(int *)ctx;
  return 1;
}
/* npos points on a line, one observation each, point p's at threshold p nthr / npos (y rises
 * with x: two cuts a threshold), for the interrupt tests. */
typedef struct {
  int npos, nthr;
  int32_t *pos, *thr, *slot;
  gpuiso_poset g;
} chain_data;

static chain_data chain_make(int npos, int nthr, const gpuiso_opts *o) {
  chain_data c = {npos, nthr, malloc(npos * sizeof(int32_t)), malloc(npos * sizeof(int32_t)),
                  malloc(npos * sizeof(int32_t)), {0}};
  double *x = malloc(npos * sizeof *x);
  for (int p = 0; p < npos; p++) {
    x[p] = p;
    c.pos[p] = p;
    c.slot[p] = p;
    c.thr[p] = (int32_t)((int64_t)p * nthr / npos);
  }
  gpuiso_poset_reduce(npos, 1, x, o, &c.g, NULL);
  free(x);
  return c;
}

static void chain_free(chain_data *c) {
  gpuiso_poset_free(&c->g);
  free(c->pos); free(c->thr); free(c->slot);
}

static gpuiso_status chain_fit(const chain_data *c, const gpuiso_opts *o, const gpuiso_progress *pr,
                               gpuiso_cdf_runs *r, gpuiso_error *e) {
  return gpuiso_idr_poset_fit(&c->g, c->npos, c->pos, c->thr, NULL, c->nthr, c->slot, o, pr, r, e);
}

/* The chain's fit with an interrupt at poll `stop` (0 the first). */
static gpuiso_status chain_fit_stopped(const chain_data *c, gpuiso_opts o, int stop, gpuiso_cdf_runs *r,
                                       gpuiso_error *e) {
  int left = stop;
  gpuiso_interrupt at = {poll_count, &left};
  o.interrupt = &at;
  return chain_fit(c, &o, NULL, r, e);
}

static void test_poset_interrupt(void) {
  gpuiso_opts o = options(0, 1);
  chain_data c = chain_make(20000, 40, &o);
  int nthr = c.nthr;
  int never = -1;
  gpuiso_interrupt counter = {poll_count, &never};
  o.interrupt = &counter;
  double last[2] = {0, 0};
  gpuiso_progress pr = {record_progress, last};
  gpuiso_cdf_runs r;
  CHECK(chain_fit(&c, &o, &pr, &r, NULL) == GPUISO_OK, "fit failed");
  int polls = -1 - never;
  CHECK(polls >= 2, "only %d polls in a fit of %d thresholds", polls, nthr);
  CHECK(last[1] == 0 && last[0] > 0, "progress out of order or never reported");
  gpuiso_cdf_runs_free(&r);
  int stops = 0;
  gpuiso_progress stop = {stop_progress, &stops};
  CHECK(chain_fit(&c, &o, &stop, &r, NULL) == GPUISO_E_INTERRUPT && stops == 1 && r.offset == NULL,
        "a report asking to stop: %d reports", stops);
  for (int stop = 0; stop < polls; stop++) {
    gpuiso_error e;
    gpuiso_status st = chain_fit_stopped(&c, o, stop, &r, &e);
    CHECK(st == GPUISO_E_INTERRUPT && e.status == st && r.offset == NULL && r.start == NULL,
          "interrupt at poll %d of %d: status %d", stop, polls, (int)st);
  }
  chain_free(&c);
}

/* The poset fit on 8 threads, whose slices take one another's thresholds: a stop at a poll
 * returns GPUISO_E_INTERRUPT with the output freed (how many rounds the fit takes depends on
 * the threads' timing, so a later stop may find it done). And from inside a parallel region,
 * where its team has one thread for its 8 slices, rounds still end in polls (the thread goes on
 * to start the slices left rather than finish the fit in one round): 4 rounds of 16 steps. */
static void test_poset_interrupt_threads(void) {
  gpuiso_opts o = options(0, 8);
  chain_data c = chain_make(2000, 400, &o);
  int never = -1;
  gpuiso_interrupt counter = {poll_count, &never};
  o.interrupt = &counter;
  gpuiso_cdf_runs r, full;
  CHECK(chain_fit(&c, &o, NULL, &full, NULL) == GPUISO_OK, "fit failed");
  for (int stop = 0; stop < 4; stop++) {
    gpuiso_error e;
    gpuiso_status st = chain_fit_stopped(&c, o, stop, &r, &e);
    if (st == GPUISO_OK && stop > 0) { /* done before that poll: the same fit */
      CHECK(same_runs(&r, &full, c.nthr), "8 threads, a fit not stopped at poll %d differs", stop);
      gpuiso_cdf_runs_free(&r);
    } else {
      CHECK(st == GPUISO_E_INTERRUPT && e.status == st && r.offset == NULL && r.start == NULL,
            "8 threads, interrupt at poll %d: status %d", stop, (int)st);
    }
  }
  gpuiso_cdf_runs_free(&full);
#ifdef _OPENMP
  int polls = -1 - never;
  omp_set_max_active_levels(1); /* the default: a parallel region within one has one thread */
  int inner = 0;
  gpuiso_status st = GPUISO_OK;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    int left = -1;
    gpuiso_interrupt count = {poll_count, &left};
    o.interrupt = &count;
    st = chain_fit(&c, &o, NULL, &r, NULL);
    inner = -1 - left;
  }
  CHECK(st == GPUISO_OK, "fit failed inside a parallel region");
  if (st == GPUISO_OK) gpuiso_cdf_runs_free(&r);
  CHECK(inner == 4, "%d polls in a fit inside a parallel region (%d on a full team), not 4", inner, polls);
#endif
  chain_free(&c);
}

int main(void) {
  srand(20261129);
  test_crps_wide();
  test_crps_stop();
#ifdef IDR_UNITS_WIDE
  test_cross_sign();
#endif
  test_hull_tree();
  test_fit();
  test_fit_close_levels();
  test_fit_unit_limits();
  test_fit_scales();
  test_queries(3);
  test_queries(40);
  test_queries(400);
  test_poset_reduce();
  test_poset_antitonic();
  test_poset_fit(2, 400, 120, 60);
  test_poset_fit(3, 1500, 300, 200);
  test_poset_predict();
  test_poset_interrupt();
  test_poset_interrupt_threads();
  printf("ctest: %d passed, %d failed (idr)\n", passed, failed);
  return failed != 0;
}

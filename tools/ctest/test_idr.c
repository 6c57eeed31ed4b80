/* Standalone tests of IDR in the C core (no R): gpuiso_idr_fit against per-threshold antitonic
 * PAV (gpuiso_pav of the pooled indicator means), on one and two threads, and the evaluations of
 * gpuiso_cdf_runs (values, quantiles, CRPS) against direct computations on the dense CDFs.
 * Prints one line per failure and a closing "ctest: N passed, N failed (idr)". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuiso.h"

#include "check.h"

static double unif(void) { return (rand() + 0.5) / ((double)RAND_MAX + 1); }

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
 * i < nthr has threshold i; the rest are random. thr is skewed to follow pos, as IDR data do. */
static void make_data(int n, int npos, int nthr, int weighted, int32_t *pos, int32_t *thr, double *w) {
  for (int i = 0; i < n; i++) {
    pos[i] = i < npos ? i : rand() % npos;
    double u = 0.6 * unif() + 0.4 * (double)pos[i] / npos;
    thr[i] = i < nthr ? i : (int32_t)(u * nthr);
    w[i] = weighted ? 0.25 * (1 + rand() % 8) : 1.0;
  }
}

static void test_fit(void) {
  const int sizes[][3] = {{1, 1, 1}, {5, 5, 5}, {40, 10, 7}, {300, 300, 300}, {900, 60, 700},
                          {2000, 2000, 1200}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int n = sizes[s][0], npos = sizes[s][1], nthr = sizes[s][2];
    int32_t *pos = malloc(n * sizeof *pos), *thr = malloc(n * sizeof *thr);
    double *w = malloc(n * sizeof *w);
    double *ref = malloc((size_t)npos * nthr * sizeof *ref), *got = malloc((size_t)npos * nthr * sizeof *got);
    for (int weighted = 0; weighted < 2; weighted++) {
      make_data(n, npos, nthr, weighted, pos, thr, w);
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
        CHECK(dev <= 1e-12, "idr n %d npos %d nthr %d weighted %d threads %d: deviation %g", n, npos,
              nthr, weighted, threads, dev);
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
  gpuiso_cdf_crps(&r, thr, &q, y, &o, crps, NULL);
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
      while (want < M - 1 && f[want] < levels[l]) want++;
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

/* CRPS over thresholds that span more than the largest double, with a finite exact value, by
 * the look-up (one query) and by the sweep (many queries). */
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
    gpuiso_cdf_crps(&r, thr, &q, y, &o, out, NULL);
    for (int64_t i = 0; i < n; i++) /* 0.25 over the 2e308 between the thresholds */
      CHECK(out[i] == 5e307, "crps of %lld queries: %g, not 5e307", (long long)n, out[i]);
  }
  gpuiso_cdf_runs_free(&r);
}

int main(void) {
  srand(20261129);
  test_crps_wide();
  test_fit();
  test_queries(3);
  test_queries(40);
  test_queries(400);
  printf("ctest: %d passed, %d failed (idr)\n", passed, failed);
  return failed != 0;
}

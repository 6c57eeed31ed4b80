#include "families.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const family_names[FAM_COUNT] = {"noise", "increasing", "sawtooth", "cliff",
                                             "cancellation", "ulp", "collinear", "runs"};
const char *const weight_names[W_COUNT] = {"none", "uniform", "extreme", "zeros"};

/* splitmix64 of a counter: a stateless, parallel random stream. */
static uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform on (0, 1), the stream-th draw for element i. */
static double unif(uint64_t seed, int64_t i, int stream) {
  uint64_t u = mix(seed ^ mix((uint64_t)i * 8 + (uint64_t)stream));
  return ((double)(u >> 11) + 0.5) * 0x1p-53;
}

static double normal(uint64_t seed, int64_t i) {
  return sqrt(-2 * log(unif(seed, i, 0))) * cos(6.283185307179586 * unif(seed, i, 1));
}

/* Steps of 0.505 +- 0.49 from a draw per element: strictly increasing, yet a function of i alone,
 * so that a long row is made in parallel. */
static double rising(uint64_t seed, int64_t i, int64_t g) {
  return 0.505 * (double)i + 0.49 * unif(seed, g, 2);
}

/* Element i of a row of len (g: its index over all rows, for the random draws). */
static double value(family_kind f, uint64_t seed, int64_t row, int64_t i, int64_t g, int64_t len,
                    int single) {
  switch (f) {
  case FAM_NOISE: return (len > 1 ? 3.0 * i / (len - 1) : 0) + normal(seed, g);
  case FAM_INCREASING: return rising(seed, i, g);
  case FAM_SAWTOOTH: {
    int64_t p = 2 + (int64_t)(unif(seed, -1 - row, 3) * 63);
    return (double)(i % p) / p + 0.05 * normal(seed, g);
  }
  case FAM_CLIFF:
    if (i == len - 1 && len > 1) return -10.0 * len;
    return rising(seed, i, g);
  case FAM_CANCELLATION: {
    int64_t r = i % 64;
    return r < 32 ? 1e6 : (r == 32 ? -32e6 : 1e-3 * r + 1e-9 * unif(seed, g, 2));
  }
  case FAM_ULP: {
    if (single) {
      float one = 1.0f;
      uint32_t b;
      memcpy(&b, &one, sizeof b);
      b += (uint32_t)i;
      memcpy(&one, &b, sizeof b);
      return one;
    }
    double one = 1.0;
    uint64_t b;
    memcpy(&b, &one, sizeof b);
    b += (uint64_t)i;
    memcpy(&one, &b, sizeof b);
    return one;
  }
  case FAM_COLLINEAR: return 1 + 2.0 * i;
  default: return 1 + 1e-3 * (double)(i / 64);
  }
}

static double weight(weight_kind wk, uint64_t seed, int64_t i, int keep) {
  double u = unif(seed, i, 4);
  switch (wk) {
  case W_UNIFORM: return 0.01 + 0.99 * u;
  case W_EXTREME: return exp(16 * u - 8);
  case W_ZEROS: return !keep && unif(seed, i, 5) < 0.4 ? 0 : u;
  default: return 1;
  }
}

/* Element i of row r (from o, of len). */
static void gen_one(family_kind f, weight_kind wk, uint64_t seed, int single, int64_t r, int64_t o,
                    int64_t len, int64_t i, double *y, double *w) {
  double v = value(f, seed, r, i, o + i, len, single);
  y[o + i] = single ? (double)(float)v : v;
  if (wk != W_NONE) {
    double wi = weight(wk, seed, o + i, i == (len - 1) / 2);
    w[o + i] = single ? (double)(float)wi : wi;
  }
}

void gen_rows(family_kind f, weight_kind wk, int64_t nrows, const int64_t *offsets, uint64_t seed,
              int single, double *y, double *w) {
  if (nrows >= 64) { /* in parallel over rows */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16)
#endif
    for (int64_t r = 0; r < nrows; r++)
      for (int64_t i = 0; i < offsets[r + 1] - offsets[r]; i++)
        gen_one(f, wk, seed, single, r, offsets[r], offsets[r + 1] - offsets[r], i, y, w);
    return;
  }
  for (int64_t r = 0; r < nrows; r++) { /* a few long rows: over each row's elements */
    int64_t o = offsets[r], len = offsets[r + 1] - o;
#ifdef _OPENMP
#pragma omp parallel for
#endif
    for (int64_t i = 0; i < len; i++) gen_one(f, wk, seed, single, r, o, len, i, y, w);
  }
}

int64_t gen_ragged(int64_t n, int64_t max_len, uint64_t seed, int64_t cap, int64_t *offsets) {
  int64_t r = 0;
  offsets[0] = 0;
  while (r < cap && offsets[r] < n) {
    offsets[r + 1] = offsets[r] + (int64_t)(unif(seed, r, 6) * (max_len + 1));
    r++;
  }
  return r;
}

void gen_x_ties(int64_t n, uint64_t seed, double *x) {
  int64_t distinct = n / 4 > 0 ? n / 4 : 1;
#ifdef _OPENMP
#pragma omp parallel for
#endif
  for (int64_t i = 0; i < n; i++) x[i] = (double)(int64_t)(unif(seed, i, 7) * distinct) / 4;
}

/* Gamma(shape a >= 1) of element i, by Marsaglia and Tsang's rejection, a fresh stream per try. */
static double gamma_draw(double a, uint64_t seed, int64_t i) {
  double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
  for (uint64_t t = 0;; t++) {
    uint64_t s = mix(seed + t);
    double z = normal(s, i), v = 1 + c * z;
    if (v <= 0) continue;
    v = v * v * v;
    if (log(unif(s, i, 2)) < 0.5 * z * z + d - d * v + d * log(v)) return d * v;
  }
}

typedef struct {
  double v;
  int64_t i;
} ranked;

static int by_value(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  return (x->v > y->v) - (x->v < y->v);
}

/* The rank of each v among the distinct values; returns their count. */
static int64_t ranks(int64_t n, const double *v, int32_t *rank) {
  ranked *r = malloc((size_t)n * sizeof *r);
  for (int64_t i = 0; i < n; i++) r[i].v = v[i], r[i].i = i;
  qsort(r, (size_t)n, sizeof *r, by_value);
  int64_t k = -1;
  for (int64_t j = 0; j < n; j++) {
    if (j == 0 || r[j].v != r[j - 1].v) k++;
    rank[r[j].i] = (int32_t)k;
  }
  free(r);
  return k + 1;
}

void gen_idr(int64_t n, uint64_t seed, int ties, weight_kind wk, int32_t *pos, int32_t *thr,
             double *w, int64_t *npos, int64_t *nthr) {
  double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  for (int64_t i = 0; i < n; i++) {
    x[i] = unif(seed, i, 3);
    y[i] = gamma_draw(2 + 5 * x[i], seed, i);
    if (ties) x[i] = round(400 * x[i]) / 400, y[i] = round(16 * y[i]) / 16;
    if (wk != W_NONE) w[i] = weight(wk, seed, i, 1);
  }
  *npos = ranks(n, x, pos);
  *nthr = ranks(n, y, thr);
  free(x);
  free(y);
}

void gen_calibration(int64_t n, int64_t ngroups, uint64_t seed, int ties, weight_kind wk,
                     double *score, double *label, double *w, int *g) {
  double *cum = malloc((size_t)ngroups * sizeof *cum), total = 0;
  uint8_t *seen = calloc((size_t)ngroups, 1);
  for (int64_t k = 0; k < ngroups; k++) cum[k] = total += pow((double)(k + 1), -1.1);
  for (int64_t i = 0; i < n; i++) {
    double u = unif(seed, i, 0) * total;
    int64_t lo = 0, hi = ngroups - 1; /* the first group whose cumulative size passes u */
    while (lo < hi) {
      int64_t mid = (lo + hi) / 2;
      if (cum[mid] < u) lo = mid + 1; else hi = mid;
    }
    double s = unif(seed, i, 1);
    g[i] = (int)lo;
    score[i] = ties ? round(100 * s) / 100 : s;
    label[i] = unif(seed, i, 2) < 0.06 * s * (0.5 + (double)((lo + 1) % 3) / 2);
    if (wk != W_NONE) w[i] = weight(wk, seed, i, !seen[lo]);
    seen[lo] = 1;
  }
  free(cum);
  free(seen);
}

#include "families.h"

#include <math.h>
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

/* Element i of a row of len (g: its index over all rows, for the random draws). */
static double value(family_kind f, uint64_t seed, int64_t row, int64_t i, int64_t g, int64_t len,
                    int single, double *run) {
  switch (f) {
  case FAM_NOISE: return (len > 1 ? 3.0 * i / (len - 1) : 0) + normal(seed, g);
  case FAM_INCREASING: return *run += 0.01 + 0.99 * unif(seed, g, 2);
  case FAM_SAWTOOTH: {
    int64_t p = 2 + (int64_t)(unif(seed, -1 - row, 3) * 63);
    return (double)(i % p) / p + 0.05 * normal(seed, g);
  }
  case FAM_CLIFF:
    if (i == len - 1 && len > 1) return -10.0 * len;
    return *run += 0.01 + 0.99 * unif(seed, g, 2);
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

void gen_rows(family_kind f, weight_kind wk, int64_t nrows, const int64_t *offsets, uint64_t seed,
              int single, double *y, double *w) {
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
  for (int64_t r = 0; r < nrows; r++) {
    int64_t o = offsets[r], len = offsets[r + 1] - o;
    double run = 0;
    for (int64_t i = 0; i < len; i++) {
      double v = value(f, seed, r, i, o + i, len, single, &run);
      y[o + i] = single ? (double)(float)v : v;
      if (wk != W_NONE) {
        double wi = weight(wk, seed, o + i, i == (len - 1) / 2);
        w[o + i] = single ? (double)(float)wi : wi;
      }
    }
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

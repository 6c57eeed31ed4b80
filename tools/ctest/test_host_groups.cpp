/* A host batch through the device in groups of rows (src/cuda/host_fit.cuh: group_run), each on a
 * lane of its own with its transfers beside the kernels of the groups next to it, run on the SIMT
 * executor under three schedule seeds: the groups cut and their plans shared, the fits and block
 * flags bit for bit those of the batch in one plan (fit_slice_whole) and within 1e-12 of the CPU
 * hull engine, on the lane kernels' rows and on chunked rows, both kernels, both precisions,
 * weighted or not; the first failing row named across groups as in one plan; interrupts and
 * allocation failures, with nothing held after them. */
#define STAGE_SLICE ((size_t)100000) /* groups of about 6,000 to 12,000 elements */
#define STAGE_DIRECT ((size_t)0)     /* staged however small */

#include "batch.h"

/* The options of these tests: the kernel, chunks of 1024 where rows are chunked. */
static gpuiso_opts group_options(int increasing, gpuiso_gpu_kernel kernel) {
  gpuiso_opts o = options(increasing, 1024, 0);
  o.gpu_kernel = kernel;
  return o;
}

/* The groups of rows of these lengths, the capacity of a weighted float64 group. */
static int64_t groups_of(const int64_t *lens, int nrows, row_group *g, int64_t *nplans) {
  int64_t o[64];
  offsets_of(lens, nrows, o);
  return row_groups(nrows, o, group_buffer_of(STAGE_SLICE, sizeof(double), 1, 1).cap, g, nplans);
}

static void test_cut(void) {
  group_buffer gb = group_buffer_of(STAGE_SLICE, sizeof(double), 1, 1);
  int64_t cap = gb.cap, nplans;
  CHECK(cap % 8 == 0 && gb.word + sizeof(unsigned long long) <= STAGE_SLICE && gb.second == (size_t)cap * 8 &&
            gb.word == (size_t)cap * 16 && cap * 16 + 8 + 16 * 8 > (int64_t)STAGE_SLICE,
        "group buffer: %lld elements, second part at %zu, word at %zu", (long long)cap, gb.second, gb.word);
  group_buffer gs = group_buffer_of(STAGE_SLICE, sizeof(float), 0, 1);
  CHECK(gs.second == (size_t)gs.cap * 4 && gs.word == (size_t)gs.cap * 5 && gs.cap * 5 + 8 + 5 * 8 > (int64_t)STAGE_SLICE,
        "float group buffer with flags: %lld elements", (long long)gs.cap);
  row_group g[64];
  int64_t uniform[31];
  for (int r = 0; r < 31; r++) uniform[r] = 1000;
  int64_t k = groups_of(uniform, 31, g, &nplans), ok = cap / 1000 == 6;
  for (int64_t i = 0; i < k; i++)
    ok &= g[i].r0 == 6 * i && g[i].r1 == (i < 5 ? 6 * i + 6 : 31) && g[i].e0 == 6000 * i &&
          g[i].e1 == 1000 * g[i].r1 && g[i].plan == (i < 5 ? i % 2 : 2);
  CHECK(k == 6 && ok && nplans == 3, "uniform rows: %lld groups, %lld plans", (long long)k, (long long)nplans);
  const int64_t ragged[] = {0, 3000, 2500, 0, 2000, 6000, 1, 6240, 700, 700, 0};
  const int64_t r1[] = {4, 5, 7, 8, 11}, e1[] = {5500, 7500, 13501, 19741, 21141};
  k = groups_of(ragged, 11, g, &nplans);
  ok = k == 5 && nplans == 5;
  for (int64_t i = 0; ok && i < k; i++) ok &= g[i].r1 == r1[i] && g[i].e1 == e1[i] && g[i].plan == i;
  CHECK(ok, "ragged rows: %lld groups, %lld plans", (long long)k, (long long)nplans);
  const int64_t twice[] = {3000, 3000, 4000, 3000, 3000, 4000};
  k = groups_of(twice, 6, g, &nplans);
  CHECK(k == 4 && nplans == 2 && g[2].plan == 0 && g[3].plan == 1 && g[1].r0 == 2 && g[1].r1 == 3,
        "rows repeating two groups on: %lld groups, %lld plans", (long long)k, (long long)nplans);
  const int64_t longer[] = {10, cap + 1, 10};
  CHECK(groups_of(longer, 3, g, &nplans) == 0, "a row over a group: no groups");
}

/* Fits the batch through fit_rows_host (in groups here) and through fit_slice_whole (one plan),
 * and checks them against each other bit for bit and against the CPU hull engine. */
static void check_groups(const char *what, int nrows, const int64_t *o, family_kind f, weight_kind wk, int single,
                         int starts, gpuiso_gpu_kernel kernel) {
  int64_t n = o[nrows];
  int increasing = (f + wk + single + starts) % 2;
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *ref = (double *)malloc(n * sizeof *ref), *z = (double *)malloc(n * sizeof *z);
  float *yf = (float *)malloc(n * sizeof *yf), *wf = (float *)malloc(n * sizeof *wf);
  void *fit[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
  uint8_t *start[2] = {(uint8_t *)malloc(n), (uint8_t *)malloc(n)};
  gen_rows(f, wk, nrows, o, 31 + f, single, y, w);
  for (int64_t i = 0; i < n; i++) yf[i] = (float)y[i], wf[i] = (float)w[i];
  const double *wp = wk == W_NONE ? NULL : w;
  gpuiso_opts opt = group_options(increasing, kernel);
  reference(nrows, o, y, wp, &opt, ref);
  gpuiso_precision type = single ? GPUISO_SINGLE : GPUISO_DOUBLE;
  const void *yv = single ? (const void *)yf : y, *wv = wp ? (single ? (const void *)wf : wp) : NULL;
  size_t value = single ? sizeof(float) : sizeof(double);
  gpuiso_error e[2];
  gpuiso_status s[2];
  int64_t held[2];
  sim_exec ex = {&e[0], 0, 0, 0, 0, sim_seed};
  s[0] = fit_rows_host(ex, nrows, o, type, yv, wv, &opt, fit[0], starts ? start[0] : NULL, &e[0]);
  held[0] = ex.held;
  sim_exec wx = {&e[1], 0, 0, 0, 0, sim_seed + 7};
  staging<sim_exec> st;
  s[1] = stage_open(wx, &st, (size_t)n * value, 2);
  if (s[1] == GPUISO_OK)
    s[1] = fit_slice_whole(wx, &st, nrows, o, type, yv, wv, &opt, fit[1], starts ? start[1] : NULL, &e[1]);
  stage_close(wx, &st);
  held[1] = wx.held;
  row_group g[256];
  int64_t nplans, ngroups = row_groups(nrows, o, group_buffer_of(STAGE_SLICE, value, wp != NULL, starts).cap, g, &nplans);
  int same = s[0] == GPUISO_OK && s[1] == GPUISO_OK && memcmp(fit[0], fit[1], (size_t)n * value) == 0 &&
             (!starts || memcmp(start[0], start[1], (size_t)n) == 0);
  if (single)
    for (int64_t i = 0; i < n; i++) z[i] = ((float *)fit[0])[i];
  else
    memcpy(z, fit[0], (size_t)n * sizeof *z);
  comparison c = compare_rows(nrows, o, y, ref, GPUISO_DOUBLE, z, increasing, 0);
  double bound = single ? 1.0 / (1 << 24) + 1e-12 : 1e-12;
  int64_t flags_wrong = 0;
  for (int64_t r = 0; starts && r < nrows; r++)
    for (int64_t i = o[r]; i < o[r + 1]; i++)
      flags_wrong += start[0][i] != (i == o[r] || z[i] != z[i - 1]);
  CHECK(ngroups >= 3 && same && c.max_dev <= bound && c.step_downs == 0 && flags_wrong == 0 && held[0] == 0 &&
            held[1] == 0,
        "%s, %s, %s, %s, %s%s: %lld groups, status %d and %d (%s), same as one plan %d, deviation %g, %lld step "
        "downs, %lld flags wrong, %lld held",
        what, family_names[f], weight_names[wk], single ? "float32" : "float64", kernel_names[kernel],
        starts ? ", flags" : "", (long long)ngroups, (int)s[0], (int)s[1], e[0].message, same, c.max_dev,
        (long long)c.step_downs, (long long)flags_wrong, (long long)held[0]);
  free(y); free(w); free(ref); free(z); free(yf); free(wf); free(fit[0]); free(fit[1]); free(start[0]); free(start[1]);
}

static void test_fits(void) {
  int64_t uniform[60], o[61];
  for (int r = 0; r < 60; r++) uniform[r] = 1000;
  offsets_of(uniform, 60, o);
  /* the lane kernels' rows (the fast path), chunks of 1024 and their merges (the simple path) */
  for (int k = 0; k < 8; k++)
    check_groups("uniform rows", 60, o, (family_kind)(k % FAM_COUNT), (weight_kind)(k % W_COUNT), k % 3 == 1,
                 k % 2, k < 4 ? GPUISO_GPU_FAST : GPUISO_GPU_SIMPLE);
  /* rows of the lane kernels beside chunked ones on the fast path: the checks' wait in a group */
  const int64_t lens[] = {700, 5000, 0, 33, 4097, 4096, 1, 6000, 512, 2000, 4100, 3, 5500, 900,
                          6200, 64, 4500, 2, 3000, 4097, 0, 1200, 5999, 31, 32, 2048, 4096, 4800};
  int64_t m[29];
  offsets_of(lens, 28, m);
  for (int f = 0; f < FAM_COUNT; f++)
    for (int k = 0; k < 4; k++)
      check_groups("ragged rows", 28, m, (family_kind)f, (weight_kind)((f + k) % W_COUNT), k % 2, (f + k) % 3 == 0,
                   k < 2 ? GPUISO_GPU_FAST : GPUISO_GPU_SIMPLE);
}

/* The batch's error through groups and through one plan: status, row and element. */
static void check_error(const char *what, int nrows, const int64_t *o, const double *y, const double *w,
                        gpuiso_status want, int64_t want_row, int64_t want_index) {
  gpuiso_opts opt = group_options(1, GPUISO_GPU_FAST);
  int64_t n = o[nrows];
  double *z = (double *)malloc(n * sizeof *z);
  gpuiso_error e, ew;
  sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
  gpuiso_status s = fit_rows_host(ex, nrows, o, GPUISO_DOUBLE, y, w, &opt, z, NULL, &e);
  sim_exec wx = {&ew, 0, 0, 0, 0, sim_seed};
  staging<sim_exec> st;
  gpuiso_status sw = stage_open(wx, &st, (size_t)n * sizeof(double), 2);
  if (sw == GPUISO_OK) sw = fit_slice_whole(wx, &st, nrows, o, GPUISO_DOUBLE, y, w, &opt, z, NULL, &ew);
  stage_close(wx, &st);
  CHECK(s == want && e.row == want_row && e.index == want_index && sw == s && ew.row == e.row &&
            ew.index == e.index && ex.held == 0 && wx.held == 0,
        "%s: status %d row %lld index %lld (want %d, %lld, %lld; one plan %d, %lld, %lld), %lld held", what, (int)s,
        (long long)e.row, (long long)e.index, (int)want, (long long)want_row, (long long)want_index, (int)sw,
        (long long)ew.row, (long long)ew.index, (long long)ex.held);
  free(z);
}

static void test_errors(void) {
  /* rows 0-4 of 1500 (lane kernels), 5 of 5000 (chunks), 6-12 of 1500, 13 of 5000: several groups */
  int64_t lens[14], o[15];
  for (int r = 0; r < 14; r++) lens[r] = r == 5 || r == 13 ? 5000 : 1500;
  int64_t n = offsets_of(lens, 14, o);
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  gen_rows(FAM_NOISE, W_UNIFORM, 14, o, 5, 0, y, w);
  row_group g[16];
  int64_t nplans, ngroups = row_groups(14, o, group_buffer_of(STAGE_SLICE, sizeof(double), 1, 0).cap, g, &nplans);
  CHECK(ngroups == 6 && g[1].r0 == 4 && g[1].r1 == 5 && g[2].r1 == 6 && g[4].r1 == 13,
        "error batch: %lld groups", (long long)ngroups);
  /* one bad row, in the first group, a middle one (lane rows, chunked rows) and the last */
  const int bad_rows[] = {0, 5, 8, 13};
  for (int k = 0; k < 4; k++) {
    int64_t at = o[bad_rows[k]] + 17;
    y[at] = NAN;
    check_error("a NaN", 14, o, y, w, GPUISO_E_Y_NONFINITE, bad_rows[k], at);
    y[at] = 0;
    w[at] = -1;
    check_error("a negative weight", 14, o, y, w, GPUISO_E_W_NEGATIVE, bad_rows[k], at);
    w[at] = 1;
  }
  /* two bad rows in different groups: the first named, where the later one is a chunked row whose
   * error is found at its checks, as its group is queued, before the group just before it is done
   * (rows 4 and 5, 12 and 13: groups next to each other) */
  const int pairs[][2] = {{2, 9}, {5, 12}, {8, 13}, {1, 5}, {4, 5}, {12, 13}};
  for (int k = 0; k < 6; k++) {
    int64_t a = o[pairs[k][0]] + 3, b = o[pairs[k][1]] + 9;
    w[b] = -1;
    for (int64_t i = o[pairs[k][0]]; i < o[pairs[k][0] + 1]; i++) w[i] = 0;
    check_error("zero weights, then a negative one", 14, o, y, w, GPUISO_E_W_ALLZERO, pairs[k][0], -1);
    for (int64_t i = o[pairs[k][0]]; i < o[pairs[k][0] + 1]; i++) w[i] = 0.5;
    y[a] = INFINITY;
    check_error("an infinity, then a negative weight", 14, o, y, w, GPUISO_E_Y_NONFINITE, pairs[k][0], a);
    y[a] = 0, w[b] = 1;
  }
  free(y); free(w);
}

static int stop_now(void *ctx) { return --*(int *)ctx < 0; }

/* Interrupts after each number of polls, and each allocation failing: the status, nothing held. */
static void test_stops(void) {
  int64_t lens[20], o[21];
  for (int r = 0; r < 20; r++) lens[r] = r % 7 == 3 ? 4500 : 800;
  int64_t n = offsets_of(lens, 20, o);
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w), *z = (double *)malloc(n * sizeof *z);
  uint8_t *start = (uint8_t *)malloc(n);
  gen_rows(FAM_SAWTOOTH, W_EXTREME, 20, o, 9, 0, y, w);
  gpuiso_opts opt = group_options(0, GPUISO_GPU_FAST);
  gpuiso_error e;
  int stopped = 0;
  for (int polls = 0; polls < 64; polls++) {
    int left = polls;
    gpuiso_interrupt intr = {stop_now, &left};
    opt.interrupt = &intr;
    sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
    gpuiso_status s = fit_rows_host(ex, 20, o, GPUISO_DOUBLE, y, w, &opt, z, start, &e);
    CHECK((s == GPUISO_E_INTERRUPT || (s == GPUISO_OK && left >= 0)) && ex.held == 0,
          "interrupt after %d polls: status %d, %lld held", polls, (int)s, (long long)ex.held);
    if (s == GPUISO_OK) break;
    stopped++;
  }
  CHECK(stopped >= 5, "interrupts: %d numbers of polls stopped the fit", stopped);
  opt.interrupt = NULL;
  sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
  gpuiso_status s = fit_rows_host(ex, 20, o, GPUISO_DOUBLE, y, w, &opt, z, start, &e);
  int64_t allocs = ex.allocs, failed_right = 0;
  for (int64_t k = 1; k <= allocs; k++) {
    sim_exec fx = {&e, 0, 0, k, 0, sim_seed};
    gpuiso_status sf = fit_rows_host(fx, 20, o, GPUISO_DOUBLE, y, w, &opt, z, start, &e);
    failed_right += sf == GPUISO_E_NOMEM && fx.held == 0;
  }
  CHECK(s == GPUISO_OK && allocs > 20 && failed_right == allocs, "allocation failures: %lld of %lld reported, none held",
        (long long)failed_right, (long long)allocs);
  free(y); free(w); free(z); free(start);
}

int main(void) {
  void (*const tests[])(void) = {test_cut, test_fits, test_errors, test_stops};
  return run_under_seeds(tests, 4, "a host batch in groups of rows on the CPU");
}

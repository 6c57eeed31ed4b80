/* A host batch through the device in groups of rows (src/cuda/host_fit.cuh: group_run), the two
 * lanes in turn, each group's transfers beside the work of the groups next to it, run on the SIMT
 * executor (its lanes asynchronous) under three schedule seeds: the groups cut and their plans
 * shared, which slices go in groups, the fits and block flags bit for bit those of the batch in
 * one plan (fit_slice_whole) and within 1e-12 of the CPU hull engine (2^-24 in float32), every
 * family and weighting, both precisions, the batch in one plan out as runs of equal values where
 * they are few (fit_runs.cuh); the first failing row named across groups as in one plan; a
 * failing copy, interrupts and allocation failures, with nothing held after them. */
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
 * and checks them against each other bit for bit and against the CPU hull engine. With `share`,
 * the device has that share of the memory the batch needs in one slice, and holds no more. */
static int fits_as_runs, fits_as_values; /* of check_groups' fits in one plan */

static void check_groups(const char *what, int nrows, const int64_t *o, family_kind f, weight_kind wk, int single,
                         int starts, gpuiso_gpu_kernel kernel, int grouped, double share = 0) {
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
  double need = 0;
  for (int r = 0; r < nrows; r++)
    need += plan_slice_row_bytes(&opt, plan_longest(nrows, o), o[r + 1] - o[r], type, wp != NULL, starts);
  sim_sliced ex = {{&e[0], 0, 0, 0, (size_t)(share * need), sim_seed}, 0, 0, 0};
  s[0] = fit_rows_host(ex, nrows, o, type, yv, wv, &opt, fit[0], starts ? start[0] : NULL, &e[0]);
  held[0] = ex.held;
  sim_sliced wx = {{&e[1], 0, 0, 0, 0, sim_seed + 7}, 0, 0, 0};
  staging<sim_sliced> st;
  s[1] = stage_open(wx, &st, (size_t)n * value, 2);
  if (s[1] == GPUISO_OK)
    s[1] = fit_slice_whole(wx, &st, nrows, o, type, yv, wv, &opt, fit[1], starts ? start[1] : NULL, &e[1]);
  stage_close(wx, &st);
  held[1] = wx.held;
  row_group g[256];
  int64_t nplans, ngroups = slice_groups(nrows, o, group_buffer_of(STAGE_SLICE, value, wp != NULL, starts), g, &nplans);
  /* the fit in one plan comes out as runs of equal bits where their firsts and values take at
   * most a quarter of its bytes and the tiles' counts leave room for them (fit_runs.cuh), the
   * flags of the level starts made from them: nothing crosses in slices; otherwise both do */
  int64_t runs = 0, most = (int64_t)(n * value / 4 / (sizeof(int64_t) + value)), tiles = (n + 1023) / 1024;
  for (int64_t i = 0; i < n; i++) runs += i == 0 || memcmp((char *)fit[0] + i * value, (char *)fit[0] + (i - 1) * value, value);
  int as_runs = (size_t)(tiles + 1) * 8 + most * (8 + value) <= n * value && runs <= most;
  int64_t slice = (int64_t)(n * value < STAGE_SLICE ? n * value : STAGE_SLICE);
  int64_t want_out = as_runs ? 0 : ((int64_t)(n * value) + slice - 1) / slice + (starts ? (n + slice - 1) / slice : 0);
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
  CHECK((grouped ? ngroups >= GROUPS_MIN && ex.overlaps > 0 : ngroups == 0) && (share == 0 || ex.peak <= ex.memory) && same && c.max_dev <= bound && c.step_downs == 0 && flags_wrong == 0 && held[0] == 0 &&
            held[1] == 0 && wx.slices_out == want_out,
        "%s, %s, %s, %s, %s%s: %lld groups (%lld overlapping), %zu bytes held at most of %zu, status %d and %d (%s), same as one plan %d, deviation %g, %lld step "
        "downs, %lld flags wrong, %lld held; one plan: %lld runs (%s), %lld slices out, %lld due",
        what, family_names[f], weight_names[wk], single ? "float32" : "float64", kernel_names[kernel],
        starts ? ", flags" : "", (long long)ngroups, (long long)ex.overlaps, ex.peak, ex.memory, (int)s[0], (int)s[1], e[0].message, same, c.max_dev,
        (long long)c.step_downs, (long long)flags_wrong, (long long)held[0], (long long)runs,
        as_runs ? "as runs" : "as values", (long long)wx.slices_out, (long long)want_out);
  fits_as_runs += as_runs, fits_as_values += !as_runs;
  free(y); free(w); free(ref); free(z); free(yf); free(wf); free(fit[0]); free(fit[1]); free(start[0]); free(start[1]);
}

static void test_fits(void) {
  fits_as_runs = fits_as_values = 0;
  int64_t uniform[60], o[61];
  for (int r = 0; r < 60; r++) uniform[r] = 1000;
  offsets_of(uniform, 60, o);
  /* the lane kernels' rows (the fast path) and the simple path's chunks, in groups */
  for (int k = 0; k < 8; k++)
    check_groups("uniform rows", 60, o, (family_kind)(k % FAM_COUNT), (weight_kind)(k % W_COUNT), k % 3 == 1,
                 k % 2, k < 4 ? GPUISO_GPU_FAST : GPUISO_GPU_SIMPLE, 1);
  /* the row-PAV control in groups: it reads back the failed-row word as the others do */
  for (int k = 0; k < 2; k++)
    check_groups("uniform rows", 60, o, (family_kind)k, (weight_kind)(k + 1), k, 0, GPUISO_GPU_ROW_PAV, 1);
  /* chunked rows, a group each or two, on both paths */
  int64_t chunked[12], c[13];
  for (int r = 0; r < 12; r++) chunked[r] = r % 3 == 0 ? 2 * 1024 + 1 + r : 4097 + 131 * r;
  offsets_of(chunked, 12, c);
  for (int k = 0; k < 6; k++)
    check_groups("chunked rows", 12, c, (family_kind)((k + 2) % FAM_COUNT), (weight_kind)(k % W_COUNT), k % 3 == 2,
                 k % 2 == 0, k % 2 ? GPUISO_GPU_SIMPLE : GPUISO_GPU_FAST, 1);
  /* ragged rows of the lane kernels, packed into warps and a block each, empty ones too */
  const int64_t lens[] = {700, 4096, 0, 33, 4000, 1025, 1, 3000, 512, 2000, 513, 3, 2500, 900,
                          1024, 64, 3500, 2, 3000, 4095, 0, 1200, 2999, 31, 32, 2048, 4096, 1800};
  int64_t twice[56], m[57]; /* enough for three groups of floats unweighted */
  for (int r = 0; r < 56; r++) twice[r] = lens[r % 28];
  offsets_of(twice, 56, m);
  for (int f = 0; f < FAM_COUNT; f++)
    for (int k = 0; k < 4; k++)
      check_groups("ragged rows", 56, m, (family_kind)f, (weight_kind)((f + k) % W_COUNT), k % 2, (f + k) % 3 == 0,
                   GPUISO_GPU_FAST, 1);
  /* a chunked row among them */
  twice[9] = 4097;
  offsets_of(twice, 56, m);
  check_groups("ragged rows and a chunked one", 56, m, FAM_SAWTOOTH, W_EXTREME, 0, 1, GPUISO_GPU_FAST, 1);
  /* a batch larger than the device memory: slices of it, each in groups */
  for (int k = 0; k < 4; k++)
    check_groups("uniform rows in memory slices", 60, o, (family_kind)k, (weight_kind)(k % W_COUNT), k == 1, k % 2,
                 k < 2 ? GPUISO_GPU_FAST : GPUISO_GPU_SIMPLE, 1, k == 1 ? 0.7 : 0.45); /* slices of full buffers */
  check_groups("chunked rows in memory slices", 12, c, FAM_CLIFF, W_UNIFORM, 0, 1, GPUISO_GPU_FAST, 1, 0.6);
  /* too few elements for three groups: whole */
  offsets_of(uniform, 10, o);
  check_groups("ten rows", 10, o, FAM_NOISE, W_UNIFORM, 0, 1, GPUISO_GPU_FAST, 0);
  CHECK(fits_as_runs > 3 && fits_as_values > 3, "fits in one plan out as runs %d, as values %d: both paths met",
        fits_as_runs, fits_as_values);
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
        "%s: status %d (%s) row %lld index %lld (want %d, %lld, %lld; one plan %d, %lld, %lld), %lld held", what, (int)s,
        e.message, (long long)e.row, (long long)e.index, (int)want, (long long)want_row, (long long)want_index, (int)sw,
        (long long)ew.row, (long long)ew.index, (long long)ex.held);
  free(z);
}

/* The executor with its fail_copy-th asynchronous copy failing, as a CUDA error would. */
struct failing_exec : sim_exec {
  int64_t fail_copy, copies;
  gpuiso_status put_async(void *d, const void *pinned, size_t bytes, lane l) {
    if (++copies == fail_copy) return defect("injected failure of cudaMemcpyAsync");
    return sim_exec::put_async(d, pinned, bytes, l);
  }
};

static void test_errors(void) {
  /* rows of 1500, 4000 (lane kernels, a block each for the longer) and 4500 (chunked) */
  int64_t lens[18], o[19];
  for (int r = 0; r < 18; r++) lens[r] = r % 4 == 1 ? 4000 : r % 4 == 3 ? 4500 : 1500;
  int64_t n = offsets_of(lens, 18, o);
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  gen_rows(FAM_NOISE, W_UNIFORM, 18, o, 5, 0, y, w);
  gpuiso_opts opt = group_options(1, GPUISO_GPU_FAST);
  row_group g[18];
  int64_t nplans, ngroups = slice_groups(18, o, group_buffer_of(STAGE_SLICE, sizeof(double), 1, 0), g, &nplans);
  CHECK(ngroups >= 4, "error batch: %lld groups", (long long)ngroups);
  /* one bad row, in the first group, a middle one and the last */
  const int bad_rows[] = {0, 3, 5, 8, 15, 17};
  for (int k = 0; k < 6; k++) {
    int64_t at = o[bad_rows[k]] + 17;
    y[at] = NAN;
    check_error("a NaN", 18, o, y, w, GPUISO_E_Y_NONFINITE, bad_rows[k], at);
    y[at] = 0;
    w[at] = -1;
    check_error("a negative weight", 18, o, y, w, GPUISO_E_W_NEGATIVE, bad_rows[k], at);
    w[at] = 1;
  }
  /* two bad rows in different groups, next to each other or not: the first named */
  const int pairs[][2] = {{2, 9}, {5, 12}, {8, 13}, {1, 5}, {3, 4}, {13, 14}, {7, 11}};
  for (int k = 0; k < 7; k++) {
    int64_t a = o[pairs[k][0]] + 3, b = o[pairs[k][1]] + 9;
    w[b] = -1;
    for (int64_t i = o[pairs[k][0]]; i < o[pairs[k][0] + 1]; i++) w[i] = 0;
    check_error("zero weights, then a negative one", 18, o, y, w, GPUISO_E_W_ALLZERO, pairs[k][0], -1);
    for (int64_t i = o[pairs[k][0]]; i < o[pairs[k][0] + 1]; i++) w[i] = 0.5;
    y[a] = INFINITY;
    check_error("an infinity, then a negative weight", 18, o, y, w, GPUISO_E_Y_NONFINITE, pairs[k][0], a);
    y[a] = 0, w[b] = 1;
  }
  /* group k's copy in failing (unweighted: its one copy): the CUDA error, with its text, unless a
   * group before it has a bad row, which is then named */
  double *z = (double *)malloc(n * sizeof *z);
  int64_t ng = slice_groups(18, o, group_buffer_of(STAGE_SLICE, sizeof(double), 0, 0), g, &nplans);
  const int bad_at[] = {-1, 0, 5, 9};
  for (int b = 0; b < 4; b++) {
    int bad = bad_at[b];
    if (bad >= 0) y[o[bad] + 2] = NAN;
    for (int64_t k = 0; k < ng; k++) {
      gpuiso_error e;
      failing_exec fx = {{&e, 0, 0, 0, 0, sim_seed}, k + 1, 0};
      gpuiso_status s = fit_rows_host(fx, 18, o, GPUISO_DOUBLE, y, NULL, &opt, z, NULL, &e);
      int row_first = bad >= 0 && g[k].r0 > bad;
      CHECK(row_first ? s == GPUISO_E_Y_NONFINITE && e.status == s && e.row == bad && e.index == o[bad] + 2
                      : s == GPUISO_E_CUDA && e.status == s && e.row == -1 && strstr(e.message, "injected") != NULL,
            "group %lld of %lld failing its copy in, bad row %d: status %d (err %d, row %lld, \"%s\")", (long long)k,
            (long long)ng, bad, (int)s, (int)e.status, (long long)e.row, e.message);
      CHECK(fx.held == 0 && fx.lanes.empty() && (row_first || fx.copies == k + 1),
            "group %lld failing its copy in: %lld held, %lld copies", (long long)k, (long long)fx.held,
            (long long)fx.copies);
    }
    if (bad >= 0) y[o[bad] + 2] = 0;
  }
  CHECK(ng >= 3 && g[1].r0 <= 5 && g[ng - 1].r0 > 9, "unweighted error batch: %lld groups", (long long)ng);
  free(y); free(w); free(z);
}

static int stop_now(void *ctx) { return --*(int *)ctx < 0; }

/* Interrupts after each number of polls, and each allocation failing: the status, nothing held. */
static void test_stops(void) {
  int64_t lens[20], o[21];
  for (int r = 0; r < 20; r++) lens[r] = r % 7 == 3 ? 4096 : 800;
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
  /* the slice's arrays, two lanes and their buffers, a plan for each of two or three shapes */
  CHECK(s == GPUISO_OK && allocs >= 7 && failed_right == allocs, "allocation failures: %lld of %lld reported, none held",
        (long long)failed_right, (long long)allocs);
  free(y); free(w); free(z); free(start);
}

int main(void) {
  void (*const tests[])(void) = {test_cut, test_fits, test_errors, test_stops};
  return run_under_seeds(tests, 4, "a host batch in groups of rows on the CPU");
}

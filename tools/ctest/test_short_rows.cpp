/* The fast path's lane kernels (src/cuda/short_rows.cuh) through the batch solver's host side,
 * run on the CPU by the SIMT executor under three schedule seeds, against the CPU hull engine;
 * their shared memory unweighted and weighted; a planted fault in their rounding flags; their
 * filtered instances against their exact ones; and their turns' exact test and filter against
 * the exact turns of expansions. */
#include <algorithm>
#include <tuple>
#include <type_traits>
#include <vector>

#include "batch.h"

/* The executor, keeping the dynamic shared bytes and threads of the lane kernels' launches. */
#define LANE_KERNELS 3
static const char *const lane_kernels[LANE_KERNELS] = {"short_rows_kernel", "block_rows_kernel", "chunk_hulls_kernel"};

struct shared_log : sim_exec {
  size_t bytes[LANE_KERNELS], threads[LANE_KERNELS];
  template <class... P, class... A>
  gpuiso_status launch(const char *name, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, A... args) {
    for (int k = 0; k < LANE_KERNELS; k++)
      if (!strcmp(name, lane_kernels[k])) bytes[k] = shared, threads[k] = block.x;
    return sim_exec::launch(name, kernel, grid, block, shared, args...);
  }
};

/* The fast path's lane kernels at the lengths around a lane, a warp, two and four warps, in one
 * batch (short rows of 1 to 32 lanes side by side in warps, longer ones a block each, between
 * them), every family and weighting in both directions, against the CPU hull engine within 1e-12
 * of 1 + |z|; with a row over the limit beside them, which alone takes chunks (chunk_hulls_kernel)
 * while the others stay on the lane kernels. */
static void test_short_rows(void) {
  const int64_t lens[] = {1,   2,    31,  32,   33,   0,    63,   64,   65,   100, 1,    255,  256, 257,
                          3,   511,  512, 5,    1,    40,   513,  1000, 1023, 1024, 7,   1025, 2047, 2048,
                          2049, 3000, 4095, 4096};
  const int nlens = (int)(sizeof lens / sizeof lens[0]);
  int64_t off[3 * nlens + 2];
  int64_t R = 0;
  off[0] = 0;
  for (int rep = 0; rep < 3; rep++)
    for (int k = 0; k < nlens; k++, R++) off[R + 1] = off[R] + lens[(k + 7 * rep) % nlens];
  int64_t n = off[R] + BLOCK_ROW_MAX + 1;
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *ref = (double *)malloc(n * sizeof *ref), *z = (double *)malloc(n * sizeof *z);
  uint8_t *start = (uint8_t *)malloc(n), *ref_start = (uint8_t *)malloc(n);
  size_t bytes[W_COUNT][LANE_KERNELS] = {{0}}, threads[LANE_KERNELS] = {0};
  for (int f = 0; f < FAM_COUNT; f++) {
    for (int wk = 0; wk < W_COUNT; wk++) {
      /* the lane kernels in both directions; the batch with a row over the limit in one
       * (alternating with the family and weighting) */
      for (int over = 0; over <= 1; over++) for (int dir = 0; dir <= !over; dir++) {
        int64_t rows = over ? R + 1 : R, *o = off;
        if (over) off[R + 1] = off[R] + BLOCK_ROW_MAX + 1;
        int increasing = (f + wk + dir) % 2;
        gen_rows((family_kind)f, (weight_kind)wk, rows, o, 5 + f, 0, y, w);
        const double *wp = wk == W_NONE ? NULL : w;
        gpuiso_opts opt = options(increasing, 0, 0);
        opt.hull_chunk = 1024;
        reference(rows, o, y, wp, &opt, ref);
        opt.gpu_kernel = GPUISO_GPU_FAST;
        gpuiso_error e;
        shared_log ex = {{&e, 0, 0, 0, 0, sim_seed}, {0}, {0}};
        gpuiso_status s = fit_rows_host(ex, rows, o, GPUISO_DOUBLE, y, wp, &opt, z, start, &e);
        for (int k = 0; k < LANE_KERNELS; k++)
          if (ex.bytes[k]) bytes[wk][k] = ex.bytes[k], threads[k] = ex.threads[k];
        int routed = ex.bytes[0] > 0 && ex.bytes[1] > 0 && (ex.bytes[2] > 0) == over;
        comparison c = compare_rows(rows, o, y, ref, GPUISO_DOUBLE, z, increasing, 0);
        int flags_ok = 1;
        for (int64_t r = 0; r < rows; r++)
          for (int64_t i = o[r]; i < o[r + 1]; i++) flags_ok = flags_ok && start[i] == (i == o[r] || z[i] != z[i - 1]);
        /* the solver's blocks, against the hull engine's */
        opt.solver_blocks = 1;
        sim_exec ex2 = {&e, 0, 0, 0, 0, sim_seed};
        gpuiso_status s2 = fit_rows_host(ex2, rows, o, GPUISO_DOUBLE, y, wp, &opt, z, start, &e);
        for (int64_t r = 0; r < rows; r++) {
          gpuiso_error er;
          gpuiso_hull(o[r + 1] - o[r], y + o[r], wp ? wp + o[r] : NULL, &opt, ref + o[r], ref_start + o[r], NULL, &er);
        }
        int64_t blocks_differ = 0;
        for (int64_t i = 0; i < o[rows]; i++) blocks_differ += start[i] != ref_start[i];
        CHECK(s == GPUISO_OK && s2 == GPUISO_OK && c.max_dev <= 1e-12 && c.step_downs == 0 &&
                  flags_ok && blocks_differ == 0 && routed && ex.held == 0 && ex2.held == 0,
              "short rows, %s, %s weights, %s%s: status %d, %d (%s), deviation %g at %lld, %lld step downs, "
              "%lld solver block flags differ, kernels %s, %lld buffers held", family_names[f], weight_names[wk],
              increasing ? "increasing" : "decreasing", over ? ", one row over the limit" : "", (int)s, (int)s2,
              e.message, c.max_dev, (long long)c.worst, (long long)c.step_downs, (long long)blocks_differ,
              routed ? "as planned" : "not as planned", (long long)ex.held);
      }
    }
  }
  /* unweighted, the points keep no W: the launch takes at least 8 bytes a point (32 a thread) less
   * shared memory than the weighted one (and the executor holds each kernel to its bytes) */
  for (int k = 0; k < LANE_KERNELS; k++)
    CHECK(bytes[W_NONE][k] > 0 && bytes[W_NONE][k] + 8 * SIMT_WARP * threads[k] <= bytes[W_UNIFORM][k],
          "%s: %zu bytes of shared memory unweighted, %zu weighted, %zu threads", lane_kernels[k],
          bytes[W_NONE][k], bytes[W_UNIFORM][k], threads[k]);
  free(y); free(w); free(ref); free(z); free(start); free(ref_start);
}

/* A planted fault: the lanes' sums with their pairs folded to doubles, so that no point is flagged
 * rounded and the turns trust the rounded coordinates instead of falling back to the exact ones. */
struct unflagged_sums : exact_sums {
  static const bool exact = false; /* its points are not the exact sums */
  SIMT_DEVICE hull_point point() const { return hull_point{{at.w.hi + at.w.lo, 0}, {at.s.hi + at.s.lo, 0}}; }
};

/* The solver blocks of lane_rows_kernel with Sums, a row a warp, that differ from the CPU hull
 * engine's (-1: the launch failed). */
template <class Sums>
static int64_t blocks_differing(int64_t R, const int64_t *o, const double *y, const double *w, int increasing,
                                const uint8_t *ref_start) {
  int64_t N = o[R];
  gpuiso_error e;
  sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
  solver_view<double> v;
  memset(&v, 0, sizeof v);
  int64_t *offsets = NULL, *packs = NULL;
  double *dy = NULL, *dw = NULL, *fit = NULL;
  uint8_t *edge = NULL;
  row_state *rows = NULL;
  unsigned long long *failed = NULL, none = NO_FAILED_ROW;
  unsigned *retry = NULL;
  std::vector<int64_t> pack_first((size_t)R + 1);
  std::vector<uint8_t> start((size_t)N);
  for (int64_t r = 0; r <= R; r++) pack_first[(size_t)r] = r;
  gpuiso_status s = ex.alloc((void **)&offsets, (R + 1) * sizeof *offsets);
  if (s == GPUISO_OK) s = ex.alloc((void **)&packs, (R + 1) * sizeof *packs);
  if (s == GPUISO_OK) s = ex.alloc((void **)&dy, N * sizeof *dy);
  if (s == GPUISO_OK) s = ex.alloc((void **)&dw, N * sizeof *dw);
  if (s == GPUISO_OK) s = ex.alloc((void **)&fit, N * sizeof *fit);
  if (s == GPUISO_OK) s = ex.alloc((void **)&edge, N);
  if (s == GPUISO_OK) s = ex.alloc((void **)&rows, R * sizeof *rows);
  if (s == GPUISO_OK) s = ex.alloc((void **)&failed, sizeof *failed);
  if (s == GPUISO_OK) s = ex.alloc((void **)&retry, (R + 1) * sizeof *retry);
  if (s == GPUISO_OK) s = ex.put(offsets, o, (R + 1) * sizeof *offsets);
  if (s == GPUISO_OK) s = ex.put(packs, pack_first.data(), (R + 1) * sizeof *packs);
  if (s == GPUISO_OK) s = ex.put(dy, y, N * sizeof *dy);
  if (s == GPUISO_OK) s = ex.put(dw, w, N * sizeof *dw);
  if (s == GPUISO_OK) s = ex.put(failed, &none, sizeof none);
  v.nrows = R, v.offsets = offsets, v.y = dy, v.w = dw, v.fit = fit, v.edge_start = edge;
  v.sign = increasing ? 1.0 : -1.0, v.lo = -INFINITY, v.hi = INFINITY, v.rows = rows, v.failed_row = failed;
  lane_retry listed = {retry, retry + 1};
  if (s == GPUISO_OK) /* a row a warp: the identity is both the rows' list and the warps' first */
    s = lane_pair_launch(ex, "short_rows_kernel", lane_rows_kernel<double, Sums, true, false>,
                         "short_rows_kernel_exact", lane_rows_kernel<double, Sums, true, true>, R, dim3(SIMT_WARP),
                         lane_rows_shared(SIMT_WARP, 1), listed, v, (const int64_t *)packs, (const int64_t *)packs);
  if (s == GPUISO_OK) s = ex.get(start.data(), edge, N);
  if (s == GPUISO_OK) s = ex.get(&none, failed, sizeof none);
  void *held[] = {offsets, packs, dy, dw, fit, edge, rows, failed, retry};
  for (void *p : held) ex.release(p);
  if (s != GPUISO_OK || none != NO_FAILED_ROW) return -1;
  int64_t differ = 0;
  for (int64_t i = 0; i < N; i++) differ += start[(size_t)i] != ref_start[i];
  return differ;
}

/* The exact fallback of the lanes' turns is reached and decides: on weighted cancellations, rows
 * of up to a warp, the kernel's solver blocks are the CPU hull engine's, and those of the kernel
 * with the planted fault (unflagged_sums) are not. */
static void test_planted_fault(void) {
  const int64_t lens[] = {1024, 1000, 777, 512, 300, 1024, 64, 999};
  const int R = (int)(sizeof lens / sizeof lens[0]);
  int64_t o[R + 1];
  offsets_of(lens, R, o);
  std::vector<double> y((size_t)o[R]), w((size_t)o[R]), ref((size_t)o[R]);
  std::vector<uint8_t> ref_start((size_t)o[R]);
  int64_t faithful = 0, planted = 0;
  for (int wk = W_UNIFORM; wk <= W_EXTREME; wk++) {
    gen_rows(FAM_CANCELLATION, (weight_kind)wk, R, o, 17 + wk, 0, y.data(), w.data());
    gpuiso_opts opt = options(1, 0, 0);
    opt.solver_blocks = 1;
    for (int64_t r = 0; r < R; r++) {
      gpuiso_error e;
      gpuiso_hull(o[r + 1] - o[r], y.data() + o[r], w.data() + o[r], &opt, ref.data() + o[r], ref_start.data() + o[r],
                  NULL, &e);
    }
    int64_t d = blocks_differing<exact_sums>(R, o, y.data(), w.data(), 1, ref_start.data());
    int64_t f = blocks_differing<unflagged_sums>(R, o, y.data(), w.data(), 1, ref_start.data());
    faithful = d < 0 || faithful < 0 ? -1 : faithful + d;
    planted = f < 0 || planted < 0 ? -1 : planted + f;
  }
  printf("planted fault: %lld solver block flags differ from the CPU engine's with the rounding flags dropped\n",
         (long long)planted);
  CHECK(faithful == 0 && planted > 0,
        "planted fault: %lld solver block flags differ from the CPU engine's (-1: failed), %lld with the "
        "rounding flags dropped", (long long)faithful, (long long)planted);
}

/* The executor, running the lane kernels' filtered instances (observing: the blocks they list for
 * the exact ones counted, and the fits of the rows of those blocks checked unwritten; the exact
 * instances on one block, which strides over the list) or, forcing, none of them: every block
 * listed for the exact instance in their place. */
struct retry_log : sim_exec {
  int force;
  int64_t blocks, listed, stray; /* stray: elements of the listed blocks' rows whose fits were written */

  /* Whether element i of the fit's bytes was written over memset's 0xff (a NaN no fit gives). */
  template <typename T>
  static int written(const std::vector<unsigned char> &fit, int64_t i) {
    for (size_t b = 0; b < sizeof(T); b++)
      if (fit[(size_t)i * sizeof(T) + b] != 0xff) return 1;
    return 0;
  }
  template <class... P, class... A>
  gpuiso_status launch(const char *name, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, A... args) {
    int filtered = 0, exact = strstr(name, "_exact") != NULL;
    for (int k = 0; k < LANE_KERNELS; k++) filtered |= !strcmp(name, lane_kernels[k]);
    if constexpr (sizeof...(A) > 0) {
      auto arg = std::make_tuple(args...);
      auto last = std::get<sizeof...(A) - 1>(arg);
      if constexpr (std::is_same<decltype(last), lane_retry>::value) {
        unsigned count = grid.x;
        if (filtered && force) {
          std::vector<unsigned> all(count);
          for (unsigned b = 0; b < count; b++) all[b] = b;
          gpuiso_status s = put(last.list, all.data(), count * sizeof(unsigned));
          return s == GPUISO_OK ? put(last.count, &count, sizeof count) : s;
        }
        if (exact && !force) grid = dim3(1);
        if (!filtered) return sim_exec::launch(name, kernel, grid, block, shared, args...);
        auto v = std::get<0>(arg);
        typedef typename std::remove_pointer<decltype(v.fit)>::type T;
        std::vector<int64_t> off((size_t)v.nrows + 1);
        gpuiso_status s = get(off.data(), v.offsets, off.size() * sizeof(int64_t));
        size_t bytes = (size_t)off[(size_t)v.nrows] * sizeof(T);
        std::vector<unsigned char> before(bytes), after(bytes);
        if (s == GPUISO_OK) s = get(before.data(), v.fit, bytes);
        if (s == GPUISO_OK) s = fill(v.fit, 0xff, bytes);
        if (s == GPUISO_OK) s = sim_exec::launch(name, kernel, grid, block, shared, args...);
        if (s == GPUISO_OK) s = get(&count, last.count, sizeof count);
        std::vector<unsigned> list(count);
        if (s == GPUISO_OK) s = get(list.data(), last.list, count * sizeof(unsigned));
        if (s == GPUISO_OK) s = get(after.data(), v.fit, bytes);
        for (unsigned i = 0; s == GPUISO_OK && i < count; i++) {
          int64_t rows[2] = {list[i], list[i] + 1}, row = -1; /* the block's rows: a pack's, a block row's */
          if constexpr (sizeof...(A) == 4) { /* lane_rows_kernel: without pack_first, a row a block */
            if (std::get<2>(arg)) s = get(rows, std::get<2>(arg) + list[i], sizeof rows);
            for (int64_t k = rows[0]; s == GPUISO_OK && k < rows[1]; k++) {
              if ((s = get(&row, std::get<1>(arg) + k, sizeof row)) != GPUISO_OK) break;
              for (int64_t e = off[(size_t)row]; e < off[(size_t)row + 1]; e++) stray += written<T>(after, e);
            }
          }
        }
        for (int64_t e = 0; e < off[(size_t)v.nrows]; e++) /* the launches before keep their fits */
          if (!written<T>(after, e)) memcpy(&after[(size_t)e * sizeof(T)], &before[(size_t)e * sizeof(T)], sizeof(T));
        if (s == GPUISO_OK) s = put(v.fit, after.data(), bytes);
        blocks += grid.x, listed += count;
        return s;
      }
    }
    return sim_exec::launch(name, kernel, grid, block, shared, args...);
  }
};

/* The lane kernels' filtered instances leave every block whose turns their filters cannot all
 * decide to the exact instances (lane_retry): the fits and solver blocks bit for bit those of the
 * exact instances on every block, each family and weighting, float64 and float32, rows of the
 * short rows, the block rows and the chunks. Without zero weights, the families of points in
 * general position list no block, nor, unweighted in float32, where the sums are exact, the nearly
 * or exactly collinear ones (ties, consecutive floats, cancellations: exact_coord_orient); in
 * float64 these list some. With zero weights, whose points coincide (coincide), those in general
 * position list under half their blocks. */
static void test_exact_retry(void) {
  const int64_t lens[] = {1000, 5, 4096, 1, 33, 2000, BLOCK_ROW_MAX + 1, 512, 3000, 64};
  const int R = (int)(sizeof lens / sizeof lens[0]);
  int64_t o[R + 1];
  offsets_of(lens, R, o);
  int64_t n = o[R];
  std::vector<double> y((size_t)n), w((size_t)n), z[2];
  std::vector<float> yf((size_t)n), wf((size_t)n), zf[2];
  std::vector<uint8_t> start[2];
  for (int f = 0; f < FAM_COUNT; f++) {
    int64_t family_listed = 0, family_blocks = 0;
    for (int wk = 0; wk < W_COUNT; wk++) {
      gen_rows((family_kind)f, (weight_kind)wk, R, o, 29 + f, 0, y.data(), w.data());
      for (int64_t i = 0; i < n; i++) yf[(size_t)i] = (float)y[(size_t)i], wf[(size_t)i] = (float)w[(size_t)i];
      for (int single = 0; single <= 1; single++) {
        gpuiso_opts opt = options((f + wk) % 2, 0, 0);
        opt.gpu_kernel = GPUISO_GPU_FAST;
        opt.solver_blocks = 1;
        opt.hull_chunk = 1024;
        gpuiso_status s[2];
        int64_t listed = 0, blocks = 0, stray = 0;
        for (int force = 0; force <= 1; force++) {
          gpuiso_error e;
          retry_log ex = {{&e, 0, 0, 0, 0, sim_seed}, force, 0, 0, 0};
          z[force].assign((size_t)n, 0), zf[force].assign((size_t)n, 0), start[force].assign((size_t)n, 2);
          s[force] = single ? fit_rows_host(ex, R, o, GPUISO_SINGLE, yf.data(), wk ? wf.data() : NULL, &opt,
                                            zf[force].data(), start[force].data(), &e)
                            : fit_rows_host(ex, R, o, GPUISO_DOUBLE, y.data(), wk ? w.data() : NULL, &opt,
                                            z[force].data(), start[force].data(), &e);
          if (!force) listed = ex.listed, blocks = ex.blocks, stray = ex.stray;
        }
        family_listed += listed, family_blocks += blocks;
        int same = z[0] == z[1] && zf[0] == zf[1] && start[0] == start[1];
        int ties = f == FAM_RUNS || f == FAM_ULP || f == FAM_CANCELLATION;
        int decided = wk != W_ZEROS && (!ties || (single && wk == W_NONE));
        int undecided = !single && (f == FAM_RUNS || f == FAM_ULP);
        int coinciding = wk == W_ZEROS && f <= FAM_CLIFF; /* mostly decided (coincide) */
        CHECK(s[0] == GPUISO_OK && s[1] == GPUISO_OK && same && blocks > 0 && (!decided || listed == 0) &&
                  (!undecided || listed > 0) && (!coinciding || 2 * listed < blocks) && stray == 0,
              "exact retry, %s, %s weights, %s: status %d, %d; fits %s; %lld of %lld lane kernel blocks listed, "
              "%lld elements of their rows written", family_names[f], weight_names[wk],
              single ? "float32" : "float64", (int)s[0], (int)s[1], same ? "the same" : "differ", (long long)listed,
              (long long)blocks, (long long)stray);
      }
    }
    printf("exact retry, %s: %lld of %lld lane kernel blocks listed\n", family_names[f], (long long)family_listed,
           (long long)family_blocks);
  }
}

/* The next draw of a splitmix64 stream whose state is *z. */
static uint64_t splitmix64(uint64_t *z) {
  uint64_t x = (*z += 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* exact_coord_orient against the exact turn from expansions (hull_orient_exact) on the same
 * points, weighted (W a coordinate) and not (W the index): integers times powers of two, so that
 * most differences are exact, on lines through a point (exactly collinear, or one unit off),
 * coinciding, or spread over a thousand binades; it decides only where it is exact, and most of
 * these. */
static void test_exact_coord_orient(void) {
  uint64_t z = 12345;
  auto next = [&z]() { return splitmix64(&z); };
  auto value = [&next](int spread) { /* a signed integer of up to 40 bits times 2^e */
    double m = (double)(int64_t)(next() >> 24) - 0x1p39;
    return ldexp(m, (int)(next() % (uint64_t)(2 * spread + 1)) - spread);
  };
  int64_t decided = 0, zero = 0, wrong = 0, cases = 400000;
  for (int64_t i = 0; i < cases; i++) {
    int kind = (int)(i % 4), spread = kind == 3 ? 500 : 20, weighted = (int)(i / 4 % 2);
    lane_coord a = {value(spread), value(spread)}, d = {value(spread), value(spread)};
    int ia = (int)(next() % 100), ib = ia + 1 + (int)(next() % 50), ic = ib + 1 + (int)(next() % 50);
    double k1 = (double)(ib - ia), k2 = (double)(ic - ia);
    lane_coord b = {a.w + k1 * d.w, a.s + k1 * d.s}, c = {a.w + k2 * d.w, a.s + k2 * d.s}; /* on a line */
    if (kind == 1) c.s += ldexp(1.0, ilogb(c.s) - 52 + (int)(next() % 3)); /* a unit or so off it */
    if (kind == 2) b = a;                                                 /* coinciding */
    if (!weighted) d.w = 0, b.w = 0, c.w = 0, a.w = 0;
    int got = weighted ? exact_coord_orient<true>(ia, a, ib, b, ic, c) : exact_coord_orient<false>(ia, a, ib, b, ic, c);
    if (got == 2) continue;
    hull_point pa = {{weighted ? a.w : ia, 0}, {a.s, 0}}, pb = {{weighted ? b.w : ib, 0}, {b.s, 0}},
               pc = {{weighted ? c.w : ic, 0}, {c.s, 0}};
    decided++, zero += got == 0, wrong += got != hull_orient_exact(pa, pb, pc);
  }
  printf("exact_coord_orient: %lld of %lld turns decided, %lld of them zero\n", (long long)decided, (long long)cases,
         (long long)zero);
  CHECK(wrong == 0 && 2 * decided > cases && 4 * zero > cases / 4,
        "exact_coord_orient: %lld of %lld decided turns differ from the expansions', %lld of %lld decided, %lld zero",
        (long long)wrong, (long long)decided, (long long)decided, (long long)cases, (long long)zero);
}

/* The exact sign of the turn of three points given as pairs, every coordinate of an axis scaled
 * by a power of two (a turn's sign is unchanged) so that the expansions of hull_orient_exact
 * neither overflow nor underflow; 2 where no one scale of an axis fits its nonzero parts. */
static int scaled_orient_exact(hull_point a, hull_point b, hull_point c) {
  dd *axes[2][3] = {{&a.w, &b.w, &c.w}, {&a.s, &b.s, &c.s}};
  for (int k = 0; k < 2; k++) {
    int hi = INT_MIN, lo = INT_MAX;
    for (int i = 0; i < 3; i++)
      for (double x : {axes[k][i]->hi, axes[k][i]->lo})
        if (x != 0) hi = std::max(hi, ilogb(x)), lo = std::min(lo, ilogb(x));
    if (hi == INT_MIN) continue;
    int e = 200 - hi; /* the largest part near 2^200 */
    if (lo + e < -600) return 2;
    for (int i = 0; i < 3; i++) axes[k][i]->hi = ldexp(axes[k][i]->hi, e), axes[k][i]->lo = ldexp(axes[k][i]->lo, e);
  }
  return hull_orient_exact(a, b, c);
}

/* coord_orient, the lane kernels' filter, against the exact turn at every corner of the boxes
 * its bounds give the points (the coordinates plus or minus their errors, pairs exact): where it
 * decides, every corner turns its way. Points near a line (collinear as rounded, or a few units
 * off it), ties of non-dyadic steps summed with their roundings, errors none, of a rounded point
 * (2^-52 of the largest coordinate, as own_error's) or larger, one bound for the three (a lane's
 * own turn) or one each (a walk's), in either order; magnitudes from 2^-1000 to 2^1000, so that
 * the filter's range (the bound above 2^-950) and products that overflow are met. Weighted, W a
 * coordinate with errors of its own. */
static void test_coord_orient(void) {
  uint64_t z = 777;
  auto next = [&z]() { return splitmix64(&z); };
  auto unit = [&next]() { return (double)(next() >> 11) * 0x1p-53; };
  auto ulps = [&next](double x, int most) { /* x moved by up to `most` units in the last place */
    int k = (int)(next() % (uint64_t)(2 * most + 1)) - most;
    for (; k > 0; k--) x = nextafter(x, INFINITY);
    for (; k < 0; k++) x = nextafter(x, -INFINITY);
    return x;
  };
  int64_t cases = 300000, decided = 0, wrong = 0, unscaled = 0;
  for (int64_t i = 0; i < cases; i++) {
    int weighted = (int)(i % 2), kind = (int)(i / 2 % 4);
    int e = (int)(next() % 2001) - 1000; /* the magnitude of the S steps */
    int ia = (int)(next() % 64), ib = ia + 1 + (int)(next() % 32), ic = ib + 1 + (int)(next() % 32);
    double step = ldexp(unit() + 0.5, e) * (next() & 1 ? 1 : -1), wstep = weighted ? unit() + 0.01 : 1;
    if (kind == 1) step = ldexp(0.1, e); /* ties: a non-dyadic step, summed */
    lane_coord a = {weighted ? unit() * 100 : 0, ldexp(unit() - 0.5, e + (int)(next() % 8))}, b = a, c = a;
    for (int k = ia; k < ic; k++) { /* the sums of equal steps, rounded as a lane sums them */
      if (k == ib) b = c;
      c.w += wstep, c.s += step;
    }
    if (kind == 2) c.s = ulps(c.s, 4), b.w = weighted ? ulps(b.w, 2) : b.w; /* a few units off the line */
    if (kind == 3) b.s = ulps(a.s + (b.s - a.s) * (1 + (unit() - 0.5) * 1e-12), 2); /* near it */
    double big = std::max(fabs(a.s), std::max(fabs(b.s), fabs(c.s)));
    int how = (int)(next() % 4);
    double err = how == 0 ? 0 : how == 1 ? 0x1p-52 * big : how == 2 ? 0x1p-40 * big : 0x1p-52 * big * unit();
    lane_bound ea = {weighted ? 0x1p-52 * c.w : 0, err}, eb = ea, ec = ea;
    if (next() & 1) eb.s = 0x1p-52 * big * unit(), ec.w = weighted ? 0x1p-50 * c.w * unit() : 0; /* a walk's */
    int reversed = (int)(next() & 1);
    int got = reversed ? -(weighted ? coord_orient<true>(ic, c, ec, ib, b, eb, ia, a, ea)
                                    : coord_orient<false>(ic, c, ec, ib, b, eb, ia, a, ea))
                       : (weighted ? coord_orient<true>(ia, a, ea, ib, b, eb, ic, c, ec)
                                   : coord_orient<false>(ia, a, ea, ib, b, eb, ic, c, ec));
    if (got == 0) continue;
    decided++;
    for (int corner = 0; corner < 64; corner++) { /* the sign of each error: S of a, b, c, then W */
      auto sign = [corner](int bit) { return corner >> bit & 1 ? 1.0 : -1.0; };
      if (!weighted && corner >= 8) break;
      hull_point pa = {{weighted ? a.w : ia, weighted ? sign(3) * ea.w : 0}, {a.s, sign(0) * ea.s}};
      hull_point pb = {{weighted ? b.w : ib, weighted ? sign(4) * eb.w : 0}, {b.s, sign(1) * eb.s}};
      hull_point pc = {{weighted ? c.w : ic, weighted ? sign(5) * ec.w : 0}, {c.s, sign(2) * ec.s}};
      int exact = scaled_orient_exact(pa, pb, pc);
      if (exact == 2) {
        unscaled++;
        break;
      }
      if (exact != got) {
        if (wrong++ < 3)
          printf("coord_orient %s %s: (%d, %a, %a) (%d, %a, %a) (%d, %a, %a), errors %a %a %a: %d, exact %d\n",
                 weighted ? "weighted" : "unweighted", reversed ? "reversed" : "in order", ia, a.w, a.s, ib, b.w,
                 b.s, ic, c.w, c.s, ea.s, eb.s, ec.s, got, exact);
        break;
      }
    }
  }
  /* a review's counterexample to a bound without det finite: one of the products overflows, the other not */
  lane_coord oa = {0, -0x1.7bd01e7e227d2p+1020}, ob = {0, 0x1.9aa8e796042a2p+1019}, oc = {0, 0x1.b76314b510b60p+1020};
  lane_bound none = {0, 0};
  int overflow = coord_orient<false>(0, oa, none, 5, ob, none, 7, oc, none);
  printf("coord_orient: %lld of %lld turns decided (%lld corners past the reference's range)\n", (long long)decided,
         (long long)cases, (long long)unscaled);
  CHECK(wrong == 0 && 8 * decided > cases && unscaled < cases / 100 && overflow == 0,
        "coord_orient: %lld of %lld decided turns differ from an exact corner's, %lld of %lld decided, %lld past "
        "the reference's range; on products that overflow apart it gives %d, not 0",
        (long long)wrong, (long long)decided, (long long)decided, (long long)cases, (long long)unscaled, overflow);
}

/* A device whose blocks opt in to 64 KB of shared memory (Turing): a weighted batch's rows over
 * two warps take chunks, not a block of four warps (73.5 KB), which an unweighted batch's still
 * take (39 KB); the fits as the CPU hull engine's either way. The options' gpu_block_rows lower
 * the limit, rounded down to the rows of a whole block (3000 is two warps' 2048, 500 a warp's
 * 1024), on either device. */
static void test_small_blocks(void) {
  const int64_t lens[] = {1000, 2000, 2049, 3000, 4096, 17};
  const int R = (int)(sizeof lens / sizeof lens[0]);
  int64_t o[R + 1];
  int64_t n = offsets_of(lens, R, o);
  double *y = (double *)malloc(n * sizeof *y), *w = (double *)malloc(n * sizeof *w);
  double *ref = (double *)malloc(n * sizeof *ref), *z = (double *)malloc(n * sizeof *z);
  for (int wk = W_NONE; wk <= W_UNIFORM; wk++) {
    gen_rows(FAM_SAWTOOTH, (weight_kind)wk, R, o, 41 + wk, 0, y, w);
    const double *wp = wk == W_NONE ? NULL : w;
    gpuiso_opts opt = options(1, 1024, 0);
    reference(R, o, y, wp, &opt, ref);
    opt.gpu_kernel = GPUISO_GPU_FAST;
    for (int turing = 0; turing <= 1; turing++)
      for (int asked : {0, 3000, 500}) {
        opt.gpu_block_rows = asked;
        gpuiso_error e;
        shared_log ex = {{&e, 0, 0, 0, 0, sim_seed}, {0}, {0}};
        if (turing) ex.optin = 64 << 10;
        gpuiso_status s = fit_rows_host(ex, R, o, GPUISO_DOUBLE, y, wp, &opt, z, NULL, &e);
        comparison c = compare_rows(R, o, y, ref, GPUISO_DOUBLE, z, 1, 0);
        int limit = asked == 500 ? SHORT_ROW_MAX : asked == 3000 || (turing && wp) ? 2 * SHORT_ROW_MAX : BLOCK_ROW_MAX;
        int routed = (ex.threads[1] == 4 * SIMT_WARP) == (limit == BLOCK_ROW_MAX) &&
                     (ex.bytes[1] > 0) == (limit > SHORT_ROW_MAX) && (ex.bytes[2] > 0) == (limit < BLOCK_ROW_MAX);
        CHECK(s == GPUISO_OK && c.max_dev <= 1e-12 && c.step_downs == 0 && routed && ex.held == 0,
              "%s, %s, gpu_block_rows %d: status %d (%s), deviation %g at %lld, blocks of %zu threads last, chunks %s",
              weight_names[wk], turing ? "64 KB a block" : "227 KB a block", asked, (int)s, e.message, c.max_dev,
              (long long)c.worst, ex.threads[1], ex.bytes[2] ? "taken" : "not taken");
      }
  }
  free(y); free(w); free(ref); free(z);
}

int main(void) {
  static void (*const tests[])(void) = {test_short_rows, test_planted_fault, test_exact_retry, test_exact_coord_orient,
                                         test_coord_orient, test_small_blocks};
  return run_under_seeds(tests, (int)(sizeof tests / sizeof tests[0]), "the CUDA engine on the CPU");
}

/* calibrate_isotonic() on the device (gpuiso_cuda_calibrate), written over an executor
 * (pipeline.cuh) so that the C tests run it on the CPU (tools/ctest). The input is checked on the
 * host first (calibrate_check), so the device sees only valid data. Then:
 *   1. the scores go up with the labels, weights and groups (in pinned slices where they are
 *      large, staging.cuh); a radix sort by the scores' order-preserving keys orders the
 *      elements by score, and with groups a second, stable radix sort of those positions by
 *      group orders them by group, then score;
 *   2. the elements are laid out as one stream: in score order (the pooled curve), then in group
 *      order (the groups' curves one after another). A knot starts where the score changes, at
 *      the start of the groups' part, or where the group changes; a scan numbers the knots;
 *   3. each knot's elements' w * y and w are summed in stream order, the CPU's order (a knot
 *      within one tile of run_sums: the same doubles as the CPU's);
 *   4. the knots of every curve are a row of one batch of the CUDA solver, with block flags, in
 *      opt->increasing's direction (the plan's options: a falling curve's blocks stay in score
 *      order, with its knots of weight zero where the CPU puts them);
 *   5. a scan numbers the blocks, their knots' weights are summed (run_sums), and a thread per
 *      block writes its first and last score, level and weight: only the blocks (in pinned
 *      slices where they are many), and where each curve's start, come back.
 * Device memory: about 130 bytes per element at the peak (while the stream, twice the input with
 * groups, is made from the sorted orders), plus the radix sort's scratch; buffers are released
 * as soon as their stage is over.
 */
#ifndef GPUISO_CUDA_CALIBRATE_CUH
#define GPUISO_CUDA_CALIBRATE_CUH

#include "pipeline.cuh"
#include "runs.cuh"
#include "staging.cuh"

struct calib_view {
  int64_t n, len, nrows;           /* elements; stream: n, or 2n with groups; curves */
  const double *score, *label, *w; /* input order; w NULL: 1 */
  const int *g;                    /* NULL: no groups */
  uint64_t *key, *key_sorted;      /* n: the scores' keys in input order, then sorted */
  int64_t *index, *by_score;       /* n: 0..n-1; the input indices in score order */
  uint32_t *group, *group_sorted;  /* n: the groups in score order, then sorted */
  int64_t *by_group;               /* n: positions in score order, by group then score */
  uint64_t *skey;                  /* len: the stream's keys, labels and weights (NULL: 1) */
  double *sy, *sw;
  int64_t *knot_at, *knot_first;   /* the knots of the stream (find_runs) */
  double *ksum;                    /* the knots' sums of w * y and w, interleaved */
  double *kx, *ky, *kw, *kfit;     /* the knots: score, mean label, weight, fit */
  uint8_t *kstart;                 /* 1 where a block starts */
  const int64_t *bound;            /* nrows + 1: where each curve starts in the stream */
  int64_t *row_knots;              /* nrows + 1: where each curve's knots start */
  int64_t *block_at, *block_first; /* the blocks of the knots (find_runs) */
  double *bw;                      /* the blocks' weights */
  gpuiso_block *blocks;
  int64_t *row_blocks;             /* nrows + 1: where each curve's blocks start */
};

struct calib_key_step {
  calib_view v;
  SIMT_DEVICE void operator()(int64_t i) const {
    v.key[i] = double_key(v.score[i]);
    v.index[i] = i;
  }
};

struct calib_group_step {
  calib_view v;
  SIMT_DEVICE void operator()(int64_t p) const { v.group[p] = (uint32_t)v.g[v.by_score[p]]; }
};

struct calib_stream_step {
  calib_view v;
  SIMT_DEVICE void operator()(int64_t s) const {
    int64_t p = s < v.n ? s : v.by_group[s - v.n], i = v.by_score[p];
    v.skey[s] = v.key_sorted[p];
    v.sy[s] = v.label[i];
    if (v.sw) v.sw[s] = v.w[i];
  }
};

/* A knot starts at stream position s. */
struct knot_starts {
  int64_t n;
  const uint64_t *key;
  const uint32_t *group; /* of the groups' part; NULL without groups */
  SIMT_DEVICE int operator()(int64_t s) const {
    if (s == 0 || s == n || key[s] != key[s - 1]) return 1;
    return s > n && group[s - n] != group[s - n - 1];
  }
};

struct block_starts {
  const uint8_t *start;
  SIMT_DEVICE int operator()(int64_t d) const { return start[d]; }
};

struct knot_weights {
  const double *w;
  SIMT_DEVICE item_values<1> operator()(int64_t d) const { return item_values<1>{{w[d]}}; }
};

/* Per knot: its score, weighted mean label and weight. */
struct calib_knot_step {
  calib_view v;
  SIMT_DEVICE void operator()(int64_t d) const {
    double sum = v.ksum[2 * d], weight = v.ksum[2 * d + 1];
    v.kx[d] = key_double(v.skey[v.knot_first[d]]);
    v.ky[d] = weight > 0 ? sum / weight : 0;
    v.kw[d] = weight;
  }
};

struct calib_row_knots_step {
  calib_view v;
  SIMT_DEVICE void operator()(int64_t r) const { v.row_knots[r] = v.knot_at[v.bound[r]]; }
};

/* Per block: its first and last score, level and weight (knots of weight 0 included). */
struct calib_block_step {
  calib_view v;
  SIMT_DEVICE void operator()(int64_t b) const {
    int64_t from = v.block_first[b], to = v.block_first[b + 1];
    v.blocks[b].lower = v.kx[from];
    v.blocks[b].upper = v.kx[to - 1];
    v.blocks[b].level = v.kfit[from];
    v.blocks[b].weight = v.bw[b];
  }
};

struct calib_row_blocks_step {
  calib_view v;
  SIMT_DEVICE void operator()(int64_t r) const { v.row_blocks[r] = v.block_at[v.row_knots[r]]; }
};

template <class Exec>
static void calib_release(Exec &ex, calib_view *v) {
  drop(ex, &v->score), drop(ex, &v->label), drop(ex, &v->w), drop(ex, &v->g);
  drop(ex, &v->key), drop(ex, &v->key_sorted), drop(ex, &v->index), drop(ex, &v->by_score);
  drop(ex, &v->group), drop(ex, &v->group_sorted), drop(ex, &v->by_group);
  drop(ex, &v->skey), drop(ex, &v->sy), drop(ex, &v->sw);
  drop(ex, &v->knot_at), drop(ex, &v->knot_first), drop(ex, &v->ksum);
  drop(ex, &v->kx), drop(ex, &v->ky), drop(ex, &v->kw), drop(ex, &v->kfit), drop(ex, &v->kstart);
  drop(ex, &v->bound), drop(ex, &v->row_knots), drop(ex, &v->block_at), drop(ex, &v->block_first);
  drop(ex, &v->bw), drop(ex, &v->blocks), drop(ex, &v->row_blocks);
}

/* Steps 1 and 2: the stream in v.skey, v.sy, v.sw. */
template <class Exec>
static gpuiso_status calib_stream(Exec &ex, calib_view &v, int64_t ngroups, const gpuiso_opts *opt,
                                  gpuiso_error *err) {
  int64_t n = v.n;
  gpuiso_status s = make(ex, &v.key, n);
  if (s == GPUISO_OK) s = make(ex, &v.key_sorted, n);
  if (s == GPUISO_OK) s = make(ex, &v.index, n);
  if (s == GPUISO_OK) s = make(ex, &v.by_score, n);
  if (s == GPUISO_OK) s = each(ex, calib_key_step{v}, n);
  if (s == GPUISO_OK) s = ex.sort_pairs(v.key, v.key_sorted, v.index, v.by_score, n, 64);
  if (v.g) {
    int bits = 1;
    while (bits < 32 && ((int64_t)1 << bits) < ngroups) bits++;
    if (s == GPUISO_OK) s = make(ex, &v.group, n);
    if (s == GPUISO_OK) s = make(ex, &v.group_sorted, n);
    if (s == GPUISO_OK) s = make(ex, &v.by_group, n);
    if (s == GPUISO_OK) s = each(ex, calib_group_step{v}, n);
    if (s == GPUISO_OK) s = ex.sort_pairs(v.group, v.group_sorted, v.index, v.by_group, n, bits);
  }
  if (s == GPUISO_OK) s = exec_poll(ex, opt, err);
  if (s == GPUISO_OK) s = make(ex, &v.skey, v.len);
  if (s == GPUISO_OK) s = make(ex, &v.sy, v.len);
  if (s == GPUISO_OK && v.w) s = make(ex, &v.sw, v.len);
  if (s == GPUISO_OK) s = each(ex, calib_stream_step{v}, v.len);
  drop(ex, &v.key), drop(ex, &v.key_sorted), drop(ex, &v.index), drop(ex, &v.by_score);
  drop(ex, &v.group), drop(ex, &v.by_group);
  return s;
}

/* gpuiso_cuda_calibrate over an executor. */
template <class Exec>
static gpuiso_status calibrate_device(Exec &ex, int64_t n, const double *score, const double *label,
                                      const double *w, const int *g, int64_t ngroups,
                                      const gpuiso_opts *opt, gpuiso_block **blocks,
                                      int64_t *first, gpuiso_error *err) {
  *blocks = NULL;
  if (!g) ngroups = 0;
  calib_view v;
  memset(&v, 0, sizeof v);
  v.n = n;
  v.nrows = 1 + ngroups;
  v.len = g ? 2 * n : n;
  int64_t nrows = v.nrows, nknots = 0, nblocks = 0;
  /* bound: 0, n, then n plus the elements of the groups before each */
  int64_t *bound = (int64_t *)malloc(((size_t)nrows + 1) * sizeof *bound);
  int64_t *row_knots = (int64_t *)malloc(((size_t)nrows + 1) * sizeof *row_knots);
  gpuiso_status s = GPUISO_E_NOMEM;
  if (!bound || !row_knots) set_error(err, s, -1, -1);
  else s = calibrate_check(n, score, label, w, g, ngroups, opt, bound + 2, err);
  if (s != GPUISO_OK) {
    free(bound);
    free(row_knots);
    return s;
  }
  bound[0] = 0;
  bound[1] = n;
  for (int64_t r = 2; r <= nrows; r++) bound[r] += bound[r - 1];
  gpuiso_cuda_plan plan;
  int planned = 0;
  gpuiso_block *out = NULL;
  staging<Exec> st; /* sized for the largest array it carries: the blocks, at most one a stream element */

  s = stage_open(ex, &st, (size_t)v.len * sizeof(gpuiso_block), resolve_threads(opt, n));
  if (s == GPUISO_OK) s = stage_upload(ex, &st, &v.score, score, n);
  if (s == GPUISO_OK) s = stage_upload(ex, &st, &v.label, label, n);
  if (s == GPUISO_OK) s = stage_upload(ex, &st, &v.w, w, n);
  if (s == GPUISO_OK) s = stage_upload(ex, &st, &v.g, g, n);
  if (s == GPUISO_OK) s = calib_stream(ex, v, ngroups, opt, err);
  drop(ex, &v.score), drop(ex, &v.label), drop(ex, &v.w), drop(ex, &v.g);

  /* step 3: the knots, and where each curve's start */
  if (s == GPUISO_OK)
    s = find_runs(ex, knot_starts{n, v.skey, v.group_sorted}, v.len, &v.knot_at, &v.knot_first, &nknots);
  if (s == GPUISO_OK) s = stage_upload(ex, &st, &v.bound, bound, nrows + 1);
  if (s == GPUISO_OK) s = make(ex, &v.row_knots, nrows + 1);
  if (s == GPUISO_OK) s = each(ex, calib_row_knots_step{v}, nrows + 1);
  if (s == GPUISO_OK) s = ex.get(row_knots, v.row_knots, ((size_t)nrows + 1) * sizeof *row_knots);
  if (s == GPUISO_OK) s = make(ex, &v.kx, nknots);
  if (s == GPUISO_OK) s = make(ex, &v.ky, nknots);
  if (s == GPUISO_OK) s = make(ex, &v.kw, nknots);
  if (s == GPUISO_OK) s = make(ex, &v.ksum, 2 * nknots);
  if (s == GPUISO_OK)
    s = run_sums<2>(ex, stream_values{v.sy, v.sw}, v.len, v.knot_at, v.knot_first, nknots, v.ksum);
  if (s == GPUISO_OK) s = each(ex, calib_knot_step{v}, nknots);
  drop(ex, &v.skey), drop(ex, &v.sy), drop(ex, &v.sw), drop(ex, &v.group_sorted);
  drop(ex, &v.knot_at), drop(ex, &v.knot_first), drop(ex, &v.ksum);
  if (s == GPUISO_OK) s = exec_poll(ex, opt, err);

  /* step 4: one batch of the solver */
  if (s == GPUISO_OK) s = plan_init(ex, &plan, nrows, row_knots, GPUISO_DOUBLE, 1, opt, err);
  planned = s == GPUISO_OK;
  if (s == GPUISO_OK) s = make(ex, &v.kfit, nknots);
  if (s == GPUISO_OK) s = make(ex, &v.kstart, nknots);
  if (s == GPUISO_OK) {
    s = plan_fit(ex, &plan, (const double *)v.ky, (const double *)v.kw, v.kfit, v.kstart, err);
    if (s != GPUISO_OK && err && err->row >= 0) {
      err->index = -1; /* a knot, not an element */
      err->row -= 1;   /* row 0 is the pooled curve (-1), row k + 1 group k */
    }
  }
  if (planned) plan_release(ex, &plan);
  drop(ex, &v.ky);

  /* step 5: the blocks */
  if (s == GPUISO_OK)
    s = find_runs(ex, block_starts{v.kstart}, nknots, &v.block_at, &v.block_first, &nblocks);
  if (s == GPUISO_OK) s = make(ex, &v.bw, nblocks);
  if (s == GPUISO_OK)
    s = run_sums<1>(ex, knot_weights{v.kw}, nknots, v.block_at, v.block_first, nblocks, v.bw);
  if (s == GPUISO_OK) s = make(ex, &v.blocks, nblocks);
  if (s == GPUISO_OK) s = make(ex, &v.row_blocks, nrows + 1);
  if (s == GPUISO_OK) s = each(ex, calib_block_step{v}, nblocks);
  if (s == GPUISO_OK) s = each(ex, calib_row_blocks_step{v}, nrows + 1);
  if (s == GPUISO_OK) {
    out = (gpuiso_block *)malloc((size_t)(nblocks > 0 ? nblocks : 1) * sizeof *out);
    if (!out) {
      s = GPUISO_E_NOMEM;
      set_error(err, s, -1, -1);
    }
  }
  if (s == GPUISO_OK) s = stage_get(ex, &st, out, v.blocks, (size_t)nblocks * sizeof *out);
  if (s == GPUISO_OK) s = ex.get(first, v.row_blocks, ((size_t)nrows + 1) * sizeof *first);
  stage_close(ex, &st);
  calib_release(ex, &v);
  free(bound);
  free(row_knots);
  if (s != GPUISO_OK) {
    free(out);
    return s;
  }
  *blocks = out;
  return GPUISO_OK;
}

#endif

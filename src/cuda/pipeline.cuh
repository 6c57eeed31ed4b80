/* The CUDA engine's host side, written once over an executor that runs either on the GPU
 * (exec.cuh: cudaMalloc, checked launches and copies) or on the CPU (tools/simt/sim_exec.h: the
 * SIMT executor): the row layout, the scratch memory, the order of the stages, error reports and
 * interrupts.
 *
 * An executor provides, each returning a gpuiso_status and filling its error on failure:
 *   alloc(&p, bytes), release(p), guard(p, bytes) (memory of an allocation that nothing may
 *   touch; a check of the SIMT executor), available(&bytes) (device memory free now), put(device, host,
 *   bytes), get(host, device, bytes) (which waits for the work before it), fill(device, byte,
 *   bytes), launch(name, kernel, grid, block, shared bytes, arguments...), allow_shared(kernel,
 *   bytes) and sync(); each(ex, step, count) (launch.cuh) runs step(i) for i < count. The
 *   calibration (calibrate.cuh) also needs sort_pairs(keys_in, keys_out, values_in, values_out,
 *   count, end_bit) (stable, by the key's bits below end_bit) and exclusive_sum(data, count) (in
 *   place); the fit on unsorted x (fit_xy.cuh) those too. The host sides that copy host arrays
 *   (host_fit.cuh, fit_xy.cuh, soft.cuh, vjp.cuh, predict.cuh, idr.cuh, calibrate.cuh) need the
 *   lanes of staged transfers (staging.cuh, sort_exec.cuh), on which launches, copies and sync
 *   are ordered while use_lane names one.
 */
#ifndef GPUISO_CUDA_PIPELINE_CUH
#define GPUISO_CUDA_PIPELINE_CUH

#include <stdlib.h>

#include "chunk_hulls.cuh"
#include "chunks.cuh"
#include "launch.cuh"
#include "merge_level.cuh"
#include "reconstruct.cuh"
#include "row_pav.cuh"
#include "row_scans.cuh"
#include "short_rows.cuh"

struct gpuiso_cuda_plan {
  int64_t nrows, n, nchunks, max_chunks; /* max_chunks: of any row, for the merge levels */
  gpuiso_precision type;
  gpuiso_opts opt;
  int64_t chunk, cap;
  /* device memory */
  int64_t *offsets, *chunk_base, *chunk_row;
  chunk_total *tot;
  hull_point *starts;
  double *vd; /* the slots (hull/slots.h): (W, S) a vertex, S alone where the plan is unweighted */
  int32_t *vi;
  hull_segment *seg;
  int64_t *nseg;
  row_state *rows;
  unsigned long long *failed_row;
  double *pav_sum, *pav_weight;
  int64_t *pav_start;
  int64_t npacks, *pack_row, *pack_first; /* the short rows' warps: pack k holds rows
                                            pack_row[pack_first[k]..pack_first[k + 1]) */
  int64_t nblock_rows, *block_row; /* the longer rows of the lane kernels, a block each: */
  int64_t block_rows_of[2];        /* first those of two warps, then those of four */
  int64_t *merge_node;             /* the fast path's merges, level by level: their left nodes */
  int64_t level_start[65];         /* (host) where each level's merges start in merge_node */
  int64_t ntiles, *tile_base, *tile_row; /* the fast path's tiles of chunks (row_scans.cuh) */
  unsigned *retry; /* the lane kernels' lane_retry: its count, then its list */
  row_tile *tiles;
  void *arena; /* the device memory of all of them (plan_init's parts) */
};

template <class Exec>
static void plan_release(Exec &ex, gpuiso_cuda_plan *p) {
  ex.release(p->arena);
  p->arena = NULL;
}

/* The plan's device arrays (and a slice's, host_fit.cuh) are the parts of one allocation: as many
 * cudaMalloc and cudaFree (each cudaFree a wait for the device) and copies as arrays would cost
 * more than the run of a small plan. The parts made on the host (a plan's layouts) come first,
 * written into one host buffer and copied in one put. Each part is followed by a gap of at least
 * ARENA_ALIGN bytes, which the executor may guard (the SIMT executor makes it unaddressable, so
 * that a kernel reaching past a part is caught as past an allocation of its own). */
/* (ARENA_ALIGN and ARENA_PARTS: gpu_plan.h, where the bytes a fit asks for are counted) */

typedef struct {
  size_t bytes;      /* of the parts so far, their gaps included */
  size_t host_bytes; /* of the host-made parts, which come first */
  char *host;        /* their host buffer (arena_host) */
  int count;
  void **field[ARENA_PARTS];
  size_t at[ARENA_PARTS], len[ARENA_PARTS];
} part_arena;

/* A part of count elements of size bytes for *field (which stays NULL for none); where it is. */
static size_t arena_part(part_arena *a, void *field, int64_t count, size_t size) {
  size_t at = a->bytes;
  if (count <= 0) return at;
  a->field[a->count] = (void **)field;
  a->at[a->count] = at;
  a->len[a->count++] = (size_t)count * size;
  a->bytes += ((size_t)count * size + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN + ARENA_ALIGN;
  return at;
}

/* The host buffer of the parts so far: the host-made ones. Returns 0 out of memory. */
static int arena_host(part_arena *a) {
  a->host_bytes = a->bytes;
  a->host = (char *)malloc(a->bytes > 0 ? a->bytes : 1);
  return a->host != NULL;
}

static int64_t *arena_at(const part_arena *a, size_t at) { return (int64_t *)(a->host + at); }

/* The device memory of every part, the host-made ones copied in, the gaps guarded (at *base,
 * released by plan_release, on failure too); the host buffer freed. */
template <class Exec>
static gpuiso_status arena_make(Exec &ex, part_arena *a, void **base) {
  gpuiso_status s = ex.alloc(base, a->bytes);
  for (int k = 0; s == GPUISO_OK && k < a->count; k++) *a->field[k] = (char *)*base + a->at[k];
  if (s == GPUISO_OK && a->host_bytes > 0) s = ex.put(*base, a->host, a->host_bytes);
  for (int k = 0; s == GPUISO_OK && k < a->count; k++) {
    size_t end = a->at[k] + a->len[k], next = k + 1 < a->count ? a->at[k + 1] : a->bytes;
    ex.guard((char *)*base + end, next - end);
  }
  free(a->host);
  a->host = NULL;
  return s;
}

/* The rows of the lane kernels (host): those of up to SHORT_ROW_MAX listed in order (rows) and
 * packed into warps (first: where each warp's rows start in the list, k + 1 entries for k
 * warps, as lane_rows_kernel finds their lanes), the longer ones listed for a block each
 * (blocks: those of two warps, then those of four, so that each launch has the threads of its
 * rows); rows over block_rows (plan_block_rows) are the chunks'. Counts them into l; where the
 * lists are given (of the sizes counted by a first call without them), lists them. */
typedef struct {
  int64_t nrows, npacks, nblocks, blocks_of[2];
} lane_layout;

static void pack_rows(int64_t nrows, const int64_t *offsets, int64_t block_rows, lane_layout *l, int64_t *rows,
                      int64_t *first, int64_t *blocks) {
  int64_t at[2] = {0, l->blocks_of[0]}; /* where each kind of block row goes, when listed */
  l->nrows = l->npacks = l->blocks_of[0] = l->blocks_of[1] = 0;
  int used = SIMT_WARP; /* the first short row opens a warp */
  for (int64_t r = 0; r < nrows; r++) {
    int64_t len = offsets[r + 1] - offsets[r];
    if (len > SHORT_ROW_MAX) {
      int four = len > 2 * SHORT_ROW_MAX;
      if (len > block_rows) continue;
      if (blocks) blocks[at[four]++] = r;
      l->blocks_of[four]++;
      continue;
    }
    int lanes = short_row_lanes(len);
    int place = short_row_place(used, lanes);
    if (place < 0) {
      if (first) first[l->npacks] = l->nrows;
      l->npacks++, place = 0;
    }
    used = place + lanes;
    if (rows) rows[l->nrows] = r;
    l->nrows++;
  }
  if (first) first[l->npacks] = l->nrows;
  l->nblocks = l->blocks_of[0] + l->blocks_of[1];
}

/* The lane kernels' lists (pack_rows) as host-made parts of the plan: at[] where they are. */
static void lane_parts(part_arena *a, gpuiso_cuda_plan *p, int64_t nrows, const int64_t *offsets,
                       lane_layout *l, size_t at[3]) {
  memset(l, 0, sizeof *l);
  pack_rows(nrows, offsets, plan_block_rows(&p->opt), l, NULL, NULL, NULL);
  p->npacks = l->npacks, p->nblock_rows = l->nblocks;
  p->block_rows_of[0] = l->blocks_of[0], p->block_rows_of[1] = l->blocks_of[1];
  at[0] = arena_part(a, &p->pack_row, l->nrows, sizeof(int64_t));
  at[1] = arena_part(a, &p->pack_first, l->npacks + 1, sizeof(int64_t));
  at[2] = arena_part(a, &p->block_row, l->nblocks, sizeof(int64_t));
}

static void lane_fill(const part_arena *a, const gpuiso_cuda_plan *p, int64_t nrows, const int64_t *offsets,
                      lane_layout *l, const size_t at[3]) {
  pack_rows(nrows, offsets, plan_block_rows(&p->opt), l, arena_at(a, at[0]), arena_at(a, at[1]), arena_at(a, at[2]));
}

/* The lane kernels' lane_retry, which each launch of them reuses: a count and a block each of the
 * largest (of the short rows' packs, the block rows of either size, the chunks of the fast path). */
static void retry_part(part_arena *a, gpuiso_cuda_plan *p) {
  int64_t most = p->npacks > p->block_rows_of[0] ? p->npacks : p->block_rows_of[0];
  most = p->block_rows_of[1] > most ? p->block_rows_of[1] : most;
  if (p->opt.gpu_kernel == GPUISO_GPU_FAST) most = p->nchunks > most ? p->nchunks : most;
  if (most > 0) arena_part(a, &p->retry, 1 + most, sizeof(unsigned));
}

/* The rows' states (all but the row-PAV control, which checks nothing) and the failed-row word
 * (every plan: a group reads it back whatever the kernel), on the device alone. */
static void row_parts(part_arena *a, gpuiso_cuda_plan *p, int64_t nrows) {
  if (p->opt.gpu_kernel != GPUISO_GPU_ROW_PAV) arena_part(a, &p->rows, nrows, sizeof(row_state));
  arena_part(a, &p->failed_row, 1, sizeof(unsigned long long));
}

/* The arena made, with the rows' offsets (copied from the caller's); on failure what was
 * allocated is released. */
template <class Exec>
static gpuiso_status plan_make(Exec &ex, gpuiso_cuda_plan *p, part_arena *a, const int64_t *offsets) {
  arena_part(a, &p->offsets, p->nrows + 1, sizeof(int64_t));
  gpuiso_status s = arena_make(ex, a, &p->arena);
  if (s == GPUISO_OK) s = ex.put(p->offsets, offsets, ((size_t)p->nrows + 1) * sizeof(int64_t));
  if (s != GPUISO_OK) plan_release(ex, p);
  return s;
}

/* A plan of the lane kernels alone: the lanes' lists, the rows' offsets and states. */
template <class Exec>
static gpuiso_status plan_init_short(Exec &ex, gpuiso_cuda_plan *p, int64_t nrows,
                                     const int64_t *offsets, gpuiso_error *err) {
  p->nchunks = p->max_chunks = 0;
  part_arena a;
  memset(&a, 0, sizeof a);
  lane_layout l;
  size_t at[3];
  lane_parts(&a, p, nrows, offsets, &l, at);
  if (!arena_host(&a)) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  lane_fill(&a, p, nrows, offsets, &l, at);
  row_parts(&a, p, nrows);
  retry_part(&a, p);
  return plan_make(ex, p, &a, offsets);
}

/* The fast path's merges, level by level: at span 2^l, the left node of each merge, rows in
 * order; level_start[l] where level l's begin. merge_levels counts them (their total), merge_fill
 * lists them. */
static int64_t merge_levels(gpuiso_cuda_plan *p, int64_t nrows, const int64_t *base) {
  int64_t count[65] = {0}, levels = 0;
  for (int64_t r = 0; r < nrows; r++) {
    int64_t m = base[r + 1] - base[r], l = 0;
    for (int64_t span = 1; span < m; span *= 2, l++) count[l] += (m - span + 2 * span - 1) / (2 * span);
    levels = l > levels ? l : levels;
  }
  p->level_start[0] = 0;
  for (int64_t l = 0; l < 64; l++) p->level_start[l + 1] = p->level_start[l] + count[l];
  return p->level_start[levels];
}

static void merge_fill(const gpuiso_cuda_plan *p, int64_t nrows, const int64_t *base, int64_t *node) {
  int64_t at[64];
  memcpy(at, p->level_start, sizeof at);
  for (int64_t r = 0; r < nrows; r++) {
    int64_t m = base[r + 1] - base[r], l = 0;
    for (int64_t span = 1; span < m; span *= 2, l++)
      for (int64_t j = 0; j + span < m; j += 2 * span) node[at[l]++] = base[r] + j;
  }
}

/* The fast path's tiles of chunks (row_scans.cuh): each row's first tile (first), the row of each
 * tile (row). */
static int64_t tile_count(int64_t nrows, const int64_t *base) {
  int64_t n = 0;
  for (int64_t r = 0; r < nrows; r++) n += (base[r + 1] - base[r] + ROW_TILE_CHUNKS - 1) / ROW_TILE_CHUNKS;
  return n;
}

static void tile_fill(int64_t nrows, const int64_t *base, int64_t *first, int64_t *row) {
  first[0] = 0;
  for (int64_t r = 0; r < nrows; r++) {
    first[r + 1] = first[r] + (base[r + 1] - base[r] + ROW_TILE_CHUNKS - 1) / ROW_TILE_CHUNKS;
    for (int64_t t = first[r]; t < first[r + 1]; t++) row[t] = r;
  }
}

/* The options of plans on the executor's device: the lane kernels' rows no longer than its blocks
 * hold in shared memory (gpu_block_rows: a weighted batch's block of four warps takes 73.5 KB,
 * over the 64 KB of a Turing block; two warps take 37.7 KB, which every device gives), the
 * longer ones in chunks. plan_init takes them, and so do the bytes counted for its plans
 * (fit_rows_host), so that both agree. */
template <class Exec>
static gpuiso_status device_options(Exec &ex, const gpuiso_opts *opt, int weighted, gpuiso_opts *o) {
  *o = *opt;
  size_t most = 0;
  gpuiso_status s = ex.shared_optin(&most);
  int64_t rows = plan_block_rows(opt);
  while (s == GPUISO_OK && rows > SHORT_ROW_MAX && lane_rows_shared((int)(rows / SIMT_WARP), weighted) > most) rows /= 2;
  o->gpu_block_rows = (int)rows;
  return s;
}

/* The layout of the rows in chunks (host), then the device memory of opt->gpu_kernel's kernels,
 * as plan_row_bytes counts it; a plan not weighted fits no weighted rows. On the fast path the
 * rows of up to the device's gpu_block_rows (device_options) take no chunks: they are the lane
 * kernels' (lane_parts), in a plan of their own where no row is longer. On failure what was allocated is released. */
template <class Exec>
static gpuiso_status plan_init(Exec &ex, gpuiso_cuda_plan *p, int64_t nrows,
                               const int64_t *offsets, gpuiso_precision type, int weighted,
                               const gpuiso_opts *opt_in, gpuiso_error *err) {
  memset(p, 0, sizeof *p);
  gpuiso_status s = device_options(ex, opt_in, weighted, &p->opt);
  if (s != GPUISO_OK) return s;
  const gpuiso_opts *opt = &p->opt;
  p->nrows = nrows;
  p->n = offsets[nrows];
  p->type = type;
  p->chunk = plan_chunk(opt);
  p->cap = opt->hull_walk_cap > 0 ? opt->hull_walk_cap : GPU_DEFAULT_CAP;
  int64_t longest = plan_longest(nrows, offsets);
  if (plan_short(opt, longest)) return plan_init_short(ex, p, nrows, offsets, err);
  int64_t *base = (int64_t *)malloc(((size_t)nrows + 1) * sizeof *base);
  if (!base) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  base[0] = 0;
  int64_t lane_rows = 0;
  for (int64_t r = 0; r < nrows; r++) {
    int64_t len = offsets[r + 1] - offsets[r];
    int on_lanes = plan_on_lanes(opt, len);
    int64_t m = on_lanes ? 0 : (len + p->chunk - 1) / p->chunk;
    base[r + 1] = base[r] + m;
    p->max_chunks = m > p->max_chunks ? m : p->max_chunks;
    lane_rows += on_lanes && len > 0;
  }
  p->nchunks = base[nrows];
  int64_t M = p->nchunks, slots = M * (p->chunk + 1);
  int fast = opt->gpu_kernel == GPUISO_GPU_FAST;

  part_arena a;
  memset(&a, 0, sizeof a);
  size_t at_base = arena_part(&a, &p->chunk_base, nrows + 1, sizeof(int64_t));
  size_t at_row = arena_part(&a, &p->chunk_row, M, sizeof(int64_t));
  size_t at_node = 0, at_tile_base = 0, at_tile_row = 0, at_lanes[3];
  if (fast) {
    at_node = arena_part(&a, &p->merge_node, merge_levels(p, nrows, base), sizeof(int64_t));
    p->ntiles = tile_count(nrows, base);
    at_tile_base = arena_part(&a, &p->tile_base, nrows + 1, sizeof(int64_t));
    at_tile_row = arena_part(&a, &p->tile_row, p->ntiles, sizeof(int64_t));
  }
  lane_layout l;
  if (lane_rows > 0) lane_parts(&a, p, nrows, offsets, &l, at_lanes);
  if (!arena_host(&a)) {
    free(base);
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  memcpy(arena_at(&a, at_base), base, ((size_t)nrows + 1) * sizeof *base);
  for (int64_t r = 0; r < nrows; r++)
    for (int64_t c = base[r]; c < base[r + 1]; c++) arena_at(&a, at_row)[c] = r;
  if (fast) {
    merge_fill(p, nrows, base, arena_at(&a, at_node));
    tile_fill(nrows, base, arena_at(&a, at_tile_base), arena_at(&a, at_tile_row));
  }
  if (lane_rows > 0) lane_fill(&a, p, nrows, offsets, &l, at_lanes);
  free(base);

  row_parts(&a, p, nrows);
  if (opt->gpu_kernel == GPUISO_GPU_ROW_PAV) {
    arena_part(&a, &p->pav_sum, p->n, sizeof(double));
    arena_part(&a, &p->pav_weight, p->n, sizeof(double));
    arena_part(&a, &p->pav_start, p->n, sizeof(int64_t));
  } else {
    arena_part(&a, &p->tot, M, sizeof(chunk_total));
    arena_part(&a, &p->starts, M, sizeof(hull_point));
    arena_part(&a, &p->vd, slots * (weighted ? 2 : 1), sizeof(double));
    arena_part(&a, &p->vi, slots, sizeof(int32_t));
    arena_part(&a, &p->seg, M, sizeof(hull_segment));
    arena_part(&a, &p->nseg, M, sizeof(int64_t));
  }
  if (fast) arena_part(&a, &p->tiles, p->ntiles, sizeof(row_tile));
  retry_part(&a, p);
  return plan_make(ex, p, &a, offsets);
}

template <typename T>
static solver_view<T> plan_view(const gpuiso_cuda_plan *p, const T *y, const T *w, T *fit,
                                uint8_t *start) {
  solver_view<T> v;
  v.nrows = p->nrows;
  v.nchunks = p->nchunks;
  v.chunk = p->chunk;
  v.cap = p->cap;
  v.offsets = p->offsets;
  v.chunk_base = p->chunk_base;
  v.chunk_row = p->chunk_row;
  v.y = y;
  v.w = w;
  v.fit = fit;
  v.start = start;
  v.edge_start = p->opt.solver_blocks ? start : NULL;
  v.sign = p->opt.increasing ? 1.0 : -1.0;
  v.plain_sums = p->opt.gpu_plain_sums;
  v.lo = p->opt.lo;
  v.hi = p->opt.hi;
  v.tot = p->tot;
  v.starts = p->starts;
  v.vd = p->vd;
  v.weighted = w != NULL; /* a weighted plan's slots hold unweighted rows with room to spare */
  v.vi = p->vi;
  v.seg = p->seg;
  v.nseg = p->nseg;
  v.rows = p->rows;
  v.failed_row = p->failed_row;
  v.pav_sum = p->pav_sum;
  v.pav_weight = p->pav_weight;
  v.pav_start = p->pav_start;
  v.ntiles = p->ntiles;
  v.tile_base = p->tile_base;
  v.tile_row = p->tile_row;
  v.tiles = p->tiles;
  return v;
}

/* Waits for the work so far and polls the interrupt of opt. */
template <class Exec>
static gpuiso_status exec_poll(Exec &ex, const gpuiso_opts *opt, gpuiso_error *err) {
  gpuiso_status s = ex.sync();
  if (s == GPUISO_OK && poll_interrupt(opt)) {
    s = GPUISO_E_INTERRUPT;
    set_error(err, s, -1, -1);
  }
  return s;
}

/* The error of row `failed` (NO_FAILED_ROW: none). */
template <class Exec, typename T>
static gpuiso_status row_error(Exec &ex, solver_view<T> v, unsigned long long failed, gpuiso_error *err) {
  if (failed == NO_FAILED_ROW) return GPUISO_OK;
  row_state bad;
  gpuiso_status s = ex.get(&bad, v.rows + failed, sizeof bad);
  if (s != GPUISO_OK) return s;
  set_error(err, (gpuiso_status)bad.status, bad.index, (int64_t)failed);
  return (gpuiso_status)bad.status;
}

/* The error of the first failing row, if any. */
template <class Exec, typename T>
static gpuiso_status row_failure(Exec &ex, solver_view<T> v, gpuiso_error *err) {
  unsigned long long failed;
  gpuiso_status s = ex.get(&failed, v.failed_row, sizeof failed);
  return s == GPUISO_OK ? row_error(ex, v, failed, err) : s;
}

/* A lane kernel's compile-time choices: whether the batch is weighted, and its instance
 * (lane_retry). Its sums are exact_sums, or plain_sums by the view (lane_points_as). */
template <bool Weighted, bool Exact>
struct lane_choice {
  static const bool weighted = Weighted, exact = Exact;
};

/* The lane kernel pick(lane_choice) returns for the batch's weights and the instance. */
template <bool Exact, typename T, class Pick>
static auto lane_kernel(const solver_view<T> &v, Pick pick) -> decltype(pick(lane_choice<true, Exact>())) {
  return v.w ? pick(lane_choice<true, Exact>()) : pick(lane_choice<false, Exact>());
}

/* The most blocks of a lane kernel's exact launch (lane_launch), which stride over the blocks
 * listed: about a wave of an H100's or H200's warps at 16 an SM (132 SMs), where every block is
 * listed, and a launch of a few microseconds where none is. */
#define LANE_RETRY_GRID 2048

/* A lane kernel's filtered instance on `blocks` blocks, then its exact one (named apart) on those
 * that the first left to it (lane_retry). */
template <class Exec, class... P, class... A>
static gpuiso_status lane_pair_launch(Exec &ex, const char *name, void (*filtered)(P...), const char *exact_name,
                                      void (*exact)(P...), int64_t blocks, dim3 block, size_t shared, lane_retry r,
                                      A... args) {
  gpuiso_status s = ex.fill(r.count, 0, sizeof *r.count);
  if (s == GPUISO_OK) s = ex.launch(name, filtered, grid_of(blocks), block, shared, args..., r);
  if (s == GPUISO_OK)
    s = ex.launch(exact_name, exact, grid_of(blocks < LANE_RETRY_GRID ? blocks : LANE_RETRY_GRID), block, shared,
                  args..., r);
  return s;
}

/* lane_pair_launch of the instances of the lane kernel that pick gives (lane_kernel), on the
 * plan's lane_retry. */
template <class Exec, typename T, class Pick, class... A>
static gpuiso_status lane_launch(Exec &ex, const gpuiso_cuda_plan *p, const solver_view<T> &v, const char *name,
                                 const char *exact_name, Pick pick, int64_t blocks, dim3 block, size_t shared,
                                 A... args) {
  lane_retry r = {p->retry, p->retry + 1};
  return lane_pair_launch(ex, name, lane_kernel<false>(v, pick), exact_name, lane_kernel<true>(v, pick), blocks, block,
                          shared, r, args...);
}

/* The fast path's rows of up to BLOCK_ROW_MAX (lane_rows_kernel): a warp per pack of short rows,
 * a block per longer row (a launch for those of two warps, one for those of four), each a
 * lane_launch, named as its stage: short_rows_kernel, block_rows_kernel. Their failures lower
 * v.failed_row. */
template <class Exec, typename T>
static gpuiso_status fit_short(Exec &ex, const gpuiso_cuda_plan *p, solver_view<T> v) {
  gpuiso_status s = GPUISO_OK;
  auto lane_rows = [](auto c) {
    return lane_rows_kernel<T, exact_sums, decltype(c)::weighted, decltype(c)::exact>;
  };
  if (p->npacks > 0)
    s = lane_launch(ex, p, v, "short_rows_kernel", "short_rows_kernel_exact", lane_rows, p->npacks, dim3(SIMT_WARP),
                    lane_rows_shared(SIMT_WARP, v.w != NULL), v, (const int64_t *)p->pack_row,
                    (const int64_t *)p->pack_first);
  /* the opt-in of the blocks of four warps (of the batch's weights: the kernels' instances differ),
   * the same for every plan, never lowered for a smaller launch while a larger one may be queued on
   * another lane; none where device_options leaves no such rows (a weighted batch on Turing) */
  size_t most = lane_rows_shared(4 * SIMT_WARP, v.w != NULL);
  if (s == GPUISO_OK && p->block_rows_of[1] > 0) s = ex.allow_shared(lane_kernel<false>(v, lane_rows), most);
  if (s == GPUISO_OK && p->block_rows_of[1] > 0) s = ex.allow_shared(lane_kernel<true>(v, lane_rows), most);
  int64_t first = 0; /* the rows of two warps, then of four, a launch each */
  for (int k = 0; k < 2; first += p->block_rows_of[k++]) {
    int threads = 2 * SIMT_WARP << k;
    if (s == GPUISO_OK && p->block_rows_of[k] > 0)
      s = lane_launch(ex, p, v, "block_rows_kernel", "block_rows_kernel_exact", lane_rows, p->block_rows_of[k],
                      dim3((unsigned)threads), lane_rows_shared(threads, v.w != NULL), v,
                      (const int64_t *)p->block_row + first, (const int64_t *)NULL);
  }
  return s;
}

/* The simple path: totals and checks, chunk hulls, merge levels, reconstruction. The fast path
 * for rows over BLOCK_ROW_MAX, as far as it is built: the same with a warp per chunk for its
 * totals and its hull (chunk_hulls.cuh), segmented reductions and scans over tiles of a row's
 * chunks for the passes over a row (row_scans.cuh), and a warp per tile of a chunk in the
 * reconstruction (reconstruct.cuh). All queued at once: the stages after the checks pass failed
 * rows by (row_failed), whose failures v.failed_row holds. */
template <class Exec, typename T>
static gpuiso_status fit_simple(Exec &ex, const gpuiso_cuda_plan *p, solver_view<T> v) {
  int64_t M = p->nchunks, R = p->nrows;
  int fast = p->opt.gpu_kernel == GPUISO_GPU_FAST;
  gpuiso_status s = fast ? ex.launch("chunk_totals_kernel", chunk_totals_kernel<T>,
                                     grid_of((M + TOTALS_WARPS - 1) / TOTALS_WARPS),
                                     dim3(TOTALS_WARPS * SIMT_WARP), 0, v)
                         : each(ex, totals_step<T>{v}, M);
  if (s == GPUISO_OK) s = fast ? scan_row_checks(ex, v) : each(ex, row_scale_step<T>{v}, R);
  if (s == GPUISO_OK) s = each(ex, rescale_step<T>{v}, M);
  if (s == GPUISO_OK) s = fast ? scan_row_starts(ex, v) : each(ex, row_starts_step<T>{v}, R);
  if (s == GPUISO_OK && fast && p->chunk <= SHORT_ROW_MAX)
    s = lane_launch(ex, p, v, "chunk_hulls_kernel", "chunk_hulls_kernel_exact", [](auto c) {
          return chunk_hulls_kernel<T, exact_sums, decltype(c)::weighted, decltype(c)::exact>;
        }, M, dim3(SIMT_WARP), chunk_hulls_shared(v.w != NULL), v);
  else if (s == GPUISO_OK)
    s = each(ex, chunk_hull_step<T>{v}, M);
  int wide_warps = fast && p->chunk <= FIT_TILE; /* wide_level_warp_kernel's chunks */
  if (s == GPUISO_OK)
    s = wide_warps ? ex.launch("wide_chain_kernel", wide_chain_kernel<T>,
                               grid_of((M + FIT_WARPS * SIMT_WARP - 1) / (FIT_WARPS * SIMT_WARP)),
                               dim3(FIT_WARPS * SIMT_WARP), 0, v)
                   : each(ex, wide_chain_step<T>{v, 0}, M);
  for (int64_t span = 1, l = 0; s == GPUISO_OK && span < p->max_chunks; span *= 2, l++) {
    const int64_t *node = p->merge_node + p->level_start[l];
    int64_t count = p->level_start[l + 1] - p->level_start[l];
    if (!fast)
      s = each(ex, merge_step<T>{v, span, NULL}, M);
    else if (count >= WARP_MERGE_BELOW)
      s = each(ex, merge_step<T>{v, span, node}, count, MERGE_THREADS);
    else
      s = ex.launch("merge_warp_kernel", merge_warp_kernel<T>, grid_of((count + MERGE_WARPS - 1) / MERGE_WARPS),
                    dim3(MERGE_WARPS * SIMT_WARP), 0, v, span, node, count);
  }
  if (s == GPUISO_OK)
    s = wide_warps ? tile_launch(ex, "wide_level_warp_kernel", wide_level_warp_kernel<T>, v)
                   : each(ex, wide_level_step<T>{v}, M);
  if (s == GPUISO_OK)
    s = fast ? tile_launch(ex, "fit_warp_kernel", fit_warp_kernel<T>, v) : each(ex, fit_step<T>{v, p->chunk}, M);
  if (s == GPUISO_OK)
    s = fast ? tile_launch(ex, "steps_warp_kernel", steps_warp_kernel<T>, v) : each(ex, steps_step<T>{v, p->chunk}, M);
  if (s == GPUISO_OK) s = fast ? scan_row_unstep(ex, v) : each(ex, unstep_step<T>{v}, R);
  return s;
}

/* The plan's work on the rows of device arrays y, w, queued on the executor's stream without a
 * wait: the rows' failures are left in v.failed_row, for row_failure once the stream is done (the
 * row-PAV control checks nothing). */
template <class Exec, typename T>
static gpuiso_status plan_queue(Exec &ex, const gpuiso_cuda_plan *p, solver_view<T> v) {
  gpuiso_status s = ex.fill(v.failed_row, 0xff, sizeof *v.failed_row); /* NO_FAILED_ROW, queued without a host copy */
  if (s == GPUISO_OK && p->opt.gpu_kernel == GPUISO_GPU_ROW_PAV) {
    s = each(ex, row_pav_step<T>{v}, p->nrows);
  } else {
    if (s == GPUISO_OK && p->pack_first) s = fit_short(ex, p, v);
    if (s == GPUISO_OK && p->nchunks > 0) s = fit_simple(ex, p, v);
  }
  if (s == GPUISO_OK && v.start && p->nchunks > 0 && !p->opt.solver_blocks)
    s = p->opt.gpu_kernel == GPUISO_GPU_FAST ? tile_launch(ex, "block_start_warp_kernel", block_start_warp_kernel<T>, v)
                                              : each(ex, block_start_step<T>{v, p->chunk}, p->nchunks);
  return s;
}

/* Fits the plan's rows from device arrays y, w to fit (and start). */
template <class Exec, typename T>
static gpuiso_status plan_fit(Exec &ex, const gpuiso_cuda_plan *p, const T *y, const T *w,
                              T *fit, uint8_t *start, gpuiso_error *err) {
  solver_view<T> v = plan_view(p, y, w, fit, start);
  set_error(err, GPUISO_OK, -1, -1);
  gpuiso_status s = plan_queue(ex, p, v);
  if (s == GPUISO_OK) s = row_failure(ex, v, err);
  if (s == GPUISO_OK) s = ex.sync();
  return s;
}

template <class Exec>
static gpuiso_status plan_fit_any(Exec &ex, const gpuiso_cuda_plan *p, const void *y,
                                  const void *w, void *fit, uint8_t *start, gpuiso_error *err) {
  if (p->type == GPUISO_SINGLE)
    return plan_fit(ex, p, (const float *)y, (const float *)w, (float *)fit, start, err);
  return plan_fit(ex, p, (const double *)y, (const double *)w, (double *)fit, start, err);
}

/* The share of the free device memory a slice may take: the rest covers the allocator's
 * rounding. */
#define SLICE_SHARE 0.9

/* Out of memory where the device's free memory (avail bytes, or opt->gpu_memory's cap) holds no
 * element of the work: said so, for an error that would otherwise not name the device. */
static inline gpuiso_status device_too_small(gpuiso_error *err, size_t avail) {
  set_error(err, GPUISO_E_NOMEM, -1, -1);
  if (err) snprintf(err->message, sizeof err->message, "the device's free memory (%zu bytes) holds none of it", avail);
  return GPUISO_E_NOMEM;
}

/* The device memory a fit may take: what is free, at most opt->gpu_memory where it is set. */
template <class Exec>
static gpuiso_status plan_available(Exec &ex, const gpuiso_opts *opt, size_t *avail) {
  gpuiso_status s = ex.available(avail);
  if (s == GPUISO_OK && opt->gpu_memory > 0 && opt->gpu_memory < (double)*avail) *avail = (size_t)opt->gpu_memory;
  return s;
}

#endif

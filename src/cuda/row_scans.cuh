/* The fast path's passes over a row's chunks or elements, for rows over BLOCK_ROW_MAX, where the
 * simple path has one thread walk the row (row_scale_step, row_starts_step, unstep_step): a row's
 * chunks are cut into tiles of ROW_TILE_CHUNKS (gpu_plan.h), and each pass is a segmented
 * reduction or scan in three steps, as a device-wide scan is (reduce, then scan, then scan
 * again): a block per tile combines its chunks (or elements) into the tile's aggregate, a block
 * per row scans its tiles' aggregates, and a block per tile scans its own again from the tiles
 * before it. A row of 1e8 elements has 1e5 chunks in 391 tiles, so every pass spreads over the
 * device's blocks where a block per row would leave all but one multiprocessor idle.
 * Collectives are block_team's (team.cuh); blocks whose row has failed leave as a whole.
 */
#ifndef GPUISO_CUDA_ROW_SCANS_CUH
#define GPUISO_CUDA_ROW_SCANS_CUH

#include "chunks.cuh"
#include "team.cuh"

#define ROW_SCAN_THREADS ROW_TILE_CHUNKS

#define ROW_SCAN_TEAM                                                                  \
  SIMT_SHARED(unsigned char, scratch, ROW_SCAN_THREADS / SIMT_WARP * BLOCK_TEAM_WORD); \
  block_team team = {ROW_SCAN_THREADS, scratch, ROW_SCAN_THREADS}

/* Tile t: its row and its chunks [*first, *end). */
template <typename T>
static SIMT_DEVICE int64_t tile_chunks(const solver_view<T> &v, int64_t t, int64_t *first, int64_t *end) {
  int64_t r = v.tile_row[t];
  *first = v.chunk_base[r] + (t - v.tile_base[r]) * ROW_TILE_CHUNKS;
  *end = *first + ROW_TILE_CHUNKS < v.chunk_base[r + 1] ? *first + ROW_TILE_CHUNKS : v.chunk_base[r + 1];
  return r;
}

/* Tile t: its row and its elements [*from, *to). */
template <typename T>
static SIMT_DEVICE int64_t tile_elements(const solver_view<T> &v, int64_t t, int64_t *from, int64_t *to) {
  int64_t first, end, r = tile_chunks(v, t, &first, &end);
  *from = v.offsets[r] + (first - v.chunk_base[r]) * v.chunk;
  *to = v.offsets[r] + (end - v.chunk_base[r]) * v.chunk;
  *to = *to < v.offsets[r + 1] ? *to : v.offsets[r + 1];
  return r;
}

/* Whether row r is the lane kernels' (no chunks, some elements): the passes leave its state. */
template <typename T>
static SIMT_DEVICE int row_on_lanes(const solver_view<T> &v, int64_t r) {
  return v.chunk_base[r + 1] == v.chunk_base[r] && v.offsets[r + 1] > v.offsets[r];
}

/* The steps of the passes' reductions and scans. */
struct sum_of {
  SIMT_DEVICE double operator()(double a, double b) const { return a + b; }
};

struct larger_of {
  SIMT_DEVICE double operator()(double a, double b) const { return a > b ? a : b; }
};

struct smaller_of {
  template <typename X>
  SIMT_DEVICE X operator()(X a, X b) const { return a < b ? a : b; }
};

/* The step of the running maximum (minimum where sign < 0): b, unless it is below (above) a. */
struct level_keep {
  double sign;
  SIMT_DEVICE double operator()(double a, double b) const { return (sign > 0 ? b < a : b > a) ? a : b; }
};

/* Checks, per tile: the largest weight and the first invalid element of its chunks' totals. */
template <typename T>
SIMT_KERNEL void tile_checks_kernel(solver_view<T> v) {
  ROW_SCAN_TEAM;
  int64_t t = simt::block_idx().x, first, end;
  tile_chunks(v, t, &first, &end);
  int64_t c = first + simt::thread_rank();
  larger_of larger;
  smaller_of smaller;
  double max_w = team.reduce(c < end ? v.tot[c].max_w : 0.0, larger);
  double min_w = team.reduce(c < end ? v.tot[c].min_w : INFINITY, smaller);
  int64_t bad = team.reduce(c < end && v.tot[c].bad >= 0 ? v.tot[c].bad : INT64_MAX, smaller);
  if (simt::thread_rank() == 0) v.tiles[t].max_w = max_w, v.tiles[t].min_w = min_w, v.tiles[t].bad = bad;
}

/* The per-row kernels' rows: block b takes rows b, b + gridDim.x, ... (a batch of many short rows
 * beside a chunked one would otherwise launch a block for each). */
#ifndef ROW_SCAN_ROW_BLOCKS /* the C tests set a small one to stride */
#define ROW_SCAN_ROW_BLOCKS 4096
#endif
#define FOR_BLOCK_ROWS(v, r) for (int64_t r = simt::block_idx().x; r < (v).nrows; r += simt::grid_dim().x)

/* ... per row: its state from its tiles' (row_scale_step's). */
template <typename T>
static SIMT_DEVICE void row_checks(const solver_view<T> &v, block_team team, int64_t r) {
  int64_t rank = simt::thread_rank();
  if (row_on_lanes(v, r)) return; /* the whole block */
  larger_of larger;
  smaller_of smaller;
  double max_w = 0, min_w = INFINITY;
  int64_t bad = INT64_MAX;
  for (int64_t t = v.tile_base[r] + rank; t < v.tile_base[r + 1]; t += ROW_SCAN_THREADS) {
    max_w = larger(max_w, v.tiles[t].max_w), min_w = smaller(min_w, v.tiles[t].min_w);
    bad = smaller(bad, v.tiles[t].bad);
  }
  max_w = team.reduce(max_w, larger);
  min_w = team.reduce(min_w, smaller);
  bad = team.reduce(bad, smaller);
  if (rank == 0) put_row_state(v, r, max_w, min_w, bad == INT64_MAX ? -1 : bad);
}

template <typename T>
SIMT_KERNEL void row_checks_kernel(solver_view<T> v) {
  ROW_SCAN_TEAM;
  FOR_BLOCK_ROWS(v, r) row_checks(v, team, r);
}

/* The chunk starts, per tile: its chunks' totals combined in the order of its scan, and their
 * sum of w |y|. */
template <typename T>
SIMT_KERNEL void tile_sums_kernel(solver_view<T> v) {
  ROW_SCAN_TEAM;
  int64_t t = simt::block_idx().x, first, end, r = tile_chunks(v, t, &first, &end);
  if (v.rows[r].status != GPUISO_OK) return; /* the whole block */
  int64_t c = first + simt::thread_rank();
  hull_point zero = {{0, 0}, {0, 0}}, total;
  team.exclusive_scan(c < end ? hull_point{v.tot[c].w, v.tot[c].s} : zero, hull_point_add, zero, &total);
  double sum_abs = team.reduce(c < end ? v.tot[c].sum_abs : 0.0, sum_of());
  if (simt::thread_rank() == 0) v.tiles[t].total = total, v.tiles[t].sum_abs = sum_abs;
}

/* ... per row: the totals of its tiles before each, and the checks of its sums
 * (row_starts_step's). */
template <typename T>
static SIMT_DEVICE void row_starts(const solver_view<T> &v, block_team team, int64_t r) {
  int64_t rank = simt::thread_rank();
  if (v.offsets[r + 1] == v.offsets[r] || row_on_lanes(v, r) || v.rows[r].status != GPUISO_OK)
    return; /* the whole block */
  hull_point run = {{0, 0}, {0, 0}}, zero = run;
  double sum_abs = 0;
  for (int64_t base = v.tile_base[r]; base < v.tile_base[r + 1]; base += ROW_SCAN_THREADS) {
    int64_t t = base + rank;
    int in = t < v.tile_base[r + 1];
    hull_point tile;
    hull_point before = team.exclusive_scan(in ? v.tiles[t].total : zero, hull_point_add, zero, &tile);
    if (in) v.tiles[t].before = hull_point_add(run, before);
    run = hull_point_add(run, tile);
    sum_abs += team.reduce(in ? v.tiles[t].sum_abs : 0.0, sum_of());
  }
  if (rank == 0) check_row_sums(v, r, sum_abs, run.w.hi);
}

template <typename T>
SIMT_KERNEL void row_starts_kernel(solver_view<T> v) {
  ROW_SCAN_TEAM;
  FOR_BLOCK_ROWS(v, r) row_starts(v, team, r);
}

/* ... per tile again: each chunk's start, the tiles before it and its scan of the tile's. */
template <typename T>
SIMT_KERNEL void tile_starts_kernel(solver_view<T> v) {
  ROW_SCAN_TEAM;
  int64_t t = simt::block_idx().x, first, end, r = tile_chunks(v, t, &first, &end);
  if (v.rows[r].status != GPUISO_OK) return; /* the whole block */
  int64_t c = first + simt::thread_rank();
  hull_point zero = {{0, 0}, {0, 0}};
  hull_point before = team.exclusive_scan(c < end ? hull_point{v.tot[c].w, v.tot[c].s} : zero, hull_point_add, zero);
  if (c < end) v.starts[c] = hull_point_add(v.tiles[t].before, before);
}

/* The running maximum (minimum, decreasing) of a flagged row's levels (unstep_step's, to the
 * same bits: each level is one of the row's): of each tile's levels; */
template <typename T>
SIMT_KERNEL void tile_levels_kernel(solver_view<T> v) {
  ROW_SCAN_TEAM;
  int64_t t = simt::block_idx().x, from, to, r = tile_elements(v, t, &from, &to);
  if (!v.rows[r].stepped) return; /* the whole block */
  double top = -v.sign * INFINITY;
  level_keep keep = {v.sign};
  for (int64_t i = from + simt::thread_rank(); i < to; i += ROW_SCAN_THREADS) top = keep(top, (double)v.fit[i]);
  top = team.reduce(top, keep);
  if (simt::thread_rank() == 0) v.tiles[t].level = top;
}

/* ... of the tiles before each, per row; */
template <typename T>
static SIMT_DEVICE void row_levels(const solver_view<T> &v, block_team team, int64_t r) {
  int64_t rank = simt::thread_rank();
  if (!v.rows[r].stepped) return; /* the whole block */
  double run = -v.sign * INFINITY;
  level_keep keep = {v.sign};
  for (int64_t base = v.tile_base[r]; base < v.tile_base[r + 1]; base += ROW_SCAN_THREADS) {
    int64_t t = base + rank;
    double tile, x = t < v.tile_base[r + 1] ? v.tiles[t].level : run;
    double before = team.exclusive_scan(x, keep, run, &tile);
    if (t < v.tile_base[r + 1]) v.tiles[t].level_before = before;
    run = keep(run, tile);
  }
}

template <typename T>
SIMT_KERNEL void row_levels_kernel(solver_view<T> v) {
  ROW_SCAN_TEAM;
  FOR_BLOCK_ROWS(v, r) row_levels(v, team, r);
}

/* ... and of each element, per tile, from the tiles before it. */
template <typename T>
SIMT_KERNEL void tile_unstep_kernel(solver_view<T> v) {
  ROW_SCAN_TEAM;
  int64_t t = simt::block_idx().x, from, to, r = tile_elements(v, t, &from, &to);
  if (!v.rows[r].stepped) return; /* the whole block */
  double run = v.tiles[t].level_before;
  level_keep keep = {v.sign};
  for (int64_t base = from; base < to; base += ROW_SCAN_THREADS) {
    int64_t i = base + simt::thread_rank();
    double x = i < to ? (double)v.fit[i] : run, tile;
    double before = team.exclusive_scan(x, keep, run, &tile);
    if (i < to) v.fit[i] = (T)keep(before, x);
    run = keep(run, tile);
  }
}

/* A kernel of the passes over `count` blocks (tiles or rows). */
template <class Exec, typename T>
static gpuiso_status row_scan_launch(Exec &ex, const char *name, void (*kernel)(solver_view<T>), int64_t count,
                                     solver_view<T> v) {
  if (count == 0) return GPUISO_OK;
  return ex.launch(name, kernel, grid_of(count), dim3(ROW_SCAN_THREADS), 0, v);
}

/* The blocks of a per-row kernel. */
template <typename T>
static int64_t row_blocks(const solver_view<T> &v) {
  return v.nrows < ROW_SCAN_ROW_BLOCKS ? v.nrows : ROW_SCAN_ROW_BLOCKS;
}

/* The rows' states from their chunks' totals. */
template <class Exec, typename T>
static gpuiso_status scan_row_checks(Exec &ex, solver_view<T> v) {
  gpuiso_status s = row_scan_launch(ex, "tile_checks_kernel", tile_checks_kernel<T>, v.ntiles, v);
  return s == GPUISO_OK ? row_scan_launch(ex, "row_checks_kernel", row_checks_kernel<T>, row_blocks(v), v) : s;
}

/* The chunk starts and the checks of the rows' sums. */
template <class Exec, typename T>
static gpuiso_status scan_row_starts(Exec &ex, solver_view<T> v) {
  gpuiso_status s = row_scan_launch(ex, "tile_sums_kernel", tile_sums_kernel<T>, v.ntiles, v);
  if (s == GPUISO_OK) s = row_scan_launch(ex, "row_starts_kernel", row_starts_kernel<T>, row_blocks(v), v);
  return s == GPUISO_OK ? row_scan_launch(ex, "tile_starts_kernel", tile_starts_kernel<T>, v.ntiles, v) : s;
}

/* The running maximum (minimum) of the flagged rows. */
template <class Exec, typename T>
static gpuiso_status scan_row_unstep(Exec &ex, solver_view<T> v) {
  gpuiso_status s = row_scan_launch(ex, "tile_levels_kernel", tile_levels_kernel<T>, v.ntiles, v);
  if (s == GPUISO_OK) s = row_scan_launch(ex, "row_levels_kernel", row_levels_kernel<T>, row_blocks(v), v);
  return s == GPUISO_OK ? row_scan_launch(ex, "tile_unstep_kernel", tile_unstep_kernel<T>, v.ntiles, v) : s;
}

#endif

/* The fast path's passes over a row's chunks or elements, for rows over BLOCK_ROW_MAX: a block
 * per row strides over them in tiles of its threads, with block-wide reductions and scans
 * (team.cuh), where the simple path has one thread walk the row (row_scale_step, row_starts_step,
 * unstep_step). A row of 1e8 elements has 1e5 chunks to scan and, when rounding stepped, 1e8
 * elements to repair.
 */
#ifndef GPUISO_CUDA_ROW_SCANS_CUH
#define GPUISO_CUDA_ROW_SCANS_CUH

#include "chunks.cuh"
#include "team.cuh"

#define ROW_SCAN_THREADS 256

/* Per row: its state from its chunks' totals (row_scale_step's). */
template <typename T>
SIMT_KERNEL void row_checks_kernel(solver_view<T> v) {
  SIMT_SHARED(unsigned char, scratch, ROW_SCAN_THREADS / SIMT_WARP * BLOCK_TEAM_WORD);
  block_team team = {ROW_SCAN_THREADS, scratch, ROW_SCAN_THREADS};
  int64_t r = simt::block_idx().x, rank = simt::thread_rank();
  double max_w = 0;
  int64_t bad = INT64_MAX;
  for (int64_t c = v.chunk_base[r] + rank; c < v.chunk_base[r + 1]; c += ROW_SCAN_THREADS) {
    max_w = v.tot[c].max_w > max_w ? v.tot[c].max_w : max_w;
    bad = v.tot[c].bad >= 0 && v.tot[c].bad < bad ? v.tot[c].bad : bad;
  }
  max_w = team.reduce(max_w, [](double a, double b) { return a > b ? a : b; });
  bad = team.reduce(bad, [](int64_t a, int64_t b) { return a < b ? a : b; });
  if (rank == 0) v.rows[r] = row_state_of(v, r, max_w, bad == INT64_MAX ? -1 : bad);
}

/* Per row: the chunk starts, by a scan of the totals in tiles, and the checks of the sums
 * (row_starts_step's). */
template <typename T>
SIMT_KERNEL void row_starts_kernel(solver_view<T> v) {
  SIMT_SHARED(unsigned char, scratch, ROW_SCAN_THREADS / SIMT_WARP * BLOCK_TEAM_WORD);
  block_team team = {ROW_SCAN_THREADS, scratch, ROW_SCAN_THREADS};
  int64_t r = simt::block_idx().x, rank = simt::thread_rank();
  if (v.rows[r].status != GPUISO_OK || v.offsets[r + 1] == v.offsets[r]) return; /* the whole block */
  hull_point run = {{0, 0}, {0, 0}}, zero = run;
  double sum_abs = 0;
  auto add = [](hull_point a, hull_point b) { return hull_point{dd_add(a.w, b.w), dd_add(a.s, b.s)}; };
  for (int64_t base = v.chunk_base[r]; base < v.chunk_base[r + 1]; base += ROW_SCAN_THREADS) {
    int64_t c = base + rank;
    int in = c < v.chunk_base[r + 1];
    hull_point x = in ? hull_point{v.tot[c].w, v.tot[c].s} : zero, tile;
    hull_point before = team.exclusive_scan(x, add, zero, &tile);
    if (in) v.starts[c] = add(run, before);
    run = add(run, tile);
    sum_abs += team.reduce(in ? v.tot[c].sum_abs : 0.0, [](double a, double b) { return a + b; });
  }
  if (rank == 0) check_row_sums(v, r, sum_abs, run.w.hi);
}

/* Per flagged row: the running maximum (minimum, decreasing) of its levels, in tiles
 * (unstep_step's, to the same bits: each level is one of the row's). */
template <typename T>
SIMT_KERNEL void unstep_kernel(solver_view<T> v) {
  SIMT_SHARED(unsigned char, scratch, ROW_SCAN_THREADS / SIMT_WARP * BLOCK_TEAM_WORD);
  block_team team = {ROW_SCAN_THREADS, scratch, ROW_SCAN_THREADS};
  int64_t r = simt::block_idx().x, rank = simt::thread_rank();
  if (!v.rows[r].stepped) return; /* the whole block */
  int64_t from = v.offsets[r], to = v.offsets[r + 1];
  double sign = v.sign, run = (double)v.fit[from];
  auto keep = [sign](double a, double b) { return (sign > 0 ? b < a : b > a) ? a : b; };
  for (int64_t base = from; base < to; base += ROW_SCAN_THREADS) {
    int64_t i = base + rank;
    double x = i < to ? (double)v.fit[i] : run, tile;
    double before = team.exclusive_scan(x, keep, run, &tile);
    if (i < to) v.fit[i] = (T)keep(before, x);
    run = keep(run, tile);
  }
}

#endif

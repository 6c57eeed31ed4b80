/* The backward pass of the fit on the device (gpuiso_cuda_vjp; paper, section 6, "Gradient"):
 * the upstream gradient averaged over the solver's blocks, without atomics.
 *
 * A warp takes a tile of VJP_TILE elements of a row (a row's last tile may be shorter) and walks
 * it in steps of 32 elements: a segmented scan of (g, w) across the lanes gives each element its
 * block's sums up to it, kept in shared memory; a walk back finds each element's block end by a
 * ballot of the ends and reads the block's sums there. A row of one tile is finished so, in one
 * kernel. For longer rows, blocks cross tiles: a first kernel gives each tile its boundary sums
 * (the part before its first block start, the part from its last start on, and whether it has a
 * start), and a warp per row scans them: the sums carried into each tile from the blocks on its
 * left, and the total of the block holding the tile's last element. The tile kernel then starts
 * its scan from the carried sums and gives the last block that total.
 *
 * Sums are in double in both precisions. g counts only where the fit is inside (lo, hi). The
 * host's arrays go up, and the derivatives come back, in pinned slices where they are large
 * (staging.cuh).
 */
#ifndef GPUISO_CUDA_VJP_CUH
#define GPUISO_CUDA_VJP_CUH

#include "launch.cuh"
#include "staging.cuh"
#include "view.cuh"

#define VJP_TILE 1024
#define VJP_WARPS 2 /* warps (tiles) per block: 2 x VJP_TILE x 16 bytes of shared memory */

typedef struct {
  double g, w;
} vjp_sums;

struct vjp_layout {
  int64_t nrows, ntiles;
  const int64_t *offsets;   /* nrows + 1: where each row starts */
  const int64_t *tile_base; /* nrows + 1: each row's first tile */
  const int64_t *tile_row;  /* ntiles: the row of each tile */
  /* per tile, for rows of several tiles */
  uint8_t *has_start;
  vjp_sums *head, *tail;    /* before the first start; from the last start on (the whole tile
                               without a start) */
  vjp_sums *carry, *right;  /* carried in from the left; the total of the last element's block */
};

template <typename T>
struct vjp_view {
  vjp_layout L;
  const T *y, *w, *fit, *g; /* w NULL: all 1; y NULL when dw is */
  const uint8_t *start;
  double lo, hi;
  T *dy, *dw;               /* either may be NULL */
};

/* Tile t: its row (returned), elements [from, to), and whether it is its row's only tile. */
static SIMT_DEVICE int64_t vjp_tile(const vjp_layout &L, int64_t t, int64_t *from, int64_t *to,
                                    int *alone) {
  int64_t r = L.tile_row[t], first = L.tile_base[r];
  *from = L.offsets[r] + (t - first) * VJP_TILE;
  *to = *from + VJP_TILE < L.offsets[r + 1] ? *from + VJP_TILE : L.offsets[r + 1];
  *alone = L.tile_base[r + 1] - first == 1;
  return r;
}

/* Element i's contribution, and whether it starts a block (a row's first element does). */
template <typename T>
static SIMT_DEVICE vjp_sums vjp_value(const vjp_view<T> &v, int64_t i) {
  T f = v.fit[i];
  vjp_sums x = {f > (T)v.lo && f < (T)v.hi ? (double)v.g[i] : 0.0, v.w ? (double)v.w[i] : 1.0};
  return x;
}

template <typename T>
static SIMT_DEVICE int vjp_flag(const vjp_view<T> &v, int64_t r, int64_t i) {
  return i == v.L.offsets[r] || v.start[i];
}

static SIMT_DEVICE vjp_sums warp_sum(vjp_sums x) {
  for (int d = 1; d < SIMT_WARP; d <<= 1) {
    x.g += simt::shfl_xor(SIMT_FULL_MASK, x.g, d);
    x.w += simt::shfl_xor(SIMT_FULL_MASK, x.w, d);
  }
  return x;
}

/* Inclusive scan across the warp of x, restarted at lanes with f set; f becomes whether a
 * start lies at or before the lane. */
static SIMT_DEVICE void segmented_scan(vjp_sums &x, int &f) {
  unsigned lane = simt::lane();
  for (unsigned d = 1; d < SIMT_WARP; d <<= 1) {
    double pg = simt::shfl_up(SIMT_FULL_MASK, x.g, d), pw = simt::shfl_up(SIMT_FULL_MASK, x.w, d);
    int pf = simt::shfl_up(SIMT_FULL_MASK, f, d);
    if (lane >= d) {
      if (!f) x.g += pg, x.w += pw;
      f |= pf;
    }
  }
}

/* Lanes at or above `lane` in a mask. */
static SIMT_DEVICE unsigned from_lane(unsigned mask, unsigned lane) { return mask & (SIMT_FULL_MASK << lane); }

/* A warp per tile of a row of several tiles: its boundary sums. */
template <typename T>
SIMT_KERNEL void vjp_bounds_kernel(vjp_view<T> v) {
  int64_t t = (int64_t)simt::block_idx().x * VJP_WARPS + simt::warp(), from, to;
  if (t >= v.L.ntiles) return;
  int alone;
  int64_t r = vjp_tile(v.L, t, &from, &to, &alone);
  if (alone) return;
  unsigned lane = simt::lane();
  vjp_sums head = {0, 0}, tail = {0, 0};
  int any = 0;
  for (int64_t base = from; base < to; base += SIMT_WARP) {
    int64_t i = base + lane;
    vjp_sums x = {0, 0};
    int f = 0;
    if (i < to) x = vjp_value(v, i), f = vjp_flag(v, r, i);
    unsigned mask = simt::ballot(SIMT_FULL_MASK, f);
    int before = !any && !(mask & (SIMT_FULL_MASK >> (31 - lane)));
    vjp_sums h = {before ? x.g : 0, before ? x.w : 0};
    h = warp_sum(h);
    head.g += h.g, head.w += h.w;
    if (mask) {
      int last = 31 - simt::clz(mask);
      vjp_sums part = {(int)lane >= last ? x.g : 0, (int)lane >= last ? x.w : 0};
      tail = warp_sum(part);
    } else {
      vjp_sums all = warp_sum(x);
      tail.g += all.g, tail.w += all.w;
    }
    any = any || mask;
  }
  if (lane == 0) {
    v.L.has_start[t] = (uint8_t)any;
    v.L.head[t] = head;
    v.L.tail[t] = tail;
  }
}

/* A warp per row of several tiles: the sums carried into each tile (a segmented scan of the
 * tails, restarted at tiles with a start), then the total of each tile's last block: that of
 * the next tile with a start (its carry plus its head), or of the row's last element. */
SIMT_KERNEL void vjp_carry_kernel(vjp_layout L) {
  int64_t r = (int64_t)simt::block_idx().x * VJP_WARPS + simt::warp();
  if (r >= L.nrows) return;
  int64_t t0 = L.tile_base[r], t1 = L.tile_base[r + 1];
  if (t1 - t0 < 2) return;
  unsigned lane = simt::lane();
  vjp_sums c = {0, 0};
  if (lane == 0) L.carry[t0] = c;
  for (int64_t base = t0; base < t1; base += SIMT_WARP) {
    int64_t t = base + lane;
    vjp_sums x = {0, 0};
    int f = 0;
    if (t < t1) x = L.tail[t], f = L.has_start[t];
    segmented_scan(x, f);
    if (!f) x.g += c.g, x.w += c.w;
    if (t + 1 < t1) L.carry[t + 1] = x;
    if (t + 1 == t1) L.right[t] = x; /* the row's last block ends with it */
    c.g = simt::shfl(SIMT_FULL_MASK, x.g, SIMT_WARP - 1);
    c.w = simt::shfl(SIMT_FULL_MASK, x.w, SIMT_WARP - 1);
  }
  simt::sync_warp();
  vjp_sums last = L.right[t1 - 1];
  int64_t next = t1; /* the first tile with a start after the round's tiles */
  for (int64_t base = t0 + ((t1 - 1 - t0) / SIMT_WARP) * SIMT_WARP; base >= t0; base -= SIMT_WARP) {
    int64_t t = base + lane;
    unsigned mask = simt::ballot(SIMT_FULL_MASK, t + 1 < t1 && L.has_start[t + 1]);
    unsigned above = from_lane(mask, lane);
    int64_t b = above ? base + simt::ffs(above) : next;
    if (t + 1 < t1) {
      vjp_sums total = last;
      if (b < t1) total.g = L.carry[b].g + L.head[b].g, total.w = L.carry[b].w + L.head[b].w;
      L.right[t] = total;
    }
    if (mask) next = base + simt::ffs(mask);
  }
}

/* A warp per tile: every element's derivatives. */
template <typename T>
SIMT_KERNEL void vjp_tile_kernel(vjp_view<T> v) {
  SIMT_SHARED(vjp_sums, pre, VJP_WARPS * VJP_TILE);
  int64_t t = (int64_t)simt::block_idx().x * VJP_WARPS + simt::warp(), from, to;
  if (t >= v.L.ntiles) return;
  int alone;
  int64_t r = vjp_tile(v.L, t, &from, &to, &alone);
  unsigned lane = simt::lane();
  vjp_sums *mine = pre + simt::warp() * VJP_TILE;
  vjp_sums c = {0, 0};
  if (!alone) c = v.L.carry[t];
  for (int64_t base = from; base < to; base += SIMT_WARP) {
    int64_t i = base + lane;
    vjp_sums x = {0, 0};
    int f = 0;
    if (i < to) x = vjp_value(v, i), f = vjp_flag(v, r, i);
    segmented_scan(x, f);
    if (!f) x.g += c.g, x.w += c.w;
    if (i < to) mine[i - from] = x;
    c.g = simt::shfl(SIMT_FULL_MASK, x.g, SIMT_WARP - 1);
    c.w = simt::shfl(SIMT_FULL_MASK, x.w, SIMT_WARP - 1);
  }
  simt::sync_warp();
  vjp_sums last = alone ? mine[to - 1 - from] : v.L.right[t];
  int64_t next = to - 1; /* the end of the block holding the round's last element */
  for (int64_t base = from + ((to - 1 - from) / SIMT_WARP) * SIMT_WARP; base >= from; base -= SIMT_WARP) {
    int64_t i = base + lane;
    int end = i < to && (i == to - 1 || vjp_flag(v, r, i + 1));
    unsigned mask = simt::ballot(SIMT_FULL_MASK, end), above = from_lane(mask, lane);
    int64_t e = above ? base + simt::ffs(above) - 1 : next;
    if (i < to) {
      vjp_sums total = e == to - 1 ? last : mine[e - from];
      double ratio = total.g / total.w;
      if (v.dy) v.dy[i] = (T)((v.w ? (double)v.w[i] : 1.0) * ratio);
      if (v.dw) v.dw[i] = (T)(((double)v.y[i] - (double)v.fit[i]) * ratio);
    }
    if (mask) next = base + simt::ffs(mask) - 1;
  }
}

/* The tile layout of rows (host offsets) on the device, and the boundary sums' memory. */
template <class Exec>
static void vjp_layout_release(Exec &ex, vjp_layout *L) {
  void *buf[] = {(void *)L->offsets, (void *)L->tile_base, (void *)L->tile_row, L->has_start,
                 L->head, L->tail, L->carry, L->right};
  for (size_t i = 0; i < sizeof buf / sizeof buf[0]; i++) ex.release(buf[i]);
  memset(L, 0, sizeof *L);
}

template <class Exec>
static gpuiso_status vjp_layout_init(Exec &ex, vjp_layout *L, int64_t nrows, const int64_t *offsets,
                                     gpuiso_error *err) {
  memset(L, 0, sizeof *L);
  L->nrows = nrows;
  int64_t *base = (int64_t *)malloc(((size_t)nrows + 1) * sizeof *base);
  if (!base) {
    set_error(err, GPUISO_E_NOMEM, -1, -1);
    return GPUISO_E_NOMEM;
  }
  base[0] = 0;
  int several = 0;
  for (int64_t r = 0; r < nrows; r++) {
    int64_t m = (offsets[r + 1] - offsets[r] + VJP_TILE - 1) / VJP_TILE;
    base[r + 1] = base[r] + m;
    several = several || m > 1;
  }
  L->ntiles = base[nrows];
  int64_t T = L->ntiles;
  int64_t *row = (int64_t *)malloc((size_t)(T > 0 ? T : 1) * sizeof *row);
  gpuiso_status s = row ? GPUISO_OK : GPUISO_E_NOMEM;
  if (!row) set_error(err, s, -1, -1);
  for (int64_t r = 0; row && r < nrows; r++)
    for (int64_t t = base[r]; t < base[r + 1]; t++) row[t] = r;
  if (s == GPUISO_OK) s = ex.alloc((void **)&L->offsets, ((size_t)nrows + 1) * sizeof(int64_t));
  if (s == GPUISO_OK) s = ex.alloc((void **)&L->tile_base, ((size_t)nrows + 1) * sizeof(int64_t));
  if (s == GPUISO_OK) s = ex.alloc((void **)&L->tile_row, (size_t)T * sizeof(int64_t));
  if (s == GPUISO_OK) s = ex.put((void *)L->offsets, offsets, ((size_t)nrows + 1) * sizeof(int64_t));
  if (s == GPUISO_OK) s = ex.put((void *)L->tile_base, base, ((size_t)nrows + 1) * sizeof(int64_t));
  if (s == GPUISO_OK) s = ex.put((void *)L->tile_row, row, (size_t)T * sizeof(int64_t));
  if (several) { /* only rows of several tiles need boundary sums */
    if (s == GPUISO_OK) s = ex.alloc((void **)&L->has_start, (size_t)T);
    if (s == GPUISO_OK) s = ex.alloc((void **)&L->head, (size_t)T * sizeof(vjp_sums));
    if (s == GPUISO_OK) s = ex.alloc((void **)&L->tail, (size_t)T * sizeof(vjp_sums));
    if (s == GPUISO_OK) s = ex.alloc((void **)&L->carry, (size_t)T * sizeof(vjp_sums));
    if (s == GPUISO_OK) s = ex.alloc((void **)&L->right, (size_t)T * sizeof(vjp_sums));
  }
  free(base);
  free(row);
  if (s != GPUISO_OK) vjp_layout_release(ex, L);
  return s;
}

/* The backward pass over device arrays laid out as L says. */
template <class Exec, typename T>
static gpuiso_status vjp_run(Exec &ex, const vjp_view<T> &v) {
  if (v.L.ntiles == 0) return GPUISO_OK;
  dim3 block(SIMT_WARP * VJP_WARPS);
  dim3 tiles = grid_of((v.L.ntiles + VJP_WARPS - 1) / VJP_WARPS);
  gpuiso_status s = GPUISO_OK;
  if (v.L.head) {
    s = ex.launch("vjp_bounds_kernel", vjp_bounds_kernel<T>, tiles, block, 0, v);
    dim3 rows = grid_of((v.L.nrows + VJP_WARPS - 1) / VJP_WARPS);
    if (s == GPUISO_OK) s = ex.launch("vjp_carry_kernel", vjp_carry_kernel, rows, block, 0, v.L);
  }
  if (s == GPUISO_OK) s = ex.launch("vjp_tile_kernel", vjp_tile_kernel<T>, tiles, block, 0, v);
  return s;
}

/* gpuiso_cuda_vjp: host arrays in, through the device, host arrays out. */
template <class Exec, typename T>
static gpuiso_status vjp_host(Exec &ex, int64_t nrows, const int64_t *offsets, const T *y,
                              const T *w, const T *fit, const uint8_t *start, const T *g,
                              const gpuiso_opts *opt, T *dy, T *dw, gpuiso_error *err) {
  set_error(err, GPUISO_OK, -1, -1);
  int64_t n = offsets[nrows];
  if (n == 0) return GPUISO_OK;
  size_t bytes = (size_t)n * sizeof(T);
  vjp_view<T> v;
  memset(&v, 0, sizeof v);
  v.lo = opt->lo;
  v.hi = opt->hi;
  gpuiso_status s = vjp_layout_init(ex, &v.L, nrows, offsets, err);
  if (s != GPUISO_OK) return s;
  staging<Exec> st;
  s = stage_open(ex, &st, bytes, resolve_threads(opt, n));
  if (s == GPUISO_OK) s = stage_upload(ex, &st, &v.y, dw ? y : NULL, n);
  if (s == GPUISO_OK) s = stage_upload(ex, &st, &v.w, w, n);
  if (s == GPUISO_OK) s = stage_upload(ex, &st, &v.fit, fit, n);
  if (s == GPUISO_OK) s = stage_upload(ex, &st, &v.g, g, n);
  if (s == GPUISO_OK) s = stage_upload(ex, &st, &v.start, start, n);
  if (s == GPUISO_OK && dy) s = make(ex, &v.dy, n);
  if (s == GPUISO_OK && dw) s = make(ex, &v.dw, n);
  if (s == GPUISO_OK) s = vjp_run(ex, v);
  if (s == GPUISO_OK && dy) s = stage_get(ex, &st, dy, v.dy, bytes);
  if (s == GPUISO_OK && dw) s = stage_get(ex, &st, dw, v.dw, bytes);
  stage_close(ex, &st);
  drop(ex, &v.y), drop(ex, &v.w), drop(ex, &v.fit), drop(ex, &v.g), drop(ex, &v.start);
  drop(ex, &v.dy), drop(ex, &v.dw);
  vjp_layout_release(ex, &v.L);
  return s;
}

#endif

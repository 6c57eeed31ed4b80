/* The simple path's chunk level (paper, section 3.3, done plainly): a thread per chunk sums it,
 * a thread per row scales its weights and scans its chunk totals into chunk starts, and a thread
 * per chunk builds the chunk's hull by monotone chain. As in the CPU engine (hull.c), whose
 * element-level code (hull/chunk.h) this calls. A row of one chunk, a short row, is thus fitted
 * by one thread at each stage.
 */
#ifndef GPUISO_CUDA_CHUNKS_CUH
#define GPUISO_CUDA_CHUNKS_CUH

#include "view.cuh"

template <typename T>
static SIMT_DEVICE chunk_total chunk_total_of(const solver_view<T> &v, int64_t from, int64_t to, double scale) {
  chunk_total c = chunk_total_none();
  for (int64_t i0 = from; i0 < to; i0 += ELEMENT_GROUP(T)) {
    T y[ELEMENT_GROUP(T)], w[ELEMENT_GROUP(T)];
    element_group(v.y, i0, to, y);
    if (v.w) element_group(v.w, i0, to, w);
    for (int h = 0; h < ELEMENT_GROUP(T) && i0 + h < to; h++) {
      if (!chunk_total_add(&c, (double)y[h], v.w ? (double)w[h] : 1.0, scale, v.sign)) {
        c.bad = i0 + h;
        return c;
      }
    }
  }
  return c;
}

/* Per chunk: its totals at scale 1, validating its elements. */
template <typename T>
struct totals_step {
  solver_view<T> v;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t from, to;
    chunk_range(v, g, &from, &to);
    chunk_total c = chunk_total_of(v, from, to, 1.0); /* through a local: the executor sees the store */
    v.tot[g] = c;
  }
};

/* The error of invalid element i. */
template <typename T>
static inline GPUISO_HD int element_status(const solver_view<T> &v, int64_t i) {
  double y = (double)v.y[i], w = v.w ? (double)v.w[i] : 1.0;
  return !isfinite(y) ? GPUISO_E_Y_NONFINITE : (w < 0 ? GPUISO_E_W_NEGATIVE : GPUISO_E_W_NONFINITE);
}

/* Row r's state (v.rows[r]) from its first invalid element (or -1) and its largest and smallest
 * positive weights: the error, else the power of two that brings the largest weight near 1
 * (hull.c explains why), and the error of weights that span too far for it (hull_span_beyond).
 * Built in a local, then stored: the executor sees the store (tools/simt/executor.cpp). */
template <typename T>
static SIMT_DEVICE void put_row_state(const solver_view<T> &v, int64_t r, double max_w, double min_w,
                                      int64_t bad) {
  row_state s = {1.0, 0, GPUISO_OK, -1, 0};
  if (bad >= 0) {
    s.status = element_status(v, bad);
    s.index = bad;
  } else if (v.w && max_w > 0) {
    int e = 0;
    frexp(max_w, &e);
    if (e < -1023) e = -1023; /* 2^-e must be a double (as hull.c) */
    if (e != 0) {
      s.scale = ldexp(1.0, -e);
      s.rescale = e > 0 ? 1 : -1;
    }
    if (hull_span_beyond(min_w * s.scale)) s.status = GPUISO_E_W_SPAN;
  }
  if (s.status != GPUISO_OK) lower_failed_row(v.failed_row, r);
  v.rows[r] = s;
}

/* Per row: its state from its chunks' totals. */
template <typename T>
struct row_scale_step {
  solver_view<T> v;
  SIMT_DEVICE void operator()(int64_t r) const {
    double max_w = 0, min_w = INFINITY;
    int64_t bad = -1;
    for (int64_t c = v.chunk_base[r]; c < v.chunk_base[r + 1]; c++) {
      max_w = v.tot[c].max_w > max_w ? v.tot[c].max_w : max_w;
      min_w = v.tot[c].min_w < min_w ? v.tot[c].min_w : min_w;
      if (bad < 0) bad = v.tot[c].bad;
    }
    put_row_state(v, r, max_w, min_w, bad);
  }
};

/* Per chunk: the totals at the row's scale; scaling down is exact on the totals as they are,
 * scaling up (tiny weights) forms the products again, scaled. */
template <typename T>
struct rescale_step {
  solver_view<T> v;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t from, to;
    row_state s = v.rows[chunk_range(v, g, &from, &to)];
    if (s.status != GPUISO_OK || s.rescale == 0) return;
    if (s.rescale < 0) {
      chunk_total c = chunk_total_of(v, from, to, s.scale);
      v.tot[g] = c;
      return;
    }
    v.tot[g].w.hi *= s.scale;
    v.tot[g].w.lo *= s.scale;
    v.tot[g].s.hi *= s.scale;
    v.tot[g].s.lo *= s.scale;
  }
};

/* The checks of a row's sums: of w * |y| and of the weights (scaled); and the reach of
 * hull_is_wide, for the chunk hulls. */
template <typename T>
static SIMT_DEVICE void check_row_sums(const solver_view<T> &v, int64_t r, double sum_abs, double total_w) {
  v.rows[r].reach = hull_reach(total_w, sum_abs * v.rows[r].scale);
  int status = !isfinite(sum_abs) || !isfinite(total_w) ? GPUISO_E_OVERFLOW
               : total_w == 0                            ? GPUISO_E_W_ALLZERO
                                                         : GPUISO_OK;
  if (status == GPUISO_OK) return;
  v.rows[r].status = status;
  lower_failed_row(v.failed_row, r);
}

/* Per row: the chunk starts, by a scan over the totals in order (the CPU engine's order, so the
 * coordinates are the same), and the checks of the sums. */
template <typename T>
struct row_starts_step {
  solver_view<T> v;
  SIMT_DEVICE void operator()(int64_t r) const {
    if (v.rows[r].status != GPUISO_OK || v.offsets[r + 1] == v.offsets[r]) return;
    double sum_abs = 0;
    hull_point run = {{0, 0}, {0, 0}};
    for (int64_t c = v.chunk_base[r]; c < v.chunk_base[r + 1]; c++) {
      v.starts[c] = run;
      run.w = dd_add(run.w, v.tot[c].w);
      run.s = dd_add(run.s, v.tot[c].s);
      sum_abs += v.tot[c].sum_abs;
    }
    check_row_sums(v, r, sum_abs, run.w.hi);
  }
};

/* Chunk g's node of the merge tree: the one segment of its hull of h vertices. */
template <typename T>
static SIMT_DEVICE void chunk_node(const solver_view<T> &v, int64_t g, int64_t h) {
  hull_segment s = {g, 0, h - 1};
  v.seg[g] = s;
  v.nseg[g] = 1;
}

/* Whether chunk g of row r holds a weight that makes its row wide (hull_is_wide). */
template <typename T>
static SIMT_DEVICE int chunk_makes_wide(const solver_view<T> &v, int64_t g, int64_t r) {
  return hull_is_wide(v.tot[g].min_w * v.rows[r].scale, v.rows[r].reach);
}

/* Per chunk: its hull, by monotone chain on the chunk-relative points with its stack in its slot
 * (hull_slot_push); its node of the merge tree is the one segment of that hull. A chunk that
 * makes its row wide flags the row instead. */
template <typename T>
struct chunk_hull_step {
  solver_view<T> v;
  SIMT_DEVICE void operator()(int64_t g) const {
    int64_t from, to, r = chunk_range(v, g, &from, &to);
    if (row_failed(v, r)) return;
    double scale = v.rows[r].scale;
    if (chunk_makes_wide(v, g, r)) {
      raise_flag(&v.rows[r].wide);
      return;
    }
    hull_slots slots = view_slots(v, r);
    int64_t h = 0;
    hull_point p = {{0, 0}, {0, 0}}, before = p;
    for (int64_t k = from;; k++) {
      h = hull_slot_push(&slots, g, h, p, before, k - from, k > from && v.w && v.w[k - 1] == 0);
      if (k == to) break;
      before = p;
      p = hull_advance(p, (double)v.y[k], v.w ? (double)v.w[k] * scale : 1.0, v.sign);
    }
    chunk_node(v, g, h);
  }
};

#endif

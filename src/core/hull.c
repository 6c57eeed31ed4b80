/* The hull-merge engine on the CPU: the fit as the slopes of the lower convex hull of the
 * cumulative sum diagram, built from the hulls of chunks merged level by level along bridges,
 * every node of the merge tree a segment list (src/core/hull/merge.h). Chunks, the merges of a
 * level and the reconstruction run in parallel with OpenMP. A row of wide ranges, whose points
 * cannot hold its steps, is a chain on the steps instead (hull/wide.h), built the same way: a
 * chain per chunk, merges level by level, the levels chunk by chunk (rare).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hull/wide.h"
#include "internal.h"

#define HULL_DEFAULT_CHUNK 1024
#define HULL_DEFAULT_CAP 64

/* Validates the chunk's elements and sums them (double-double, from rounded products w * y). The
 * weights are scaled by a power of two, which changes no slope and, with the largest weight
 * near 1, keeps tiny weights from underflowing in the orientation tests. */
static chunk_total total_of(const double *y, const double *w, int64_t from, int64_t to,
                            double scale, double sign) {
  chunk_total c = chunk_total_none();
  for (int64_t i = from; i < to; i++) {
    if (!chunk_total_add(&c, y[i], w ? w[i] : 1.0, scale, sign)) {
      c.bad = i;
      break;
    }
  }
  return c;
}

/* The totals of every chunk of C elements, in parallel. */
static void chunk_totals(const double *y, const double *w, int64_t n, int64_t C, int64_t m,
                         double scale, double sign, int nth, chunk_total *tot) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 64)
#endif
  for (int64_t j = 0; j < m; j++) {
    int64_t to = (j + 1) * C < n ? (j + 1) * C : n;
    tot[j] = total_of(y, w, j * C, to, scale, sign);
  }
}

/* The lower hull of the chunk-relative points of elements [from, to), by monotone chain in vert
 * and index (a thread's stack of pairs), written to chunk j's slot rounded. Returns the number
 * of vertices. */
static int64_t chunk_hull(const hull_slots *v, int64_t j, int64_t from, int64_t to, hull_point *vert,
                          int64_t *index) {
  int64_t h = 0;
  hull_point p = {{0, 0}, {0, 0}};
  for (int64_t k = from;; k++) {
    h = hull_push(vert, index, h, p, k, k > from && hull_w(v, k - 1) == 0);
    if (k == to) break;
    p = hull_advance(p, hull_y(v, k), hull_w(v, k), v->sign);
  }
  for (int64_t i = 0; i < h; i++) hull_slot_put(v, j * v->slot + i, vert[i], index[i] - from);
  return h;
}

#ifdef GPUISO_DEBUG
/* The segment-list invariant of a node of chunks [j0, j1): at most one segment per chunk, chunk
 * indices strictly increasing within the node, every segment non-empty. */
static int list_valid(const hull_segment *list, int64_t count, int64_t j0, int64_t j1) {
  if (count < 1 || count > j1 - j0) return 0;
  for (int64_t t = 0; t < count; t++) {
    if (list[t].chunk < j0 || list[t].chunk >= j1 || list[t].first > list[t].last) return 0;
    if (t > 0 && list[t].chunk <= list[t - 1].chunk) return 0;
  }
  return 1;
}
#endif

gpuiso_status gpuiso_hull(int64_t n, const double *y, const double *w, const gpuiso_opts *opt,
                          double *fit_out, uint8_t *start, int64_t *nblocks, gpuiso_error *err) {
  if (nblocks) *nblocks = 0;
  if (n == 0) return GPUISO_OK;
  int64_t C = opt->hull_chunk > 0 ? opt->hull_chunk : HULL_DEFAULT_CHUNK;
  if (C > HULL_CHUNK_MAX) C = HULL_CHUNK_MAX;
  if (C > n) C = n; /* a chunk's slot holds C + 1 vertices, whatever the row's length */
  int64_t cap = opt->hull_walk_cap > 0 ? opt->hull_walk_cap : HULL_DEFAULT_CAP;
  int64_t m = (n + C - 1) / C;
  int nth = resolve_threads(opt, n);
  double sign = opt->increasing ? 1.0 : -1.0;

  chunk_total *tot = malloc((size_t)m * sizeof *tot);
  hull_point *starts = malloc((size_t)m * sizeof *starts);
  size_t entries = (size_t)m * (size_t)(C + 1);
  double *vd = malloc(entries * (w ? 2 : 1) * sizeof *vd);
  int32_t *vi = malloc(entries * sizeof *vi);
  hull_point *vert = malloc((size_t)nth * (size_t)(C + 1) * sizeof *vert); /* a stack a thread */
  int64_t *index = malloc((size_t)nth * (size_t)(C + 1) * sizeof *index);
  hull_segment *seg = malloc((size_t)m * sizeof *seg);
  int64_t *nseg = malloc((size_t)m * sizeof *nseg);
  /* The levels of short edges are summed again from y (hull/slots.h) while other chunks write
   * theirs: a fit asked for over y is written to a copy first. */
  double *fit = fit_out == y ? malloc_dense((size_t)n * sizeof *fit) : fit_out;
  gpuiso_status s = GPUISO_OK;
  if (!tot || !starts || !vd || !vi || !vert || !index || !seg || !nseg || !fit) {
    s = GPUISO_E_NOMEM;
    set_error(err, s, -1, -1);
    goto done;
  }

  /* Chunk totals, validating the input, then the weights scaled by a power of two that brings the
   * largest near 1: scaling down is exact on the totals as they are; scaling up (tiny weights)
   * forms the products again, scaled. Then the chunk starts by a scan over the totals. */
  double scale = 1;
  chunk_totals(y, w, n, C, m, scale, sign, nth, tot);
  double max_w = 0;
  int any_bad = 0;
  for (int64_t j = 0; j < m; j++) {
    max_w = tot[j].max_w > max_w ? tot[j].max_w : max_w;
    any_bad = any_bad || tot[j].bad >= 0;
  }
  int e = 0;
  if (w && max_w > 0 && !any_bad) frexp(max_w, &e);
  /* 2^-e must be a double: below 2^-1023 the largest weight is brought up by 2^1023 only, to at
   * least 2^-51, far from the subnormals. */
  if (e < -1023) e = -1023;
  if (e > 0) {
    scale = ldexp(1.0, -e);
    for (int64_t j = 0; j < m; j++) {
      tot[j].w.hi *= scale;
      tot[j].w.lo *= scale;
      tot[j].s.hi *= scale;
      tot[j].s.lo *= scale;
    }
  } else if (e < 0) {
    scale = ldexp(1.0, -e);
    chunk_totals(y, w, n, C, m, scale, sign, nth, tot);
  }
  double sum_abs = 0, min_w = INFINITY;
  hull_point run = {{0, 0}, {0, 0}};
  for (int64_t j = 0; j < m; j++) {
    if (tot[j].bad >= 0) {
      int64_t b = tot[j].bad;
      double wb = w ? w[b] : 1.0;
      s = !isfinite(y[b]) ? GPUISO_E_Y_NONFINITE : (wb < 0 ? GPUISO_E_W_NEGATIVE : GPUISO_E_W_NONFINITE);
      set_error(err, s, b, -1);
      goto done;
    }
    starts[j] = run;
    hull_point total = {tot[j].w, tot[j].s};
    run = hull_point_add(run, total);
    sum_abs += tot[j].sum_abs;
    min_w = tot[j].min_w < min_w ? tot[j].min_w : min_w;
  }
  if (hull_span_beyond(min_w * scale)) { /* before the sums' checks, as the kernels' row states */
    s = GPUISO_E_W_SPAN;
    set_error(err, s, -1, -1);
    goto done;
  }
  if (!isfinite(sum_abs) || !isfinite(run.w.hi)) {
    s = GPUISO_E_OVERFLOW;
    set_error(err, s, -1, -1);
    goto done;
  }
  if (run.w.hi == 0) {
    s = GPUISO_E_W_ALLZERO;
    set_error(err, s, -1, -1);
    goto done;
  }

  /* The chunk hulls, in parallel; or, where the row's points may not hold its steps (rare: weights
   * or values over ranges of about 2^50 or more), the chunks' chains on the steps in the slots
   * (wide.h), merged below as the hulls are and the records of the merges in seg. */
  hull_slots slots = {starts, vd, w != NULL, vi, C + 1, C, 0, 0, y, w, 0, scale, sign};
  int wide = hull_is_wide(min_w * scale, hull_reach(run.w.hi, sum_abs * scale));
  hull_wide_cross *cross = (hull_wide_cross *)seg; /* a wide row's: no segment lists */
  int64_t edges = 0; /* the solver's blocks */
  uint8_t *edge_start = opt->solver_blocks ? start : NULL;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 16)
#endif
  for (int64_t j = 0; j < m; j++) {
    int64_t to = (j + 1) * C < n ? (j + 1) * C : n, t = thread_num() * (C + 1);
    if (wide) {
      hull_wide_chain(&slots, j * C, to, 0);
      continue;
    }
    hull_segment g = {j, 0, chunk_hull(&slots, j, j * C, to, vert + t, index + t) - 1};
    seg[j] = g;
    nseg[j] = 1;
  }

  /* Merge levels: at span, node j (a multiple of 2 * span) takes in node j + span; a wide row's
   * chains so too, the merge's record kept at j + span. */
#ifdef GPUISO_DEBUG
  int broken = 0;
#endif
  for (int64_t span = 1; span < m; span *= 2) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic)
#endif
    for (int64_t j = 0; j < m - span; j += 2 * span) {
      if (wide) {
        int64_t to = (j + 2 * span) * C < n ? (j + 2 * span) * C : n;
        hull_wide_merge(&slots, j * C, (j + span) * C, to, cross + j + span);
        continue;
      }
      nseg[j] = hull_merge(&slots, seg + j, nseg[j], seg + j + span, nseg[j + span], cap);
#ifdef GPUISO_DEBUG
      if (!list_valid(seg + j, nseg[j], j, j + 2 * span < m ? j + 2 * span : m)) broken = 1;
#endif
    }
#ifdef GPUISO_DEBUG
    if (broken) {
      s = GPUISO_E_INTERNAL;
      set_error(err, s, -1, -1);
      goto done;
    }
#endif
    if (2 * span < m && poll_interrupt(opt)) {
      s = GPUISO_E_INTERRUPT;
      set_error(err, s, -1, -1);
      goto done;
    }
  }

  /* Reconstruction, chunk by chunk: each finds the root hull's vertex at or before its first
   * element and gives every element the slope of the edge above it. Elements before the first
   * vertex (leading zero weights) get the first edge's. The solver's blocks (opt->solver_blocks)
   * are the edges: an element starts one where its point is a vertex. A wide row's chunk finds
   * its first element's block from the merges' records and gives each block its level. */
  hull_segment *root = seg;
  int64_t nroot = wide ? 0 : nseg[0];
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 16) reduction(+ : edges)
#endif
  for (int64_t j = 0; j < m; j++) {
    int64_t i = j * C, end = (j + 1) * C < n ? (j + 1) * C : n;
    if (wide) {
      for (int64_t b = hull_wide_first(cross, j, m, C), e; b < end; b = e) {
        e = hull_wide_end(&slots, b);
        double z = clip(hull_wide_level(&slots, b, e), opt->lo, opt->hi);
        int64_t from = b > i ? b : i, stop = e < end ? e : end;
        edges += b >= i;
        for (int64_t k = from; k < stop; k++) fit[k] = z;
        if (edge_start) memset(edge_start + from, 0, (size_t)(stop - from)), edge_start[from] = (uint8_t)(b >= i);
      }
      continue;
    }
    hull_pos q = hull_locate(&slots, root, nroot, i);
    while (i < end) {
      int64_t ri;
      int head = hull_block_start(&slots, root, q, i, 0);
      double z = clip(hull_edge(&slots, root, q, sign, &q, &ri), opt->lo, opt->hi);
      int64_t stop = ri < end ? ri : end;
      edges += head;
      if (edge_start) {
        memset(edge_start + i, 0, (size_t)(stop - i));
        edge_start[i] = (uint8_t)head;
      }
      for (; i < stop; i++) fit[i] = z;
    }
  }

  /* A block starts where the level changes, as in the PAV engine. A slope that rounding put on
   * the wrong side of the one before takes that one, so the fit never steps against its
   * direction. */
  int stepped = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) reduction(|| : stepped)
#endif
  for (int64_t i = 1; i < n; i++)
    stepped = stepped || (opt->increasing ? fit[i] < fit[i - 1] : fit[i] > fit[i - 1]);
  for (int64_t i = 1; stepped && i < n; i++) /* rare: a running maximum (minimum) */
    if (opt->increasing ? fit[i] < fit[i - 1] : fit[i] > fit[i - 1]) fit[i] = fit[i - 1];
  int64_t count = 0;
  uint8_t *level_start = opt->solver_blocks ? NULL : start;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) reduction(+ : count)
#endif
  for (int64_t i = 0; i < n; i++) {
    uint8_t is_start = i == 0 || fit[i] != fit[i - 1];
    if (level_start) level_start[i] = is_start;
    count += is_start;
  }
  if (nblocks) *nblocks = opt->solver_blocks ? edges : count;

done:
  if (fit && fit != fit_out) {
    if (s == GPUISO_OK) memcpy(fit_out, fit, (size_t)n * sizeof *fit);
    free(fit);
  }
  free(tot);
  free(starts);
  free(vd);
  free(vi);
  free(vert);
  free(index);
  free(seg);
  free(nseg);
  return s;
}

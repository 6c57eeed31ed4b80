/* Host-resident rows through the device (gpuiso_cuda_fit_rows): a batch in slices of rows that
 * fit the device memory free, a row too long for it in segments joined on the host, and within a
 * slice, the rows in groups whose transfers overlap the kernels of the groups beside them. Over an
 * executor with the lanes of staging.cuh.
 */
#ifndef GPUISO_CUDA_HOST_FIT_CUH
#define GPUISO_CUDA_HOST_FIT_CUH

#include "fit_runs.cuh"
#include "pipeline.cuh"
#include "row_join.cuh"
#include "staging.cuh"

/* A slice's data on the device: y, w (weighted), the fit and the flags (starts wanted), the
 * parts of one allocation (part_arena). */
struct slice_arrays {
  void *y, *w, *fit;
  uint8_t *start;
  void *base;
};

template <class Exec>
static void slice_release(Exec &ex, slice_arrays *d) {
  ex.release(d->base);
  memset(d, 0, sizeof *d);
}

template <class Exec>
static gpuiso_status slice_alloc(Exec &ex, slice_arrays *d, int64_t n, size_t value, int weighted, int starts) {
  memset(d, 0, sizeof *d);
  part_arena a;
  memset(&a, 0, sizeof a);
  arena_part(&a, &d->y, n, value);
  if (weighted) arena_part(&a, &d->w, n, value);
  arena_part(&a, &d->fit, n, value);
  if (starts) arena_part(&a, &d->start, n, 1);
  gpuiso_status s = arena_make(ex, &a, &d->base);
  if (s != GPUISO_OK) slice_release(ex, d);
  return s;
}

/* Rows of a host batch through the device in one plan: the data in, then the kernels, then the
 * fit out, in pinned slices (st) when they are large, as runs where they are few (fit_runs.cuh,
 * in the input's memory), and with them the flags of the level starts. */
template <class Exec>
static gpuiso_status fit_slice_whole(Exec &ex, staging<Exec> *st, int64_t nrows, const int64_t *offsets,
                                     gpuiso_precision type, const void *y, const void *w,
                                     const gpuiso_opts *opt, void *fit, uint8_t *start,
                                     gpuiso_error *err) {
  int64_t n = offsets[nrows];
  size_t value = type == GPUISO_SINGLE ? sizeof(float) : sizeof(double), bytes = (size_t)n * value;
  gpuiso_cuda_plan p;
  gpuiso_status s = plan_init(ex, &p, nrows, offsets, type, w != NULL, opt, err);
  if (s != GPUISO_OK) return s;
  slice_arrays d;
  s = slice_alloc(ex, &d, n, value, w != NULL, start != NULL);
  if (s == GPUISO_OK) s = stage_put(ex, st, d.y, y, bytes, no_slice_work());
  if (s == GPUISO_OK && w) s = stage_put(ex, st, d.w, w, bytes, no_slice_work());
  if (s == GPUISO_OK) s = exec_poll(ex, &p.opt, err);
  if (s == GPUISO_OK) s = plan_fit_any(ex, &p, d.y, d.w, d.fit, d.start, err);
  /* the level starts, not the solver's, follow from the fit's runs */
  uint8_t *level_starts = opt->solver_blocks ? NULL : start;
  int flagged = 0;
  if (s == GPUISO_OK)
    s = type == GPUISO_SINGLE
            ? stage_get_values(ex, st, (float *)fit, (const float *)d.fit, n, d.y, level_starts, nrows, offsets, &flagged)
            : stage_get_values(ex, st, (double *)fit, (const double *)d.fit, n, d.y, level_starts, nrows, offsets,
                               &flagged);
  if (s == GPUISO_OK && start && !flagged) s = stage_get(ex, st, start, d.start, (size_t)n);
  stage_wait(ex, st); /* a failed copy's lane partner may still read d */
  slice_release(ex, &d);
  plan_release(ex, &p);
  return s;
}

/* A group of a slice's rows: rows [r0, r1), elements [e0, e1), fitted by plans[plan]. */
struct row_group {
  int64_t r0, r1, e0, e1, plan;
};

/* Where a group's data sit in its lane's pinned buffer: y in and then the fit out from 0, w in
 * and then the flags out from `second`, and last the group's first failing row, at `word`. */
struct group_buffer {
  size_t second, word;
  int64_t cap; /* elements a group at most */
};

static inline group_buffer group_buffer_of(size_t slice, size_t value, int weighted, int starts) {
  group_buffer g;
  size_t second = weighted ? value : (starts ? 1 : 0);
  size_t room = slice > sizeof(unsigned long long) ? slice - sizeof(unsigned long long) : 0;
  g.cap = (int64_t)(room / (value + second)) / 8 * 8; /* keeps both parts aligned */
  g.second = (size_t)g.cap * value;
  g.word = g.second + (size_t)g.cap * second;
  return g;
}

/* Cuts rows into groups of up to cap elements (whole rows; 0 groups where a row is longer) and
 * gives each a plan: that of the group two before (on the same lane, done by then) where the rows
 * have the same lengths, else a new one, numbered from 0. Returns the number of groups. */
static int64_t row_groups(int64_t nrows, const int64_t *offsets, int64_t cap, row_group *g, int64_t *nplans) {
  int64_t k = 0;
  *nplans = 0;
  for (int64_t r = 0; r < nrows; k++) {
    g[k].r0 = r;
    g[k].e0 = offsets[r];
    if (offsets[r + 1] - offsets[r] > cap) return 0;
    while (r < nrows && offsets[r + 1] - g[k].e0 <= cap) r++;
    g[k].r1 = r;
    g[k].e1 = offsets[r];
    const row_group *a = k >= 2 ? &g[k - 2] : NULL;
    int same = a && a->r1 - a->r0 == g[k].r1 - g[k].r0;
    for (int64_t i = 0; same && i < g[k].r1 - g[k].r0; i++)
      same = offsets[a->r0 + i + 1] - offsets[a->r0 + i] == offsets[g[k].r0 + i + 1] - offsets[g[k].r0 + i];
    g[k].plan = same ? a->plan : (*nplans)++;
  }
  return k;
}

/* The first failing row of a group, element and row counted in the slice. */
static inline gpuiso_status group_error(gpuiso_status s, const row_group *g, gpuiso_error *err) {
  if (s != GPUISO_OK && err && err->row >= 0) err->row += g->r0, err->index += err->index >= 0 ? g->e0 : 0;
  return s;
}

/* The rows of a slice in groups, the parts of stage_parts, group k on lane k % 2 of st. A group's
 * failing rows are read once its lane is done; the first of the slice is reported. */
template <class Exec, typename T>
struct group_run {
  Exec &ex;
  staging<Exec> *st;
  group_buffer gb;
  const row_group *g;
  const gpuiso_cuda_plan *plans;
  const T *y, *w;
  T *fit;
  uint8_t *start;
  slice_arrays d;

  solver_view<T> view(const row_group *k) const {
    return plan_view(&plans[k->plan], (const T *)d.y + k->e0, d.w ? (const T *)d.w + k->e0 : NULL,
                     (T *)d.fit + k->e0, d.start ? d.start + k->e0 : NULL);
  }
  gpuiso_status queue(int64_t k, gpuiso_error *err) {
    const row_group *q = &g[k];
    const gpuiso_cuda_plan *p = &plans[q->plan];
    typename Exec::lane lane = st->lane[k & 1];
    char *buf = (char *)st->buf[k & 1];
    size_t len = (size_t)(q->e1 - q->e0), bytes = len * sizeof(T);
    if (poll_interrupt(&p->opt)) {
      set_error(err, GPUISO_E_INTERRUPT, -1, -1);
      return GPUISO_E_INTERRUPT;
    }
    solver_view<T> v = view(q);
    copy_parallel(buf, y + q->e0, bytes, st->threads);
    if (w) copy_parallel(buf + gb.second, w + q->e0, bytes, st->threads);
    gpuiso_status s = ex.put_async((void *)v.y, buf, bytes, lane);
    if (s == GPUISO_OK && w) s = ex.put_async((void *)v.w, buf + gb.second, bytes, lane);
    ex.use_lane(lane);
    if (s == GPUISO_OK) s = plan_queue(ex, p, v);
    ex.use_lane(NULL);
    if (s == GPUISO_OK) s = ex.get_async(buf, v.fit, bytes, lane);
    if (s == GPUISO_OK && start) s = ex.get_async(buf + gb.second, v.start, len, lane);
    if (s == GPUISO_OK) s = ex.get_async(buf + gb.word, v.failed_row, sizeof *v.failed_row, lane);
    return group_error(s, q, err);
  }
  gpuiso_status take(int64_t k, gpuiso_error *err) {
    const row_group *q = &g[k];
    const char *buf = (const char *)st->buf[k & 1];
    size_t len = (size_t)(q->e1 - q->e0);
    gpuiso_status s = ex.lane_sync(st->lane[k & 1]);
    if (s == GPUISO_OK) s = row_error(ex, view(q), *(const unsigned long long *)(buf + gb.word), err);
    if (s != GPUISO_OK) return group_error(s, q, err);
    copy_parallel(fit + q->e0, buf, len * sizeof(T), st->threads);
    if (start) copy_parallel(start + q->e0, buf + gb.second, len, st->threads);
    return GPUISO_OK;
  }
};

/* The groups of a slice (g: nrows entries) for group_run, about equal in elements, where they make
 * at least GROUPS_MIN groups; else 0 (the slice goes whole). */
#define GROUPS_MIN 3
static int64_t slice_groups(int64_t nrows, const int64_t *offsets, group_buffer gb, row_group *g,
                            int64_t *nplans) {
  int64_t n = offsets[nrows], longest = plan_longest(nrows, offsets);
  int64_t parts = gb.cap > 0 ? (n + gb.cap - 1) / gb.cap : 0;
  if (parts < GROUPS_MIN) return 0;
  int64_t even = (n + parts - 1) / parts + longest; /* whole rows fill `parts` groups at most */
  int64_t k = row_groups(nrows, offsets, even < gb.cap ? even : gb.cap, g, nplans);
  return k >= GROUPS_MIN ? k : 0;
}

/* fit_slice_whole, in groups (group_run) where slice_groups finds them in full pinned buffers
 * (STAGE_SLICE bytes: fit_rows_host counts the groups' plans by them; a smaller slice would gain
 * little). */
template <class Exec, typename T>
static gpuiso_status fit_slice_typed(Exec &ex, staging<Exec> *st, int64_t nrows, const int64_t *offsets,
                                     const T *y, const T *w, const gpuiso_opts *opt, T *fit, uint8_t *start,
                                     gpuiso_error *err) {
  gpuiso_precision type = sizeof(T) == sizeof(float) ? GPUISO_SINGLE : GPUISO_DOUBLE;
  int64_t n = offsets[nrows], ngroups = 0, nplans = 0;
  group_buffer gb = group_buffer_of(st->slice, sizeof(T), w != NULL, start != NULL);
  row_group *g = st->buf[0] && st->slice == STAGE_SLICE ? (row_group *)malloc((size_t)nrows * sizeof *g) : NULL;
  if (g) ngroups = slice_groups(nrows, offsets, gb, g, &nplans);
  if (ngroups == 0) {
    free(g);
    return fit_slice_whole(ex, st, nrows, offsets, type, y, w, opt, fit, start, err);
  }
  gpuiso_cuda_plan *plans = (gpuiso_cuda_plan *)calloc((size_t)nplans, sizeof *plans);
  int64_t *off = (int64_t *)malloc(((size_t)nrows + 1) * sizeof *off), made = 0;
  group_run<Exec, T> run = {ex, st, gb, g, plans, y, w, fit, start, {}};
  gpuiso_status s = plans && off ? GPUISO_OK : GPUISO_E_NOMEM;
  if (s != GPUISO_OK) set_error(err, s, -1, -1);
  for (int64_t k = 0; s == GPUISO_OK && k < ngroups; k++) {
    if (g[k].plan < made) continue;
    for (int64_t r = g[k].r0; r <= g[k].r1; r++) off[r - g[k].r0] = offsets[r] - g[k].e0;
    s = plan_init(ex, &plans[made], g[k].r1 - g[k].r0, off, type, w != NULL, opt, err);
    if (s == GPUISO_OK) made++;
  }
  if (s == GPUISO_OK) s = slice_alloc(ex, &run.d, n, sizeof(T), w != NULL, start != NULL);
  if (s == GPUISO_OK) s = ex.sync(); /* the plans' copies, on the default stream, before the lanes */
  if (s == GPUISO_OK) s = stage_parts(run, ngroups, err);
  stage_wait(ex, st); /* the lanes' work done before the memory it uses goes */
  slice_release(ex, &run.d);
  for (int64_t k = 0; k < made; k++) plan_release(ex, &plans[k]);
  free(plans);
  free(off);
  free(g);
  return s;
}

/* A slice of a host batch through the device: fit_slice_typed in the batch's precision. */
template <class Exec>
static gpuiso_status fit_slice_host(Exec &ex, int64_t nrows, const int64_t *offsets, gpuiso_precision type,
                                    const void *y, const void *w, const gpuiso_opts *opt, void *fit,
                                    uint8_t *start, gpuiso_error *err) {
  int64_t n = offsets[nrows];
  size_t bytes = (size_t)n * (type == GPUISO_SINGLE ? sizeof(float) : sizeof(double));
  staging<Exec> st;
  gpuiso_status s = stage_open(ex, &st, bytes, resolve_threads(opt, n));
  if (s == GPUISO_OK && type == GPUISO_SINGLE)
    s = fit_slice_typed(ex, &st, nrows, offsets, (const float *)y, (const float *)w, opt, (float *)fit, start,
                        err);
  else if (s == GPUISO_OK)
    s = fit_slice_typed(ex, &st, nrows, offsets, (const double *)y, (const double *)w, opt, (double *)fit, start,
                        err);
  stage_close(ex, &st);
  return s;
}

/* The longest segment of a row of n elements whose plan (the segment alone, with its flags) takes
 * at most budget bytes (at least 1). */
static inline int64_t segment_length(const gpuiso_opts *opt, int64_t n, gpuiso_precision type, int weighted,
                                     double budget) {
  int64_t len = (int64_t)(budget / (plan_slice_row_bytes(opt, n, n, type, weighted, 1) / (double)n));
  while (len > 1 && plan_slice_row_bytes(opt, len, len, type, weighted, 1) > budget) len -= len / 16 + 1;
  return len > 1 ? len : 1;
}

/* Where the segments of a row of n elements start, about len apart (cut[0] = 0; returns how many,
 * at most 2 n / len + 2). A weighted row's later segments start at a positive weight, the last
 * within len of the segment before where there is one, so that each holds a positive weight and no
 * cut parts zero weights from the block on their left; the first holds the row's first positive
 * weight. A segment longer than len holds one positive weight (the zero weights after it reach
 * beyond len). */
template <typename T>
static int64_t segment_cuts(int64_t n, const T *w, int64_t len, int64_t *cut) {
  int64_t k = 0, first = 0;
  while (w && first < n && !(w[first] > 0)) first++;
  if (first == n) w = NULL; /* no positive weight: the first segment reports it */
  cut[k++] = 0;
  for (int64_t c = 0, t; (t = c + len) < n; cut[k++] = c) {
    int64_t lim = k == 1 ? first : c, p = t > lim ? t : lim, from = p;
    while (w && p > lim && !(w[p] > 0)) p--;
    if (w && p == lim)
      for (p = from + 1; p < n && !(w[p] > 0); p++) {}
    if (p >= n) break;
    c = p;
  }
  return k;
}

/* The first invalid element of [from, to) of a row (w: NULL where unweighted), as the device's
 * checks report it (err: its index in the row). */
template <typename T>
static gpuiso_status run_status(const T *y, const T *w, int64_t from, int64_t to, gpuiso_error *err) {
  for (int64_t i = from; i < to; i++) {
    gpuiso_status s = value_status((double)y[i], w ? (double)w[i] : 1.0);
    if (s != GPUISO_OK) {
      set_error(err, s, i, 0);
      return s;
    }
  }
  return GPUISO_OK;
}

/* Segment [c, e) of a row through the device, as a row of its own. A segment longer than len
 * holds one positive weight (segment_cuts), which alone goes to the device: its elements are
 * checked here, in order, before the device checks its sums, and those of no weight join its
 * block, which they leave as it is (their products are exact zeros), so that a long run of zero
 * weights takes no more device memory than a segment. A row with no positive weight is one such
 * segment, reported here. */
template <class Exec, typename T>
static gpuiso_status fit_segment(Exec &ex, gpuiso_precision type, const T *y, const T *w, const gpuiso_opts *o,
                                 int64_t c, int64_t e, int64_t len, T *fit, uint8_t *flags, gpuiso_error *err) {
  int64_t off[2] = {0, e - c};
  if (e - c <= len) {
    gpuiso_status s = fit_slice_host(ex, 1, off, type, y + c, w ? w + c : NULL, o, fit + c, flags + c, err);
    if (s != GPUISO_OK && err && err->index >= 0) err->index += c;
    return s;
  }
  int64_t f = c;
  while (f < e && !(w[f] > 0)) f++;
  gpuiso_status s = run_status(y, w, c, e, err);
  if (s == GPUISO_OK && f == e) {
    set_error(err, GPUISO_E_W_ALLZERO, -1, 0);
    return GPUISO_E_W_ALLZERO;
  }
  off[1] = 1;
  if (s == GPUISO_OK) s = fit_slice_host(ex, 1, off, type, y + f, w + f, o, fit + f, flags + f, err);
  if (s != GPUISO_OK) return s; /* the device's error, of its sums alone */
  for (int64_t i = c; i < e; i++) fit[i] = fit[f], flags[i] = i == c;
  return GPUISO_OK;
}

/* A row larger than the device memory free (budget bytes for it): its segments fitted one after
 * another on the device as rows of their own, unclipped and with their solver blocks, then joined
 * on the host (row_join.cuh), clipped, and flagged. */
template <class Exec, typename T>
static gpuiso_status fit_row_segments(Exec &ex, int64_t n, gpuiso_precision type, const T *y, const T *w,
                                      const gpuiso_opts *opt, double budget, T *fit, uint8_t *start,
                                      gpuiso_error *err) {
  int64_t len = segment_length(opt, n, type, w != NULL, budget), ncuts = 0;
  int64_t *cut = (int64_t *)malloc((size_t)(2 * (n / len) + 3) * sizeof *cut);
  uint8_t *flags = start && opt->solver_blocks ? start : (uint8_t *)malloc_dense((size_t)n);
  /* a fit in place (groups_xy.c's knots) would write the segments' fits over the y that the join
   * sums after them: it joins a copy */
  T *copy = fit == y ? (T *)malloc_dense((size_t)n * sizeof(T)) : NULL;
  int apart = fit != y || copy;
  if (copy) y = (const T *)memcpy(copy, y, (size_t)n * sizeof(T));
  gpuiso_status s = cut && flags && apart ? GPUISO_OK : GPUISO_E_NOMEM;
  if (s != GPUISO_OK) set_error(err, s, -1, -1);
  else ncuts = segment_cuts(n, w, len, cut);
  gpuiso_opts o = *opt;
  o.lo = -INFINITY, o.hi = INFINITY, o.solver_blocks = 1;
  int64_t k = 0;
  for (; s == GPUISO_OK && k < ncuts; k++)
    s = fit_segment(ex, type, y, w, &o, cut[k], k + 1 < ncuts ? cut[k + 1] : n, len, fit, flags, err);
  /* a segment's sums overflowed: an invalid element after it comes first, as in a fit in one piece
   * (a row of no positive weight is one segment, fit_segment) */
  if (s == GPUISO_E_OVERFLOW) {
    gpuiso_status later = run_status(y, w, k < ncuts ? cut[k] : n, n, err); /* err: set only on one */
    if (later != GPUISO_OK) s = later;
  }
  if (s == GPUISO_OK) s = join_row(n, y, w, opt->increasing, cut, ncuts, fit, flags, err);
  int bounded = opt->lo > -INFINITY || opt->hi < INFINITY, level_starts = start && !opt->solver_blocks;
  if (s == GPUISO_OK && (bounded || level_starts))
    for (int64_t i = 0; i < n; i++) {
      if (bounded) fit[i] = (T)clip((double)fit[i], opt->lo, opt->hi);
      if (level_starts) start[i] = i == 0 || fit[i] != fit[i - 1]; /* of the clipped fit */
    }
  free(cut);
  free(copy);
  if (flags != start) free(flags);
  return s;
}

/* gpuiso_cuda_fit_rows: host arrays in, through the device, host arrays out; in slices of rows
 * when the batch needs more than the memory free, and a row that alone needs more in segments. */
template <class Exec>
static gpuiso_status fit_rows_host(Exec &ex, int64_t nrows, const int64_t *offsets,
                                   gpuiso_precision type, const void *y, const void *w,
                                   const gpuiso_opts *opt_in, void *fit, uint8_t *start,
                                   gpuiso_error *err) {
  set_error(err, GPUISO_OK, -1, -1);
  if (offsets[nrows] == 0) return GPUISO_OK;
  size_t avail = 0, value = type == GPUISO_SINGLE ? sizeof(float) : sizeof(double);
  gpuiso_opts device; /* the plans' options on this device, so that the bytes counted are theirs */
  const gpuiso_opts *opt = &device;
  gpuiso_status s = device_options(ex, opt_in, w != NULL, &device);
  if (s == GPUISO_OK) s = plan_available(ex, opt, &avail);
  int64_t longest = plan_longest(nrows, offsets);
  int64_t *off = NULL; /* a slice's offsets, from 0 */
  /* a slice's plan and arrays, and in groups (of capacity cap: at most 3 n / cap + 1 of them,
   * slice_groups) a plan each more */
  double budget = SLICE_SHARE * (double)avail - 2 * ARENA_FIXED_BYTES;
  double group_bytes = 3 * ARENA_FIXED_BYTES / (double)group_buffer_of(STAGE_SLICE, value, w != NULL, start != NULL).cap;
  if (s == GPUISO_OK && !(budget >= plan_slice_row_bytes(opt, 1, 1, type, w != NULL, start != NULL)))
    s = device_too_small(err, avail); /* not even an element fits */
  for (int64_t r0 = 0, r1; s == GPUISO_OK && r0 < nrows; r0 = r1) {
    double need = ARENA_FIXED_BYTES;
    for (r1 = r0; r1 < nrows; r1++) {
      int64_t len = offsets[r1 + 1] - offsets[r1];
      double b = plan_slice_row_bytes(opt, longest, len, type, w != NULL, start != NULL) + (double)len * group_bytes;
      if (need + b > budget) break;
      need += b;
    }
    if (r0 == 0 && r1 == nrows) return fit_slice_host(ex, nrows, offsets, type, y, w, opt, fit, start, err);
    int64_t e0 = offsets[r0];
    if (r1 == r0) { /* row r0 alone needs more */
      int64_t len = offsets[++r1] - e0;
      s = type == GPUISO_SINGLE
              ? fit_row_segments(ex, len, type, (const float *)y + e0, w ? (const float *)w + e0 : NULL, opt, budget,
                                 (float *)fit + e0, start ? start + e0 : NULL, err)
              : fit_row_segments(ex, len, type, (const double *)y + e0, w ? (const double *)w + e0 : NULL, opt,
                                 budget, (double *)fit + e0, start ? start + e0 : NULL, err);
      if (s != GPUISO_OK && err && err->row >= 0) err->row += r0, err->index += err->index >= 0 ? e0 : 0;
      continue;
    }
    if (!off && !(off = (int64_t *)malloc(((size_t)nrows + 1) * sizeof *off))) {
      s = GPUISO_E_NOMEM;
      set_error(err, s, -1, -1);
      break;
    }
    for (int64_t r = r0; r <= r1; r++) off[r - r0] = offsets[r] - e0;
    s = fit_slice_host(ex, r1 - r0, off, type, (const char *)y + e0 * value,
                       w ? (const char *)w + e0 * value : NULL, opt, (char *)fit + e0 * value,
                       start ? start + e0 : NULL, err);
    if (s != GPUISO_OK && err && err->row >= 0) err->row += r0, err->index += err->index >= 0 ? e0 : 0;
  }
  free(off);
  return s;
}

#endif

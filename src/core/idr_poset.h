/* Internal to IDR: the runs list shared with idr.c, and the solver of several covariates
 * (idr_mincut.c, used by idr_poset.c). */
#ifndef GPUISO_IDR_POSET_H
#define GPUISO_IDR_POSET_H

#include "internal.h"

/* A growable list of runs (start, value). */
typedef struct {
  int64_t n, cap;
  int32_t *start;
  double *value;
} run_list;

/* Appends a run; returns 0 when out of memory (idr.c). */
int runs_push(run_list *r, int32_t start, double value);

/* Workspace of the exact antitonic solver on a poset (one per thread). */
typedef struct {
  int32_t *local;            /* npos: a point's index in the block being cut, or -1 */
  int32_t *perm;             /* npos: the points to fit, then the blocks as segments of it */
  int64_t *seg;              /* 2 npos: stack of the segments still to cut */
  int32_t *to, *next;        /* the flow network's edges; edge e ^ 1 is e's reverse */
  double *cap;               /* residual capacities */
  int32_t *head, *level, *iter, *queue, *path; /* npos + 2 nodes: the block, source, sink */
  double *gain;              /* npos: the gain of each point of the block */
} mincut_work;

int mincut_work_init(mincut_work *w, const gpuiso_poset *g);
void mincut_work_free(mincut_work *w);

/* The antitonic least-squares fit of sum[p] / weight[p] on the points perm[0 .. nb) of w (set by
 * the caller; they must form a convex set of the poset: with p <= r <= q and p, q in it, r is in
 * it too, as an upper set is); writes fit[p] for those points. */
void mincut_solve(mincut_work *w, const gpuiso_poset *g, int64_t nb, const double *sum,
                  const double *weight, double *fit);

#endif

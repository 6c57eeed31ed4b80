/* Internal to IDR: the runs list and the slice driver shared by idr.c and idr_poset.c, and the
 * solver of several covariates (idr_mincut.c, used by idr_poset.c). */
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

/* Weights and counts as integers: multiples of the power of two that every weight is a multiple
 * of (idr.c), so that the hull tree's sums and turns are exact while their total, as summed in
 * doubles, is at most IDR_UNITS_MAX (the exact total then under twice that; the products of two
 * differences in 256 bits). Without 128-bit integers, doubles, exact while the products stay
 * under 2^53. */
#if defined(__SIZEOF_INT128__) && !defined(GPUISO_NO_INT128)
#define IDR_UNITS_WIDE 1
__extension__ typedef __int128 idr_units;
#define IDR_UNITS_MAX 0x1p124
typedef int32_t idr_narrow; /* the hull tree's coordinates up to IDR_NARROW_MAX */
typedef int64_t idr_narrow_product; /* exact products of two of them */
#define IDR_NARROW_MAX 0x1p30

/* The sign of a b - c d beyond 64-bit factors (cdf_hull.c). */
int units_cross_sign_wide(idr_units a, idr_units b, idr_units c, idr_units d);

/* The sign of a b - c d, exactly, for |a|, |b|, |c|, |d| < 2 IDR_UNITS_MAX: in 128 bits while
 * the factors fit 64, inline as the wide tree's turns and pooling run it in their loops. */
static inline int units_cross_sign(idr_units a, idr_units b, idr_units c, idr_units d) {
  if (a != (int64_t)a || b != (int64_t)b || c != (int64_t)c || d != (int64_t)d)
    return units_cross_sign_wide(a, b, c, d);
  idr_units l = (idr_units)(int64_t)a * (int64_t)b, r = (idr_units)(int64_t)c * (int64_t)d;
  return (l > r) - (l < r);
}
#else
typedef double idr_units;
#define IDR_UNITS_MAX 0x1p26
typedef double idr_narrow;
typedef double idr_narrow_product;
#define IDR_NARROW_MAX IDR_UNITS_MAX

static inline int units_cross_sign(idr_units a, idr_units b, idr_units c, idr_units d) {
  double l = a * b, r = c * d; /* exact under IDR_UNITS_MAX */
  return (l > r) - (l < r);
}
#endif

/* The sign of a b - c d for narrow values: exact, as IDR_NARROW_MAX bounds them. */
static inline int narrow_cross(idr_narrow a, idr_narrow b, idr_narrow c, idr_narrow d) {
  idr_narrow_product l = (idr_narrow_product)a * b, r = (idr_narrow_product)c * d;
  return (l > r) - (l < r);
}

/* The least concave majorant of the points (sum of w, sum of s) over positions 0 .. j, kept
 * in a tree as positions' counts s change (cdf_hull.c): the sum of every w at most
 * IDR_NARROW_MAX (exactly), or with wide coordinates about IDR_UNITS_MAX. */
typedef struct {
  int32_t n;              /* positions */
  int wide;               /* coordinates: 0 idr_narrow, 1 idr_units */
  void *node;             /* 2 n - 1 */
} cdf_hull;

int cdf_hull_init(cdf_hull *h, int32_t n, int wide); /* 0: out of memory */
void cdf_hull_free(cdf_hull *h);
/* Every node from the positions' weights w and counts s. */
void cdf_hull_build(cdf_hull *h, const idr_units *w, const idr_units *s);
/* After s changed at positions p[0 .. m) (non-decreasing). */
void cdf_hull_update(cdf_hull *h, const int32_t *p, int64_t m, const idr_units *s);
/* The hull's vertices, as the last position each point sums (-1 the origin), increasing: at most
 * n + 1 of them. */
int64_t cdf_hull_vertices(const cdf_hull *h, int32_t *out);
/* The weight and count of the blocks of positions that end at end[0 .. nb) (increasing, the
 * last n - 1), each summed over the tree's nodes inside it. */
void cdf_hull_blocks(const cdf_hull *h, const int32_t *end, int64_t nb, idr_units *w,
                     idr_units *s);

/* A slice of thresholds [k0, k1), the first member of each file's slice type: next - k0 of
 * them are fitted (by the slice or, where slices share their work, by others: next - k0 then
 * counts the slice's own fits, and the slices' counts still add up to their thresholds). */
typedef struct {
  int64_t k0, k1, next;
} idr_range;

/* Fits one more threshold for a slice (advancing its next); returns 1, 0 when out of memory, or
 * -1 when the slice has nothing left to fit for now. */
typedef int (*idr_step)(void *slice, const void *in);

/* Steps the nsl slices (an array of elements of slice_size bytes, each starting with its
 * idr_range) on up to nth threads until all their thresholds are fitted, in rounds of per_round
 * steps of each slice (fewer where it has nothing left; more while others are still short of
 * theirs) between interrupt polls and progress reports (progress may be NULL). Slices that share
 * state guard it themselves. */
gpuiso_status idr_drive(void *slices, size_t slice_size, int nsl, int nth, int64_t per_round,
                        idr_step step, const void *in, const gpuiso_opts *opt,
                        const gpuiso_progress *progress);

/* Workspace of the exact antitonic solver on a poset (one per thread). */
typedef struct {
  int32_t *local;            /* npos: a point's index in the block being cut, or -1 */
  int32_t *perm;             /* npos: the points to fit, then the blocks as segments of it */
  int64_t *seg;              /* 2 npos: stack of the segments still to cut */
  int32_t *efrom, *eto;      /* the flow network's edges, as listed */
  double *ecap;
  int32_t *to, *rev;         /* its arcs by node: head, reverse arc of each */
  double *cap;               /* residual capacities */
  int32_t *head;             /* npos + 3: the arcs out of node v are head[v] .. head[v + 1] */
  /* npos + 2 each (the block's points, source, sink) */
  int32_t *label;            /* distance labels (at least each node's distance to the sink) */
  int32_t *current;          /* each node's current arc */
  double *excess;            /* flow in less flow out */
  int32_t *count;            /* the nodes of each label below the number of nodes */
  int32_t *queue;            /* breadth-first searches */
  int32_t *fifo;             /* the active nodes, a ring */
  unsigned char *queued;     /* whether a node is in the ring */
  unsigned char *in_source;  /* after the flow: whether a node is on the cut's source side */
  double *gain;              /* npos: the gain of each point of the block */
  int32_t *node;             /* npos: a point's node in the network, or the side its bounds fix */
  int32_t *free_pt;          /* npos: the points of the block in the network, by node */
  key_tag *by_hi;            /* 2 npos: the points by their upper bounds, and scratch */
} mincut_work;

int mincut_work_init(mincut_work *w, const gpuiso_poset *g);
void mincut_work_free(mincut_work *w);

/* The antitonic least-squares fit of sum[p] / weight[p] on the points perm[0 .. nb) of w (set by
 * the caller in increasing order; they must form a convex set of the poset: with p <= r <= q and
 * p, q in it, r is in it too, as an upper set is); writes fit[p] for those points. lo and hi
 * (both NULL, or npos each) are bounds known to hold for the exact fit, lo[p] <= fit[p] <= hi[p],
 * and antitonic themselves (the fits of a lower and a higher threshold): the cut of a block at
 * its mean m then needs a flow only over the points with lo <= m < hi (about), the others' sides
 * being known. The result is the same. */
void mincut_solve(mincut_work *w, const gpuiso_poset *g, int64_t nb, const double *sum,
                  const double *weight, const double *lo, const double *hi, double *fit);

#endif

/* The least concave majorant of a cumulative sum diagram kept in a balanced tree, for IDR's
 * hull engine (idr.c): a change of one position's count updates the nodes above it, and the hull is
 * read out in O(log n) a vertex.
 *
 * Point j of a node over positions [lo, hi) is the sum of the weights and of the counts of
 * positions lo .. j, so j runs over lo - 1 (the origin) .. hi - 1. A node's upper hull is a part
 * of its left child's hull, an edge (u, v) across the middle, and a part of its right child's
 * hull (Overmars and van Leeuwen 1981): storing that edge, with its ends' coordinates, describes
 * every node's hull without copying it, and a search along a hull descends the tree. Merging two
 * children finds the edge by a search along the right hull whose every step searches the left
 * hull for a tangent: O(log^2) a node, O(log^3) a changed position, and a rebuild of every node
 * costs O(n) as most nodes are small.
 *
 * The coordinates are integers, so every turn is exact: 32-bit ones while the weights' total
 * is at most 2^30 units (unweighted fits up to 2^30 observations: 32 bytes a node, against 112,
 * and fits some 20% faster than on 64-bit integers at n = 1e5), their products in 64 bits; else
 * 128-bit ones, whose products of two differences take up to 250 bits, compared by 64-bit
 * halves (cdf_hull_tree.h holds the tree for either). Without 128-bit integers, doubles up to
 * 2^26 units, their products exact.
 *
 * The nodes are in preorder: a node over [lo, hi) has its left child next and its right child
 * 2 (mid - lo) further on. */
#include <stdlib.h>

#include "idr_poset.h"

#ifdef IDR_UNITS_WIDE
__extension__ typedef unsigned __int128 wide;

static int sign_of(idr_units x) {
  return (x > 0) - (x < 0);
}

static wide magnitude(idr_units x) {
  return x < 0 ? (wide)-x : (wide)x;
}

/* x y as 256 bits (hi, lo), by four products of 64-bit halves. */
static void mul_wide(wide x, wide y, wide *hi, wide *lo) {
  uint64_t x0 = (uint64_t)x, x1 = (uint64_t)(x >> 64), y0 = (uint64_t)y, y1 = (uint64_t)(y >> 64);
  wide p00 = (wide)x0 * y0, p01 = (wide)x0 * y1, p10 = (wide)x1 * y0, p11 = (wide)x1 * y1;
  wide mid = (p00 >> 64) + (uint64_t)p01 + (uint64_t)p10; /* under 3 2^64: no carry lost */
  *lo = (mid << 64) | (uint64_t)p00;
  *hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
}

int units_cross_sign_wide(idr_units a, idr_units b, idr_units c, idr_units d) {
  int sl = sign_of(a) * sign_of(b), sr = sign_of(c) * sign_of(d);
  if (sl != sr || sl == 0) return (sl > sr) - (sl < sr);
  wide lh, ll, rh, rl;
  mul_wide(magnitude(a), magnitude(b), &lh, &ll);
  mul_wide(magnitude(c), magnitude(d), &rh, &rl);
  int cmp = lh != rh ? (lh > rh) - (lh < rh) : (ll > rl) - (ll < rl);
  return sl * cmp;
}
#endif

static int32_t middle(int32_t lo, int32_t hi) {
  return lo + (hi - lo) / 2;
}

/* The rules a search along a hull follows (cdf_hull_tree.h's goes_right). */
enum { TANGENT, BRIDGE, SECOND };

#define COORD idr_narrow
#define CROSS narrow_cross
#define NAME(x) x##_narrow
#include "cdf_hull_tree.h"
#undef COORD
#undef CROSS
#undef NAME

#ifdef IDR_UNITS_WIDE
#define COORD idr_units
#define CROSS units_cross_sign
#define NAME(x) x##_wide
#include "cdf_hull_tree.h"
#undef COORD
#undef CROSS
#undef NAME
#define INSTANCE(h, f) ((h)->wide ? f##_wide : f##_narrow)
#else
#define INSTANCE(h, f) f##_narrow
#endif

int cdf_hull_init(cdf_hull *h, int32_t n, int wide) {
  h->n = n;
  h->wide = wide;
  h->node = malloc((size_t)(2 * (int64_t)n - 1) * INSTANCE(h, tree_node_size)());
  return h->node != NULL;
}

void cdf_hull_free(cdf_hull *h) {
  free(h->node);
  h->node = NULL;
}

void cdf_hull_build(cdf_hull *h, const idr_units *w, const idr_units *s) {
  INSTANCE(h, tree_build)(h->node, h->n, w, s);
}

void cdf_hull_update(cdf_hull *h, const int32_t *p, int64_t m, const idr_units *s) {
  if (m > 0) INSTANCE(h, tree_update)(h->node, h->n, p, m, s);
}

int64_t cdf_hull_vertices(const cdf_hull *h, int32_t *out) {
  return INSTANCE(h, tree_vertices)(h->node, h->n, out);
}

void cdf_hull_blocks(const cdf_hull *h, const int32_t *end, int64_t nb, idr_units *w,
                     idr_units *s) {
  for (int64_t b = 0; b < nb; b++) w[b] = s[b] = 0;
  INSTANCE(h, tree_blocks)(h->node, h->n, end, w, s);
}

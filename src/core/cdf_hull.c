/* The least concave majorant of a cumulative sum diagram kept in a balanced tree, for the IDR
 * sweep (idr.c): a change of one position's count updates the nodes above it, and the hull is
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
 * The nodes are in preorder: a node over [lo, hi) has its left child next and its right child
 * 2 (mid - lo) further on. */
#include <stdlib.h>

#include "idr_poset.h"

typedef struct {
  double w, s;
} cdf_point;

/* (b - a) x (c - a): positive when c lies above the line from a through b (b right of a). */
static double orient(cdf_point a, cdf_point b, cdf_point c) {
  return (b.w - a.w) * (c.s - a.s) - (b.s - a.s) * (c.w - a.w);
}

static int32_t middle(int32_t lo, int32_t hi) {
  return lo + (hi - lo) / 2;
}

/* The rule a search along a hull follows at an edge (a, b): go on right of it or stop left. */
enum { TANGENT, BRIDGE, SECOND };
typedef struct {
  int kind;
  cdf_point q;       /* TANGENT: the point, right of the hull, whose tangent is sought */
  const cdf_hull *h; /* BRIDGE: the left child, node t over [lo, hi), whose tangents it takes */
  int64_t t;
  int32_t lo, hi;    /* SECOND: lo alone, the hull's first position (its origin is lo - 1) */
} search_rule;

static int32_t hull_search(const cdf_hull *h, int64_t t, int32_t lo, int32_t hi, cdf_point off,
                           int32_t i, cdf_point pi, int32_t j, cdf_point pj,
                           const search_rule *rule, cdf_point *found);

/* The vertex of the left child's hull where the tangent from q touches it. */
static cdf_point left_tangent(const search_rule *bridge, cdf_point q) {
  const cdf_hull_node *left = &bridge->h->node[bridge->t];
  cdf_point origin = {0.0, 0.0}, end = {left->w, left->s}, at;
  search_rule tangent = {TANGENT, q, NULL, 0, 0, 0};
  hull_search(bridge->h, bridge->t, bridge->lo, bridge->hi, origin, bridge->lo - 1, origin,
              bridge->hi - 1, end, &tangent, &at);
  return at;
}

/* Whether the vertex sought lies at or right of b, the hull's next vertex after a (vertex ia). */
static int goes_right(const search_rule *rule, int32_t ia, cdf_point a, cdf_point b) {
  switch (rule->kind) {
  case TANGENT: /* the tangent from q touches where the hull's next vertex falls below it; */
    return orient(a, rule->q, b) > 0; /* on it, at the first such vertex */
  case BRIDGE: /* the common tangent leaves the right hull where it bends below the tangent; */
    return orient(left_tangent(rule, a), a, b) >= 0; /* on it, at the last: none collinear */
  default: /* SECOND: the vertex after the origin */
    return ia == rule->lo - 1;
  }
}

/* Searches the hull of node t (over [lo, hi), origin at off) between its vertices i and j (at
 * pi and pj): returns the vertex the rule stops at and its point. */
static int32_t hull_search(const cdf_hull *h, int64_t t, int32_t lo, int32_t hi, cdf_point off,
                           int32_t i, cdf_point pi, int32_t j, cdf_point pj,
                           const search_rule *rule, cdf_point *found) {
  while (i != j) {
    if (hi - lo == 1) { /* a leaf: the edge (lo - 1, lo) */
      if (goes_right(rule, i, pi, pj)) {
        i = j;
        pi = pj;
      }
      break;
    }
    const cdf_hull_node *n = &h->node[t];
    int32_t mid = middle(lo, hi);
    int64_t right = t + 2 * (int64_t)(mid - lo);
    if (j > n->u && i < n->v) { /* the edge across the middle lies between i and j */
      cdf_point u = {off.w + n->uw, off.s + n->us}, v = {off.w + n->vw, off.s + n->vs};
      if (goes_right(rule, n->u, u, v)) {
        i = n->v;
        pi = v;
      } else {
        j = n->u;
        pj = u;
      }
    }
    if (j <= n->u) {
      t++;
      hi = mid;
    } else {
      off.w += h->node[t + 1].w;
      off.s += h->node[t + 1].s;
      t = right;
      lo = mid;
    }
  }
  *found = pi;
  return i;
}

/* Sets node t's totals and edge across the middle from its children's. */
static void join(cdf_hull *h, int64_t t, int32_t lo, int32_t hi) {
  int32_t mid = middle(lo, hi);
  int64_t lt = t + 1, rt = t + 2 * (int64_t)(mid - lo);
  cdf_hull_node *n = &h->node[t];
  const cdf_hull_node *l = &h->node[lt], *r = &h->node[rt];
  n->w = l->w + r->w;
  n->s = l->s + r->s;
  cdf_point origin = {0.0, 0.0}, mid_pt = {l->w, l->s}, end = {n->w, n->s}, v, u = mid_pt;
  search_rule bridge = {BRIDGE, origin, h, lt, lo, mid};
  int32_t vi = hull_search(h, rt, mid, hi, mid_pt, mid - 1, mid_pt, hi - 1, end, &bridge, &v);
  int32_t ui = mid - 1;
  if (vi == mid - 1) { /* the hulls join at the middle: the edge is the right hull's first */
    search_rule second = {SECOND, origin, NULL, 0, mid, hi};
    vi = hull_search(h, rt, mid, hi, mid_pt, mid - 1, mid_pt, hi - 1, end, &second, &v);
  } else {
    search_rule tangent = {TANGENT, v, NULL, 0, 0, 0};
    ui = hull_search(h, lt, lo, mid, origin, lo - 1, origin, mid - 1, mid_pt, &tangent, &u);
  }
  n->u = ui;
  n->v = vi;
  n->uw = u.w;
  n->us = u.s;
  n->vw = v.w;
  n->vs = v.s;
}

static void build(cdf_hull *h, int64_t t, int32_t lo, int32_t hi, const double *w,
                  const double *s) {
  if (hi - lo == 1) {
    h->node[t].w = w[lo];
    h->node[t].s = s[lo];
    return;
  }
  int32_t mid = middle(lo, hi);
  build(h, t + 1, lo, mid, w, s);
  build(h, t + 2 * (int64_t)(mid - lo), mid, hi, w, s);
  join(h, t, lo, hi);
}

int cdf_hull_init(cdf_hull *h, int32_t n) {
  h->n = n;
  h->node = malloc((size_t)(2 * (int64_t)n - 1) * sizeof *h->node);
  return h->node != NULL;
}

void cdf_hull_free(cdf_hull *h) {
  free(h->node);
  h->node = NULL;
}

void cdf_hull_build(cdf_hull *h, const double *w, const double *s) {
  build(h, 0, 0, h->n, w, s);
}

/* Positions p[0 .. m), non-decreasing, all in [lo, hi). */
static void update(cdf_hull *h, int64_t t, int32_t lo, int32_t hi, const int32_t *p, int64_t m,
                   const double *s) {
  if (hi - lo == 1) {
    h->node[t].s = s[lo];
    return;
  }
  int32_t mid = middle(lo, hi);
  int64_t k = 0;
  while (k < m && p[k] < mid) k++;
  if (k > 0) update(h, t + 1, lo, mid, p, k, s);
  if (k < m) update(h, t + 2 * (int64_t)(mid - lo), mid, hi, p + k, m - k, s);
  join(h, t, lo, hi);
}

void cdf_hull_update(cdf_hull *h, const int32_t *p, int64_t m, const double *s) {
  if (m > 0) update(h, 0, 0, h->n, p, m, s);
}

/* Appends the vertices of node t's hull from i to j to out. */
static void vertices(const cdf_hull *h, int64_t t, int32_t lo, int32_t hi, int32_t i, int32_t j,
                     int32_t *out, int64_t *n) {
  while (hi - lo > 1) {
    const cdf_hull_node *nd = &h->node[t];
    int32_t mid = middle(lo, hi);
    int64_t right = t + 2 * (int64_t)(mid - lo);
    if (j > nd->u && i < nd->v) {
      vertices(h, t + 1, lo, mid, i, nd->u, out, n);
      i = nd->v;
    }
    if (j <= nd->u) {
      t++;
      hi = mid;
    } else {
      t = right;
      lo = mid;
    }
  }
  out[(*n)++] = i;
  if (j != i) out[(*n)++] = j;
}

int64_t cdf_hull_vertices(const cdf_hull *h, int32_t *out) {
  int64_t n = 0;
  vertices(h, 0, 0, h->n, -1, h->n - 1, out, &n);
  return n;
}

/* Adds the totals of node t's positions to the blocks they fall in: block *b ends at position
 * end[*b], and a node inside one block adds its totals whole. */
static void sums(const cdf_hull *h, int64_t t, int32_t lo, int32_t hi, const int32_t *end,
                 int64_t *b, double *w, double *s) {
  if (hi - 1 <= end[*b]) {
    w[*b] += h->node[t].w;
    s[*b] += h->node[t].s;
    if (hi - 1 == end[*b]) (*b)++;
    return;
  }
  int32_t mid = middle(lo, hi);
  sums(h, t + 1, lo, mid, end, b, w, s);
  sums(h, t + 2 * (int64_t)(mid - lo), mid, hi, end, b, w, s);
}

void cdf_hull_blocks(const cdf_hull *h, const int32_t *end, int64_t nb, double *w, double *s) {
  for (int64_t b = 0; b < nb; b++) w[b] = s[b] = 0.0;
  int64_t b = 0;
  sums(h, 0, 0, h->n, end, &b, w, s);
}

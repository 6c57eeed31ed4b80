/* The hull tree of cdf_hull.c for one type of coordinates: included there once per type, with
 * COORD the coordinates' type (integers, or doubles without 128-bit integers), CROSS(a, b, c, d)
 * the exact sign of a b - c d on their differences, and NAME(x) naming this instance's x. The
 * entry points (NAME(tree_*)) take the node array untyped, so that both instances share their
 * signatures. */

typedef struct {
  COORD w, s;
} NAME(point);

typedef struct {
  COORD w, s;             /* totals of the node's positions */
  COORD uw, us, vw, vs;   /* the ends of the edge across its middle, from the node's origin */
  int32_t u, v;           /* their points' last positions */
} NAME(node);

/* The sign of (b - a) x (c - a): positive when c lies above the line from a through b (b right
 * of a). */
static int NAME(orient)(NAME(point) a, NAME(point) b, NAME(point) c) {
  return CROSS(b.w - a.w, c.s - a.s, b.s - a.s, c.w - a.w);
}

/* The rule a search along a hull follows at an edge (a, b): go on right of it or stop left. */
typedef struct {
  int kind;
  NAME(point) q;          /* TANGENT: the point, right of the hull, whose tangent is sought */
  const NAME(node) *node; /* BRIDGE: the left child, node t over [lo, hi), for its tangents */
  int64_t t;
  int32_t lo, hi;         /* SECOND: lo alone, the hull's first position (its origin is lo - 1) */
} NAME(rule);

static int32_t NAME(hull_search)(const NAME(node) *node, int64_t t, int32_t lo, int32_t hi,
                                 NAME(point) off, int32_t i, NAME(point) pi, int32_t j,
                                 NAME(point) pj, const NAME(rule) *rule, NAME(point) *found);

/* The vertex of the left child's hull where the tangent from q touches it. */
static NAME(point) NAME(left_tangent)(const NAME(rule) *bridge, NAME(point) q) {
  const NAME(node) *left = &bridge->node[bridge->t];
  NAME(point) origin = {0, 0}, end = {left->w, left->s}, at;
  NAME(rule) tangent = {TANGENT, q, NULL, 0, 0, 0};
  NAME(hull_search)(bridge->node, bridge->t, bridge->lo, bridge->hi, origin, bridge->lo - 1,
                    origin, bridge->hi - 1, end, &tangent, &at);
  return at;
}

/* Whether the vertex sought lies at or right of b, the hull's next vertex after a (vertex ia). */
static int NAME(goes_right)(const NAME(rule) *rule, int32_t ia, NAME(point) a, NAME(point) b) {
  switch (rule->kind) {
  case TANGENT: /* the tangent from q touches where the hull's next vertex falls below it; */
    return NAME(orient)(a, rule->q, b) > 0; /* on it, at the first such vertex */
  case BRIDGE: /* the common tangent leaves the right hull where it bends below the tangent; */
    return NAME(orient)(NAME(left_tangent)(rule, a), a, b) >= 0; /* on it, at the last */
  default: /* SECOND: the vertex after the origin */
    return ia == rule->lo - 1;
  }
}

/* Searches the hull of node t (over [lo, hi), origin at off) between its vertices i and j (at
 * pi and pj): returns the vertex the rule stops at and its point. */
static int32_t NAME(hull_search)(const NAME(node) *node, int64_t t, int32_t lo, int32_t hi,
                                 NAME(point) off, int32_t i, NAME(point) pi, int32_t j,
                                 NAME(point) pj, const NAME(rule) *rule, NAME(point) *found) {
  while (i != j) {
    if (hi - lo == 1) { /* a leaf: the edge (lo - 1, lo) */
      if (NAME(goes_right)(rule, i, pi, pj)) {
        i = j;
        pi = pj;
      }
      break;
    }
    const NAME(node) *n = &node[t];
    int32_t mid = middle(lo, hi);
    int64_t right = t + 2 * (int64_t)(mid - lo);
    if (j > n->u && i < n->v) { /* the edge across the middle lies between i and j */
      NAME(point) u = {off.w + n->uw, off.s + n->us}, v = {off.w + n->vw, off.s + n->vs};
      if (NAME(goes_right)(rule, n->u, u, v)) {
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
      off.w += node[t + 1].w;
      off.s += node[t + 1].s;
      t = right;
      lo = mid;
    }
  }
  *found = pi;
  return i;
}

/* Sets node t's totals and edge across the middle from its children's. */
static void NAME(join)(NAME(node) *node, int64_t t, int32_t lo, int32_t hi) {
  int32_t mid = middle(lo, hi);
  int64_t lt = t + 1, rt = t + 2 * (int64_t)(mid - lo);
  NAME(node) *n = &node[t];
  const NAME(node) *l = &node[lt], *r = &node[rt];
  n->w = l->w + r->w;
  n->s = l->s + r->s;
  NAME(point) origin = {0, 0}, mid_pt = {l->w, l->s}, end = {n->w, n->s}, v, u = mid_pt;
  NAME(rule) bridge = {BRIDGE, origin, node, lt, lo, mid};
  int32_t vi =
      NAME(hull_search)(node, rt, mid, hi, mid_pt, mid - 1, mid_pt, hi - 1, end, &bridge, &v);
  int32_t ui = mid - 1;
  if (vi == mid - 1) { /* the hulls join at the middle: the edge is the right hull's first */
    NAME(rule) second = {SECOND, origin, NULL, 0, mid, hi};
    vi = NAME(hull_search)(node, rt, mid, hi, mid_pt, mid - 1, mid_pt, hi - 1, end, &second, &v);
  } else {
    NAME(rule) tangent = {TANGENT, v, NULL, 0, 0, 0};
    ui = NAME(hull_search)(node, lt, lo, mid, origin, lo - 1, origin, mid - 1, mid_pt, &tangent,
                           &u);
  }
  n->u = ui;
  n->v = vi;
  n->uw = u.w;
  n->us = u.s;
  n->vw = v.w;
  n->vs = v.s;
}

static void NAME(build)(NAME(node) *node, int64_t t, int32_t lo, int32_t hi, const idr_units *w,
                        const idr_units *s) {
  if (hi - lo == 1) {
    node[t].w = (COORD)w[lo];
    node[t].s = (COORD)s[lo];
    return;
  }
  int32_t mid = middle(lo, hi);
  NAME(build)(node, t + 1, lo, mid, w, s);
  NAME(build)(node, t + 2 * (int64_t)(mid - lo), mid, hi, w, s);
  NAME(join)(node, t, lo, hi);
}

/* Positions p[0 .. m), non-decreasing, all in [lo, hi). */
static void NAME(update)(NAME(node) *node, int64_t t, int32_t lo, int32_t hi, const int32_t *p,
                         int64_t m, const idr_units *s) {
  if (hi - lo == 1) {
    node[t].s = (COORD)s[lo];
    return;
  }
  int32_t mid = middle(lo, hi);
  int64_t k = 0;
  while (k < m && p[k] < mid) k++;
  if (k > 0) NAME(update)(node, t + 1, lo, mid, p, k, s);
  if (k < m) NAME(update)(node, t + 2 * (int64_t)(mid - lo), mid, hi, p + k, m - k, s);
  NAME(join)(node, t, lo, hi);
}

/* Appends the vertices of node t's hull from i to j to out. */
static void NAME(vertices)(const NAME(node) *node, int64_t t, int32_t lo, int32_t hi, int32_t i,
                           int32_t j, int32_t *out, int64_t *n) {
  while (hi - lo > 1) {
    const NAME(node) *nd = &node[t];
    int32_t mid = middle(lo, hi);
    int64_t right = t + 2 * (int64_t)(mid - lo);
    if (j > nd->u && i < nd->v) {
      NAME(vertices)(node, t + 1, lo, mid, i, nd->u, out, n);
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

/* Adds the totals of node t's positions to the blocks they fall in: block *b ends at position
 * end[*b], and a node inside one block adds its totals whole. */
static void NAME(sums)(const NAME(node) *node, int64_t t, int32_t lo, int32_t hi,
                       const int32_t *end, int64_t *b, idr_units *w, idr_units *s) {
  if (hi - 1 <= end[*b]) {
    w[*b] += node[t].w;
    s[*b] += node[t].s;
    if (hi - 1 == end[*b]) (*b)++;
    return;
  }
  int32_t mid = middle(lo, hi);
  NAME(sums)(node, t + 1, lo, mid, end, b, w, s);
  NAME(sums)(node, t + 2 * (int64_t)(mid - lo), mid, hi, end, b, w, s);
}

/* The entry points, on the root over [0, n). */
static size_t NAME(tree_node_size)(void) {
  return sizeof(NAME(node));
}

static void NAME(tree_build)(void *node, int32_t n, const idr_units *w, const idr_units *s) {
  NAME(build)(node, 0, 0, n, w, s);
}

static void NAME(tree_update)(void *node, int32_t n, const int32_t *p, int64_t m,
                              const idr_units *s) {
  NAME(update)(node, 0, 0, n, p, m, s);
}

static int64_t NAME(tree_vertices)(const void *node, int32_t n, int32_t *out) {
  int64_t count = 0;
  NAME(vertices)(node, 0, 0, n, -1, n - 1, out, &count);
  return count;
}

static void NAME(tree_blocks)(const void *node, int32_t n, const int32_t *end, idr_units *w,
                              idr_units *s) {
  int64_t b = 0;
  NAME(sums)(node, 0, 0, n, end, &b, w, s);
}

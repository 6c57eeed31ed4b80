/* The hull engine's pooling of a threshold's blocks (idr.c's hull_fit) for one type of sums:
 * included there once per type, with SUM the type that holds every sum of the blocks,
 * CROSS(a, b, c, d) the exact sign of a b - c d on them, and NAME(x) naming this instance's x.
 * Narrow sums (idr_narrow: 32-bit integers, their products in 64) fit in registers where
 * 128-bit ones spill: PAV over every position takes 0.6 of the time on them (1e6 positions).
 *
 * Pools neighbouring blocks (weights block_weight, counts block_sum; block b starts after
 * vertex[b], or after position b - 1 where pav) whose levels do not fall, none after the tree
 * (its slopes fall strictly), exactly compared, the top block held apart until a level falls
 * after it (most positions of a PAV pool into it). A pooled block keeps its first one's start.
 * Writes the pooled blocks to weight, sum and vertex (which may be block_weight, block_sum and
 * the vertices read: the blocks written never overtake those read) and returns their number;
 * nb >= 1. */
static int64_t NAME(pool)(const idr_units *block_weight, const idr_units *block_sum, int pav,
                          int64_t nb, idr_units *weight, idr_units *sum, int32_t *vertex) {
  SUM top_w = 0, top_s = 0;
  int32_t top_v = -1;
  int64_t n = 0;
  for (int64_t b = 0; b < nb; b++) {
    SUM bw = (SUM)block_weight[b], bs = (SUM)block_sum[b];
    int32_t bv = pav ? (int32_t)b - 1 : vertex[b];
    if (b == 0 || CROSS(top_s, bw, bs, top_w) > 0) {
      if (b > 0) weight[n] = top_w, sum[n] = top_s, vertex[n++] = top_v;
      top_w = bw, top_s = bs, top_v = bv;
      continue;
    }
    top_w += bw;
    top_s += bs;
    while (n >= 1 && CROSS((SUM)sum[n - 1], top_w, top_s, (SUM)weight[n - 1]) <= 0) {
      n--;
      top_w += (SUM)weight[n];
      top_s += (SUM)sum[n];
      top_v = vertex[n];
    }
  }
  weight[n] = top_w, sum[n] = top_s, vertex[n++] = top_v;
  return n;
}

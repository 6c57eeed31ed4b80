/* The CUDA solver's device memory, as the host sees it: the rows' state, the limits of the lane
 * kernels, and the bytes a plan takes, so that a batch is cut into slices that fit the memory free
 * (src/cuda/pipeline.cuh) and a machine without a device can say what a fit would ask for
 * (gpuiso_gpu_workspace_bytes). Plain C, shared by the host code and the kernels.
 */
#ifndef GPUISO_GPU_PLAN_H
#define GPUISO_GPU_PLAN_H

#include "gpuiso.h"
#include "hull/wide.h"

#define GPU_DEFAULT_CHUNK 1024
#define GPU_DEFAULT_CAP 64
#define SHORT_ROW_MAX 1024 /* rows packed into warps: 32 lanes of 32 elements */
#define BLOCK_ROW_MAX 4096 /* rows of a block of up to four warps */

/* What a row's first pass found, and the flag of its last. */
typedef struct {
  double scale;   /* the row's weights are scaled by this power of two */
  int rescale;    /* totals formed at scale 1 are: 1 scaled, -1 formed again scaled, 0 kept */
  int status;     /* gpuiso_status of the row */
  int64_t index;  /* element of the error, or -1 */
  int stepped;    /* a rounded slope stepped against the direction */
  double reach;   /* of hull_is_wide, scaled */
  int wide;       /* the row's points may not hold its steps: one chain on the steps (hull.c) */
} row_state;

/* The fast path's passes over a row's chunks (src/cuda/row_scans.cuh) take them in tiles of this
 * many, a block each; a tile's aggregates: */
#define ROW_TILE_CHUNKS 256
typedef struct {
  double max_w, min_w;     /* the checks: the largest and smallest positive weights, */
  int64_t bad;             /* the first invalid element (INT64_MAX: none) */
  hull_point total, before; /* the chunk starts: the tile's totals, the row's before the tile */
  double sum_abs;          /* the tile's sum of w |y| */
  double level, level_before; /* the running maximum (minimum): of the tile, before it */
} row_tile;

/* The longest row of the lane kernels under the options: gpu_block_rows down to the rows of a
 * whole block, a warp, two or four (1024, 2048, 4096), whose shared memory device_options weighs;
 * a warp's rows stay on the lanes whatever it asks. */
static inline GPUISO_HD int64_t plan_block_rows(const gpuiso_opts *opt) {
  int64_t rows = opt->gpu_block_rows;
  return rows <= 0 || rows >= BLOCK_ROW_MAX ? BLOCK_ROW_MAX : rows >= 2 * SHORT_ROW_MAX ? 2 * SHORT_ROW_MAX : SHORT_ROW_MAX;
}

/* Whether a row of len elements runs on the lane kernels (the others in chunks). */
static inline GPUISO_HD int plan_on_lanes(const gpuiso_opts *opt, int64_t len) {
  return opt->gpu_kernel == GPUISO_GPU_FAST && len <= plan_block_rows(opt);
}

/* Whether a plan whose longest row has `longest` elements runs on the lane kernels alone. */
static inline GPUISO_HD int plan_short(const gpuiso_opts *opt, int64_t longest) { return plan_on_lanes(opt, longest); }

/* The chunk of a plan's options (hull_chunk, at most HULL_CHUNK_MAX). */
static inline int64_t plan_chunk(const gpuiso_opts *opt) {
  int64_t chunk = opt->hull_chunk > 0 ? opt->hull_chunk : GPU_DEFAULT_CHUNK;
  return chunk < HULL_CHUNK_MAX ? chunk : HULL_CHUNK_MAX;
}

/* Vertices of the slots of a row of len elements in chunks of `chunk`: chunk + 1 a chunk. */
static inline double plan_row_slots(int64_t len, int64_t chunk) {
  return (double)((len + chunk - 1) / chunk) * (double)(chunk + 1);
}

/* Device bytes of a vertex of the slots (hull/slots.h): W (weighted), S and the point index. */
static inline double plan_vertex_bytes(int weighted) {
  return (weighted ? 2 : 1) * sizeof(double) + sizeof(int32_t);
}

/* Device bytes of the scratch of a row of len elements in a plan whose longest row has `longest`
 * (a few more per plan), weighted or not: what plan_init allocates. A row of the lane kernels
 * takes its offset and state, and its block_row entry, or its pack_row entry and at most one of
 * pack_first, and at most one entry of the lane kernels' retry list; beside chunked rows also
 * their per-row layout (chunk_base, tile_base). */
static inline double plan_row_bytes(const gpuiso_opts *opt, int64_t longest, int64_t len, int weighted) {
  if (plan_on_lanes(opt, len))
    return (len > SHORT_ROW_MAX ? 2 : 3) * sizeof(int64_t) + sizeof(row_state) + sizeof(unsigned) +
           (plan_short(opt, longest) ? 0 : 2 * sizeof(int64_t));
  int64_t chunk = plan_chunk(opt);
  double chunks = (double)((len + chunk - 1) / chunk);
  double layout = 2 * sizeof(int64_t) + chunks * sizeof(int64_t); /* offsets, chunk_base, chunk_row */
  if (opt->gpu_kernel == GPUISO_GPU_ROW_PAV)
    return layout + (double)len * (2 * sizeof(double) + sizeof(int64_t));
  double merges = 0, tiles = 0;
  if (opt->gpu_kernel == GPUISO_GPU_FAST) { /* merge_node, the retry list; tile_base, tile_row and tiles */
    merges = chunks * (sizeof(int64_t) + sizeof(unsigned));
    tiles = sizeof(int64_t) + ceil(chunks / ROW_TILE_CHUNKS) * (sizeof(int64_t) + sizeof(row_tile));
  }
  return layout + merges + tiles + sizeof(row_state) +
         chunks * (sizeof(chunk_total) + sizeof(hull_point) + sizeof(hull_segment) + sizeof(int64_t)) +
         plan_row_slots(len, chunk) * plan_vertex_bytes(weighted);
}

/* The longest of the rows of offsets. */
static inline int64_t plan_longest(int64_t nrows, const int64_t *offsets) {
  int64_t longest = 0;
  for (int64_t r = 0; r < nrows; r++)
    longest = offsets[r + 1] - offsets[r] > longest ? offsets[r + 1] - offsets[r] : longest;
  return longest;
}

/* Chunks plan_options tries below plan_chunk(opt): this many, down to half of it. */
#define PLAN_CHUNK_TRIES 64

/* The options of a plan of these rows: a chunk's slot holds hull_chunk + 1 vertices, so a row of
 * 4097 in chunks of 1024 would take a fifth slot of 1025 vertices for one element. Of the longest
 * row's even chunks and PLAN_CHUNK_TRIES from plan_chunk(opt) down to half of it, the chunk with
 * which the rows over plan_block_rows (the chunked rows of the fast path) take the fewest bytes,
 * weighted (plan_row_bytes: their slots, and the scratch of each chunk), the larger on a tie
 * (fewer merges); without such rows, the longest row's even chunks. One pass over the rows. */
static inline gpuiso_opts plan_options(const gpuiso_opts *opt, int64_t nrows, const int64_t *offsets) {
  gpuiso_opts o = *opt;
  int64_t chunk = plan_chunk(opt), longest = plan_longest(nrows, offsets), tries[PLAN_CHUNK_TRIES + 1];
  int64_t chunks = (longest + chunk - 1) / chunk, step = (chunk + 2 * PLAN_CHUNK_TRIES - 1) / (2 * PLAN_CHUNK_TRIES);
  int ntries = 1, best = 0;
  tries[0] = longest > 0 ? (longest + chunks - 1) / chunks : chunk;
  for (int k = 0; longest > plan_block_rows(opt) && k < PLAN_CHUNK_TRIES && chunk - k * step >= 1 &&
                  2 * (chunk - k * step) >= chunk;
       k++)
    tries[ntries++] = chunk - k * step;
  double bytes[PLAN_CHUNK_TRIES + 1] = {0};
  for (int64_t r = 0; ntries > 1 && r < nrows; r++) {
    int64_t len = offsets[r + 1] - offsets[r];
    for (int t = 0; len > plan_block_rows(opt) && t < ntries; t++) {
      o.hull_chunk = tries[t];
      bytes[t] += plan_row_bytes(&o, longest, len, 1);
    }
  }
  for (int t = 1; t < ntries; t++)
    if (bytes[t] < bytes[best] || (bytes[t] == bytes[best] && tries[t] > tries[best])) best = t;
  o.hull_chunk = tries[best];
  return o;
}

/* A plan's device arrays, and a slice's, are the parts of one allocation each (part_arena,
 * src/cuda/pipeline.cuh), each part rounded to ARENA_ALIGN bytes and followed by a gap of as
 * many, ARENA_PARTS parts at most. */
#define ARENA_ALIGN 256 /* cudaMalloc's alignment, kept for each part */
#define ARENA_PARTS 24

/* Device bytes of one allocation of parts beyond what plan_row_bytes and plan_row_data_bytes
 * count of its rows, at most: each part's rounding and gap, and the few entries a plan has
 * beyond its rows'. A fit holds a plan and a slice's arrays, a group of rows a plan more. */
#define ARENA_FIXED_BYTES ((double)ARENA_PARTS * 2 * ARENA_ALIGN + 8 * sizeof(int64_t))

/* Device bytes of a row's data: y, w (weighted), the fit and the block flags (starts). */
static inline double plan_row_data_bytes(int64_t len, gpuiso_precision type, int weighted, int starts) {
  double value = type == GPUISO_SINGLE ? sizeof(float) : sizeof(double);
  return (double)len * ((weighted ? 3 : 2) * value + (starts ? 1 : 0));
}

/* Device bytes of a row of len elements in a plan whose longest row has `longest`: its scratch and
 * its data, the block flags where `starts`. */
static inline double plan_slice_row_bytes(const gpuiso_opts *opt, int64_t longest, int64_t len,
                                          gpuiso_precision type, int weighted, int starts) {
  return plan_row_bytes(opt, longest, len, weighted) + plan_row_data_bytes(len, type, weighted, starts);
}

#endif

/* Transfers of host-resident data through pinned buffers, in slices on two lanes (streams), so
 * that the host's copy of one slice into its pinned buffer, the DMA of another and the kernels of
 * a third run at once: pageable memory cannot be copied asynchronously, and one cudaMemcpy of it
 * would leave the device idle for the whole transfer. Over an executor with the lanes of
 * sort_exec.cuh or tools/simt/sim_exec.h. The entry points' large host arrays go so (host_fit.cuh,
 * fit_xy.cuh, soft.cuh, vjp.cuh, idr.cuh, calibrate.cuh); work in independent parts goes part by
 * part instead, each part's copies in, kernels and copies out on the two lanes and buffers in
 * turn (stage_parts: a batch's groups of rows, host_fit.cuh; the values of predict.cuh).
 */
#ifndef GPUISO_CUDA_STAGING_CUH
#define GPUISO_CUDA_STAGING_CUH

#include <string.h>

#include "gpuiso.h"
#include "internal.h"

/* Bytes a slice: large enough that a copy's fixed cost is small beside its transfer (8 MiB at
 * 25 GB/s is about 0.3 ms), small enough that the first and last slices, which overlap nothing,
 * are short. */
#ifndef STAGE_SLICE /* the C tests set a small one (a multiple of 8 bytes) to run many slices */
#define STAGE_SLICE ((size_t)8 << 20)
#endif

/* Up to this many bytes an array goes in one plain copy: pinned memory and streams cost more to
 * make than they save on it (0 in the C tests of staging). */
#ifndef STAGE_DIRECT
#define STAGE_DIRECT ((size_t)1 << 20)
#endif

/* Threads of a copy at most: a few saturate the host's memory bandwidth, more only wait. */
#define STAGE_COPY_THREADS 8

template <class Exec>
struct staging {
  typename Exec::lane lane[2];
  void *buf[2];
  size_t slice;
  int threads; /* of the host's copies into and out of the pinned buffers */
};

/* The two lanes and their pinned buffers for arrays of up to `bytes` (a slice at most), none for
 * arrays of up to STAGE_DIRECT bytes; released by stage_close, on failure too. The host copies
 * run on `threads` threads: one would be slower than the transfers. */
template <class Exec>
static gpuiso_status stage_open(Exec &ex, staging<Exec> *st, size_t bytes, int threads) {
  memset(st, 0, sizeof *st);
  st->slice = bytes < STAGE_SLICE ? (bytes > 0 ? bytes : 1) : STAGE_SLICE;
  st->threads = threads < STAGE_COPY_THREADS ? threads : STAGE_COPY_THREADS;
  gpuiso_status s = GPUISO_OK;
  if (bytes <= STAGE_DIRECT) return s;
  for (int b = 0; b < 2 && s == GPUISO_OK; b++) {
    s = ex.lane_open(&st->lane[b]);
    if (s == GPUISO_OK) s = ex.pin(&st->buf[b], st->slice);
  }
  return s;
}

/* Waits for the work of both lanes: before the memory they use goes, on failure too (a failure
 * is reported by the call that met it). */
template <class Exec>
static void stage_wait(Exec &ex, staging<Exec> *st) {
  for (int b = 0; b < 2; b++)
    if (st->lane[b]) (void)ex.lane_sync(st->lane[b]);
}

template <class Exec>
static void stage_close(Exec &ex, staging<Exec> *st) {
  ex.use_lane(NULL);
  stage_wait(ex, st);
  for (int b = 0; b < 2; b++) {
    ex.unpin(st->buf[b]);
    ex.lane_close(st->lane[b]);
    st->buf[b] = NULL;
    st->lane[b] = NULL;
  }
}

/* No kernel after a slice's copy. */
struct no_slice_work {
  template <class Exec>
  gpuiso_status operator()(Exec &, size_t, size_t) const {
    return GPUISO_OK;
  }
};

/* bytes from host to dev, slice by slice (one plain copy where st has no buffers):
 * after(ex, offset, length) launches the kernels of a slice as soon as it is on the device, on the
 * slice's lane. Returns when every copy and kernel is done. */
template <class Exec, class After>
static gpuiso_status stage_put(Exec &ex, staging<Exec> *st, void *dev, const void *host, size_t bytes,
                               After after) {
  if (!st->buf[0]) { /* one plain copy */
    gpuiso_status s = ex.put(dev, host, bytes);
    return s == GPUISO_OK && bytes > 0 ? after(ex, 0, bytes) : s;
  }
  gpuiso_status s = GPUISO_OK;
  for (size_t off = 0, k = 0; s == GPUISO_OK && off < bytes; off += st->slice, k++) {
    int b = (int)(k & 1);
    size_t len = bytes - off < st->slice ? bytes - off : st->slice;
    s = ex.lane_sync(st->lane[b]); /* the buffer's previous slice is on the device */
    if (s != GPUISO_OK) break;
    copy_parallel(st->buf[b], (const char *)host + off, len, st->threads);
    s = ex.put_async((char *)dev + off, st->buf[b], len, st->lane[b]);
    ex.use_lane(st->lane[b]);
    if (s == GPUISO_OK) s = after(ex, off, len);
    ex.use_lane(NULL);
  }
  for (int b = 0; b < 2; b++) {
    gpuiso_status t = ex.lane_sync(st->lane[b]);
    if (s == GPUISO_OK) s = t;
  }
  return s;
}

/* count host elements to a new device array through st (stage_put; nothing for a NULL host). */
template <class Exec, typename T>
static gpuiso_status stage_upload(Exec &ex, staging<Exec> *st, const T **dev, const T *host, int64_t count) {
  if (!host) return GPUISO_OK;
  size_t bytes = (size_t)count * sizeof(T);
  gpuiso_status s = ex.alloc((void **)dev, bytes);
  return s == GPUISO_OK ? stage_put(ex, st, (void *)*dev, host, bytes, no_slice_work()) : s;
}

/* Parts 0 .. nparts - 1 through the two lanes in turn: parts.queue(k, err) queues part k's copies
 * in, kernels and copies out on lane k % 2 once parts.take(k - 2, err) has waited for that lane and
 * taken part k - 2 out of its pinned buffer, so that the host copies one part while the device
 * moves or works on the part before. An error met in queueing part k is reported unless taking
 * part k - 1 finds one first (take writes err only then). The caller waits for the lanes after,
 * on failure too (stage_wait). */
template <class Parts>
static gpuiso_status stage_parts(Parts &parts, int64_t nparts, gpuiso_error *err) {
  gpuiso_status s = GPUISO_OK, queued = GPUISO_OK;
  for (int64_t k = 0; s == GPUISO_OK && k < nparts + 2; k++) {
    if (k >= 2) s = parts.take(k - 2, err);
    if (s == GPUISO_OK && queued != GPUISO_OK) return queued;
    if (s == GPUISO_OK && k < nparts) queued = parts.queue(k, err);
  }
  return s;
}

/* bytes from dev to host, slice by slice, after the work of the default stream: the host copies
 * a slice out of its pinned buffer while the next one comes. */
template <class Exec>
static gpuiso_status stage_get(Exec &ex, staging<Exec> *st, void *host, const void *dev, size_t bytes) {
  if (!st->buf[0]) return ex.get(host, dev, bytes); /* one plain copy, after the work before it */
  gpuiso_status s = ex.sync();
  size_t slices = (bytes + st->slice - 1) / st->slice;
  for (size_t k = 0; s == GPUISO_OK && k <= slices; k++) {
    int b = (int)(k & 1);
    if (k < slices) {
      size_t off = k * st->slice;
      s = ex.get_async(st->buf[b], (const char *)dev + off, bytes - off < st->slice ? bytes - off : st->slice,
                       st->lane[b]);
    }
    if (s == GPUISO_OK && k > 0) { /* slice k - 1 */
      size_t off = (k - 1) * st->slice;
      s = ex.lane_sync(st->lane[1 - b]);
      if (s == GPUISO_OK)
        copy_parallel((char *)host + off, st->buf[1 - b], bytes - off < st->slice ? bytes - off : st->slice, st->threads);
    }
  }
  return s;
}

#endif

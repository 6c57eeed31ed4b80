/* The streams of the SIMT executor (tools/simt/sim_exec.h), asynchronous as CUDA's are: each race
 * of host code with a lane (a pinned buffer read before its copy ran, or overwritten before its
 * copy to the device ran, the default stream reading what a lane's kernel writes, a lane reading
 * what the default stream's kernel or fill writes) gives wrong data under every schedule seed,
 * and the same sequences with their waits give the right data; a queued kernel's defect is
 * reported by a later call, once; release, lane_close and the device-wide sync run the queues,
 * and a pinned buffer given back with work queued is a defect (the buffers are kept for the next
 * fit); a lane keeps its order whatever its progress; the CUB stand-ins and the staged transfers
 * (src/cuda/staging.cuh) work on lanes; lanes and pinned buffers count as held and fail as
 * allocations; asynchronous copies take pinned memory only, within its buffers; and the device
 * memory held stays within what the executor reports free. */
#define STAGE_SLICE ((size_t)8 * 64) /* 64 elements a slice: many slices, the last one short */
#define STAGE_DIRECT ((size_t)0)      /* staged however small */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"
#include "launch.cuh"
#include "staging.cuh"

#include "check.h"
#include "sim_test.h"

#define NV 300 /* elements of a buffer */
#define BYTES ((size_t)NV * sizeof(int64_t))

/* The pattern of the test data: element i of the array `base`. */
static int64_t value(int64_t base, int64_t i) { return base + 3 * i; }

static void set_values(int64_t *h, int64_t base) {
  for (int64_t i = 0; i < NV; i++) h[i] = value(base, i);
}

/* Whether h holds the array `base`. */
static int has_values(const int64_t *h, int64_t base) {
  for (int64_t i = 0; i < NV; i++)
    if (h[i] != value(base, i)) return 0;
  return 1;
}

/* Whether every byte of p is `byte`. */
static int all_bytes(const void *p, size_t bytes, int byte) {
  for (size_t i = 0; i < bytes; i++)
    if (((const unsigned char *)p)[i] != (unsigned char)byte) return 0;
  return 1;
}

struct write_step {
  int64_t *v;
  int64_t base;
  SIMT_DEVICE void operator()(int64_t i) const { v[i] = value(base, i); }
};

struct add_step {
  int64_t *v;
  int64_t add;
  SIMT_DEVICE void operator()(int64_t i) const { v[i] += add; }
};

/* Writes past the end of its NV elements: a defect. */
struct past_end_step {
  int64_t *v;
  SIMT_DEVICE void operator()(int64_t i) const { v[NV + i] = i; }
};

/* Keys a permutation of 0..NV-1 (37 is prime to NV), values their index. */
struct keys_step {
  uint64_t *key;
  int64_t *index;
  SIMT_DEVICE void operator()(int64_t i) const {
    key[i] = (uint64_t)(i * 37 % NV);
    index[i] = i;
  }
};

struct ones_step {
  int64_t *v;
  SIMT_DEVICE void operator()(int64_t i) const { v[i] = 1; }
};

/* An executor with a device buffer of the array `base`, a lane and a pinned buffer. */
struct rig {
  gpuiso_error e;
  sim_exec ex;
  int64_t *dev;
  sim_exec::lane l;
  void *pinned;
  int ok;
};

static void rig_open(rig *r, uint64_t seed, int64_t base) {
  memset(&r->e, 0, sizeof r->e);
  r->ex = sim_exec{&r->e, 0, 0, 0, 0, seed};
  int64_t h[NV];
  set_values(h, base);
  gpuiso_status s = r->ex.alloc((void **)&r->dev, BYTES);
  if (s == GPUISO_OK) s = r->ex.put(r->dev, h, BYTES);
  if (s == GPUISO_OK) s = r->ex.lane_open(&r->l);
  if (s == GPUISO_OK) s = r->ex.pin(&r->pinned, BYTES);
  r->ok = s == GPUISO_OK;
  CHECK(r->ok, "seed %llu: the rig's setup: status %d", (unsigned long long)seed, (int)s);
}

/* Closes the rig: nothing stays held. */
static void rig_close(rig *r, const char *what) {
  r->ex.unpin(r->pinned);
  r->ex.lane_close(r->l);
  r->ex.release(r->dev);
  CHECK(r->ex.held == 0 && r->ex.lanes.empty(), "%s: %lld held, %zu lanes open", what, (long long)r->ex.held,
        r->ex.lanes.size());
}

/* The device buffer as the default stream reads it now. */
static int device_has(rig *r, int64_t base) {
  int64_t h[NV];
  return r->ex.get(h, r->dev, BYTES) == GPUISO_OK && has_values(h, base);
}

static void test_get_async(void) {
  rig r;
  rig_open(&r, sim_seed, 7);
  if (!r.ok) return;
  gpuiso_status s = r.ex.get_async(r.pinned, r.dev, BYTES, r.l);
  CHECK(s == GPUISO_OK && all_bytes(r.pinned, BYTES, 0xff),
        "a pinned buffer read before its lane's copy ran holds the poison: status %d", (int)s);
  s = r.ex.lane_sync(r.l);
  CHECK(s == GPUISO_OK && has_values((int64_t *)r.pinned, 7), "after lane_sync the copy is in: status %d", (int)s);
  rig_close(&r, "get_async");
}

static void test_put_async(void) {
  rig r;
  rig_open(&r, sim_seed, 0);
  if (!r.ok) return;
  int64_t *p = (int64_t *)r.pinned;
  /* the race: the buffer overwritten before the copy ran, which then takes the new bytes */
  set_values(p, 10);
  gpuiso_status s = r.ex.put_async(r.dev, p, BYTES, r.l);
  set_values(p, 20);
  if (s == GPUISO_OK) s = r.ex.lane_sync(r.l);
  CHECK(s == GPUISO_OK && device_has(&r, 20), "a pinned source overwritten before its copy ran: the device has the overwrite");
  /* with the wait before the overwrite */
  set_values(p, 30);
  s = r.ex.put_async(r.dev, p, BYTES, r.l);
  if (s == GPUISO_OK) s = r.ex.lane_sync(r.l);
  set_values(p, 40);
  CHECK(s == GPUISO_OK && device_has(&r, 30), "a pinned source overwritten after lane_sync: the device has the first bytes");
  rig_close(&r, "put_async");
}

/* Asynchronous copies only from and to pinned buffers, within them: a copy of pageable memory
 * would run synchronously on a device, and one past a buffer's end would write host memory. */
static void test_unpinned(void) {
  rig r;
  rig_open(&r, sim_seed, 0);
  if (!r.ok) return;
  int64_t h[NV];
  set_values(h, 3);
  gpuiso_status s = r.ex.put_async(r.dev, h, BYTES, r.l);
  CHECK(s == GPUISO_E_CUDA && strstr(r.e.message, "not pinned"), "a copy in from pageable memory: status %d (%s)",
        (int)s, r.e.message);
  s = r.ex.get_async((char *)r.pinned + 8, r.dev, BYTES, r.l);
  CHECK(s == GPUISO_E_CUDA && strstr(r.e.message, "not pinned"), "a copy out past a pinned buffer's end: status %d",
        (int)s);
  s = r.ex.get_async((char *)r.pinned + 8, r.dev, BYTES - 8, r.l);
  if (s == GPUISO_OK) s = r.ex.lane_sync(r.l);
  CHECK(s == GPUISO_OK, "a copy out to the end of a pinned buffer: status %d", (int)s);
  rig_close(&r, "unpinned");
}

/* Device memory as a device with `memory` bytes free holds it: an allocation beyond fails, the
 * memory free is what the allocations leave, and the most held is counted. */
static void test_memory(void) {
  gpuiso_error e;
  sim_exec ex = {&e, 0, 0, 0, 1000, sim_seed};
  void *a = NULL, *b = NULL, *c = NULL;
  size_t free_now = 0;
  gpuiso_status s = ex.alloc(&a, 600);
  if (s == GPUISO_OK) s = ex.available(&free_now);
  gpuiso_status over = ex.alloc(&b, 401);
  CHECK(s == GPUISO_OK && free_now == 400 && over == GPUISO_E_NOMEM && b == NULL,
        "600 of 1000 bytes held: %zu free, a further 401 status %d", free_now, (int)over);
  s = ex.alloc(&b, 400);
  CHECK(s == GPUISO_OK && ex.in_use == 1000 && ex.peak == 1000, "the rest: status %d, %zu held", (int)s, ex.in_use);
  ex.release(a);
  s = ex.alloc(&c, 500);
  CHECK(s == GPUISO_OK && ex.in_use == 900 && ex.peak == 1000, "after a release: status %d, %zu held, %zu at most",
        (int)s, ex.in_use, ex.peak);
  ex.release(b);
  ex.release(c);
  CHECK(ex.held == 0 && ex.in_use == 0, "all released: %lld held, %zu bytes", (long long)ex.held, ex.in_use);
}

/* The default stream does not wait for a lane's kernel; get and sync on the lane do. */
static void test_lane_kernels(void) {
  rig r;
  rig_open(&r, sim_seed, 1);
  if (!r.ok) return;
  r.ex.use_lane(r.l);
  gpuiso_status s = each(r.ex, write_step{r.dev, 5}, NV);
  r.ex.use_lane(NULL);
  CHECK(s == GPUISO_OK && device_has(&r, 1), "a default-stream get of what a lane's queued kernel writes: stale");
  s = r.ex.lane_sync(r.l);
  CHECK(s == GPUISO_OK && device_has(&r, 5), "the same get after lane_sync: the kernel's values");

  int64_t h[NV];
  r.ex.use_lane(r.l);
  s = each(r.ex, write_step{r.dev, 50}, NV);
  if (s == GPUISO_OK) s = r.ex.get(h, r.dev, BYTES);
  CHECK(s == GPUISO_OK && has_values(h, 50), "a get on the lane waits for the lane's kernel");
  s = each(r.ex, write_step{r.dev, 60}, NV);
  if (s == GPUISO_OK) s = r.ex.sync();
  r.ex.use_lane(NULL);
  CHECK(s == GPUISO_OK && device_has(&r, 60), "sync on the lane runs its kernel");
  rig_close(&r, "lane kernels");
}

/* put on a lane reads the host at the call and writes the device when the lane gets there; fill
 * is queued; sync on the default stream runs every lane. */
static void test_lane_copies(void) {
  rig r;
  rig_open(&r, sim_seed, 2);
  if (!r.ok) return;
  int64_t h[NV];
  set_values(h, 70);
  r.ex.use_lane(r.l);
  gpuiso_status s = r.ex.put(r.dev, h, BYTES);
  r.ex.use_lane(NULL);
  set_values(h, 80);
  CHECK(s == GPUISO_OK && device_has(&r, 2), "a put on a lane has not written the device before the lane ran");
  s = r.ex.lane_sync(r.l);
  CHECK(s == GPUISO_OK && device_has(&r, 70), "a put on a lane copies the host as it was at the call");

  sim_exec::lane other = NULL;
  int64_t *dev2 = NULL;
  s = r.ex.lane_open(&other);
  if (s == GPUISO_OK) s = r.ex.alloc((void **)&dev2, BYTES);
  if (s == GPUISO_OK) s = r.ex.put(dev2, h, BYTES);
  r.ex.use_lane(r.l);
  if (s == GPUISO_OK) s = r.ex.fill(r.dev, 0x11, BYTES);
  r.ex.use_lane(NULL);
  CHECK(s == GPUISO_OK && device_has(&r, 70), "a fill on a lane is queued");
  r.ex.use_lane(other);
  if (s == GPUISO_OK) s = each(r.ex, write_step{dev2, 90}, NV);
  r.ex.use_lane(NULL);
  if (s == GPUISO_OK) s = r.ex.sync();
  int64_t h2[NV];
  if (s == GPUISO_OK) s = r.ex.get(h, r.dev, BYTES);
  if (s == GPUISO_OK) s = r.ex.get(h2, dev2, BYTES);
  CHECK(s == GPUISO_OK && all_bytes(h, BYTES, 0x11) && has_values(h2, 90),
        "sync on the default stream runs every lane: status %d", (int)s);
  r.ex.release(dev2);
  r.ex.lane_close(other);
  rig_close(&r, "lane copies");
}

/* The default stream queues its kernels and fills: a lane does not wait for them; the default
 * stream's put and get do, and so do the device-wide sync and release. */
static void test_default_stream(void) {
  rig r;
  rig_open(&r, sim_seed, 1);
  if (!r.ok) return;
  int64_t h[NV];
  gpuiso_status s = each(r.ex, write_step{r.dev, 5}, NV);
  r.ex.use_lane(r.l);
  if (s == GPUISO_OK) s = r.ex.get(h, r.dev, BYTES);
  r.ex.use_lane(NULL);
  CHECK(s == GPUISO_OK && has_values(h, 1), "a lane's get of what a queued default-stream kernel writes: stale");
  CHECK(device_has(&r, 5), "a get on the default stream waits for its kernel");

  s = each(r.ex, write_step{r.dev, 6}, NV);
  set_values(h, 7);
  if (s == GPUISO_OK) s = r.ex.put(r.dev, h, BYTES);
  CHECK(s == GPUISO_OK && device_has(&r, 7), "a put on the default stream lands after the kernel before it");

  s = r.ex.fill(r.dev, 0x22, BYTES);
  r.ex.use_lane(r.l);
  if (s == GPUISO_OK) s = r.ex.get(h, r.dev, BYTES);
  r.ex.use_lane(NULL);
  CHECK(s == GPUISO_OK && has_values(h, 7), "a lane's get right after a default-stream fill: stale");
  if (s == GPUISO_OK) s = r.ex.sync();
  r.ex.use_lane(r.l);
  if (s == GPUISO_OK) s = r.ex.get(h, r.dev, BYTES);
  r.ex.use_lane(NULL);
  CHECK(s == GPUISO_OK && all_bytes(h, BYTES, 0x22), "the device-wide sync runs the default stream");

  int64_t *spare = NULL;
  s = r.ex.alloc((void **)&spare, BYTES);
  if (s == GPUISO_OK) s = each(r.ex, write_step{r.dev, 8}, NV);
  r.ex.release(spare);
  r.ex.use_lane(r.l);
  if (s == GPUISO_OK) s = r.ex.get(h, r.dev, BYTES);
  r.ex.use_lane(NULL);
  CHECK(s == GPUISO_OK && has_values(h, 8), "release waits for the default stream's kernel");
  rig_close(&r, "default stream");
}

/* A queued kernel's defect: not at its launch, at a later call, once, wherever the lane ran it. */
static void test_late_defect(void) {
  rig r;
  rig_open(&r, sim_seed, 3);
  if (!r.ok) return;
  int64_t *bad = NULL, *spare = NULL;
  gpuiso_status s = r.ex.alloc((void **)&spare, BYTES);
  if (s == GPUISO_OK) s = r.ex.alloc((void **)&bad, BYTES);
  if (s == GPUISO_OK) s = each(r.ex, past_end_step{bad}, NV);
  CHECK(s == GPUISO_OK && r.ex.sync() == GPUISO_E_CUDA,
        "the kernel writing past its buffer: a defect of the default stream, reported by its sync");

  r.ex.use_lane(r.l);
  s = each(r.ex, past_end_step{bad}, NV);
  r.ex.use_lane(NULL);
  CHECK(s == GPUISO_OK, "a queued kernel's defect is not known at its launch: status %d", (int)s);
  memset(&r.e, 0, sizeof r.e);
  s = r.ex.lane_sync(r.l);
  CHECK(s == GPUISO_E_CUDA && r.e.status == GPUISO_E_CUDA && strstr(r.e.message, "past_end_step"),
        "lane_sync reports the queued kernel's defect: status %d, \"%s\"", (int)s, r.e.message);
  CHECK(r.ex.lane_sync(r.l) == GPUISO_OK, "a defect is reported once");

  /* run by the lanes' progress at any of the calls, or by the last wait: reported once */
  r.ex.use_lane(r.l);
  s = each(r.ex, past_end_step{bad}, NV);
  r.ex.use_lane(NULL);
  int reports = s == GPUISO_E_CUDA;
  for (int k = 0; k < 12; k++) reports += r.ex.fill(spare, k, BYTES) == GPUISO_E_CUDA;
  reports += r.ex.lane_sync(r.l) == GPUISO_E_CUDA;
  CHECK(reports == 1, "a queued kernel's defect among later calls: %d reports", reports);

  /* run by release, which returns nothing: the next call reports it */
  r.ex.use_lane(r.l);
  s = each(r.ex, past_end_step{bad}, NV);
  r.ex.use_lane(NULL);
  r.ex.release(spare);
  CHECK(s == GPUISO_OK && r.ex.lanes[0]->queue.empty() && r.ex.put(r.dev, r.pinned, 8) == GPUISO_E_CUDA,
        "a defect found at release is reported by the next call");
  r.ex.release(bad);
  rig_close(&r, "late defect");
}

/* release and lane_close synchronise the device; unpin with work queued is a defect. */
static void test_waits_of_frees(void) {
  rig r;
  rig_open(&r, sim_seed, 4);
  if (!r.ok) return;
  int64_t *spare = NULL;
  void *pin2 = NULL, *pin3 = NULL;
  gpuiso_status s = r.ex.alloc((void **)&spare, BYTES);
  if (s == GPUISO_OK) s = r.ex.pin(&pin2, BYTES);
  if (s == GPUISO_OK) s = r.ex.pin(&pin3, BYTES);
  if (s == GPUISO_OK) s = r.ex.get_async(r.pinned, r.dev, BYTES, r.l);
  r.ex.release(spare);
  CHECK(s == GPUISO_OK && has_values((int64_t *)r.pinned, 4), "release runs the lanes");
  set_values((int64_t *)pin2, 91);
  s = r.ex.put_async(r.dev, pin2, BYTES, r.l);
  r.ex.unpin(pin3);
  gpuiso_status later = r.ex.lane_sync(r.l);
  CHECK(s == GPUISO_OK && later == GPUISO_E_CUDA && strstr(r.e.message, "given back") && device_has(&r, 91),
        "unpin with work queued: a defect at the next call (status %d)", (int)later);
  set_values((int64_t *)pin2, 92);
  s = r.ex.put_async(r.dev, pin2, BYTES, r.l);
  if (s == GPUISO_OK) s = r.ex.get_async(r.pinned, r.dev, BYTES, r.l);
  r.ex.lane_close(r.l);
  r.l = NULL;
  CHECK(s == GPUISO_OK && has_values((int64_t *)r.pinned, 92), "lane_close runs its lane, in order");
  r.ex.unpin(pin2);
  rig_close(&r, "waits of the frees");
}

/* A lane keeps its order under any progress: a copy in, a kernel on it, a copy out. */
static void test_lane_order(void) {
  for (uint64_t k = 0; k < 16; k++) {
    rig r;
    rig_open(&r, 100 * sim_seed + k, 0);
    if (!r.ok) return;
    int64_t *p = (int64_t *)r.pinned;
    set_values(p, 6);
    gpuiso_status s = r.ex.put_async(r.dev, p, BYTES, r.l);
    r.ex.use_lane(r.l);
    if (s == GPUISO_OK) s = each(r.ex, add_step{r.dev, 1000}, NV);
    r.ex.use_lane(NULL);
    if (s == GPUISO_OK) s = r.ex.get_async(p, r.dev, BYTES, r.l);
    if (s == GPUISO_OK) s = r.ex.lane_sync(r.l);
    CHECK(s == GPUISO_OK && has_values(p, 1006), "seed %llu: a lane's copy, kernel and copy in order",
          (unsigned long long)(100 * sim_seed + k));
    rig_close(&r, "lane order");
  }
}

/* The lanes' progress: whether a lane's copy ran at a later call depends on the seed,
 * and is the same for the same seed. */
static int copy_ran_early(uint64_t seed) {
  rig r;
  rig_open(&r, seed, 0);
  if (!r.ok) return -1;
  int64_t *p = (int64_t *)r.pinned;
  set_values(p, 10);
  gpuiso_status s = r.ex.put_async(r.dev, p, BYTES, r.l);
  size_t free_bytes;
  (void)r.ex.available(&free_bytes); /* its progress runs the copy, or not */
  set_values(p, 20);
  if (s == GPUISO_OK) s = r.ex.lane_sync(r.l);
  int early = s != GPUISO_OK ? -1 : device_has(&r, 10) ? 1 : device_has(&r, 20) ? 0 : -1;
  rig_close(&r, "progress");
  return early;
}

static void test_progress(void) {
  int early = 0, late = 0, other = 0, unstable = 0;
  for (uint64_t k = 0; k < 32; k++) {
    uint64_t seed = 100 * sim_seed + k;
    int e = copy_ran_early(seed);
    early += e == 1, late += e == 0, other += e < 0;
    unstable += copy_ran_early(seed) != e;
  }
  CHECK(early > 0 && late > 0 && other == 0 && unstable == 0,
        "progress: the copy ran early under %d seeds, late under %d, %d neither, %d not the same twice", early,
        late, other, unstable);
}

/* sort_pairs and exclusive_sum on a lane, after its kernels and before its get. */
static void test_cub_on_lane(void) {
  gpuiso_error e;
  memset(&e, 0, sizeof e);
  sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
  sim_exec::lane l = NULL;
  uint64_t *key = NULL, *key_sorted = NULL;
  int64_t *index = NULL, *by_key = NULL, *ones = NULL;
  gpuiso_status s = ex.lane_open(&l);
  if (s == GPUISO_OK) s = ex.alloc((void **)&key, NV * sizeof *key);
  if (s == GPUISO_OK) s = ex.alloc((void **)&key_sorted, NV * sizeof *key);
  if (s == GPUISO_OK) s = ex.alloc((void **)&index, BYTES);
  if (s == GPUISO_OK) s = ex.alloc((void **)&by_key, BYTES);
  if (s == GPUISO_OK) s = ex.alloc((void **)&ones, BYTES);
  ex.use_lane(l);
  if (s == GPUISO_OK) s = each(ex, keys_step{key, index}, NV);
  if (s == GPUISO_OK) s = ex.sort_pairs(key, key_sorted, index, by_key, NV, 64);
  if (s == GPUISO_OK) s = each(ex, ones_step{ones}, NV);
  if (s == GPUISO_OK) s = ex.exclusive_sum(ones, NV);
  uint64_t k[NV];
  int64_t b[NV], sum[NV];
  if (s == GPUISO_OK) s = ex.get(k, key_sorted, sizeof k);
  if (s == GPUISO_OK) s = ex.get(b, by_key, sizeof b);
  if (s == GPUISO_OK) s = ex.get(sum, ones, sizeof sum);
  ex.use_lane(NULL);
  int wrong = 0;
  for (int64_t i = 0; s == GPUISO_OK && i < NV; i++)
    wrong += k[i] != (uint64_t)i || b[i] * 37 % NV != i || sum[i] != i;
  CHECK(s == GPUISO_OK && wrong == 0, "sort_pairs and exclusive_sum on a lane: status %d, %d wrong", (int)s, wrong);
  ex.release(key), ex.release(key_sorted), ex.release(index), ex.release(by_key), ex.release(ones);
  ex.lane_close(l);
  CHECK(ex.held == 0, "CUB on a lane: %lld held", (long long)ex.held);
}

/* Host data through staging.cuh's slices, a kernel on each slice's lane, and back. */
struct add_slices {
  int64_t *v;
  template <class Exec>
  gpuiso_status operator()(Exec &ex, size_t offset, size_t bytes) const {
    return each(ex, add_step{v + offset / sizeof(int64_t), 1000}, (int64_t)(bytes / sizeof(int64_t)));
  }
};

static void test_staging(void) {
  gpuiso_error e;
  memset(&e, 0, sizeof e);
  sim_exec ex = {&e, 0, 0, 0, 0, sim_seed};
  int64_t in[NV], out[NV];
  set_values(in, 8);
  memset(out, 0, sizeof out);
  int64_t *dev = NULL;
  staging<sim_exec> st;
  gpuiso_status s = stage_open(ex, &st, BYTES, 2);
  if (s == GPUISO_OK) s = ex.alloc((void **)&dev, BYTES);
  if (s == GPUISO_OK) s = stage_put(ex, &st, dev, in, BYTES, add_slices{dev});
  if (s == GPUISO_OK) s = each(ex, add_step{dev, 1}, NV);
  if (s == GPUISO_OK) s = stage_get(ex, &st, out, dev, BYTES);
  stage_close(ex, &st);
  ex.release(dev);
  CHECK(s == GPUISO_OK && has_values(out, 1009) && ex.held == 0,
        "staged slices in, a kernel a slice, back: status %d, %lld held", (int)s, (long long)ex.held);
}

/* Lanes and pinned buffers are allocations: fail_at fails them, held counts them. */
static void test_failures(void) {
  gpuiso_error e;
  for (int64_t k = 1; k <= 2; k++) {
    sim_exec ex = {&e, 0, 0, k, 0, sim_seed};
    sim_exec::lane l = NULL;
    void *p = NULL;
    gpuiso_status a = ex.lane_open(&l), b = ex.pin(&p, 8);
    int64_t held = ex.held;
    CHECK((a == GPUISO_E_NOMEM) == (k == 1) && (b == GPUISO_E_NOMEM) == (k == 2) && (l == NULL) == (k == 1) &&
              (p == NULL) == (k == 2) && held == 1,
          "allocation %lld failing: lane %d, pin %d, %lld held", (long long)k, (int)a, (int)b, (long long)held);
    ex.unpin(p);
    ex.lane_close(l);
    CHECK(ex.held == 0, "allocation %lld failing: %lld held after closing", (long long)k, (long long)ex.held);
  }
}

int main(void) {
  static void (*const tests[])(void) = {test_get_async, test_put_async, test_unpinned, test_memory, test_lane_kernels, test_lane_copies,
                                         test_default_stream,
                                         test_late_defect, test_waits_of_frees, test_lane_order, test_progress,
                                         test_cub_on_lane, test_staging, test_failures};
  return run_under_seeds(tests, (int)(sizeof tests / sizeof tests[0]), "the lanes of the SIMT executor");
}

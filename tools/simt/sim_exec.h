/* The executor of the CUDA engine's host sides (src/cuda/pipeline.cuh, idr.cuh, calibrate.cuh) on
 * the CPU: device memory and kernel launches of the SIMT executor (executor.cpp), and host
 * stand-ins for the CUB calls (a stable sort, a scan) that copy through the device memory as CUB
 * would read and write it. It counts the buffers held, fails the allocation numbered fail_at
 * (from 1) when set, reports `memory` bytes free (to size the slices of batches and of IDR;
 * 0: SIM_DEFAULT_MEMORY) and, where it is set, fails an allocation that would hold more, as a
 * device with that much free would (peak: the most held at once), and schedules its
 * launches from `seed`. A defect (a launch's, or host code touching device memory) is a CUDA
 * error, as a failed kernel is on a device.
 *
 * Its streams are asynchronous as CUDA's are, so that a missing wait fails a test. An operation on
 * a lane (the non-blocking streams of sort_exec.cuh: put_async, get_async, and launch, put, get
 * and fill after use_lane) is queued there, and a launch or a fill on the default stream is
 * queued on it; each queue runs in its order only when a wait (get or sync on its stream,
 * lane_sync, lane_close, sync on the default stream, release) or the executor's progress runs
 * it: at the end of each call a random prefix of a random stream's queue runs, drawn from
 * `seed`, of what was queued before that call (what a call queues waits for a later one, so that
 * a race right after it shows under every seed). A put or get on the default stream first runs
 * its queue, as cudaMemcpy waits for the stream's work before it, and then copies; the default
 * stream and the lanes wait for each other only at those waits. A pinned destination holds
 * 0xff bytes until its copy runs; a pinned source is read when its copy runs, a pageable one
 * (put) at the call. A defect of a queued operation is reported by a later call, as CUDA reports
 * a failed kernel. */
#ifndef GPUISO_SIMT_SIM_EXEC_H
#define GPUISO_SIMT_SIM_EXEC_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "internal.h"
#include "simt.cuh"

/* The memory free when `memory` is 0: room for any test's batch in one slice. */
#define SIM_DEFAULT_MEMORY ((size_t)1 << 40)

/* An operation of a stream: nonzero when it found a defect, which message then names. */
typedef std::function<int(char *message, size_t size)> sim_op;

/* An operation queued on a lane: its number in the executor's count of them, and the pinned
 * bytes it reads (a put_async's source; else none). */
struct sim_queued {
  uint64_t number;
  sim_op op;
  const char *reads;
  size_t read_bytes;
};
struct sim_lane {
  std::deque<sim_queued> queue;
  /* Whether an operation queued reads some of [p, p + bytes). */
  bool reads(const void *p, size_t bytes) const {
    for (const sim_queued &q : queue)
      if ((uintptr_t)q.reads < (uintptr_t)p + bytes && (uintptr_t)p < (uintptr_t)q.reads + q.read_bytes) return true;
    return false;
  }
};

/* A copy's result as an operation's: the defect the copy recorded, if any. */
static inline int sim_copy_result(int bad, char *message, size_t size) {
  if (bad) snprintf(message, size, "%s", sim_defect(sim_defects() - 1));
  return bad;
}

/* A random number from a seed and a count (splitmix64's finaliser). */
static inline uint64_t sim_mix(uint64_t seed, uint64_t count) {
  uint64_t z = (seed + 1) * 0x9e3779b97f4a7c15ull + count * 0xd1b54a32d192ed03ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

struct sim_exec {
  gpuiso_error *err;
  int64_t held, allocs, fail_at;
  size_t memory;
  uint64_t seed;
  uint64_t launches;
  size_t defects_seen; /* the defects of the process when this executor began (1 + count) */
  std::vector<sim_lane *> lanes; /* open, in the order opened: progress draws from them */
  sim_lane *on = NULL;           /* the lane of launch, put, get, fill and sync; NULL: the default stream */
  sim_lane stream0;              /* the default stream's queue */
  uint64_t queued = 0, calls = 0; /* operations queued on the streams, and calls, so far */
  std::string late;              /* the first defect of a queued operation not yet reported */
  size_t in_use = 0, peak = 0;   /* device bytes held now, and at most */
  std::vector<std::pair<void *, size_t>> sizes, pinned; /* of the allocations held, of the pinned buffers */
  size_t optin = 0; /* the opt-in shared memory of a block (0: the target's, SIMT_OPT_IN_SHARED; Turing: 64 KB) */

  gpuiso_status defect(const char *what) {
    if (err) {
      err->status = GPUISO_E_CUDA;
      err->index = err->row = -1;
      snprintf(err->message, sizeof err->message, "%s", what);
    }
    return GPUISO_E_CUDA;
  }
  /* The start of a call: the operations queued so far (those its progress may run). */
  uint64_t begin() {
    if (defects_seen == 0) defects_seen = 1 + sim_defects();
    return queued;
  }
  /* A defect that a queued operation, host code or a copy left since the last look (an executor
   * made after a defect does not report it again). */
  gpuiso_status news() {
    begin();
    if (!late.empty()) {
      std::string what;
      what.swap(late);
      return defect(what.c_str());
    }
    if (1 + sim_defects() == defects_seen) return GPUISO_OK;
    defects_seen = 1 + sim_defects();
    return defect(sim_defect(defects_seen - 2));
  }
  /* The queue of launches and fills now: the lane in use, else the default stream's. */
  sim_lane *stream() { return on ? on : &stream0; }
  /* op at once (l NULL: its defect is the status), else queued on l. */
  gpuiso_status submit(sim_lane *l, sim_op op, const void *reads = NULL, size_t read_bytes = 0) {
    if (l) {
      l->queue.push_back({queued++, std::move(op), (const char *)reads, read_bytes});
      return GPUISO_OK;
    }
    char message[sizeof err->message];
    if (!op(message, sizeof message)) return GPUISO_OK;
    defects_seen = 1 + sim_defects();
    return defect(message);
  }
  /* The first `count` operations of l's queue, their first defect kept for a later call. */
  void run_queue(sim_lane *l, size_t count = (size_t)-1) {
    char message[sizeof err->message];
    for (; count > 0 && !l->queue.empty(); count--) {
      sim_op op = std::move(l->queue.front().op);
      l->queue.pop_front();
      if (op(message, sizeof message)) {
        if (late.empty()) late = message;
        defects_seen = 1 + sim_defects();
      }
    }
  }
  void run_all() {
    run_queue(&stream0);
    for (sim_lane *l : lanes) run_queue(l);
  }
  /* The streams' progress at the end of a call: a random prefix of a random stream's operations
   * queued before the call (number < before). */
  void progress(uint64_t before) {
    uint64_t r = sim_mix(seed, calls++), k = r % (lanes.size() + 1);
    sim_lane *l = k < lanes.size() ? lanes[k] : &stream0;
    size_t ready = 0;
    while (ready < l->queue.size() && l->queue[ready].number < before) ready++;
    run_queue(l, (size_t)((r >> 32) % (ready + 1)));
  }
  /* The end of a call of status s: the streams' progress, then what it found (after s). */
  gpuiso_status end(uint64_t before, gpuiso_status s) {
    progress(before);
    return s == GPUISO_OK ? news() : s;
  }
  gpuiso_status alloc(void **p, size_t bytes) {
    *p = NULL;
    progress(begin());
    if (bytes == 0) return GPUISO_OK;
    if (++allocs == fail_at || (memory && in_use + bytes > memory) || !(*p = sim_alloc(bytes))) {
      set_error(err, GPUISO_E_NOMEM, -1, -1);
      return GPUISO_E_NOMEM;
    }
    held++;
    sizes.push_back({*p, bytes});
    in_use += bytes;
    peak = std::max(peak, in_use);
    return GPUISO_OK;
  }
  /* cudaFree synchronises the device. */
  void release(void *p) {
    if (!p) return;
    run_all();
    for (size_t k = 0; k < sizes.size(); k++)
      if (sizes[k].first == p) {
        in_use -= sizes[k].second;
        sizes.erase(sizes.begin() + (long)k);
        break;
      }
    held--, sim_free(p);
  }
  void guard(void *p, size_t bytes) { sim_guard(p, bytes); }
  gpuiso_status available(size_t *bytes) {
    progress(begin());
    *bytes = !memory ? SIM_DEFAULT_MEMORY : memory > in_use ? memory - in_use : 0;
    return GPUISO_OK;
  }
  /* On a lane, the host is read at the call and the device written when the lane gets there. */
  gpuiso_status put(void *d, const void *h, size_t bytes) {
    uint64_t before = begin();
    std::vector<char> copy; /* on a lane: the host's bytes at the call */
    if (on) copy.assign((const char *)h, (const char *)h + bytes);
    else run_queue(&stream0);
    return end(before, submit(on, [d, h, bytes, copy = std::move(copy)](char *m, size_t n) {
                 return sim_copy_result(sim_put(d, copy.empty() ? h : copy.data(), bytes), m, n);
               }));
  }
  /* Waits for its stream's work up to the copy, as cudaMemcpyAsync and cudaStreamSynchronize
   * would. */
  gpuiso_status get(void *h, const void *d, size_t bytes) {
    uint64_t before = begin();
    if (!on) run_queue(&stream0);
    gpuiso_status s = submit(on, [=](char *m, size_t n) { return sim_copy_result(sim_get(h, d, bytes), m, n); });
    if (on) run_queue(on);
    return end(before, s);
  }
  gpuiso_status fill(void *d, int byte, size_t bytes) {
    uint64_t before = begin();
    return end(before, submit(stream(), [=](char *m, size_t n) { return sim_copy_result(sim_fill(d, byte, bytes), m, n); }));
  }
  /* The kernel runs when its stream gets there, on the arguments of the call. */
  template <class... P, class... A>
  gpuiso_status launch(const char *name, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared,
                       A... args) {
    uint64_t before = begin();
    gpuiso_status s = news();
    if (s != GPUISO_OK) return s;
    typedef simt_cpu::entry_of<P...> entry;
    typename entry::pack pack = {kernel, std::tuple<P...>(args...)};
    std::string what = name;
    uint64_t seed_of = seed, number = launches++;
    return end(before, submit(stream(), [=](char *m, size_t n) {
                 simt_cpu::launch_config c = {grid, block, shared, (const void *)kernel,
                                              what.c_str(), &entry::run, &pack};
                 return simt_cpu::run(c, seed_of, number, m, n);
               }));
  }
  gpuiso_status shared_optin(size_t *bytes) {
    *bytes = optin ? optin : SIMT_OPT_IN_SHARED;
    return GPUISO_OK;
  }
  /* A request over the device's opt-in fails on a device (cudaErrorInvalidValue): a defect here. */
  template <class... P>
  gpuiso_status allow_shared(void (*kernel)(P...), size_t bytes) {
    char message[sizeof err->message];
    size_t most;
    shared_optin(&most);
    if (bytes > most) {
      snprintf(message, sizeof message, "simt: %zu bytes of shared memory asked of a device with %zu a block", bytes,
               most);
      return defect(message);
    }
    return simt_cpu::allow_shared((const void *)kernel, bytes, message, sizeof message) ? defect(message)
                                                                                        : GPUISO_OK;
  }
  /* On a lane, cudaStreamSynchronize; else cudaDeviceSynchronize, which waits for every lane. */
  gpuiso_status sync() {
    uint64_t before = begin();
    if (on) run_queue(on);
    else run_all();
    return end(before, GPUISO_OK);
  }
  /* Lanes and pinned buffers count as held, and fail_at counts them. */
  typedef sim_lane *lane;
  gpuiso_status lane_open(lane *l) {
    *l = NULL;
    progress(begin());
    if (++allocs == fail_at) {
      set_error(err, GPUISO_E_NOMEM, -1, -1);
      return GPUISO_E_NOMEM;
    }
    lanes.push_back(*l = new sim_lane());
    held++;
    return GPUISO_OK;
  }
  void lane_close(lane l) {
    if (!l) return;
    run_queue(l);
    lanes.erase(std::find(lanes.begin(), lanes.end(), l));
    if (on == l) on = NULL;
    delete l;
    held--;
  }
  void use_lane(lane l) { on = l; }
  gpuiso_status lane_sync(lane l) {
    uint64_t before = begin();
    if (l) run_queue(l);
    return end(before, GPUISO_OK);
  }
  gpuiso_status pin(void **p, size_t bytes) {
    *p = NULL;
    progress(begin());
    if (++allocs == fail_at || !(*p = malloc(bytes))) {
      set_error(err, GPUISO_E_NOMEM, -1, -1);
      return GPUISO_E_NOMEM;
    }
    held++;
    pinned.push_back({*p, bytes});
    return GPUISO_OK;
  }
  /* Whether host bytes [p, p + bytes) lie in a pinned buffer: an asynchronous copy of pageable
   * memory runs synchronously on a device, overlapping nothing. */
  bool is_pinned(const void *p, size_t bytes) const {
    for (const auto &b : pinned)
      if ((const char *)p >= (const char *)b.first && (const char *)p + bytes <= (const char *)b.first + b.second)
        return true;
    return false;
  }
  /* The real executor keeps pinned buffers for the next fit (src/cuda/pinned.cu), so unpin waits
   * for nothing: work still queued on a lane is a defect, reported by a later call (the queues
   * then run, as the buffer is freed here). */
  void unpin(void *p) {
    if (!p) return;
    bool busy = false;
    for (const sim_lane *l : lanes) busy = busy || !l->queue.empty();
    if (busy && late.empty()) late = "a pinned buffer given back with work queued on a lane";
    run_all();
    for (size_t k = 0; k < pinned.size(); k++)
      if (pinned[k].first == p) {
        pinned.erase(pinned.begin() + (long)k);
        break;
      }
    held--, free(p);
  }
  gpuiso_status put_async(void *d, const void *pinned, size_t bytes, lane l) {
    uint64_t before = begin();
    if (!is_pinned(pinned, bytes)) return defect("simt: an asynchronous copy in from memory not pinned");
    return end(before, submit(l, [=](char *m, size_t n) { return sim_copy_result(sim_put(d, pinned, bytes), m, n); },
                              pinned, bytes));
  }
  /* The pinned destination is undefined until the copy runs: 0xff bytes from the call on, or,
   * where a copy queued before it on the lane reads them, from that copy on. */
  gpuiso_status get_async(void *pinned, const void *d, size_t bytes, lane l) {
    uint64_t before = begin();
    if (!is_pinned(pinned, bytes)) return defect("simt: an asynchronous copy out to memory not pinned");
    sim_op poison = [=](char *, size_t) { return memset(pinned, 0xff, bytes), 0; };
    if (l && l->reads(pinned, bytes)) submit(l, poison);
    else if (l) poison(NULL, 0);
    return end(before, submit(l, [=](char *m, size_t n) { return sim_copy_result(sim_get(pinned, d, bytes), m, n); }));
  }
  template <typename K>
  gpuiso_status sort_pairs(const K *keys_in, K *keys_out, const int64_t *values_in,
                           int64_t *values_out, int64_t count, int end_bit) {
    K mask = end_bit >= (int)(8 * sizeof(K)) ? (K)~(K)0 : (K)(((K)1 << end_bit) - 1);
    std::vector<K> keys((size_t)count), sorted_keys((size_t)count);
    std::vector<int64_t> values((size_t)count), sorted_values((size_t)count), order((size_t)count);
    gpuiso_status s = get(keys.data(), keys_in, (size_t)count * sizeof(K));
    if (s == GPUISO_OK) s = get(values.data(), values_in, (size_t)count * sizeof(int64_t));
    if (s != GPUISO_OK) return s;
    for (int64_t i = 0; i < count; i++) order[(size_t)i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return (keys[a] & mask) < (keys[b] & mask); });
    for (int64_t i = 0; i < count; i++) {
      sorted_keys[(size_t)i] = keys[(size_t)order[(size_t)i]];
      sorted_values[(size_t)i] = values[(size_t)order[(size_t)i]];
    }
    s = put(keys_out, sorted_keys.data(), (size_t)count * sizeof(K));
    return s == GPUISO_OK ? put(values_out, sorted_values.data(), (size_t)count * sizeof(int64_t)) : s;
  }
  gpuiso_status exclusive_sum(int64_t *data, int64_t count) {
    std::vector<int64_t> v((size_t)count);
    gpuiso_status s = get(v.data(), data, (size_t)count * sizeof(int64_t));
    if (s != GPUISO_OK) return s;
    int64_t at = 0;
    for (int64_t &x : v) {
      int64_t next = at + x;
      x = at;
      at = next;
    }
    return put(data, v.data(), (size_t)count * sizeof(int64_t));
  }
};

/* The schedule seed of the executors a test makes now. */
static uint64_t sim_seed __attribute__((unused));

/* The schedule seeds a test runs under: GPUISO_SIMT_SEED alone when set, else 1, 2 and 3. */
static inline int sim_seeds(uint64_t seeds[3]) {
  const char *e = getenv("GPUISO_SIMT_SEED");
  if (e && *e) {
    seeds[0] = strtoull(e, NULL, 10);
    return 1;
  }
  for (int i = 0; i < 3; i++) seeds[i] = (uint64_t)i + 1;
  return 3;
}

#endif

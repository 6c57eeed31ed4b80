/* The SIMT executor's self-test: small kernels with one deliberate defect each, and their
 * corrected twins. Each defect must be reported, under every schedule seed, with the words that
 * name it; each twin must run clean and give the right output. Prints "simt-selftest: K of K
 * defects caught" and the ctest line; fails when a defect goes unseen or a twin fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"

#include "check.h"

#define N 64

/* ---- the kernels: `broken` selects the defect ------------------------------------------------- */

/* Warp 1 reads what warp 0 wrote to shared memory: needs a barrier between. */
SIMT_KERNEL void reverse_kernel(const int *in, int *out, int broken) {
  SIMT_SHARED(int, sh, N);
  unsigned t = simt::thread_rank();
  sh[t] = 0;
  simt::sync_block();
  sh[t] = in[t];
  if (!broken) simt::sync_block();
  out[t] = sh[N - 1 - t];
}

/* Lane 0 writes, the others read: needs a sync_warp between. */
SIMT_KERNEL void broadcast_kernel(int *out, int broken) {
  SIMT_SHARED(int, sh, SIMT_WARP);
  unsigned l = simt::lane();
  sh[l] = 0;
  simt::sync_warp();
  if (l == 0) sh[0] = 42;
  if (!broken) simt::sync_warp();
  out[l] = sh[0];
}

/* A shuffle among lanes 0..15 that reads lane 20 (broken) or lane 5. */
SIMT_KERNEL void half_shuffle_kernel(int *out, int broken) {
  unsigned l = simt::lane();
  if (l < 16) out[l] = simt::shfl(0x0000ffffu, (int)l * 10, broken ? 20 : 5);
}

/* Writes one past its shared array (broken). */
SIMT_KERNEL void shared_bounds_kernel(int *out, int broken) {
  SIMT_SHARED(int, sh, SIMT_WARP);
  unsigned l = simt::lane();
  sh[broken ? l + 1 : l] = (int)l;
  simt::sync_warp();
  out[l] = sh[SIMT_WARP - 1 - l];
}

/* Fills tmp (one short when broken); the next kernel doubles it into out. */
SIMT_KERNEL void fill_kernel(int *tmp, int n, int broken) {
  int i = (int)simt::global_x();
  if (i < n - (broken ? 1 : 0)) tmp[i] = i;
}
SIMT_KERNEL void double_kernel(const int *tmp, int *out, int n) {
  int i = (int)simt::global_x();
  if (i < n) out[i] = 2 * tmp[i];
}

/* A barrier that only the first half of the block reaches (broken). */
SIMT_KERNEL void divergent_barrier_kernel(const int *in, int *out, int broken) {
  SIMT_SHARED(int, sh, N);
  unsigned t = simt::thread_rank();
  sh[t] = in[t];
  if (broken) {
    if (t < N / 2) simt::sync_block();
  }
  simt::sync_block();
  out[t] = sh[(t + 1) % N];
}

/* Thread 0 of every block adds to one counter: plainly (a race between blocks) or atomically. */
SIMT_KERNEL void count_blocks_kernel(int *count, int broken) {
  if (simt::thread_rank() != 0) return;
  if (broken) *count += 1;
  else simt::atomic_add(count, 1);
}

/* Reads `in`, which is host memory when broken. */
SIMT_KERNEL void copy_kernel(const int *in, int *out, int n) {
  int i = (int)simt::global_x();
  if (i < n) out[i] = in[i];
}

/* Lanes 16..31 leave, then lanes 0..15 shuffle under the whole warp's mask (legal: exited lanes
 * take no part) from lane 20, which has exited (broken), or from lane 0. */
SIMT_KERNEL void exited_lane_kernel(int *out, int broken) {
  unsigned l = simt::lane();
  if (l >= 16) return;
  out[l] = simt::shfl(SIMT_FULL_MASK, (int)l, broken ? 20 : 0);
}

/* Prefetches the line of in[i + 1] (one past the end for the last thread: broken) or of in[i],
 * then copies in to out. */
SIMT_KERNEL void prefetch_kernel(const int *in, int *out, int broken) {
  int i = (int)simt::thread_rank();
  simt::prefetch(in + i + broken);
  out[i] = in[i];
}

/* Each thread loads the 16 bytes of its element's group of four (one element on: broken, not
 * aligned to 16 bytes) as floats, and copies its element's bits to out. */
SIMT_KERNEL void load16_kernel(const int *in, int *out, int broken) {
  int i = (int)simt::thread_rank();
  float v[4];
  simt::load16(reinterpret_cast<const float *>(in) + (i & ~3) + broken, v);
  int bits;
  memcpy(&bits, &v[i & 3], sizeof bits);
  out[i] = bits;
}

/* Every fourth thread copies its group of four elements to out in one 16-byte store (one
 * element on: broken, not aligned to 16 bytes). */
SIMT_KERNEL void store16_kernel(const int *in, int *out, int broken) {
  int i = (int)simt::thread_rank();
  if (i % 4 != 0) return;
  float v[4];
  memcpy(v, in + i, sizeof v);
  simt::store16(reinterpret_cast<float *>(out) + i + broken, v);
}

/* Every block reads x; block 1 also writes it (broken), racing with the other blocks' reads. */
SIMT_KERNEL void block_read_write_kernel(int *x, int *out, int broken) {
  int v = *x;
  out[simt::block_idx().x] = v;
  if (broken && simt::block_idx().x == 1) *x = v + 1;
}

/* An atomic add on memory nobody wrote (broken) or that the host set. */
SIMT_KERNEL void fresh_atomic_kernel(int *x, int *out) { out[0] = simt::atomic_add(x, 1); }

/* Thread 0 writes x plainly, then both warps add to it atomically: the plain write races with
 * the other warp's atomic (broken), unless a barrier orders them. */
SIMT_KERNEL void write_then_atomic_kernel(int *x, int broken) {
  if (simt::thread_rank() == 0) *x = 5;
  if (!broken) simt::sync_block();
  if (simt::lane() == 0) simt::atomic_add(x, 1);
}

/* A kernel reading a writable host variable (broken) or a constant. */
int host_counter;
static const int host_constant = 3;
SIMT_KERNEL void host_global_kernel(int *out, int broken) { out[simt::thread_rank()] = broken ? host_counter : host_constant; }

/* 40 KB of static and 16 KB of dynamic shared memory: over 48 KB in all without an opt-in. */
SIMT_KERNEL void mixed_shared_kernel(int *out) {
  SIMT_SHARED(double, a, 5000);
  double *d = simt::dynamic_shared<double>();
  unsigned t = simt::thread_rank();
  a[t] = 1.0, d[t] = 2.0;
  simt::sync_block();
  out[t] = (int)(a[t] + d[t]);
}

/* Half of the warp waits at a barrier while the other half waits for it at a shuffle. */
SIMT_KERNEL void deadlock_kernel(int *out, int broken) {
  unsigned l = simt::lane();
  int v = (int)l;
  if (broken && l < 16) simt::sync_block();
  v = simt::shfl_down(SIMT_FULL_MASK, v, 1);
  if (!broken || l >= 16) simt::sync_block();
  out[l] = v;
}

/* Reads one past the end of `in` (broken). */
SIMT_KERNEL void shift_kernel(const int *in, int *out, int n, int broken) {
  int i = (int)simt::global_x();
  if (i < n) out[i] = in[broken ? i + 1 : i];
}

/* COUNT doubles of static shared memory: 7000 (56 KB) is over CUDA's 48 KB. */
template <int COUNT>
SIMT_KERNEL void static_shared_kernel(int *out) {
  SIMT_SHARED(double, a, COUNT);
  a[simt::thread_rank()] = 1.0;
  simt::sync_block();
  out[simt::thread_rank()] = (int)a[0];
}

/* A grid two blocks high: block y writes the second row. */
SIMT_KERNEL void rows_kernel(int *out) {
  unsigned i = simt::block_idx().y * simt::block_dim().x + simt::thread_idx().x;
  out[i] = (int)i;
}

/* Uses 64 KB of dynamic shared memory. */
SIMT_KERNEL void dynamic_kernel(int *out) {
  double *d = simt::dynamic_shared<double>();
  unsigned t = simt::thread_rank();
  d[8191 - t] = (double)t;
  simt::sync_block();
  out[t] = (int)d[8191 - t];
}

/* The warp collectives and bit intrinsics against their definitions: shfl_up/down/xor with
 * widths, ballot, any, all. */
SIMT_KERNEL void collectives_kernel(int *out) {
  int l = (int)simt::lane();
  int *o = out + 10 * l;
  o[0] = simt::shfl_up(SIMT_FULL_MASK, l, 3);
  o[1] = simt::shfl_down(SIMT_FULL_MASK, l, 5, 16);
  o[2] = simt::shfl_xor(SIMT_FULL_MASK, l, 9);
  o[3] = simt::shfl(SIMT_FULL_MASK, l, 7, 8);
  o[4] = (int)simt::ballot(SIMT_FULL_MASK, l % 3 == 0);
  o[5] = simt::any(SIMT_FULL_MASK, l == 31);
  o[6] = simt::all(SIMT_FULL_MASK, l < 31);
  o[7] = (int)(simt::active_mask() >> l & 1u) + 100 * simt::clz(1u << l); /* only the caller is sure */
  o[8] = simt::ffs(1u << l) + 100 * simt::popc(0x01010101u << (l % 8));
  o[9] = simt::brev(1u << l) == 1u << (31 - l) && simt::clzll(1ull << (32 + l % 32)) == 31 - l % 32;
}

/* Legal on sm_70 and later, which the executor must accept: a shuffle under a ballot's sub-mask
 * inside a branch, then one over the whole warp; the same collective from the two sides of a
 * branch; a warp sync and a vote in a warp of 16 threads (the block's last). */
SIMT_KERNEL void legal_patterns_kernel(int *out) {
  int l = (int)simt::lane();
  unsigned m = simt::ballot(SIMT_FULL_MASK, l < 16);
  int v = l;
  if (l < 16) v = simt::shfl(m, v, 3);
  v = simt::shfl(SIMT_FULL_MASK, v, 31);
  int x;
  if (l < 16) x = simt::shfl_xor(SIMT_FULL_MASK, l, 16);
  else x = simt::shfl_xor(SIMT_FULL_MASK, l, 16);
  out[simt::thread_rank()] = v + 100 * x;
}

SIMT_KERNEL void partial_warp_kernel(int *out) {
  simt::sync_warp();
  out[simt::thread_rank()] = simt::popc(simt::ballot(SIMT_FULL_MASK, 1));
}

/* ---- the cases --------------------------------------------------------------------------------- */

struct outcome {
  gpuiso_status status;
  char message[256];
  int right; /* the output is the twin's */
};

static gpuiso_error e;

static sim_exec new_exec(uint64_t seed) {
  sim_exec ex = {&e, 0, 0, 0, 0, seed};
  return ex;
}

/* Runs kernel(args) on a grid, then copies out (count ints) and compares with want(i). */
template <class... P, class... A>
static outcome launch_and_get(sim_exec &ex, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared,
                              int *dev_out, int count, int (*want)(int), A... args) {
  outcome o = {GPUISO_OK, "", 0};
  o.status = ex.launch("selftest", kernel, grid, block, shared, args...);
  int host[1024];
  if (o.status == GPUISO_OK) o.status = ex.get(host, dev_out, (size_t)count * sizeof(int));
  if (o.status == GPUISO_OK) o.status = ex.sync();
  if (o.status != GPUISO_OK) snprintf(o.message, sizeof o.message, "%s", e.message);
  o.right = o.status == GPUISO_OK;
  for (int i = 0; o.right && i < count; i++) o.right = host[i] == want(i);
  return o;
}

static int *device_ints(sim_exec &ex, int count, int from) {
  int host[1024], *d = NULL;
  for (int i = 0; i < count; i++) host[i] = from + i;
  ex.alloc((void **)&d, (size_t)count * sizeof(int));
  ex.put(d, host, (size_t)count * sizeof(int));
  return d;
}

static int want_reverse(int i) { return N - 1 - i; }
static int want_42(int) { return 42; }
static int want_50(int) { return 50; }
static int want_mirror(int i) { return SIMT_WARP - 1 - i; }
static int want_double(int i) { return 2 * i; }
static int want_next(int i) { return (i + 1) % N; }
static int want_2(int) { return 2; }
static int want_same(int i) { return i; }
static int want_0(int) { return 0; }
static int want_down(int i) { return i < 31 ? i + 1 : i; }
static int want_1(int) { return 1; }

/* kernel(in, out, broken) on a block of N threads, in holding 0..N-1, out against want. */
static outcome in_out_case(uint64_t seed, void (*kernel)(const int *, int *, int), int (*want)(int), int broken) {
  sim_exec ex = new_exec(seed);
  int *in = device_ints(ex, N, 0), *out = device_ints(ex, N, 0);
  outcome o = launch_and_get(ex, kernel, dim3(1), dim3(N), 0, out, N, want, (const int *)in, out, broken);
  ex.release(in), ex.release(out);
  return o;
}

static outcome c_block_race(uint64_t seed, int broken) {
  return in_out_case(seed, reverse_kernel, want_reverse, broken);
}

static outcome c_warp_race(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *out = device_ints(ex, SIMT_WARP, 0);
  outcome o = launch_and_get(ex, broadcast_kernel, dim3(1), dim3(SIMT_WARP), 0, out, SIMT_WARP, want_42, out, broken);
  ex.release(out);
  return o;
}

static outcome c_shuffle_mask(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *out = device_ints(ex, 16, 0);
  outcome o = launch_and_get(ex, half_shuffle_kernel, dim3(1), dim3(SIMT_WARP), 0, out, 16, want_50, out, broken);
  ex.release(out);
  return o;
}

static outcome c_shared_bounds(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *out = device_ints(ex, SIMT_WARP, 0);
  outcome o = launch_and_get(ex, shared_bounds_kernel, dim3(1), dim3(SIMT_WARP), 0, out, SIMT_WARP, want_mirror, out, broken);
  ex.release(out);
  return o;
}

static outcome c_uninitialised(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int n = 300, *tmp = NULL, *out = device_ints(ex, n, 0);
  ex.alloc((void **)&tmp, (size_t)n * sizeof(int));
  outcome o = {ex.launch("fill", fill_kernel, dim3(3), dim3(128), 0, tmp, n, broken), "", 0};
  if (o.status == GPUISO_OK) o = launch_and_get(ex, double_kernel, dim3(3), dim3(128), 0, out, n, want_double, tmp, out, n);
  ex.release(tmp), ex.release(out);
  return o;
}

static outcome c_divergent_barrier(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *in = device_ints(ex, N, 0), *out = device_ints(ex, N, 0);
  outcome o = launch_and_get(ex, divergent_barrier_kernel, dim3(1), dim3(N), 0, out, N, want_next, in, out, broken);
  ex.release(in), ex.release(out);
  return o;
}

static outcome c_block_counter(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *count = device_ints(ex, 1, 0);
  outcome o = launch_and_get(ex, count_blocks_kernel, dim3(2), dim3(SIMT_WARP), 0, count, 1, want_2, count, broken);
  ex.release(count);
  return o;
}

static outcome c_host_pointer(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int host[N];
  for (int i = 0; i < N; i++) host[i] = i;
  int *in = device_ints(ex, N, 0), *out = device_ints(ex, N, 7);
  outcome o = launch_and_get(ex, copy_kernel, dim3(1), dim3(N), 0, out, N, want_same, broken ? (const int *)host : in, out, N);
  ex.release(in), ex.release(out);
  return o;
}

static outcome c_exited_lane(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *out = device_ints(ex, 16, 5);
  outcome o = launch_and_get(ex, exited_lane_kernel, dim3(1), dim3(SIMT_WARP), 0, out, 16, want_0, out, broken);
  ex.release(out);
  return o;
}

static outcome c_deadlock(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *out = device_ints(ex, SIMT_WARP, 0);
  outcome o = launch_and_get(ex, deadlock_kernel, dim3(1), dim3(SIMT_WARP), 0, out, SIMT_WARP, want_down, out, broken);
  ex.release(out);
  return o;
}

static outcome c_global_bounds(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *in = device_ints(ex, N, 0), *out = device_ints(ex, N, 0);
  outcome o = launch_and_get(ex, shift_kernel, dim3(1), dim3(N), 0, out, N, want_same, in, out, N, broken);
  ex.release(in), ex.release(out);
  return o;
}

static outcome c_prefetch_bounds(uint64_t seed, int broken) {
  return in_out_case(seed, prefetch_kernel, want_same, broken);
}

static outcome c_load16_aligned(uint64_t seed, int broken) {
  return in_out_case(seed, load16_kernel, want_same, broken);
}

static outcome c_store16_aligned(uint64_t seed, int broken) { /* out starts unlike in: the stores must land */
  sim_exec ex = new_exec(seed);
  int *in = device_ints(ex, N, 0), *out = device_ints(ex, N + 4, 1000);
  outcome o = launch_and_get(ex, store16_kernel, dim3(1), dim3(N), 0, out, N, want_same, (const int *)in, out, broken);
  ex.release(in), ex.release(out);
  return o;
}

static outcome c_static_shared(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *out = device_ints(ex, N, 0);
  outcome o = broken ? launch_and_get(ex, static_shared_kernel<7000>, dim3(1), dim3(N), 0, out, N, want_1, out)
                     : launch_and_get(ex, static_shared_kernel<5000>, dim3(1), dim3(N), 0, out, N, want_1, out);
  ex.release(out);
  return o;
}

static outcome c_block_size(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *out = device_ints(ex, 1024, 0);
  outcome o = launch_and_get(ex, copy_kernel, dim3(1), dim3(broken ? 1025 : 1024), 0, out, 1024, want_same, out, out, 1024);
  ex.release(out);
  return o;
}

static outcome c_grid_size(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *out = device_ints(ex, 8, 9);
  outcome o = launch_and_get(ex, rows_kernel, dim3(1, broken ? 65536 : 2), dim3(4), 0, out, 8, want_same, out);
  ex.release(out);
  return o;
}

static outcome c_dynamic_shared(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *out = device_ints(ex, 256, 0);
  /* the opt-in lasts, as on a device: the broken case takes it back */
  outcome o = {ex.allow_shared(dynamic_kernel, broken ? 0 : 8192 * sizeof(double)), "", 0};
  if (o.status == GPUISO_OK)
    o = launch_and_get(ex, dynamic_kernel, dim3(1), dim3(256), 8192 * sizeof(double), out, 256, want_same, out);
  ex.release(out);
  return o;
}

static outcome c_host_touch(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *out = device_ints(ex, N, 0), one = 1;
  if (broken) out[0] = 1;
  else ex.put(out, &one, sizeof one);
  outcome o = launch_and_get(ex, copy_kernel, dim3(1), dim3(N), 0, out, N, want_reverse, out, out, 0);
  /* nothing launched on elements: out keeps 1, 1, 2, ... */
  int host[N];
  if (o.status == GPUISO_OK) ex.get(host, out, sizeof host);
  o.right = o.status == GPUISO_OK && host[0] == 1 && host[5] == 5;
  ex.release(out);
  return o;
}

static int want_1_each(int) { return 1; }
static int want_3(int) { return 3; }

static outcome c_block_read_write(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *x = device_ints(ex, 1, 1), *out = device_ints(ex, 4, 0);
  outcome o = launch_and_get(ex, block_read_write_kernel, dim3(4), dim3(1), 0, out, 4, want_1_each, x, out, broken);
  ex.release(x), ex.release(out);
  return o;
}

static outcome c_fresh_atomic(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *x = NULL, *out = device_ints(ex, 1, 0);
  ex.alloc((void **)&x, sizeof(int));
  if (!broken) ex.fill(x, 0, sizeof(int));
  outcome o = launch_and_get(ex, fresh_atomic_kernel, dim3(1), dim3(1), 0, out, 1, want_0, x, out);
  ex.release(x), ex.release(out);
  return o;
}

static int want_7(int) { return 7; }

static outcome c_write_then_atomic(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *x = device_ints(ex, 1, 0);
  outcome o = launch_and_get(ex, write_then_atomic_kernel, dim3(1), dim3(64), 0, x, 1, want_7, x, broken);
  ex.release(x);
  return o;
}

static outcome c_host_global(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  host_counter = 3;
  int *out = device_ints(ex, 32, 0);
  outcome o = launch_and_get(ex, host_global_kernel, dim3(1), dim3(32), 0, out, 32, want_3, out, broken);
  ex.release(out);
  return o;
}

static outcome c_mixed_shared(uint64_t seed, int broken) {
  sim_exec ex = new_exec(seed);
  int *out = device_ints(ex, 64, 0);
  outcome o = {ex.allow_shared(mixed_shared_kernel, broken ? 0 : 64 << 10), "", 0};
  if (o.status == GPUISO_OK)
    o = launch_and_get(ex, mixed_shared_kernel, dim3(1), dim3(64), 16 << 10, out, 64, want_3, out);
  ex.release(out);
  return o;
}

struct defect_case {
  const char *name, *words; /* words the report must contain */
  outcome (*run)(uint64_t seed, int broken);
};

static const defect_case cases[] = {
    {"missing sync_block before reading shared memory another warp wrote", "race", c_block_race},
    {"missing sync_warp between one lane's shared write and another lane's read", "race", c_warp_race},
    {"a shuffle whose source lane is not in the mask", "not in the mask", c_shuffle_mask},
    {"an out-of-bounds shared write", "out of bounds", c_shared_bounds},
    {"an uninitialised device read that reaches the output", "uninitialised read", c_uninitialised},
    {"a barrier inside a divergent branch", "divergent barrier", c_divergent_barrier},
    {"two blocks adding to one counter without atomics", "race", c_block_counter},
    {"a kernel reading host memory", "not device memory", c_host_pointer},
    {"a shuffle from a lane that has exited", "has exited", c_exited_lane},
    {"a write racing with another block's read", "race", c_block_read_write},
    {"an atomic on memory nobody wrote", "uninitialised read", c_fresh_atomic},
    {"a plain write racing with another warp's atomic", "race", c_write_then_atomic},
    {"a kernel reading a writable host variable", "not device memory", c_host_global},
    {"40 KB of static and 16 KB of dynamic shared memory without opting in", "opt in", c_mixed_shared},
    {"half a warp at a barrier, half at a shuffle waiting for it", "deadlock", c_deadlock},
    {"a read one past the end of a device array", "out of bounds", c_global_bounds},
    {"a prefetch one past the end of a device array", "not addressable", c_prefetch_bounds},
    {"a 16-byte load four bytes off its alignment", "not aligned", c_load16_aligned},
    {"a 16-byte store four bytes off its alignment", "not aligned", c_store16_aligned},
    {"56 KB of static shared memory", "static shared memory", c_static_shared},
    {"a block of 1025 threads", "1025", c_block_size},
    {"a grid 65536 blocks high", "65536", c_grid_size},
    {"64 KB of dynamic shared memory without opting in", "opt in", c_dynamic_shared},
    {"host code writing device memory", "host code wrote", c_host_touch},
};

/* The collectives' values against their definitions (no defect to catch: a check of results). */
static void check_collectives(uint64_t seed) {
  sim_exec ex = new_exec(seed);
  int *out = device_ints(ex, 10 * SIMT_WARP, 0), got[10 * SIMT_WARP];
  gpuiso_status s = ex.launch("collectives", collectives_kernel, dim3(1), dim3(SIMT_WARP), 0, out);
  if (s == GPUISO_OK) s = ex.get(got, out, sizeof got);
  int bad = s != GPUISO_OK;
  unsigned ballot = 0;
  for (int l = 0; l < SIMT_WARP; l += 3) ballot |= 1u << l;
  for (int l = 0; !bad && l < SIMT_WARP; l++) {
    const int *o = got + 10 * l;
    int want[10] = {l >= 3 ? l - 3 : l, (l % 16) + 5 < 16 ? l + 5 : l, l ^ 9, (l & ~7) + 7,
                    (int)ballot, 1, 0, 1 + 100 * (31 - l), l + 1 + 400, 1};
    for (int k = 0; k < 10; k++) bad |= o[k] != want[k];
  }
  CHECK(!bad, "collectives under seed %llu: status %d (%s)", (unsigned long long)seed, (int)s, e.message);
  s = ex.launch("legal", legal_patterns_kernel, dim3(1), dim3(SIMT_WARP), 0, out);
  if (s == GPUISO_OK) s = ex.get(got, out, SIMT_WARP * sizeof(int));
  bad = s != GPUISO_OK;
  for (int l = 0; !bad && l < SIMT_WARP; l++) bad = got[l] != 31 + 100 * (l ^ 16);
  CHECK(!bad, "legal collectives under seed %llu: status %d (%s)", (unsigned long long)seed, (int)s, e.message);
  s = ex.launch("partial warp", partial_warp_kernel, dim3(1), dim3(48), 0, out);
  if (s == GPUISO_OK) s = ex.get(got, out, 48 * sizeof(int));
  bad = s != GPUISO_OK;
  for (int t = 0; !bad && t < 48; t++) bad = got[t] != (t < 32 ? 32 : 16);
  CHECK(!bad, "a partial warp under seed %llu: status %d (%s)", (unsigned long long)seed, (int)s, e.message);
  ex.release(out);
}

int main(void) {
  uint64_t seeds[3];
  int nseeds = sim_seeds(seeds), caught = 0, total = (int)(sizeof cases / sizeof cases[0]);
  for (int c = 0; c < total; c++) {
    int seen = 1;
    for (int k = 0; k < nseeds; k++) {
      outcome bad = cases[c].run(seeds[k], 1), good = cases[c].run(seeds[k], 0);
      int reported = bad.status != GPUISO_OK && strstr(bad.message, cases[c].words) != NULL;
      CHECK(reported, "defect not reported (%s), seed %llu: status %d, \"%s\"", cases[c].name,
            (unsigned long long)seeds[k], (int)bad.status, bad.message);
      CHECK(good.status == GPUISO_OK && good.right, "corrected twin of \"%s\" failed, seed %llu: %s",
            cases[c].name, (unsigned long long)seeds[k], good.message);
      seen &= reported;
      if (k == 0 && reported) printf("simt-selftest: caught %s: %s\n", cases[c].name, bad.message);
    }
    caught += seen;
  }
  for (int k = 0; k < nseeds; k++) check_collectives(seeds[k]);
  printf("simt-selftest: %d of %d defects caught\n", caught, total);
  printf("ctest: %d passed, %d failed (the SIMT executor's self-test)\n", passed, failed);
  return failed != 0 || caught != total;
}

/* The device layer (src/cuda/simt.cuh) on the CPU: what the kernels call when the C tests compile
 * them with a plain C++ compiler. Every call goes to the SIMT executor (executor.cpp), which runs
 * a fiber per CUDA thread. File and line of each barrier and collective come from GCC's
 * __builtin_FILE/__builtin_LINE default arguments, so that reports name the call in the kernel
 * and barriers reached from different places are told apart. Memory accesses are seen through
 * GCC's -fsanitize=thread instrumentation of the test programs (the executor defines its hooks).
 */
#ifndef GPUISO_SIMT_CPU_H
#define GPUISO_SIMT_CPU_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tuple>
#include <utility>

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

#define SIMT_KERNEL
#define SIMT_BOUNDS(threads, blocks)
#define SIMT_DEVICE inline
#define SIMT_HERE const char *file = __builtin_FILE(), int line = __builtin_LINE()
#define SIMT_SHARED(T, name, count)                                                          \
  static char simt_shared_key_##name;                                                        \
  T *name = static_cast<T *>(simt_cpu::shared_static(&simt_shared_key_##name,                \
                                                     sizeof(T) * (size_t)(count), alignof(T)))

namespace simt_cpu {

enum collective_kind { C_SYNC_WARP, C_SHFL, C_SHFL_UP, C_SHFL_DOWN, C_SHFL_XOR, C_BALLOT, C_ANY, C_ALL };

dim3 thread_idx();
dim3 block_idx();
dim3 block_dim();
dim3 grid_dim();
unsigned thread_rank();
void barrier(const char *file, int line);
uint64_t collective(collective_kind kind, unsigned mask, uint64_t value, int arg, int width,
                    const char *file, int line);
unsigned active_mask();
void atomic_access(void *p, size_t size, int reads, const char *file, int line);
void prefetch_check(const void *p, const char *file, int line);
void access16_check(const void *p, const char *what, const char *file, int line);
void *shared_static(const void *key, size_t bytes, size_t align);
void *shared_dynamic();

/* A kernel launch: the grid, the block, the dynamic shared bytes, the kernel's name and its
 * entry, a function that copies the arguments onto the fiber's stack and calls the kernel. */
struct launch_config {
  dim3 grid, block;
  size_t shared;
  const void *kernel; /* identifies the kernel for allow_shared */
  const char *name;
  void (*entry)(const void *args);
  const void *args;
};
/* Runs the launch, the launch-th of a schedule seed; 0 when it ran clean, else it found a defect
 * and message says which (and the seed). */
int run(const launch_config &c, uint64_t seed, uint64_t launch, char *message, size_t size);
/* Opts the kernel in to dynamic shared memory up to bytes (cudaFuncSetAttribute's twin). */
/* The target's opt-in limit of shared memory a block (sm_90), which allow_shared enforces. */
#define SIMT_OPT_IN_SHARED ((size_t)227 << 10)
int allow_shared(const void *kernel, size_t bytes, char *message, size_t size);
void enter_kernel(); /* called by the entry once the arguments are copied */

template <typename T>
uint64_t bits_of(T v) {
  static_assert(sizeof(T) <= 8, "a shuffled value has at most 8 bytes");
  uint64_t b = 0;
  memcpy(&b, &v, sizeof v);
  return b;
}
template <typename T>
T of_bits(uint64_t b) {
  T v;
  memcpy(&v, &b, sizeof v);
  return v;
}

/* The fiber's entry of a kernel taking P...: copies the arguments (not yet a kernel access),
 * then runs the kernel body. */
template <class... P>
struct entry_of {
  typedef void (*kernel_fn)(P...);
  struct pack {
    kernel_fn kernel;
    std::tuple<P...> args;
  };
  static void run(const void *p) {
    pack local = *static_cast<const pack *>(p);
    enter_kernel();
    std::apply(local.kernel, local.args);
  }
};

/* The read-modify-write of an atomic, not instrumented: the executor records it as atomic. */
template <typename T, class Op>
__attribute__((no_sanitize_thread, noinline)) T rmw(T *p, Op op) {
  T old = *p;
  *p = op(old);
  return old;
}

} // namespace simt_cpu

/* Device memory of the executor (cudaMalloc and friends on the CPU): checked, filled with a
 * pattern when fresh. The copies return 1 (and record a defect) when they reach past an
 * allocation. */
void *sim_alloc(size_t bytes);
int sim_free(void *p);
/* Makes [p, p + n) of a live allocation unaddressable (a guard between the parts of one). */
void sim_guard(void *p, size_t n);
int sim_put(void *dev, const void *host, size_t n);
int sim_get(void *host, const void *dev, size_t n);
int sim_fill(void *dev, int byte, size_t n);
/* Defects found so far (launches' and host code's), and the text of the i-th. */
size_t sim_defects(void);
const char *sim_defect(size_t i);

namespace simt {
inline dim3 thread_idx() { return simt_cpu::thread_idx(); }
inline dim3 block_idx() { return simt_cpu::block_idx(); }
inline dim3 block_dim() { return simt_cpu::block_dim(); }
inline dim3 grid_dim() { return simt_cpu::grid_dim(); }
inline unsigned thread_rank() { return simt_cpu::thread_rank(); }
inline unsigned lane() { return thread_rank() % SIMT_WARP; }
inline unsigned warp() { return thread_rank() / SIMT_WARP; }
inline int64_t global_x() { return (int64_t)block_idx().x * block_dim().x + thread_idx().x; }

inline void sync_block(SIMT_HERE) { simt_cpu::barrier(file, line); }
inline void sync_warp(unsigned mask = SIMT_FULL_MASK, SIMT_HERE) {
  simt_cpu::collective(simt_cpu::C_SYNC_WARP, mask, 0, 0, SIMT_WARP, file, line);
}

template <typename T>
T shfl(unsigned mask, T v, int src, int width = SIMT_WARP, SIMT_HERE) {
  using namespace simt_cpu;
  return of_bits<T>(collective(C_SHFL, mask, bits_of(v), src, width, file, line));
}
template <typename T>
T shfl_up(unsigned mask, T v, unsigned delta, int width = SIMT_WARP, SIMT_HERE) {
  using namespace simt_cpu;
  return of_bits<T>(collective(C_SHFL_UP, mask, bits_of(v), (int)delta, width, file, line));
}
template <typename T>
T shfl_down(unsigned mask, T v, unsigned delta, int width = SIMT_WARP, SIMT_HERE) {
  using namespace simt_cpu;
  return of_bits<T>(collective(C_SHFL_DOWN, mask, bits_of(v), (int)delta, width, file, line));
}
template <typename T>
T shfl_xor(unsigned mask, T v, int lane_mask, int width = SIMT_WARP, SIMT_HERE) {
  using namespace simt_cpu;
  return of_bits<T>(collective(C_SHFL_XOR, mask, bits_of(v), lane_mask, width, file, line));
}
inline unsigned ballot(unsigned mask, int p, SIMT_HERE) {
  return (unsigned)simt_cpu::collective(simt_cpu::C_BALLOT, mask, p != 0, 0, SIMT_WARP, file, line);
}
inline int any(unsigned mask, int p, SIMT_HERE) {
  return (int)simt_cpu::collective(simt_cpu::C_ANY, mask, p != 0, 0, SIMT_WARP, file, line);
}
inline int all(unsigned mask, int p, SIMT_HERE) {
  return (int)simt_cpu::collective(simt_cpu::C_ALL, mask, p != 0, 0, SIMT_WARP, file, line);
}
/* The lanes of the warp that have not exited: on a GPU, those converged at the call, which code
 * must not rely on being more than the caller; code that does is caught at its next collective. */
inline unsigned active_mask() { return simt_cpu::active_mask(); }
inline void prefetch(const void *p, SIMT_HERE) { simt_cpu::prefetch_check(p, file, line); }
/* A 16-byte load of floats or doubles, as the device's: its address aligned (a device faults
 * else), its values read one by one, so that the executor sees each read. */
inline void load16(const float *p, float *out, SIMT_HERE) {
  simt_cpu::access16_check(p, "load", file, line);
  for (int h = 0; h < 4; h++) out[h] = p[h];
}
inline void load16(const double *p, double *out, SIMT_HERE) {
  simt_cpu::access16_check(p, "load", file, line);
  for (int h = 0; h < 2; h++) out[h] = p[h];
}
/* A 16-byte store, likewise: aligned, each value written apart. */
inline void store16(float *p, const float *in, SIMT_HERE) {
  simt_cpu::access16_check(p, "store", file, line);
  for (int h = 0; h < 4; h++) p[h] = in[h];
}
inline void store16(double *p, const double *in, SIMT_HERE) {
  simt_cpu::access16_check(p, "store", file, line);
  for (int h = 0; h < 2; h++) p[h] = in[h];
}

inline int clz(unsigned x) { return x ? __builtin_clz(x) : 32; }
inline int clzll(unsigned long long x) { return x ? __builtin_clzll(x) : 64; }
inline int popc(unsigned x) { return __builtin_popcount(x); }
inline int popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int ffs(unsigned x) { return __builtin_ffs((int)x); }
inline int ffsll(unsigned long long x) { return __builtin_ffsll((long long)x); }
inline unsigned brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; i++, x >>= 1) r = (r << 1) | (x & 1u);
  return r;
}
inline unsigned long long brevll(unsigned long long x) {
  return ((unsigned long long)brev((unsigned)x) << 32) | brev((unsigned)(x >> 32));
}

template <typename T>
T atomic_add(T *p, T v, SIMT_HERE) {
  simt_cpu::atomic_access(p, sizeof(T), 1, file, line);
  return simt_cpu::rmw(p, [v](T o) { return o + v; });
}
template <typename T>
T atomic_min(T *p, T v, SIMT_HERE) {
  simt_cpu::atomic_access(p, sizeof(T), 1, file, line);
  return simt_cpu::rmw(p, [v](T o) { return v < o ? v : o; });
}
template <typename T>
T atomic_max(T *p, T v, SIMT_HERE) {
  simt_cpu::atomic_access(p, sizeof(T), 1, file, line);
  return simt_cpu::rmw(p, [v](T o) { return v > o ? v : o; });
}
template <typename T>
T atomic_exch(T *p, T v, SIMT_HERE) {
  simt_cpu::atomic_access(p, sizeof(T), 0, file, line);
  return simt_cpu::rmw(p, [v](T) { return v; });
}
template <typename T>
T atomic_cas(T *p, T expected, T v, SIMT_HERE) {
  simt_cpu::atomic_access(p, sizeof(T), 1, file, line);
  return simt_cpu::rmw(p, [expected, v](T o) { return o == expected ? v : o; });
}

template <typename T>
T *dynamic_shared() {
  return static_cast<T *>(simt_cpu::shared_dynamic());
}
} // namespace simt

#endif

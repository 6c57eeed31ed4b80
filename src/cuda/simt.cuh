/* The device layer that every kernel of the package is written against: thread, lane, warp and
 * block indices, barriers, warp collectives, bit intrinsics, atomics and shared memory.
 *
 * Under nvcc each call is the CUDA intrinsic it names, inlined (no cost). Compiled by a plain C++
 * compiler (the C tests, `make ctest`), the same calls go to the SIMT executor of tools/simt:
 * a fiber per CUDA thread, barriers and collectives that check that every thread arrives, seeded
 * random schedules, checked memory and race reports. So a kernel is written once, and proven on
 * the CPU before a device runs it.
 *
 *   SIMT_KERNEL                 marks a kernel (__global__)
 *   SIMT_BOUNDS(threads, blocks) __launch_bounds__(threads, blocks): registers capped so that
 *                               `blocks` blocks of up to `threads` fit an SM (nothing on the CPU)
 *   simt::thread_idx(), block_idx(), block_dim(), grid_dim()   as threadIdx and friends
 *   simt::thread_rank()        the thread's index in its block (x fastest)
 *   simt::lane(), simt::warp() its lane (0..31) and its warp in the block
 *   simt::global_x()           blockIdx.x * blockDim.x + threadIdx.x, in 64 bits
 *   simt::sync_block()         __syncthreads(); sync_warp(mask) __syncwarp(mask)
 *   simt::shfl, shfl_up, shfl_down, shfl_xor (mask, value, lane or delta, width = 32)
 *   simt::ballot, any, all (mask, predicate); active_mask()
 *   simt::clz, popc, ffs, brev (32 bits) and clzll, popcll, ffsll, brevll (64 bits)
 *   simt::atomic_add, atomic_min, atomic_max, atomic_exch, atomic_cas (device memory)
 *   simt::load16(p, out)        the 16 bytes at p (aligned to 16) in one load, into out: 4 floats
 *                               or 2 doubles (the executor checks the alignment)
 *   simt::store16(p, in)        the 4 floats or 2 doubles of in to the 16 bytes at p (aligned to
 *                               16) in one store
 *   simt::prefetch(p)           asks the SM's L1 for p's line of device memory, not waiting for
 *                               it (prefetch.global.L1); no access (the executor checks that p
 *                               is addressable device memory, and records no read)
 *   SIMT_SHARED(T, name, count) a static shared array of the block; simt::dynamic_shared<T>()
 *                               the block's dynamic shared memory (the launch's shared bytes)
 *
 * Memory ordering is CUDA's: only sync_block and sync_warp order the memory accesses of the
 * threads they join; shuffles, votes and atomics exchange values but order nothing.
 */
#ifndef GPUISO_CUDA_SIMT_CUH
#define GPUISO_CUDA_SIMT_CUH

#include <stdint.h>

#define SIMT_FULL_MASK 0xffffffffu
#define SIMT_WARP 32
#define SIMT_LINE 128 /* bytes of an L1 cache line */

#ifdef __CUDACC__

#include <cuda_runtime.h>

#define SIMT_KERNEL __global__
#define SIMT_BOUNDS(threads, blocks) __launch_bounds__(threads, blocks)
#define SIMT_DEVICE __device__ __forceinline__
#define SIMT_SHARED(T, name, count) __shared__ T name[count]

namespace simt {
SIMT_DEVICE dim3 thread_idx() { return threadIdx; }
SIMT_DEVICE dim3 block_idx() { return blockIdx; }
SIMT_DEVICE dim3 block_dim() { return blockDim; }
SIMT_DEVICE dim3 grid_dim() { return gridDim; }
SIMT_DEVICE unsigned thread_rank() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
SIMT_DEVICE unsigned lane() { return thread_rank() % SIMT_WARP; }
SIMT_DEVICE unsigned warp() { return thread_rank() / SIMT_WARP; }
SIMT_DEVICE int64_t global_x() { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }

SIMT_DEVICE void sync_block() { __syncthreads(); }
SIMT_DEVICE void sync_warp(unsigned mask = SIMT_FULL_MASK) { __syncwarp(mask); }

template <typename T>
SIMT_DEVICE T shfl(unsigned mask, T v, int src, int width = SIMT_WARP) {
  return __shfl_sync(mask, v, src, width);
}
template <typename T>
SIMT_DEVICE T shfl_up(unsigned mask, T v, unsigned delta, int width = SIMT_WARP) {
  return __shfl_up_sync(mask, v, delta, width);
}
template <typename T>
SIMT_DEVICE T shfl_down(unsigned mask, T v, unsigned delta, int width = SIMT_WARP) {
  return __shfl_down_sync(mask, v, delta, width);
}
template <typename T>
SIMT_DEVICE T shfl_xor(unsigned mask, T v, int lane_mask, int width = SIMT_WARP) {
  return __shfl_xor_sync(mask, v, lane_mask, width);
}
SIMT_DEVICE unsigned ballot(unsigned mask, int p) { return __ballot_sync(mask, p); }
SIMT_DEVICE int any(unsigned mask, int p) { return __any_sync(mask, p); }
SIMT_DEVICE int all(unsigned mask, int p) { return __all_sync(mask, p); }
SIMT_DEVICE unsigned active_mask() { return __activemask(); }

SIMT_DEVICE int clz(unsigned x) { return __clz((int)x); }
SIMT_DEVICE int clzll(unsigned long long x) { return __clzll((long long)x); }
SIMT_DEVICE int popc(unsigned x) { return __popc(x); }
SIMT_DEVICE int popcll(unsigned long long x) { return __popcll(x); }
SIMT_DEVICE int ffs(unsigned x) { return __ffs((int)x); }
SIMT_DEVICE int ffsll(unsigned long long x) { return __ffsll((long long)x); }
SIMT_DEVICE unsigned brev(unsigned x) { return __brev(x); }
SIMT_DEVICE unsigned long long brevll(unsigned long long x) { return __brevll(x); }

template <typename T>
SIMT_DEVICE T atomic_add(T *p, T v) { return atomicAdd(p, v); }
template <typename T>
SIMT_DEVICE T atomic_min(T *p, T v) { return atomicMin(p, v); }
template <typename T>
SIMT_DEVICE T atomic_max(T *p, T v) { return atomicMax(p, v); }
template <typename T>
SIMT_DEVICE T atomic_exch(T *p, T v) { return atomicExch(p, v); }
template <typename T>
SIMT_DEVICE T atomic_cas(T *p, T expected, T v) { return atomicCAS(p, expected, v); }

SIMT_DEVICE void load16(const float *p, float *out) {
  float4 v = *reinterpret_cast<const float4 *>(p);
  out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
}
SIMT_DEVICE void load16(const double *p, double *out) {
  double2 v = *reinterpret_cast<const double2 *>(p);
  out[0] = v.x, out[1] = v.y;
}
SIMT_DEVICE void store16(float *p, const float *in) {
  *reinterpret_cast<float4 *>(p) = make_float4(in[0], in[1], in[2], in[3]);
}
SIMT_DEVICE void store16(double *p, const double *in) { *reinterpret_cast<double2 *>(p) = make_double2(in[0], in[1]); }

SIMT_DEVICE void prefetch(const void *p) { asm volatile("prefetch.global.L1 [%0];" ::"l"(p)); }

template <typename T>
SIMT_DEVICE T *dynamic_shared() {
  extern __shared__ unsigned char simt_dynamic_shared[];
  return reinterpret_cast<T *>(simt_dynamic_shared);
}
} // namespace simt

#else /* the CPU executor of the C tests */

#include "simt_cpu.h"

#endif

#endif

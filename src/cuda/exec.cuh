/* The executor of the CUDA engine's host sides (pipeline.cuh) on the current device and its
 * default stream: device memory, checked copies and checked launches; the plans of data on the
 * device (plan_handle.cuh) run on it, the entry points that copy host arrays on sort_exec.cuh's,
 * which adds lanes and CUB. Its twin for the C tests is tools/simt/sim_exec.h. Nothing here
 * prints or exits.
 */
#ifndef GPUISO_CUDA_EXEC_CUH
#define GPUISO_CUDA_EXEC_CUH

#include "check.cuh"
#include "launch.cuh"

/* CUDA events after each launch, named by the launch: the device time of each stage of a run
 * (tools/gpu-check), without a synchronisation between the stages; and after each copy and wait,
 * so that the time the device waits on the host is a stage of its own (HOST_STAGE), not the next
 * launch's. */
#define HOST_STAGE "copies and waits"
#define STAGE_EVENTS 512

struct stage_clock {
  cudaEvent_t event[STAGE_EVENTS];
  const char *name[STAGE_EVENTS]; /* the launch that ends at event[k] */
  int count, made;
};

struct cuda_exec {
  gpuiso_error *err;
  stage_clock *clock; /* NULL: no timing */
  cudaStream_t stream; /* the stream of the launches: 0, the default one, unless a staged copy
                          (sort_exec.cuh) runs its kernels beside its transfers */

  gpuiso_status check(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return GPUISO_OK;
    (void)cudaGetLastError(); /* clears the error unless it is sticky */
    return cuda_error(err, e, what);
  }
  gpuiso_status alloc(void **p, size_t bytes) {
    *p = NULL;
    if (bytes == 0) return GPUISO_OK;
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaSuccess) return GPUISO_OK;
    *p = NULL;
    char what[64];
    snprintf(what, sizeof what, "cudaMalloc of %zu bytes", bytes);
    return check(e, what);
  }
  /* cudaFree waits for the device, so that kernels queued before it that use p finish first: the
   * callers that drop a buffer right after queueing its last kernel rely on that (cudaFreeAsync
   * would not wait). A failure here leaves nothing to undo. */
  void release(void *p) {
    if (p) (void)cudaFree(p);
  }
  /* The SIMT executor's check that nothing touches these bytes; nothing to do on a device. */
  void guard(void *, size_t) {}
  gpuiso_status available(size_t *bytes) {
    size_t total;
    *bytes = 0;
    return check(cudaMemGetInfo(bytes, &total), "cudaMemGetInfo");
  }
  /* Copies and fills are on the launches' stream, so that on a lane they are ordered with its
   * kernels; a copy waits for its stream, so that the host memory may be reused (or read) when it
   * returns, as cudaMemcpy's. */
  gpuiso_status copy(void *to, const void *from, size_t bytes, cudaMemcpyKind kind, const char *what,
                     const char *wait) {
    if (bytes == 0) return GPUISO_OK;
    gpuiso_status s = check(cudaMemcpyAsync(to, from, bytes, kind, stream), what);
    if (s == GPUISO_OK) s = check(cudaStreamSynchronize(stream), wait);
    return timed(s, HOST_STAGE);
  }
  gpuiso_status put(void *dev, const void *host, size_t bytes) {
    return copy(dev, host, bytes, cudaMemcpyHostToDevice, "cudaMemcpyAsync to the device",
                "cudaStreamSynchronize after a copy to the device");
  }
  gpuiso_status get(void *host, const void *dev, size_t bytes) {
    return copy(host, dev, bytes, cudaMemcpyDeviceToHost, "cudaMemcpyAsync from the device",
                "cudaStreamSynchronize after a copy from the device");
  }
  gpuiso_status fill(void *dev, int byte, size_t bytes) {
    if (bytes == 0) return GPUISO_OK;
    return timed(check(cudaMemsetAsync(dev, byte, bytes, stream), "cudaMemsetAsync"), HOST_STAGE);
  }
  template <class... P, class... A>
  gpuiso_status launch(const char *name, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared,
                       A... args) {
    (void)cudaGetLastError(); /* an earlier call's error, not sticky, is not this launch's */
    kernel<<<grid, block, shared, stream>>>(args...);
    char what[128];
    snprintf(what, sizeof what, "the launch of %s", name);
    return timed(check(cudaGetLastError(), what), name);
  }
  /* s, after the event ending the stage `name` where the run is timed. */
  gpuiso_status timed(gpuiso_status s, const char *name) { return s == GPUISO_OK && clock ? mark(name) : s; }
  /* An event at this point of the stream, ending the stage `name` (NULL: the start). */
  gpuiso_status mark(const char *name) {
    if (clock->count == STAGE_EVENTS) return GPUISO_OK; /* later launches go uncounted */
    gpuiso_status s = GPUISO_OK;
    if (clock->count == clock->made) {
      s = check(cudaEventCreate(&clock->event[clock->made]), "cudaEventCreate");
      if (s != GPUISO_OK) return s;
      clock->made++;
    }
    clock->name[clock->count] = name;
    return check(cudaEventRecord(clock->event[clock->count++], stream), "cudaEventRecord");
  }
  /* The most shared memory a block of the current device may opt in to (allow_shared). */
  gpuiso_status shared_optin(size_t *bytes) {
    int device = 0, most = 0;
    *bytes = 0;
    gpuiso_status s = check(cudaGetDevice(&device), "cudaGetDevice");
    if (s == GPUISO_OK)
      s = check(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                "cudaDeviceGetAttribute (shared memory)");
    *bytes = (size_t)most;
    return s;
  }
  /* Lets the kernel take more than 48 KB of dynamic shared memory. */
  template <class... P>
  gpuiso_status allow_shared(void (*kernel)(P...), size_t bytes) {
    return check(cudaFuncSetAttribute((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)bytes), "cudaFuncSetAttribute (shared memory)");
  }
  /* Waits for the work of the launches' stream; on the default stream, for the whole device. */
  gpuiso_status sync() {
    if (stream) return timed(check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after the kernels"), HOST_STAGE);
    return timed(check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the kernels"), HOST_STAGE);
  }
};

/* The solver's plan (pipeline.cuh) on this executor, defined once, in solver.cu: calls from the
 * other entry points that fit rows (calibration, IDR, soft ranks, through the forwards of
 * sort_exec.cuh) resolve to these rather than to pipeline.cuh's templates, so the solver's kernels
 * are compiled into the library once, not once for each of them. (The C tests instantiate the
 * templates on their own executor.) */
gpuiso_status plan_init(cuda_exec &ex, gpuiso_cuda_plan *p, int64_t nrows, const int64_t *offsets,
                        gpuiso_precision type, int weighted, const gpuiso_opts *opt, gpuiso_error *err);
gpuiso_status plan_fit(cuda_exec &ex, const gpuiso_cuda_plan *p, const double *y, const double *w,
                       double *fit, uint8_t *start, gpuiso_error *err);
void plan_release(cuda_exec &ex, gpuiso_cuda_plan *p);

#endif

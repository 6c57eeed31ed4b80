# Whether a CUDA device is present, and the skip of the GPU tests when none is.
has_gpu <- function() nrow(gpuiso_backend()$devices) > 0
skip_without_gpu <- function() {
  b <- gpuiso_backend()
  if (nrow(b$devices) == 0) {
    skip(if (!b$cuda_built) "no CUDA device: gpuiso was built without CUDA"
         else sprintf("no CUDA device: %s", if (is.na(b$error)) "none found" else b$error))
  }
}

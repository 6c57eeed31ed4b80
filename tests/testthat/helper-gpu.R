# "auto" runs on the CPU in the tests, on any machine, so that the tests of the CPU engines' paths
# test them there; the tests of the GPU and of the choice set gpuiso.gpu_min_n themselves.
options(gpuiso.gpu_min_n = Inf)

# Whether a CUDA device is present, and the skip of the GPU tests when none is.
has_gpu <- function() nrow(gpuiso_backend()$devices) > 0
skip_without_gpu <- function() {
  b <- gpuiso_backend()
  if (nrow(b$devices) == 0) {
    skip(if (!b$cuda_built) "no CUDA device: gpuiso was built without CUDA"
         else sprintf("no CUDA device: %s", if (is.na(b$error)) "none found" else b$error))
  }
}

# The float32 values the GPU fits in single precision, as doubles (as.single() only marks a
# double vector and leaves its values alone).
as_float32 <- function(v) readBin(writeBin(as.double(v), raw(), size = 4), "double", size = 4, n = length(v))

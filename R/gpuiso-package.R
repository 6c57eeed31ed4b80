#' gpuiso: exact isotonic regression on the CPU and on NVIDIA GPUs
#'
#' [isoreg_gpu()] fits one monotone regression, [isoreg_batch()] fits many at once (rows of a
#' matrix or groups of a vector). [gpuiso_backend()] and [gpuiso_threads()] report and control
#' where the work runs. The vignette `vignette("isotonic-regression", package = "gpuiso")` teaches
#' isotonic regression with the package.
#'
#' @keywords internal
#' @useDynLib gpuiso, .registration = TRUE, .fixes = ""
"_PACKAGE"

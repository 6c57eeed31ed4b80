#' gpuiso: exact isotonic regression on the CPU and on NVIDIA GPUs
#'
#' [isoreg_gpu()] fits one monotone regression, [isoreg_batch()] fits many at once (rows of a
#' matrix or groups of a vector), and [calibrate_isotonic()] calibrates classifier scores, with
#' one curve per group ([calibration_error()] and [reliability_diagram()] evaluate them).
#' [gpuiso_backend()] and [gpuiso_threads()] report and control where the work runs. The vignettes
#' `vignette("isotonic-regression", package = "gpuiso")` and
#' `vignette("calibration", package = "gpuiso")` teach isotonic regression and calibration with
#' the package.
#'
#' @keywords internal
#' @useDynLib gpuiso, .registration = TRUE, .fixes = ""
"_PACKAGE"

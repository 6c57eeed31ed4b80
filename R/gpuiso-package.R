#' gpuiso: exact isotonic regression, IDR, calibration and soft ranks
#'
#' Exact weighted least-squares isotonic regression and the methods built on it, on the CPU and,
#' in a CUDA build, on NVIDIA GPUs (`device = "auto"` takes a GPU for work of the sizes at which
#' one was measured faster than the CPU; see [isoreg_gpu()]).
#'
#' * Isotonic regression: [isoreg_gpu()] fits one monotone regression (with
#'   [`predict()`][predict.gpuiso_fit()], [`plot()`][plot.gpuiso_fit()],
#'   [`summary()`][summary.gpuiso_fit()] and [isoreg_blocks()] for its fit), [isoreg_batch()] fits many at once
#'   (the rows of a matrix or the groups of a vector).
#' * Isotonic distributional regression: [idr()] estimates conditional distributions under a
#'   stochastic order, with the function names of isodistrreg; [predict.gpuiso_idrfit()] gives
#'   predictive distributions, which [cdf()], [qpred()], [crps()], [pit()], [bscore()] and
#'   [qscore()] use and score; [idrbag()] subags.
#' * Calibration: [calibrate_isotonic()] turns classifier scores into probabilities, with one
#'   curve per group; [calibration_error()], [log_loss()], [brier_score()] and
#'   [reliability_diagram()] evaluate them.
#' * Gradients: [isoreg_vjp()] differentiates a fit; [soft_rank()] and [soft_sort()] are
#'   differentiable ranks and sorts.
#' * Where the work runs: [gpuiso_backend()] and [gpuiso_threads()].
#'
#' The vignettes teach the methods with the package:
#' * `vignette("isotonic-regression", package = "gpuiso")`: isotonic regression from the start;
#' * `vignette("idr", package = "gpuiso")`: isotonic distributional regression and the evaluation
#'   of predictive distributions;
#' * `vignette("calibration", package = "gpuiso")`: calibrating the scores of a classifier;
#' * `vignette("differentiable-ranking", package = "gpuiso")`: learning to rank with soft ranks.
#'
#' @keywords internal
#' @useDynLib gpuiso, .registration = TRUE, .fixes = ""
"_PACKAGE"

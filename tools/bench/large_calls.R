# Large calls of one build, where fresh memory is much of the time: fits on y and on unsorted x,
# batches of groups, calibration and its predictions (groups by integer ids and by names), soft
# ranks, a gradient and IDR's predictions, each on about 1e7 values. Prints each call's median elapsed, user and system
# seconds over GPUISO_BENCH_REPS runs (default 5), the first run left out (it also faults the
# memory that R and the C library keep for later calls). The system seconds are mostly page
# faults: a fresh vector faults a 4 KB page at a time unless it lies on huge pages.
# To compare two builds, run this for each in turns, in separate processes (in one process the
# memory one build frees, already faulted, would serve the other's calls):
#   for l in A B A B A B; do Rscript tools/bench/large_calls.R /path/to/lib$l; done
# and take the medians of each build's runs.
# Run: Rscript tools/bench/large_calls.R [LIB]   (LIB: an R library holding gpuiso; default: the
# first on .libPaths())
args <- commandArgs(TRUE)
lib <- if (length(args)) args[1] else NULL
suppressMessages(library(gpuiso, lib.loc = lib))
source(file.path("tools", "bench", "common.R"))
bench_header(paste("large calls, library", if (is.null(lib)) "default" else lib))
reps <- as.integer(Sys.getenv("GPUISO_BENCH_REPS", "5"))
n <- 1e7
set.seed(1)
y <- make_family("noise", n)
w <- stats::runif(n, 0.5, 2)
x <- stats::runif(n)
x_tied <- round(stats::runif(n) * n / 4)
g <- sample(1e4, n, TRUE)
score <- stats::runif(n)
label <- stats::rbinom(n, 1, score)
segment <- sample(300, n, TRUE)
segment_name <- sprintf("segment %03d", segment)
cal <- calibrate_isotonic(score, label, group = segment, device = "cpu")
cal_named <- calibrate_isotonic(score, label, group = segment_name, device = "cpu")
fit_x <- isoreg_gpu(x, y, device = "cpu")
fit_grad <- isoreg_gpu(y, w = w, gradient = TRUE, device = "cpu")
m <- matrix(stats::rnorm(1e6), 1000)
yi <- y[1:1e5]
xi <- data.frame(x = x[1:1e5] + yi / 4)
pred <- predict(idr(yi, xi, device = "cpu"), data.frame(x = stats::runif(1e3)))
calls <- list(
  fit_y = quote(isoreg_gpu(y, device = "cpu")),
  fit_y_w = quote(isoreg_gpu(y, w = w, device = "cpu")),
  fit_x = quote(isoreg_gpu(x, y, device = "cpu")),
  fit_x_ties_w = quote(isoreg_gpu(x_tied, y, w, device = "cpu")),
  groups = quote(isoreg_batch(y, group = g, device = "cpu")),
  groups_x = quote(isoreg_batch(y, x = x, group = g, device = "cpu")),
  calibrate = quote(calibrate_isotonic(score, label, group = segment, device = "cpu")),
  predict_cal = quote(predict(cal, score, group = segment, device = "cpu")),
  calibrate_names = quote(calibrate_isotonic(score, label, group = segment_name, device = "cpu")),
  predict_cal_names = quote(predict(cal_named, score, group = segment_name, device = "cpu")),
  groups_names = quote(isoreg_batch(score, group = segment_name, device = "cpu")),
  predict_fit = quote(predict(fit_x, x)),
  soft_rank_1e3x1e3 = quote(soft_rank(m, device = "cpu")),
  vjp = quote(isoreg_vjp(fit_grad, y, device = "cpu")),
  idr_cdf_1e3x1e5 = quote(cdf(pred, yi))
)
time_call <- function(e) {
  eval(e)
  t <- replicate(reps, {
    gc(FALSE)
    s <- system.time(eval(e))
    c(s[["elapsed"]], s[["user.self"]], s[["sys.self"]])
  })
  stats::setNames(apply(t, 1, stats::median), c("elapsed", "user", "system"))
}
res <- t(sapply(calls, time_call))
print(data.frame(call = rownames(res), round(res, 3)), row.names = FALSE)

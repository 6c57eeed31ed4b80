# The cost of one small call, where R's checks, allocations and the C side's set-up are most of
# the time: fits, calibration, IDR and their predictions at n = 10, 100 and 1000, with
# stats::isoreg(x, y) timed in the same process as the control. CPU seconds (user and system) per
# call, from a loop of repeated calls: on this project's shared VMs the elapsed time of a
# microsecond call swings by a factor two from minute to minute, the CPU time much less.
# To compare two builds, run it for each in turns (A B A B ...) and take the medians:
#   for l in A B A B A B; do Rscript tools/bench/per_call.R /path/to/lib$l; done
# Run: Rscript tools/bench/per_call.R [LIB]   (LIB: an R library holding gpuiso; default: the
# first on .libPaths())
args <- commandArgs(TRUE)
lib <- if (length(args)) args[1] else NULL
suppressMessages(library(gpuiso, lib.loc = lib))
source(file.path("tools", "bench", "common.R"))
bench_header(paste("per-call CPU microseconds of small calls, library", if (is.null(lib)) "default" else lib))
cpu_us <- function(f, reps) {
  f()
  gc(FALSE)
  s <- system.time(for (i in seq_len(reps)) f())
  (s[["user.self"]] + s[["sys.self"]]) / reps * 1e6
}
set.seed(1)
rows <- list()
for (n in c(10, 100, 1000)) {
  y <- make_family("noise", n)
  w <- stats::runif(n, 0.5, 2)
  x <- sample(n)
  score <- stats::runif(n)
  label <- stats::rbinom(n, 1, score)
  cal <- calibrate_isotonic(score, label)
  d <- data.frame(x = score)
  fit <- idr(y, d)
  nd <- data.frame(x = 0.5)
  reps <- 3000
  t <- c(isoreg_y = cpu_us(function() isoreg_gpu(y), reps),
         isoreg_yw = cpu_us(function() isoreg_gpu(y, w = w), reps),
         isoreg_xy = cpu_us(function() isoreg_gpu(x, y), reps),
         calibrate = cpu_us(function() calibrate_isotonic(score, label), reps),
         predict_cal = cpu_us(function() predict(cal, 0.5), reps),
         idr = cpu_us(function() idr(y, d), reps / 3),
         predict_idr = cpu_us(function() predict(fit, nd), reps),
         stats_isoreg_xy = cpu_us(function() stats::isoreg(x, y), reps))
  rows[[length(rows) + 1]] <- data.frame(n = n, t(round(t, 1)))
}
print(do.call(rbind, rows), row.names = FALSE)
# One prediction from fits of many knots (unsorted x, every x distinct).
one <- t(sapply(c(1e3, 1e5, 1e6), function(n) {
  x <- stats::runif(n)
  fit <- isoreg_gpu(x, x + stats::rnorm(n))
  c(knots = length(fit$knots),
    predict_fit_one_value = round(cpu_us(function() predict(fit, 0.3), 1000), 1))
}))
print(as.data.frame(one), row.names = FALSE)

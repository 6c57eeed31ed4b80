# The CPU engine on every shape of issue 14, each against a copy of its input made in the same
# run (`Y + 0`, `y + 0`: one pass that reads the input and writes a result of its size; a batch
# on x also against the batch without x), and the predictions against as.stepfun(fit)(newx). Medians of GPUISO_BENCH_REPS, in turns (common.R).
# Run: Rscript tools/bench/cpu_shapes.R [threads]
suppressMessages(library(gpuiso))
source(file.path("tools", "bench", "common.R"))
reps <- as.integer(Sys.getenv("GPUISO_BENCH_REPS", "7"))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) > 0L) gpuiso_threads(as.integer(args[1]))
bench_header(sprintf("CPU shapes, medians of %d", reps))
load_average <- function() if (file.exists("/proc/loadavg")) cat("# load average:", readLines("/proc/loadavg"), "\n")
load_average()
set.seed(1)
rows <- list()
# A row of the table from time_turns' medians of the reference (ref) and of gpuiso's work (ours):
# elapsed seconds, their ratio, and the ratio of CPU seconds (all threads).
add <- function(work, t, ref, ref_key = 1L, our_key = 2L) {
  cpu <- attr(t, "cpu")
  rows[[length(rows) + 1L]] <<- data.frame(
    work = work, reference = ref, ref_s = t[[ref_key]], gpuiso_s = t[[our_key]],
    ratio = t[[our_key]] / t[[ref_key]], cpu_ratio = cpu[[our_key]] / cpu[[ref_key]])
}

# Batches: R matrices of about 1e7 elements, noisy ramps along the rows.
for (shape in list(c(1e6, 16), c(1e4, 1e3), c(1e3, 1e4), c(1e2, 1e5), c(1, 1e7))) {
  Y <- matrix(stats::rnorm(prod(shape)), shape[1], shape[2]) +
    rep(seq(0, 3, length.out = shape[2]), each = shape[1])
  t <- time_turns(list(copy = quote(Y + 0), batch = quote(isoreg_batch(Y))), reps)
  add(sprintf("isoreg_batch %g x %g", shape[1], shape[2]), t, "Y + 0")
}
# Batches on x (each row in the order of its own x, with ties) beside the same batch without x,
# and several long rows side by side (each split over the threads as a single row is).
Y <- matrix(stats::rnorm(1e7), 1e4, 1e3) + rep(seq(0, 3, length.out = 1e3), each = 1e4)
X <- matrix(round(stats::runif(1e7) * 500), 1e4, 1e3)
t <- time_turns(list(copy = quote(Y + 0), batch = quote(isoreg_batch(Y)), x = quote(isoreg_batch(Y, x = X))), reps)
add("isoreg_batch 1e4 x 1e3, x a matrix", t, "Y + 0", 1L, 3L)
add("isoreg_batch 1e4 x 1e3, x a matrix", t, "isoreg_batch(Y), no x", 2L, 3L)
g <- as.vector(row(Y))
t <- time_turns(list(copy = quote(Y + 0), x = quote(isoreg_batch(as.vector(Y), x = as.vector(X), group = g))), reps)
add("isoreg_batch 1e7 in 1e4 groups, x", t, "Y + 0")
rm(X, g)
for (shape in list(c(3, 3.3e6), c(10, 1e6))) {
  Y <- matrix(stats::rnorm(prod(shape)), shape[1], shape[2]) +
    rep(seq(0, 3, length.out = shape[2]), each = shape[1])
  t <- time_turns(list(copy = quote(Y + 0), batch = quote(isoreg_batch(Y))), reps)
  add(sprintf("isoreg_batch %g x %g (long rows)", shape[1], shape[2]), t, "Y + 0")
}
rm(Y)

# One weighted row on x = 1..n (as doubles, as a user's data frame column would hold them).
n <- 1e7
x <- as.double(seq_len(n))
w <- stats::runif(n, 0.5, 2)
for (f in families) {
  y <- make_family(f, n)
  t <- time_turns(list(copy = quote(y + 0), fit = quote(isoreg_gpu(x, y, w))), reps)
  add(sprintf("isoreg_gpu(x, y, w) %s 1e7", f), t, "y + 0")
}

# Predictions: 1e7 new x in random order from a fit of 1e6 unsorted points.
x <- stats::runif(1e6)
fit <- isoreg_gpu(x, 2 * x + stats::rnorm(1e6))
newx <- stats::runif(1e7, -0.05, 1.05)
sf <- stats::as.stepfun(fit)
cat(sprintf("# fit of 1e6 points: %d knots, %d blocks\n", length(fit$knots), length(fit$block_start)))
for (type in c("step", "linear")) {
  t <- time_turns(list(stepfun = quote(sf(newx)), predict = bquote(predict(fit, newx, type = .(type)))), reps)
  add(sprintf("predict(fit, newx) %s, 1e7 new x", type), t, "as.stepfun(fit)(newx)")
}
rm(newx, x, fit, sf)

# Calibrator of 1e7 scores in 300 groups (as tools/bench/calibrate.R), predicted at 1e7 new scores.
sizes <- 1 / seq_len(300)^1.1
group <- sample.int(300L, n, replace = TRUE, prob = sizes)
score <- stats::runif(n)
label <- as.double(stats::runif(n) < 0.06 * score * (0.5 + (group %% 3) / 2))
cal <- calibrate_isotonic(score, label, group = group)
new_score <- stats::runif(n)
new_group <- sample.int(300L, n, replace = TRUE, prob = sizes)
t <- time_turns(list(fit = quote(calibrate_isotonic(score, label, group = group)),
                     step = quote(predict(cal, new_score, new_group)),
                     linear = quote(predict(cal, new_score, new_group, type = "linear"))), reps)
for (type in c("step", "linear")) {
  add(sprintf("predict(calibrator) %s, 1e7 in 300 groups", type), t,
      "calibrate_isotonic, same data", "fit", type)
}
out <- do.call(rbind, rows)
out$work <- format(out$work)
out$reference <- format(out$reference)
load_average()
options(width = 200)
print(out, row.names = FALSE, digits = 3, right = FALSE)

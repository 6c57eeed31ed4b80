# Calibration of click scores (issue 6): simulated traffic of 1e7 impressions in 300 groups of
# very unequal sizes (Zipf-like), click rate about 3%, scores in random order.
#  1. calibrate_isotonic() with one curve per group (and the pooled curve it always fits) against
#     base R's order(group, score) alone, on one thread and on two.
#  2. One curve of 1e7 unsorted scores: calibrate_isotonic() against scikit-learn's
#     IsotonicRegression (Debian's python3-sklearn through /usr/bin/python3, when present).
#  3. With a CUDA device: calibrate_isotonic(device = "gpu"), with groups and without, from R's
#     vectors to the calibrator (tools/gpu-check times the C call and its parts).
# Run: Rscript tools/bench/calibrate.R
suppressMessages(library(gpuiso))
source(file.path("tools", "bench", "common.R"))
n <- as.numeric(Sys.getenv("GPUISO_BENCH_N", "1e7"))
reps <- as.integer(Sys.getenv("GPUISO_BENCH_REPS", "7"))
python <- Sys.getenv("GPUISO_BENCH_PYTHON", "/usr/bin/python3")
bench_header(sprintf("calibration, n = %g, 300 groups, medians of %d", n, reps))

set.seed(1)
sizes <- 1 / seq_len(300)^1.1
group <- sample.int(300L, n, replace = TRUE, prob = sizes)
score <- stats::runif(n)
label <- as.double(stats::runif(n) < 0.06 * score * (0.5 + (group %% 3) / 2)) # rate near 3%
cat(sprintf("# click rate %.4f, group sizes %d to %d\n", mean(label), min(tabulate(group)),
            max(tabulate(group))))

old <- gpuiso_threads()
groups <- function(threads) {
  gpuiso_threads(threads)
  time_turns(list(order = quote(order(group, score)),
                  calibrate = quote(calibrate_isotonic(score, label, group = group))), reps)
}
t1 <- groups(1)
t2 <- groups(2)
print(data.frame(threads = 1:2, order_s = c(t1[["order"]], t2[["order"]]),
                 calibrate_s = c(t1[["calibrate"]], t2[["calibrate"]]),
                 ratio = c(t1[["calibrate"]] / t1[["order"]], t2[["calibrate"]] / t2[["order"]])),
      row.names = FALSE, digits = 3)

one <- function(threads) {
  gpuiso_threads(threads)
  time_turns(list(calibrate = quote(calibrate_isotonic(score, label))), reps)[["calibrate"]]
}
c1 <- one(1)
c2 <- one(2)
gpuiso_threads(old)
sk <- NA_real_
script <- file.path("tools", "bench", "calibrate_sklearn.py")
if (file.exists(python) && system2(python, c("-c", shQuote("import sklearn")), stdout = FALSE, stderr = FALSE) == 0) {
  path <- tempfile(fileext = ".f64")
  writeBin(c(score, label), path, endian = "little")
  out <- system2(python, c(script, path, format(n, scientific = FALSE), min(reps, 3L)), stdout = TRUE)
  unlink(path)
  sk <- as.numeric(strsplit(out, " ")[[1]][1])
  cat(sprintf("\n# scikit-learn %s, medians of %d\n", strsplit(out, " ")[[1]][2], min(reps, 3L)))
}
print(data.frame(fit = c("calibrate_isotonic, 1 thread", "calibrate_isotonic, 2 threads",
                         "sklearn IsotonicRegression"),
                 seconds = c(c1, c2, sk), sklearn_over_this = sk / c(c1, c2, sk)),
      row.names = FALSE, digits = 3)

if (nrow(gpuiso_backend()$devices) > 0) {
  gpu <- time_turns(list(groups = quote(calibrate_isotonic(score, label, group = group, device = "gpu")),
                         one = quote(calibrate_isotonic(score, label, device = "gpu"))), reps)
  cat("\n# GPU pipeline (device = \"gpu\"), medians of", reps, "\n")
  print(data.frame(fit = c("300 groups and the pooled curve", "one curve"), seconds = gpu,
                   cpu_2_threads_over_gpu = c(t2[["calibrate"]], c2) / gpu),
        row.names = FALSE, digits = 3)
}

# One row of 1e7 weighted elements: isoreg_gpu against `y + 0` on the same vector (the cost of
# one pass that allocates its result); then x in random order, against base R's order(x) alone.
# (Iso::pava takes minutes on a noisy row of 1e7; tools/bench/packages.R compares the R packages
# at smaller sizes.) Run: Rscript tools/bench/single_row.R
suppressMessages(library(gpuiso))
source(file.path("tools", "bench", "common.R"))
n <- as.numeric(Sys.getenv("GPUISO_BENCH_N", "1e7"))
reps <- as.integer(Sys.getenv("GPUISO_BENCH_REPS", "7"))
bench_header(sprintf("single row, n = %g, weighted, medians of %d", n, reps))
set.seed(1)
w <- stats::runif(n, 0.5, 2)
rows <- list()
for (f in families) {
  y <- make_family(f, n)
  t <- time_turns(list(copy = quote(y + 0), gpuiso = quote(isoreg_gpu(y, w = w))), reps)
  rows[[f]] <- data.frame(family = f, copy_s = t[["copy"]], gpuiso_s = t[["gpuiso"]],
                          ratio = t[["gpuiso"]] / t[["copy"]])
}
print(do.call(rbind, rows), row.names = FALSE, digits = 3)

x <- stats::runif(n)
y <- make_family("noise", n)[order(x)]
t <- time_turns(list(order = quote(order(x)), gpuiso = quote(isoreg_gpu(x, y, w))), reps)
cat(sprintf("\nx in random order: order(x) %.3f s, isoreg_gpu(x, y, w) %.3f s, ratio %.2f\n",
            t[["order"]], t[["gpuiso"]], t[["gpuiso"]] / t[["order"]]))

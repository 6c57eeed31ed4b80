# Batches: 1e4 rows of 1e3 elements (a matrix) and 1e7 elements in 300 ragged, interleaved groups,
# on 1 and on 2 threads. Run: Rscript tools/bench/batch.R
suppressMessages(library(gpuiso))
source(file.path("tools", "bench", "common.R"))
reps <- as.integer(Sys.getenv("GPUISO_BENCH_REPS", "7"))
bench_header(sprintf("batches, medians of %d", reps))
set.seed(1)
y <- matrix(stats::rnorm(1e7), 1e4, 1e3) + rep(seq(0, 3, length.out = 1e3), each = 1e4)
sizes <- round(stats::rexp(300)^2 * 1e3) + 1
g <- sample(rep(seq_along(sizes), times = round(sizes / sum(sizes) * 1e7)))
yg <- stats::rnorm(length(g))
old <- gpuiso_threads()
run <- function(threads) {
  gpuiso_threads(threads)
  time_turns(list(matrix = quote(isoreg_batch(y)), groups = quote(isoreg_batch(yg, group = g))), reps)
}
t1 <- run(1)
t2 <- run(2)
gpuiso_threads(old)
print(data.frame(problem = c("1e4 x 1e3 matrix", sprintf("%d groups, %d elements", length(sizes), length(g))),
                 one_thread_s = t1, two_threads_s = t2, speedup = t1 / t2), row.names = FALSE, digits = 3)

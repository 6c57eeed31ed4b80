# The hull-merge engine beside PAV on one long row of 1e7 elements (GPUISO_BENCH_SIZES="1e7 1e8"
# for more sizes), four families, unweighted, uniform weights (0.5 to 2) and extreme weights
# (e^-8 to e^8, where more turns fall to the exact predicates) and wide weights (e^-50 to e^50: the
# row is wide, hull_is_wide, and its chunks' chains on the steps merge), on 1 and 2 threads, in
# the same run.
# Run: Rscript tools/bench/hull.R
suppressMessages(library(gpuiso))
source(file.path("tools", "bench", "common.R"))
reps <- as.integer(Sys.getenv("GPUISO_BENCH_REPS", "3"))
sizes <- as.numeric(strsplit(Sys.getenv("GPUISO_BENCH_SIZES", "1e7"), " ")[[1]])
bench_header(sprintf("hull engine beside PAV, medians of %d", reps))
old <- gpuiso_threads()
rows <- list()
for (n in sizes) {
  set.seed(1)
  weights <- list(none = NULL, uniform = stats::runif(n, 0.5, 2), extreme = exp(stats::runif(n, -8, 8)),
                  wide = exp(stats::runif(n, -50, 50)))
  for (f in families) {
    y <- make_family(f, n)
    for (weighted in names(weights)) {
      ww <- weights[[weighted]]
      t <- list()
      for (threads in 1:2) {
        gpuiso_threads(threads)
        t[[threads]] <- time_turns(list(pav = quote(isoreg_gpu(y, w = ww, method = "pav")),
                                        hull = quote(isoreg_gpu(y, w = ww, method = "hull"))), reps)
      }
      rows[[length(rows) + 1]] <- data.frame(
        n = n, family = f, weighted = weighted,
        pav_1 = t[[1]][["pav"]], pav_2 = t[[2]][["pav"]],
        hull_1 = t[[1]][["hull"]], hull_2 = t[[2]][["hull"]],
        hull_2_over_1 = t[[2]][["hull"]] / t[[1]][["hull"]],
        hull_over_pav_2 = t[[2]][["hull"]] / t[[2]][["pav"]])
    }
  }
  rm(y, weights)
  invisible(gc())
}
gpuiso_threads(old)
print(do.call(rbind, rows), row.names = FALSE, digits = 3)

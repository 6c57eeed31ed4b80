# IDR with several covariates (partial orders): time and peak memory of the fit, each workload in
# a fresh R process, and how the time grows with n. Data:
#   comp, d = 2 or 3: x ~ U(0, 1)^d, y ~ Gamma(shape = 2 + 5 mean(x)) rounded to 0.1 (as
#     precipitation in tenths of a millimetre: some 100 to 200 thresholds);
#   sd, 10 members: an ensemble m + N(0, 1) members with m ~ U(0, 3), y ~ Gamma(shape = 2 + 2 m)
#     rounded to 0.1, members compared by stochastic dominance;
#   comp, d = 2, continuous y (n thresholds: the most fits).
# Columns: the fit's seconds (idr(), all of it) and CPU seconds (of all threads: on a machine
# that other work shares they tell more than the elapsed time); the seconds of the transitive
# reduction (part of the fit's); distinct
# covariate vectors, covers in the reduction, thresholds, stored runs per threshold; peak MB (the
# kernel's VmHWM, reset just before the fit: R, the data, the fit and the work arrays). One run
# per workload (GPUISO_BENCH_REPS for medians of more); GPUISO_BENCH_N caps n;
# GPUISO_BENCH_WORKLOADS (comma-separated names, e.g. "comp2,sd10") picks workloads. Linux only.
# Run: Rscript tools/bench/idr_multi.R
source(file.path("tools", "bench", "common.R"))
suppressMessages(library(gpuiso))
reps <- as.integer(Sys.getenv("GPUISO_BENCH_REPS", "1"))
n_max <- as.numeric(Sys.getenv("GPUISO_BENCH_N", "1e4"))
bench_header("IDR with several covariates: seconds and peak MB per fit (fresh process each)")

data_code <- c(
  comp2 = "X <- data.frame(matrix(runif(2 * n), n, 2)); y <- round(rgamma(n, shape = 2 + 5 * rowMeans(X)), 1); groups <- NULL; orders <- c(comp = 1)",
  comp3 = "X <- data.frame(matrix(runif(3 * n), n, 3)); y <- round(rgamma(n, shape = 2 + 5 * rowMeans(X)), 1); groups <- NULL; orders <- c(comp = 1)",
  sd10 = "m <- runif(n, 0, 3); X <- data.frame(m + matrix(rnorm(10 * n), n, 10)); y <- round(rgamma(n, shape = 2 + 2 * m), 1); groups <- setNames(rep(1, 10), names(X)); orders <- c(sd = 1)",
  comp2_continuous = "X <- data.frame(matrix(runif(2 * n), n, 2)); y <- rgamma(n, shape = 2 + 5 * rowMeans(X)); groups <- NULL; orders <- c(comp = 1)"
)

child <- function(n, data) {
  code <- sprintf('
    suppressMessages(library(gpuiso))
    rss <- function(f) as.numeric(sub("kB", "", sub(paste0(f, ":"), "", grep(paste0("^", f), readLines("/proc/self/status"), value = TRUE)))) / 1024
    set.seed(1); n <- %g; %s; invisible(gc())
    v <- gpuiso:::order_values(X, n, groups, orders)$value
    t0 <- proc.time()[["elapsed"]]
    g <- .Call(gpuiso:::C_poset_reduce, gpuiso:::distinct_points(v)$points)
    t_reduce <- proc.time()[["elapsed"]] - t0
    rm(v); invisible(gc())
    writeLines("5", "/proc/self/clear_refs")
    t0 <- proc.time()
    fit <- idr(y, X, groups = groups, orders = orders, progress = FALSE)
    t <- proc.time() - t0
    cat(t[["elapsed"]], t_reduce, nrow(fit$X), length(g$cover), length(fit$thresholds),
        length(fit$runs$value) / length(fit$thresholds), rss("VmHWM"),
        t[["user.self"]] + t[["sys.self"]], "\n")', n, data)
  as.numeric(strsplit(system2("Rscript", c("-e", shQuote(code)), stdout = TRUE), " ")[[1]])
}

runs <- expand.grid(n = c(1e3, 3e3, 1e4), data = c("comp2", "comp3", "sd10", "comp2_continuous"),
                    stringsAsFactors = FALSE)
runs <- runs[runs$n <= n_max, ]
picked <- strsplit(Sys.getenv("GPUISO_BENCH_WORKLOADS", paste(names(data_code), collapse = ",")), ",")[[1]]
runs <- runs[runs$data %in% picked, ]
rows <- list()
for (i in seq_len(nrow(runs))) {
  r <- runs[i, ]
  res <- t(vapply(seq_len(reps), function(k) child(r$n, data_code[[r$data]]), numeric(8)))
  med <- apply(res, 2, stats::median)
  rows[[i]] <- data.frame(workload = r$data, n = r$n, fit_s = med[1], cpu_s = med[8], reduction_s = med[2],
                          points = med[3], covers = med[4], thresholds = med[5],
                          runs_per_threshold = round(med[6]), peak_MB = round(med[7]))
  print(rows[[i]], row.names = FALSE)
}
out <- do.call(rbind, rows)
# growth: the exponent of n between neighbouring sizes, t(n2) / t(n1) = (n2 / n1)^a
out$growth <- NA_real_
for (w in unique(out$workload)) {
  i <- which(out$workload == w)
  if (length(i) > 1) out$growth[i[-1]] <- round(log(out$fit_s[i[-1]] / out$fit_s[i[-length(i)]]) /
                                                 log(out$n[i[-1]] / out$n[i[-length(i)]]), 2)
}
cat("\n")
print(out, row.names = FALSE)

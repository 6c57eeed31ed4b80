# IDR: time and peak memory of the issue's workloads, each in a fresh R process (medians of
# GPUISO_BENCH_REPS runs). x ~ U(0, 1) and y of a family:
#   gamma        y ~ Gamma(shape = 2 + 5x): continuous, so there are n thresholds;
#   independent  y ~ N(0, 1) whatever x: the fits' blocks are long;
#   300 values   y uniform on 1 .. 300 whatever x: many positions change at each threshold;
#   weighted     independent, with weights ~ Exp(1): the hull tree on 128-bit coordinates;
#   wide weights independent, with weights 10^U(-12, 12): past the tree's 2^124 units, the sweep.
#   n = 1e4: fit + in-sample predictions + mean CRPS, one thread; beside it, in the same run, the
#            dense way (the indicator matrix, n distinct x by n thresholds, fitted as one batch
#            of antitonic rows by isoreg_batch) and its CRPS by the mass formula in R.
#   n = 1e5: fit with all thresholds, one thread and all threads, and on the GPU when there is one;
#            and fit + in-sample CRPS; the fit of each family.
# The peak is the kernel's VmHWM, reset just before the work, so it counts R, the data, the
# result and the work arrays. Linux only. Run: Rscript tools/bench/idr.R
source(file.path("tools", "bench", "common.R"))
suppressMessages(library(gpuiso))
reps <- as.integer(Sys.getenv("GPUISO_BENCH_REPS", "3"))
bench_header("IDR: seconds and peak MB per workload (fresh process each)")

families <- c(
  gamma = "y <- rgamma(n, shape = 2 + 5 * x); w <- NULL",
  independent = "y <- rnorm(n); w <- NULL",
  "300 values" = "y <- sample(300, n, TRUE); w <- NULL",
  weighted = "y <- rnorm(n); w <- rexp(n)",
  "wide weights" = "y <- rnorm(n); w <- 10^runif(n, -12, 12)"
)

child <- function(n, threads, work, family) {
  code <- sprintf('
    suppressMessages(library(gpuiso)); invisible(gpuiso_threads(%d))
    rss <- function(f) as.numeric(sub("kB", "", sub(paste0(f, ":"), "", grep(paste0("^", f), readLines("/proc/self/status"), value = TRUE)))) / 1024
    set.seed(1); n <- %g; x <- runif(n); %s; invisible(gc())
    writeLines("5", "/proc/self/clear_refs")
    t0 <- proc.time()[["elapsed"]]
    %s
    cat(proc.time()[["elapsed"]] - t0, rss("VmHWM"), "\n")', threads, n, families[[family]], work)
  as.numeric(strsplit(system2("Rscript", c("-e", shQuote(code)), stdout = TRUE), " ")[[1]])
}

workloads <- list(
  "fit + predict + CRPS" = "fit <- idr(y, x); s <- mean(crps(predict(fit), y))",
  "dense batch + CRPS" = '
    thr <- sort(y); ord <- order(x)
    ind <- outer(y[ord], thr, "<=") * 1
    cdf <- isoreg_batch(t(ind), increasing = FALSE)
    mass <- rbind(cdf[1, ], diff(cdf)); rank <- order(ord)
    s <- mean(sapply(seq_len(n), function(i) { m <- mass[, rank[i]]; 2 * sum(m * ((y[i] < thr) - cdf[, rank[i]] + m / 2) * (thr - y[i])) }))',
  "fit" = "fit <- idr(y, x, weights = w)",
  "fit on the GPU" = 'fit <- idr(y, x, device = "gpu")'
)
run <- function(n, threads, work, family = "gamma") list(n = n, threads = threads, work = work, family = family)
runs <- list(
  run(1e4, 1, "fit + predict + CRPS"),
  run(1e4, 1, "dense batch + CRPS"),
  run(1e5, 1, "fit"),
  run(1e5, parallel::detectCores(), "fit"),
  run(1e5, 1, "fit + predict + CRPS")
)
if (nrow(gpuiso_backend()$devices) > 0) runs <- c(runs, list(run(1e5, 1, "fit on the GPU")))
for (family in names(families)[-1]) {
  runs <- c(runs, list(run(1e5, 1, "fit", family), run(1e5, parallel::detectCores(), "fit", family)))
}
rows <- lapply(runs, function(r) {
  res <- replicate(reps, child(r$n, r$threads, workloads[[r$work]], r$family))
  data.frame(n = r$n, family = r$family, threads = r$threads, workload = r$work,
             seconds = round(stats::median(res[1, ]), 3), peak_MB = round(stats::median(res[2, ])))
})
tab <- do.call(rbind, rows)
tab$vs_dense <- ifelse(tab$n == 1e4, round(tab$seconds / tab$seconds[2], 3), NA)
print(tab, row.names = FALSE)

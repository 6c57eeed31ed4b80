# A/B of two builds of gpuiso in one process: both builds' shared objects loaded side by side and
# called in turns (A B, then B A), minimum of 7 runs, each case's fit checked identical or within
# 1e-12 between the builds. Case sets:
#   rank  increasing = "auto"'s rank covariance, 1e7 elements in 300 groups, without and with ties,
#         and a fit on unsorted x as a control
#   wide  the hull engine on one row of 1e7 whose weights span e^-50 to e^50 (hull_is_wide: a
#         chain on the steps), noise and increasing values; unweighted rows wide for their values'
#         scale alone, a trend of 2^30 an element, with noise of the same size (blocks of a few)
#         and without (a block an element); a row of uniform weights (0.5 to 2) as the control
#   merges  the hull engine on one row of 1e7, unweighted, whose merge levels walk little
#         (noise: a ramp plus normal noise), far (a sawtooth of period 37) and across the row
#         (a cliff: increasing, then one value far below), as tools/harness's families
# Usage: Rscript tools/bench/ab.R CASES THREADS LIB_A LIB_B
# (LIB_*: R libraries holding an installed gpuiso each, e.g. main's and a branch's).
args <- commandArgs(TRUE)
cases <- match.arg(args[1], c("rank", "wide", "merges"))
threads <- as.integer(args[2])
suppressMessages(library(gpuiso, lib.loc = args[3]))
load_copy <- function(lib) {
  f <- tempfile(fileext = ".so")
  file.copy(file.path(lib, "gpuiso", "libs", "gpuiso.so"), f)
  dyn.load(f)
}
dll <- list(A = load_copy(args[3]), B = load_copy(args[4]))
sym <- function(d, name) getNativeSymbolInfo(name, d)
fit <- function(d, x, y, w, engine) { # builds before 2026-12-07 take no argument names
  s <- sym(d, "C_isoreg_fit")
  if (s$numParameters < 10L) return(.Call(s, x, y, w, TRUE, -Inf, Inf, engine, FALSE, FALSE)[[1]])
  .Call(s, x, y, w, TRUE, -Inf, Inf, engine, FALSE, FALSE, NULL)[[1]]
}
set.seed(1)
n <- 1e7
if (cases == "rank") {
  k <- 300L
  g <- sample(k, n, TRUE)
  x <- rnorm(n)
  y <- sample(c(-1, 1), k, TRUE)[g] * x + rnorm(n)
  pav <- gpuiso:::engine_code("cpu", "pav")
  calls <- list(
    rank = function(d) .Call(sym(d, "C_rank_direction"), x, y, NULL, g, k),
    rank_ties = function(d) .Call(sym(d, "C_rank_direction"), round(x, 1), round(y), NULL, g, k),
    fit_xy = function(d) fit(d, x, y, NULL, pav))
} else if (cases == "merges") {
  hull <- gpuiso:::engine_code("cpu", "hull")
  i <- seq_len(n)
  ramp <- 3 * i / n + rnorm(n)
  sawtooth <- (i %% 37) / 37 + 0.05 * rnorm(n)
  cliff <- c(0.505 * i[-n] + 0.49 * runif(n - 1), -10 * n)
  calls <- list(
    noise = function(d) fit(d, NULL, ramp, NULL, hull),
    sawtooth = function(d) fit(d, NULL, sawtooth, NULL, hull),
    cliff = function(d) fit(d, NULL, cliff, NULL, hull))
} else {
  hull <- gpuiso:::engine_code("cpu", "hull")
  noise <- rnorm(n)
  rising <- cumsum(abs(rnorm(n))) / n + rnorm(n, sd = 0.1)
  wide <- exp(runif(n, -50, 50))
  uniform <- runif(n, 0.5, 2)
  trend <- 2^30 * seq_len(n)
  trend_noise <- trend + 2^30 * rnorm(n)
  calls <- list(
    wide_noise = function(d) fit(d, NULL, noise, wide, hull),
    wide_increasing = function(d) fit(d, NULL, rising, wide, hull),
    trend_noise = function(d) fit(d, NULL, trend_noise, NULL, hull),
    trend = function(d) fit(d, NULL, trend, NULL, hull),
    uniform_noise = function(d) fit(d, NULL, noise, uniform, hull))
}
for (d in dll) .Call(sym(d, "C_threads"), threads)
tm <- function(f, d) system.time(f(d))[["elapsed"]]
res <- list(A = NULL, B = NULL)
for (i in 1:7) for (v in if (i %% 2) c("A", "B") else c("B", "A")) {
  gc()
  res[[v]] <- rbind(res[[v]], vapply(calls, tm, 0, d = dll[[v]]))
}
a <- apply(res$A, 2, min)
b <- apply(res$B, 2, min)
cat(sprintf("%s cases, %d thread(s), minimum of 7 (seconds)\n", cases, threads))
print(rbind(A = a, B = b, ratio = b / a), digits = 3)
for (name in names(calls)) {
  za <- calls[[name]](dll$A)
  zb <- calls[[name]](dll$B)
  dev <- if (is.numeric(za)) max(abs(za - zb) / (1 + abs(za))) else 0
  stopifnot(identical(za, zb) || dev <= 1e-12)
}

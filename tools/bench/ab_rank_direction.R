# A/B of two builds of gpuiso on increasing = "auto"'s rank covariance (and, as a control, a fit on
# unsorted x), in one process: both builds' shared objects loaded side by side and called in
# turns (A B, then B A), minimum of 7 runs; 1e7 elements in 300 groups, without and with ties.
# Usage: Rscript tools/bench/ab_rank_direction.R THREADS LIB_A LIB_B
# (LIB_*: R libraries holding an installed gpuiso each, e.g. main's and a branch's).
args <- commandArgs(TRUE)
threads <- as.integer(args[1])
suppressMessages(library(gpuiso, lib.loc = args[2]))
pav <- gpuiso:::engine_code("cpu", "pav")
load_copy <- function(lib) {
  f <- tempfile(fileext = ".so")
  file.copy(file.path(lib, "gpuiso", "libs", "gpuiso.so"), f)
  dyn.load(f)
}
dll <- list(A = load_copy(args[2]), B = load_copy(args[3]))
sym <- function(d, name) getNativeSymbolInfo(name, d)
set.seed(1)
n <- 1e7
k <- 300L
g <- sample(k, n, TRUE)
x <- rnorm(n)
y <- sample(c(-1, 1), k, TRUE)[g] * x + rnorm(n)
tm <- function(e) system.time(e)[["elapsed"]]
run <- function(d) c(
  rank = tm(.Call(sym(d, "C_rank_direction"), x, y, NULL, g, k)),
  rank_ties = tm(.Call(sym(d, "C_rank_direction"), round(x, 1), round(y), NULL, g, k)),
  fit_xy = tm(.Call(sym(d, "C_isoreg_fit"), x, y, NULL, TRUE, -Inf, Inf, pav, FALSE, FALSE)))
for (d in dll) .Call(sym(d, "C_threads"), threads)
res <- list(A = NULL, B = NULL)
for (i in 1:7) for (w in if (i %% 2) c("A", "B") else c("B", "A")) {
  gc()
  res[[w]] <- rbind(res[[w]], run(dll[[w]]))
}
a <- apply(res$A, 2, min)
b <- apply(res$B, 2, min)
print(rbind(A = a, B = b, ratio = b / a), digits = 3)
stopifnot(identical(.Call(sym(dll$A, "C_rank_direction"), x, y, NULL, g, k),
                    .Call(sym(dll$B, "C_rank_direction"), x, y, NULL, g, k)))

# gpuiso beside the isotonic regression of other R packages on the same data, from 10 elements
# (where the cost of a call is most of the time) to 1e6: Iso::pava (weighted; its time grows
# about with n^2 on noise, so it runs up to 1e4) and stats::isoreg (unweighted), on x = 1..n; and
# stats::isoreg(x, y) on x in random order (distinct values: stats::isoreg does not pool ties),
# which both sort. Noise family. Medians from bench::mark, each reference as a multiple of
# gpuiso's time on the same problem (above 1: gpuiso is faster).
# Run: Rscript tools/bench/packages.R
suppressMessages(library(gpuiso))
source(file.path("tools", "bench", "common.R"))
bench_header("gpuiso beside other R packages, noise family")
median_s <- function(expr, iterations, env = parent.frame()) {
  call <- bquote(bench::mark(.(substitute(expr)), iterations = .(iterations), check = FALSE,
                             filter_gc = FALSE))
  as.numeric(eval(call, env)$median)
}
set.seed(1)
has_iso <- requireNamespace("Iso", quietly = TRUE)
rows <- list()
for (n in c(10, 100, 1e3, 1e4, 1e5, 1e6)) {
  y <- make_family("noise", n)
  w <- stats::runif(n, 0.5, 2)
  x <- sample(n)
  it <- if (n <= 1e3) 2000 else if (n <= 1e4) 200 else if (n <= 1e5) 20 else 5
  g_w <- median_s(isoreg_gpu(y, w = w), it)
  g_u <- median_s(isoreg_gpu(y), it)
  g_x <- median_s(isoreg_gpu(x, y), it)
  pava <- if (n <= 1e4 && has_iso) median_s(Iso::pava(y, w), max(3, it %/% 10)) else NA
  iso <- median_s(stats::isoreg(y), it)
  iso_x <- median_s(stats::isoreg(x, y), it)
  rows[[length(rows) + 1]] <- data.frame(
    n = n, gpuiso_weighted_us = signif(g_w * 1e6, 3), Iso_pava_over_gpuiso = signif(pava / g_w, 3),
    gpuiso_us = signif(g_u * 1e6, 3), stats_isoreg_over_gpuiso = signif(iso / g_u, 3),
    gpuiso_x_us = signif(g_x * 1e6, 3), stats_isoreg_x_over_gpuiso = signif(iso_x / g_x, 3))
}
print(do.call(rbind, rows), row.names = FALSE)

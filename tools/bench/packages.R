# gpuiso beside the isotonic regression of other R packages on the same data: Iso::pava (weighted,
# its time grows about with n^2 on noise) and stats::isoreg (unweighted), at sizes where they
# finish in seconds. Noise family, x = 1..n. Medians from bench::mark.
# Run: Rscript tools/bench/packages.R
suppressMessages(library(gpuiso))
source(file.path("tools", "bench", "common.R"))
bench_header("gpuiso beside other R packages, noise family, x = 1..n")
median_s <- function(expr, iterations, env = parent.frame()) {
  call <- bquote(bench::mark(.(substitute(expr)), iterations = .(iterations), check = FALSE,
                             filter_gc = FALSE))
  as.numeric(eval(call, env)$median)
}
set.seed(1)
rows <- list()
for (n in c(1e3, 1e4, 1e5, 1e6)) {
  y <- make_family("noise", n)
  w <- stats::runif(n, 0.5, 2)
  it <- if (n <= 1e4) 50 else 5
  t <- c(gpuiso_weighted = median_s(isoreg_gpu(y, w = w), it),
         gpuiso_unweighted = median_s(isoreg_gpu(y), it),
         stats_isoreg_unweighted = median_s(stats::isoreg(y), it),
         Iso_pava_weighted = if (n <= 3e4 && requireNamespace("Iso", quietly = TRUE))
           median_s(Iso::pava(y, w), 3) else NA)
  rows[[length(rows) + 1]] <- data.frame(n = n, engine = names(t), median_s = signif(t, 3),
                                         over_gpuiso_weighted = round(t / t[["gpuiso_weighted"]], 1))
}
print(do.call(rbind, rows), row.names = FALSE)

# Accuracy of the CPU engines against the exact reference of the tests (tests/testthat/
# helper-exact.R, Rmpfr): per family, the share of random rows whose deviation
# max |z - z*| / (1 + |z*|) exceeds 1e-10, the largest deviation, and the rows whose hull fit
# steps against its direction. ROWS rows per family (100), CHUNK the hull's chunk size (0: its
# default; 4 puts merge levels into rows of 20).
# Run: Rscript tools/bench/precision.R
suppressMessages(library(gpuiso))
source(file.path("tests", "testthat", "helper-reference.R"))
source(file.path("tests", "testthat", "helper-exact.R"))
rows <- as.integer(Sys.getenv("ROWS", "100"))
chunk <- as.integer(Sys.getenv("CHUNK", "0"))
if (chunk > 0) options(gpuiso.hull_chunk = chunk)
res <- NULL
for (span in c(15, 30)) for (f in precision_families) {
  if (span == 15 && !grepl("wide", f)) next
  set.seed(11)
  bad <- c(hull = 0, pav = 0); mx <- c(hull = 0, pav = 0); down <- 0
  for (r in seq_len(rows)) {
    n <- if (f == "cancellation") 128L else 20L
    d <- gen_precision(f, n, span); inc <- r %% 2 == 1
    ex <- ref_pav_exact(d$y, d$w, inc)
    for (m in c("hull", "pav")) {
      z <- isoreg_gpu(d$y, w = d$w, increasing = inc, method = m)$fitted
      e <- deviation(z, ex); mx[m] <- max(mx[m], e); bad[m] <- bad[m] + (e > 1e-10)
      if (m == "hull") down <- down + any(if (inc) diff(z) < 0 else diff(z) > 0)
    }
  }
  res <- rbind(res, data.frame(family = f, span = if (grepl("wide", f)) span else NA,
    hull_bad = bad[["hull"]] / rows, hull_max = mx[["hull"]], pav_bad = bad[["pav"]] / rows,
    pav_max = mx[["pav"]], hull_down = down))
}
print(res, digits = 3, row.names = FALSE)

# Peak resident memory of one fit of 1e7 weighted elements (x = 1..n), per family, against the
# bytes of y, by the engine GPUISO_BENCH_METHOD ("pav", the default, or "hull"). Each fit runs in a fresh R process; the kernel's peak counter (VmHWM) is reset just
# before the fit, so the peak is that of the process while it fits: R itself, y, w, the result
# and the work arrays. Linux only. Run: Rscript tools/bench/memory.R
n <- as.numeric(Sys.getenv("GPUISO_BENCH_N", "1e7"))
method <- Sys.getenv("GPUISO_BENCH_METHOD", "pav")
source(file.path("tools", "bench", "common.R"))
suppressMessages(library(gpuiso))
bench_header(sprintf("peak memory of one fit, n = %g, weighted, method %s", n, method))
child <- function(family, n) {
  code <- sprintf('
    suppressMessages(library(gpuiso)); source(file.path("tools", "bench", "common.R"))
    rss <- function(f) as.numeric(sub("kB", "", sub(paste0(f, ":"), "", grep(paste0("^", f), readLines("/proc/self/status"), value = TRUE)))) / 1024
    set.seed(1); y <- make_family("%s", %g); w <- stats::runif(%g, 0.5, 2); invisible(gc())
    writeLines("5", "/proc/self/clear_refs")
    before <- rss("VmRSS")
    fit <- isoreg_gpu(y, w = w, method = "%s")
    cat(before, rss("VmHWM"), length(fit$block_start), "\n")', family, n, n, method)
  as.numeric(strsplit(system2("Rscript", c("-e", shQuote(code)), stdout = TRUE), " ")[[1]])
}
res <- t(sapply(families, child, n = n))
y_mb <- 8 * n / 2^20
print(data.frame(family = families, rss_before_MB = round(res[, 1]), peak_MB = round(res[, 2]),
                 blocks = res[, 3], peak_over_y_bytes = round(res[, 2] / y_mb, 2)), row.names = FALSE)

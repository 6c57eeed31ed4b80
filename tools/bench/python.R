# gpuiso beside scikit-learn's isotonic regression (Debian's python3-sklearn, through
# /usr/bin/python3 or GPUISO_BENCH_PYTHON) on the same weighted data: x = 1..n
# (sklearn.isotonic.isotonic_regression against isoreg_gpu(y, w = w)) and unsorted x with ties
# (IsotonicRegression().fit(x, y, w).predict(x) against isoreg_gpu(x, y, w), both sorting x and
# pooling its ties). gpuiso on one thread and on all of gpuiso_threads(); scikit-learn has one.
# Medians of the runs (fits under 1e6 repeated within a run); the fits are compared (largest
# difference relative to 1 + |fit|).
# Run: Rscript tools/bench/python.R   (GPUISO_BENCH_REPS sets the runs, 5 by default)
suppressMessages(library(gpuiso))
source(file.path("tools", "bench", "common.R"))
python <- Sys.getenv("GPUISO_BENCH_PYTHON", "/usr/bin/python3")
if (!file.exists(python) ||
    system2(python, c("-c", shQuote("import sklearn")), stdout = FALSE, stderr = FALSE) != 0) {
  stop("scikit-learn is not available to ", python, " (Debian: apt-get install python3-sklearn)")
}
script <- file.path("tools", "bench", "python_isotonic.py")
reps <- as.integer(Sys.getenv("GPUISO_BENCH_REPS", "5"))
threads <- gpuiso_threads()
bench_header("gpuiso beside scikit-learn's isotonic regression, weighted")

sklearn_time <- function(x, y, w, kind) {
  path <- tempfile(fileext = ".bin")
  on.exit(unlink(c(path, paste0(path, ".fit"))))
  writeBin(c(x, y, w), path, endian = "little")
  out <- system2(python, c(script, path, format(length(y), scientific = FALSE), reps, kind),
                 stdout = TRUE)
  fields <- strsplit(out[length(out)], " ")[[1]]
  fit <- readBin(paste0(path, ".fit"), "double", length(y), endian = "little")
  list(seconds = as.numeric(fields[1]), version = fields[2], fit = fit)
}

set.seed(1)
rows <- list()
for (kind in c("sorted", "unsorted")) {
  for (family in c("noise", "increasing")) {
    for (n in c(1e4, 1e5, 1e6, 1e7)) {
      y <- make_family(family, n)
      w <- stats::runif(n, 0.5, 2)
      x <- if (kind == "sorted") as.double(seq_len(n)) else round(stats::runif(n) * n / 4)
      fit_gpuiso <- if (kind == "sorted") {
        function(k) { gpuiso_threads(k); isoreg_gpu(y, w = w, device = "cpu") }
      } else {
        function(k) { gpuiso_threads(k); isoreg_gpu(x, y, w, device = "cpu") }
      }
      # small fits repeated, for times well above the clock's millisecond
      loops <- max(1, 1e6 / n)
      runs <- list(one = quote(for (i in seq_len(loops)) fit_gpuiso(1)),
                   all = quote(for (i in seq_len(loops)) fit_gpuiso(threads)))
      t <- time_turns(runs, reps) / loops
      gpuiso_threads(threads)
      sk <- sklearn_time(x, y, w, kind)
      ours <- fitted(fit_gpuiso(threads))
      rows[[length(rows) + 1L]] <- data.frame(
        x = kind, family = family, n = n, sklearn_s = signif(sk$seconds, 3),
        gpuiso_1_thread_s = signif(t[["one"]], 3), gpuiso_all_s = signif(t[["all"]], 3),
        sklearn_over_1_thread = round(sk$seconds / t[["one"]], 1),
        sklearn_over_all = round(sk$seconds / t[["all"]], 1),
        fits_differ = signif(max(abs(ours - sk$fit) / (1 + abs(ours))), 2))
    }
  }
}
cat(sprintf("# scikit-learn %s; gpuiso on 1 and %d threads; medians of %d runs\n", sk$version,
            threads, reps))
print(do.call(rbind, rows), row.names = FALSE)

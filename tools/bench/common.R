# Shared by the benchmark scripts: data families and timing.
#
# Families of the paper's section 7.1: noise, a ramp from 0 to 3 plus standard normal noise;
# increasing, strictly increasing; sawtooth, ramps that fall back every `period` elements; cliff,
# increasing values and then one far below.
make_family <- function(family, n, period = 1000) {
  i <- seq_len(n)
  switch(family,
    noise = 3 * (i - 1) / max(n - 1, 1) + stats::rnorm(n),
    increasing = i / n + cumsum(stats::runif(n, 1e-3, 1e-2)),
    sawtooth = ((i - 1) %% period) / period + 1e-3 * stats::rnorm(n),
    cliff = c(i[-n] / n, -10),
    stop("unknown family ", family)
  )
}
families <- c("noise", "increasing", "sawtooth", "cliff")

# Median elapsed seconds of each expression, run in turns (a, b, a, b, ...) so that both see the
# same state of the machine; a garbage collection before every run.
time_turns <- function(exprs, reps = 7, env = parent.frame()) {
  times <- matrix(NA_real_, reps, length(exprs), dimnames = list(NULL, names(exprs)))
  for (r in seq_len(reps)) {
    for (j in seq_along(exprs)) {
      gc(FALSE)
      times[r, j] <- system.time(eval(exprs[[j]], env))[["elapsed"]]
    }
  }
  apply(times, 2, stats::median)
}

bench_header <- function(title) {
  commit <- tryCatch(system("git rev-parse --short HEAD", intern = TRUE), error = function(e) "?")
  cat(sprintf("# %s\n# %s, R %s, %d cores, gpuiso %s, commit %s, threads %d\n", title,
              format(Sys.time(), "%Y-%m-%d %H:%M"), getRversion(), parallel::detectCores(),
              utils::packageVersion("gpuiso"), commit, gpuiso::gpuiso_threads()))
}

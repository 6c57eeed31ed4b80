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
# same state of the machine; a garbage collection before every run. The medians of the CPU
# seconds (user and system, of all threads) come as the attribute "cpu": on a machine that other
# work shares, they tell what the elapsed time would be on an idle one for one thread.
time_turns <- function(exprs, reps = 7, env = parent.frame()) {
  times <- cpu <- matrix(NA_real_, reps, length(exprs), dimnames = list(NULL, names(exprs)))
  for (r in seq_len(reps)) {
    for (j in seq_along(exprs)) {
      gc(FALSE)
      s <- system.time(eval(exprs[[j]], env))
      times[r, j] <- s[["elapsed"]]
      cpu[r, j] <- s[["user.self"]] + s[["sys.self"]]
    }
  }
  structure(apply(times, 2, stats::median), cpu = apply(cpu, 2, stats::median))
}

bench_header <- function(title) {
  commit <- tryCatch(system("git rev-parse --short HEAD", intern = TRUE), error = function(e) "?")
  cat(sprintf("# %s\n# %s, R %s, %d cores, gpuiso %s, commit %s, threads %d\n", title,
              format(Sys.time(), "%Y-%m-%d %H:%M"), getRversion(), parallel::detectCores(),
              utils::packageVersion("gpuiso"), commit, gpuiso::gpuiso_threads()))
}

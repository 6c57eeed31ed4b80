# Data families of the paper's section 7.1, shared by the benchmark scripts.
# noise: a ramp from 0 to 3 plus standard normal noise; increasing: strictly increasing;
# sawtooth: ramps that fall back every `period` elements; cliff: increasing, then one far below.
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

# Independent reference implementations and data generators for the tests.
# Nothing here calls gpuiso: these are plain R, written to be obviously correct.

# ---- Reference weighted PAV ---------------------------------------------------------------------
# Textbook stack algorithm on block sums, for a non-decreasing fit of y (in the given order) with
# positive weights w. A new element starts a block; while the block below has a mean >= the top
# block's mean, the two are merged (so neighbouring blocks never share a level). Returns the list
# (fitted, start) where start is the logical vector marking the first element of each block.
ref_pav_pos <- function(y, w) {
  n <- length(y)
  S <- numeric(n)   # weighted sum of y in each stacked block
  W <- numeric(n)   # summed weight of each stacked block
  cnt <- integer(n) # number of elements in each stacked block
  k <- 0L
  for (i in seq_len(n)) {
    k <- k + 1L
    S[k] <- w[i] * y[i]
    W[k] <- w[i]
    cnt[k] <- 1L
    while (k > 1L && S[k - 1L] / W[k - 1L] >= S[k] / W[k]) {
      S[k - 1L] <- S[k - 1L] + S[k]
      W[k - 1L] <- W[k - 1L] + W[k]
      cnt[k - 1L] <- cnt[k - 1L] + cnt[k]
      k <- k - 1L
    }
  }
  size <- cnt[seq_len(k)]
  level <- S[seq_len(k)] / W[seq_len(k)]
  start <- logical(n)
  start[cumsum(c(1L, size))[seq_len(k)]] <- TRUE
  list(fitted = rep(level, size), start = start)
}

# Weighted PAV in the given order (x = 1..n), either direction, with the documented zero-weight
# rule: an element of weight 0 does not influence the fit and takes the level of the nearest
# positive-weight element on its left (the first block's level when there is none).
ref_pav <- function(y, w = NULL, increasing = TRUE) {
  n <- length(y)
  if (is.null(w)) w <- rep(1, n)
  pos <- which(w > 0)
  stopifnot(length(pos) > 0)
  yy <- if (increasing) y[pos] else -y[pos]
  f <- ref_pav_pos(yy, w[pos])$fitted
  if (!increasing) f <- -f
  # zero-weight elements: level of the last positive-weight element at or before them
  idx <- findInterval(seq_len(n), pos)   # index into pos of the last positive <= i (0 if none)
  idx[idx == 0L] <- 1L
  f[idx]
}

# Fit of y on x (any order, ties pooled by weighted mean, weights summed), fitted values in input
# order. x = NULL means x = 1..n.
ref_isoreg <- function(x, y, w = NULL, increasing = TRUE) {
  n <- length(y)
  if (is.null(w)) w <- rep(1, n)
  if (is.null(x)) return(ref_pav(y, w, increasing))
  ux <- sort(unique(x))                # -0 and 0 are one value for unique()
  k <- match(x, ux)                    # knot of every element
  Wk <- as.vector(tapply(w, factor(k, levels = seq_along(ux)), sum))
  Sk <- as.vector(tapply(w * y, factor(k, levels = seq_along(ux)), sum))
  yk <- ifelse(Wk > 0, Sk / Wk, 0)     # value of a zero-weight knot is irrelevant
  lev <- ref_pav(yk, Wk, increasing)
  lev[k]
}

# The knots / levels of ref_isoreg (for checks of fit$knots and fit$level).
ref_knots <- function(x, y, w = NULL, increasing = TRUE) {
  n <- length(y)
  if (is.null(w)) w <- rep(1, n)
  if (is.null(x)) x <- seq_len(n)
  ux <- sort(unique(x))
  k <- match(x, ux)
  Wk <- as.vector(tapply(w, factor(k, levels = seq_along(ux)), sum))
  Sk <- as.vector(tapply(w * y, factor(k, levels = seq_along(ux)), sum))
  yk <- ifelse(Wk > 0, Sk / Wk, 0)
  list(knots = ux, weight = Wk, level = ref_pav(yk, Wk, increasing))
}

# Min-max formula (tiny n only, O(n^3)): fit_i = max_{s <= i} min_{t >= i} mean_w(y[s..t]).
# Positive weights. Used to check ref_pav itself.
ref_minmax <- function(y, w = rep(1, length(y))) {
  n <- length(y)
  avg <- function(s, t) sum(w[s:t] * y[s:t]) / sum(w[s:t])
  vapply(seq_len(n), function(i) {
    max(vapply(seq_len(i), function(s) min(vapply(i:n, function(t) avg(s, t), 0)), 0))
  }, 0)
}

# ---- Data generators (paper, section 7.1) ------------------------------------------------------
families <- c("noise", "increasing", "sawtooth", "cliff")

gen_y <- function(family, n) {
  switch(family,
    # a ramp from 0 to 3 plus standard normal noise
    noise = seq(0, 3, length.out = n) + stats::rnorm(n),
    # strictly increasing
    increasing = cumsum(stats::runif(n, 0.01, 1)),
    # several ramps that drop back, with a little noise
    sawtooth = {
      pmax <- max(2L, min(64L, n %/% 2L))
      p <- if (pmax == 2L) 2L else sample(2:pmax, 1L)   # (sample(2:2, 1) would draw from 1:2)
      ((seq_len(n) - 1) %% p) / p + stats::rnorm(n, sd = 0.05)
    },
    # increasing values followed by one value far below
    cliff = if (n == 1L) 0 else c(cumsum(stats::runif(n - 1L, 0.01, 1)), -10 * n),
    stop("unknown family ", family)
  )
}

# The paper's stress families (section 7.6) beside the four data families.
gen_stress <- function(kind, n) {
  i <- seq_len(n)
  switch(kind,
    cancellation = { r <- (i - 1) %% 64; ifelse(r < 32, 1e6, ifelse(r == 32, -32e6, 1e-3 * r + 1e-9 * stats::runif(n))) },
    ulp = 1 + (i - 1) * .Machine$double.eps,
    collinear = 1 + 2 * i,
    stop("unknown kind ", kind))
}

weight_kinds <- c("none", "uniform", "extreme")

gen_w <- function(kind, n) {
  switch(kind,
    none = NULL,
    uniform = stats::runif(n, 0.01, 1),
    extreme = exp(stats::runif(n, -8, 8)),
    stop("unknown weight kind ", kind)
  )
}

x_kinds <- c("none", "perm", "ties", "real", "sorted")

gen_x <- function(kind, n) {
  switch(kind,
    none = NULL,                                             # x = 1..n
    perm = as.numeric(sample.int(n)),                        # distinct, random order
    ties = sample(seq_len(max(1L, n %/% 3L)), n, replace = TRUE) / 4,  # repeated values
    real = stats::runif(n, -5, 5),                           # distinct (a.s.), random order
    sorted = sort(stats::runif(n, -5, 5)),                   # strictly increasing x given
    stop("unknown x kind ", kind)
  )
}

# Call isoreg_gpu with or without x.
fit_gpu <- function(x, y, w = NULL, increasing = TRUE, ...) {
  if (is.null(x)) isoreg_gpu(y, w = w, increasing = increasing, ...)
  else isoreg_gpu(x, y, w = w, increasing = increasing, ...)
}

# A true copy of a vector (not just a new binding to the same memory), for in-place checks.
deep_copy <- function(v) unserialize(serialize(v, NULL))

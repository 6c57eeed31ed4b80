# Brute-force IDR reference: for each threshold, the antitonic PAV (ref_pav on the pooled
# indicator means, decreasing) written in plain R. Returns the (distinct x) x (thresholds) matrix.
ref_idr <- function(y, x, w = rep(1, length(y))) {
  keep <- w > 0
  y <- y[keep]; x <- x[keep]; w <- w[keep]
  xs <- sort(unique(x))
  thr <- sort(unique(y))
  pos <- match(x, xs)
  W <- as.vector(tapply(w, factor(pos, seq_along(xs)), sum))
  cdf <- vapply(thr, function(t) {
    mean_ind <- as.vector(tapply(w * (y <= t), factor(pos, seq_along(xs)), sum)) / W
    ref_pav(mean_ind, W, increasing = FALSE)
  }, numeric(length(xs)))
  matrix(cdf, nrow = length(xs))
}

# The predictive CDF of a prediction at x from the reference matrix (rows: distinct x): linear
# interpolation between neighbours, nearest outside.
ref_idr_predict <- function(cdf, xs, x) {
  t(vapply(x, function(v) {
    if (v <= xs[1L]) return(cdf[1L, ])
    if (v >= xs[length(xs)]) return(cdf[length(xs), ])
    i <- findInterval(v, xs)
    lam <- (v - xs[i]) / (xs[i + 1L] - xs[i])
    (1 - lam) * cdf[i, ] + lam * cdf[i + 1L, ]
  }, numeric(ncol(cdf))))
}

# CRPS of a step CDF (values p at increasing points thr, 1 at the last) against y, by the formula
# over its masses (Jordan, Krueger and Lerch 2019) - independent of the integral the package uses.
ref_crps <- function(p, thr, y) {
  mass <- diff(c(0, p))
  2 * sum(mass * ((y < thr) - p + mass / 2) * (thr - y))
}

gen_idr_data <- function(n, ties_x = FALSE, ties_y = FALSE, weighted = FALSE) {
  x <- if (ties_x) sample(round(seq(0, 1, length.out = max(2, n %/% 4)), 3), n, TRUE) else runif(n)
  y <- rgamma(n, shape = 2 + 5 * x)
  if (ties_y) y <- round(y)
  w <- if (weighted) sample(c(0.25, 0.5, 1, 2, 3.5), n, TRUE) else rep(1, n)
  list(x = x, y = y, w = w)
}

# Unweighted IDR in exact arithmetic: per threshold, the antitonic PAV of the counts of y <= t at
# each distinct x, with each block held as its integer count and size and levels compared by
# cross-multiplying. Returns list(count, size): (distinct x) x (thresholds) matrices whose ratio
# is the exact CDF.
ref_idr_counts <- function(y, x) {
  xs <- sort(unique(x))
  pos <- match(x, xs)
  size <- tabulate(pos, length(xs))
  blocks <- lapply(sort(unique(y)), function(t) {
    count <- tabulate(pos[y <= t], length(xs))
    bc <- bs <- bn <- numeric(0)
    for (j in seq_along(xs)) {
      bc <- c(bc, count[j]); bs <- c(bs, size[j]); bn <- c(bn, 1)
      while ((m <- length(bc)) > 1 && bc[m - 1] * bs[m] < bc[m] * bs[m - 1]) {
        bc[m - 1] <- bc[m - 1] + bc[m]; bs[m - 1] <- bs[m - 1] + bs[m]; bn[m - 1] <- bn[m - 1] + bn[m]
        bc <- bc[-m]; bs <- bs[-m]; bn <- bn[-m]
      }
    }
    cbind(rep(bc, bn), rep(bs, bn))
  })
  part <- function(k) matrix(vapply(blocks, function(b) b[, k], numeric(length(xs))), length(xs))
  list(count = part(1L), size = part(2L))
}

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

# ---- Several covariates: brute force on small posets -------------------------------------

# leq[i, j]: point i <= point j componentwise (rows of the matrix P).
ref_leq <- function(P) {
  m <- nrow(P)
  outer(seq_len(m), seq_len(m), Vectorize(function(i, j) all(P[i, ] <= P[j, ])))
}

# The lower sets (closed under going down) and upper sets of the order leq, as logical
# matrices with one row per set (every subset enumerated: m <= 12).
ref_closed_sets <- function(leq) {
  m <- nrow(leq)
  sets <- as.matrix(expand.grid(rep(list(c(FALSE, TRUE)), m)))[-1L, , drop = FALSE]
  down <- apply(sets, 1L, function(s) all(!(leq[, s, drop = FALSE] & !s)))
  up <- apply(sets, 1L, function(s) all(!(t(leq[s, , drop = FALSE]) & !s)))
  list(lower = sets[down, , drop = FALSE], upper = sets[up, , drop = FALSE])
}

# The antitonic least-squares fit of z with weights W by the min-max formula (Robertson, Wright
# and Dykstra 1988, Theorem 1.4.4, with the order reversed): f(x) = max over lower sets L that
# hold x of min over upper sets U that hold x of the weighted mean of z on L and U.
ref_poset_antitonic <- function(z, W, sets) {
  m <- length(z)
  vapply(seq_len(m), function(x) {
    L <- sets$lower[sets$lower[, x], , drop = FALSE]
    U <- sets$upper[sets$upper[, x], , drop = FALSE]
    sw <- L %*% (W * t(U)) # sums over the intersections, lower sets by upper sets
    swz <- L %*% ((W * z) * t(U))
    max(apply(swz / sw, 1L, min))
  }, 0)
}

# Brute-force IDR on the distinct rows of the covariate matrix V: a matrix with one row per
# observation (its fitted CDF) and one column per threshold.
ref_idr_poset <- function(y, V, w = rep(1, length(y))) {
  key <- apply(V, 1L, function(r) paste(sprintf("%a", r), collapse = " "))
  ukey <- unique(key)
  P <- V[match(ukey, key), , drop = FALSE]
  pos <- match(key, ukey)
  sets <- ref_closed_sets(ref_leq(P))
  W <- as.vector(tapply(w, factor(pos, seq_along(ukey)), sum))
  thr <- sort(unique(y))
  cdf <- vapply(thr, function(t) {
    z <- as.vector(tapply(w * (y <= t), factor(pos, seq_along(ukey)), sum)) / W
    ref_poset_antitonic(z, W, sets)
  }, numeric(nrow(P)))
  matrix(cdf, nrow = nrow(P))[pos, , drop = FALSE]
}

# The KKT conditions of the antitonic least-squares fit f of z (weights W) on the poset with
# lower sets sets$lower: the largest violation of (a) the residuals summing to zero on each level
# set of f, (b) sum over every lower set of W (z - f) <= 0.
ref_kkt_violation <- function(z, W, f, sets) {
  r <- W * (z - f)
  level <- tapply(r, factor(f), sum)
  lower <- as.vector(sets$lower %*% r)
  max(abs(level), pmax(lower, 0))
}

gen_poset_data <- function(n, d, levels = 3, ties_y = TRUE) {
  V <- matrix(sample(seq_len(levels), n * d, replace = TRUE), n, d)
  y <- rowSums(V) + stats::rnorm(n)
  if (ties_y) y <- round(y)
  X <- as.data.frame(V)
  names(X) <- paste0("x", seq_len(d))
  list(X = X, V = V, y = y)
}

# IDR against the brute-force reference (per-threshold antitonic PAV in plain R, and Iso::pava),
# and the properties every IDR fit has.

tol <- 1e-12

test_that("IDR equals per-threshold antitonic PAV on random data", {
  set.seed(11)
  for (ties_x in c(FALSE, TRUE)) for (ties_y in c(FALSE, TRUE)) for (weighted in c(FALSE, TRUE)) {
    for (n in c(1, 2, 7, 60, 400)) {
      d <- gen_idr_data(n, ties_x, ties_y, weighted)
      fit <- idr(d$y, data.frame(x = d$x), weights = if (weighted) d$w)
      expect_equal(unname(as.matrix(fit)), unname(ref_idr(d$y, d$x, d$w)), tolerance = tol,
                   info = sprintf("n=%d ties_x=%s ties_y=%s weighted=%s", n, ties_x, ties_y, weighted))
    }
  }
})

test_that("IDR equals Iso::pava per threshold", {
  skip_if_not_installed("Iso")
  set.seed(12)
  d <- gen_idr_data(300, ties_x = TRUE, ties_y = TRUE)
  fit <- idr(d$y, d$x)
  xs <- sort(unique(d$x))
  pos <- match(d$x, xs)
  W <- tabulate(pos, length(xs))
  ref <- sapply(fit$thresholds, function(t) {
    Iso::pava(tabulate(pos[d$y <= t], length(xs)) / W, W, decreasing = TRUE)
  })
  expect_equal(unname(as.matrix(fit)), ref, tolerance = tol)
})

test_that("many thresholds split over threads give the same fit", {
  set.seed(13)
  d <- gen_idr_data(3000, ties_x = TRUE, weighted = TRUE)
  old <- gpuiso_threads(1)
  on.exit(gpuiso_threads(old))
  one <- as.matrix(idr(d$y, d$x, weights = d$w))
  gpuiso_threads(2)
  two <- as.matrix(idr(d$y, d$x, weights = d$w))
  expect_equal(two, one, tolerance = tol)
  expect_equal(unname(one), unname(ref_idr(d$y, d$x, d$w)), tolerance = tol)
})

test_that("every IDR fit has the properties of conditional CDFs", {
  set.seed(14)
  d <- gen_idr_data(500, ties_x = TRUE, ties_y = TRUE, weighted = TRUE)
  fit <- idr(d$y, d$x, weights = d$w)
  cdf <- as.matrix(fit)
  expect_true(all(cdf >= 0 & cdf <= 1))
  expect_true(all(cdf[, ncol(cdf)] == 1))
  expect_true(all(apply(cdf, 1, diff) >= 0))  # non-decreasing in t
  expect_true(all(apply(cdf, 2, diff) <= 0))  # non-increasing in x
  # weighted counts of y <= t are preserved
  count <- sapply(fit$thresholds, function(t) sum(d$w * (d$y <= t)))
  expect_equal(unname(colSums(fit$weights * cdf)), count, tolerance = 1e-10)
  # the order of the observations does not matter
  o <- sample(length(d$y))
  expect_equal(as.matrix(idr(d$y[o], d$x[o], weights = d$w[o])), cdf, tolerance = tol)
  # integer weights equal replicated observations
  k <- sample(1:3, length(d$y), TRUE)
  rep_fit <- idr(rep(d$y, k), rep(d$x, k))
  expect_equal(as.matrix(idr(d$y, d$x, weights = k)), as.matrix(rep_fit), tolerance = tol)
})

test_that("zero weights leave the fit alone but get in-sample predictions", {
  set.seed(15)
  d <- gen_idr_data(80, weighted = TRUE)
  d$w[c(3, 10)] <- 0
  fit <- idr(d$y, d$x, weights = d$w)
  keep <- d$w > 0
  expect_equal(as.matrix(fit), as.matrix(idr(d$y[keep], d$x[keep], weights = d$w[keep])))
  pred <- predict(fit)
  expect_length(pred, 80L)
  expect_equal(cdf(pred[3], fit$thresholds), cdf(predict(fit, d$x[3]), fit$thresholds))
})

test_that("ordered factors are covariates in the order of their levels", {
  lev <- c("low", "mid", "high")
  x <- factor(c("high", "low", "mid", "mid", "low"), lev, ordered = TRUE)
  y <- c(9, 1, 4, 6, 2)
  fit <- idr(y, data.frame(level = x))
  expect_equal(unname(as.matrix(fit)), unname(ref_idr(y, as.integer(x))), tolerance = tol)
  expect_equal(fit$X$level, factor(lev, lev, ordered = TRUE))
  pred <- predict(fit, data.frame(level = factor("mid", lev, ordered = TRUE)))
  expect_equal(cdf(pred, fit$thresholds), cdf(predict(fit)[3], fit$thresholds))
})

test_that("weights over many orders of magnitude, and huge ones, fit as the reference does", {
  y <- c(1, 5, 6, 2, 7, 8)
  w <- c(1e20, 1, 1, 1, 1, 1)
  expect_equal(unname(as.matrix(idr(y, 1:6, weights = w))), ref_idr(y, 1:6, w), tolerance = tol)
  w <- c(1e8, rep(1e-8, 5))
  expect_equal(unname(as.matrix(idr(y, 1:6, weights = w))), ref_idr(y, 1:6, w), tolerance = tol)
  fit <- idr(c(1, 2, 3, 4), c(1, 1, 2, 2), weights = c(1e308, 1e308, 1, 1))
  expect_true(all(is.finite(as.matrix(fit))))
  expect_equal(unname(as.matrix(fit)), ref_idr(c(1, 2, 3, 4), c(1, 1, 2, 2), c(1, 1, 1e-308, 1e-308)),
               tolerance = tol)
  set.seed(16)
  x <- runif(40)
  y <- rnorm(40)
  w <- c(rep(1e9, 5), runif(35, 0.1, 3))
  expect_equal(unname(as.matrix(idr(y, x, weights = w))), ref_idr(y, x, w), tolerance = tol)
})

test_that("the CDFs never step down in the threshold, not even by rounding", {
  for (seed in 1:6) {
    set.seed(seed)
    n <- 2500
    x <- sample(200, n, TRUE)
    y <- round(rgamma(n, shape = 2 + x / 40), 2)
    w <- runif(n)^3 * 10
    for (threads in 1:2) {
      old <- gpuiso_threads(threads)
      cdf <- as.matrix(idr(y, x, weights = w))
      gpuiso_threads(old)
      expect_true(all(cdf[, -1] >= cdf[, -ncol(cdf)]), info = sprintf("seed %d threads %d", seed, threads))
      expect_true(all(cdf[-1, ] <= cdf[-nrow(cdf), ]), info = sprintf("seed %d threads %d", seed, threads))
    }
  }
})

test_that("real-valued weights of any range give the exact fit (Rmpfr reference)", {
  skip_if_not_installed("Rmpfr")
  # Exp(1) and 10^U(-8, 8) weights: the hull tree on 128-bit integer coordinates; 10^U(-15, 15):
  # past its 2^124 units, the sweep. Continuous x, so each position holds one 0/1 indicator.
  set.seed(41)
  weights <- list(exp = function(n) rexp(n), wide8 = function(n) 10^runif(n, -8, 8),
                  wide15 = function(n) 10^runif(n, -15, 15))
  for (family in names(weights)) for (rep in 1:3) {
    n <- 40
    x <- runif(n)
    y <- round(rgamma(n, shape = 2 + 5 * x), 1)
    w <- weights[[family]](n)
    fit <- idr(y, x, weights = w)
    ord <- order(x)
    exact <- vapply(fit$thresholds, function(t) ref_pav_exact((y[ord] <= t) * 1, w[ord], FALSE),
                    numeric(n))
    expect_lte(deviation(unname(as.matrix(fit)), exact), 4e-16)
  }
})

test_that("the distinct values and ranks of IDR's covariate and thresholds are sort(unique()) and match()", {
  set.seed(13)
  distinct <- function(v) .Call(gpuiso:::C_distinct_codes, v)
  for (n in c(1, 2, 9, 4096, 4097, 2e5)) { # one bucket, then the sort's buckets and threads
    v <- round(rnorm(n), 2)
    if (n > 2) {
      k <- max(2, n %/% 20)
      v[sample(n, k)] <- rep_len(c(-1e300, 5e-324), k)
    }
    v[sample(n, max(1, n %/% 10))] <- -0 # one value with 0
    s <- sort(unique(v))
    got <- distinct(v)
    expect_true(length(got[[1]]) == length(s) && all(got[[1]] == s), info = sprintf("n = %d", n))
    expect_identical(got[[2]], match(v, s) - 1L, info = sprintf("n = %d", n))
  }
  # the fit on a covariate and response with such ties, against the reference
  x <- c(0, -0, 2, 2, -1e300, 5e-324, 0)
  y <- c(1, 3, -0, 0, 2, 2, 1)
  expect_equal(unname(as.matrix(idr(y, x))), unname(ref_idr(y, x)), tolerance = tol)
  expect_identical(idr(y, x)$thresholds, c(0, 1, 2, 3))
})

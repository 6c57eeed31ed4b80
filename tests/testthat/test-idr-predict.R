# IDR predictions and scores against the reference CDFs and independent formulas.

tol <- 1e-12

fixture <- function(seed = 21, n = 300) {
  set.seed(seed)
  d <- gen_idr_data(n, ties_x = TRUE, ties_y = TRUE, weighted = TRUE)
  fit <- idr(d$y, data.frame(x = d$x), weights = d$w)
  list(d = d, fit = fit, ref = ref_idr(d$y, d$x, d$w), xs = sort(unique(d$x)))
}

test_that("out-of-sample CDFs interpolate between the fitted CDFs", {
  f <- fixture()
  newx <- c(-1, f$xs[1], runif(40, -0.1, 1.1), f$xs[length(f$xs)], 2)
  pred <- predict(f$fit, data.frame(x = newx))
  expect_equal(unname(cdf(pred, f$fit$thresholds)), ref_idr_predict(f$ref, f$xs, newx), tolerance = tol)
  # between thresholds the CDF is the value at the threshold below; 0 below the first
  thr <- f$fit$thresholds
  t_new <- c(min(thr) - 1, (thr[-1] + thr[-length(thr)]) / 2, max(thr) + 1)
  expected <- cbind(0, ref_idr_predict(f$ref, f$xs, newx))
  expect_equal(unname(cdf(pred, t_new)), expected, tolerance = tol)
})

test_that("in-sample predictions are the fitted CDFs of each observation", {
  f <- fixture()
  pred <- predict(f$fit)
  expect_length(pred, length(f$d$y))
  expect_equal(unname(cdf(pred, f$fit$thresholds)), f$ref[match(f$d$x, f$xs), ], tolerance = tol)
  one <- pred[[5]]
  row <- f$ref[match(f$d$x[5], f$xs), ]
  jump <- c(row[1] > 0, diff(row) > 0)
  expect_equal(one$points, f$fit$thresholds[jump])
  expect_equal(one$cdf, row[jump], tolerance = tol)
  expect_length(as.list(pred[1:3]), 3L)
})

test_that("quantiles are the smallest thresholds where the CDF reaches the level", {
  f <- fixture()
  newx <- runif(30)
  pred <- predict(f$fit, newx)
  probs <- ref_idr_predict(f$ref, f$xs, newx)
  levels <- c(0, 0.01, 0.1, 0.25, 0.5, 0.9, 0.999, 1)
  # level 0: where the CDF first exceeds 0, the lowest point of the distribution (isodistrreg)
  expected <- sapply(levels, function(a) f$fit$thresholds[apply(if (a > 0) probs >= a else probs > 0, 1, which.max)])
  expect_equal(unname(qpred(pred, levels)), expected)
})

test_that("CRPS equals the mass formula of the step CDF", {
  f <- fixture()
  newx <- runif(25)
  y <- c(rgamma(23, 4), min(f$d$y) - 2, max(f$d$y) + 3)
  probs <- ref_idr_predict(f$ref, f$xs, newx)
  expected <- vapply(seq_along(y), function(i) ref_crps(probs[i, ], f$fit$thresholds, y[i]), 0)
  # few predictions: each looks its values up
  expect_equal(crps(predict(f$fit, newx[1:3]), y[1:3]), expected[1:3], tolerance = 1e-10)
  # more: the thresholds are swept
  expect_equal(crps(predict(f$fit, newx), y), expected, tolerance = 1e-10)
  # many predictions: the values of each threshold are laid out first
  many <- rep(newx, 20)
  expect_equal(crps(predict(f$fit, many), rep(y, 20)), rep(expected, 20), tolerance = 1e-10)
  expect_equal(crps(predict(f$fit, newx), 3), vapply(seq_along(y), function(i)
    ref_crps(probs[i, ], f$fit$thresholds, 3), 0), tolerance = 1e-10)
})

test_that("PIT, Brier and quantile scores follow their definitions", {
  f <- fixture()
  newx <- runif(50)
  pred <- predict(f$fit, newx)
  probs <- ref_idr_predict(f$ref, f$xs, newx)
  thr <- f$fit$thresholds
  y <- sample(c(thr, thr + 0.3), 50, replace = TRUE)
  at <- function(v) vapply(seq_along(v), function(i) {
    k <- findInterval(v[i], thr)
    if (k == 0) 0 else probs[i, k]
  }, 0)
  below <- function(v) vapply(seq_along(v), function(i) {
    k <- sum(thr < v[i])
    if (k == 0) 0 else probs[i, k]
  }, 0)
  expect_equal(pit(pred, y, randomize = FALSE), at(y), tolerance = tol)
  u <- pit(pred, y, seed = 5)
  expect_true(all(u >= below(y) - tol & u <= at(y) + tol))
  expect_equal(pit(pred, y, seed = 5), u)
  jumps <- at(y) > below(y)
  expect_true(length(unique(round(u[jumps] - below(y)[jumps], 12))) > 1)
  # the seed leaves the session's random numbers alone
  set.seed(99); a <- runif(1)
  set.seed(99); pit(pred, y, seed = 1); b <- runif(1)
  expect_equal(a, b)
  # a seed that is not one whole number is an error naming it, whether or not the PIT is randomized,
  # and leaves the state alone (no stray warning of a state half restored)
  for (bad in list("a", NA, NA_real_, 1:2, 1.5, Inf, 2^31, TRUE, list(1))) {
    for (randomize in c(TRUE, FALSE)) {
      set.seed(99)
      expect_no_warning(expect_error(pit(pred, y, randomize = randomize, seed = bad),
                                     "^`seed` must be NULL or a single whole number"))
      expect_equal(runif(1), a)
    }
  }
  if (exists(".Random.seed", envir = globalenv())) rm(".Random.seed", envir = globalenv())
  expect_no_warning(expect_error(pit(pred, y, seed = "a"), "`seed` must be NULL or a single whole number"))
  expect_false(exists(".Random.seed", envir = globalenv()))
  expect_equal(pit(pred, y, seed = 5L), u)
  expect_equal(pit(pred, y, seed = -(2^31 - 1)), pit(pred, y, seed = -.Machine$integer.max))

  tb <- c(2, 5)
  expect_equal(unname(bscore(pred, tb, y)), (unname(cdf(pred, tb)) - outer(y, tb, "<="))^2,
               tolerance = tol)
  lev <- c(0.1, 0.5, 0.9)
  q <- unname(qpred(pred, lev))
  expect_equal(unname(qscore(pred, lev, y)),
               2 * (q - y) * ((q > y) - matrix(lev, 50, 3, byrow = TRUE)), tolerance = tol)
  # the median's quantile score is the absolute error
  expect_equal(as.vector(qscore(pred, 0.5, y)), abs(q[, 2] - y), tolerance = tol)
})

test_that("predictions print, plot, subset and check their arguments", {
  f <- fixture()
  pred <- predict(f$fit, c(0.2, 0.7))
  expect_output(print(pred), "IDR predictions: 2 predictive distributions")
  expect_output(print(f$fit), "Isotonic distributional regression")
  pdf(NULL)
  on.exit(dev.off())
  expect_invisible(plot(pred, 2))
  expect_error(pred[[3]], "`i` must be one index between 1 and 2")
  expect_error(plot(pred, 1000), "`index` must be one index between 1 and 2")
  expect_error(qpred(pred, 1.5), "`quantiles` must be levels between 0 and 1")
  expect_error(crps(pred, 1:3), "`y` must have length 1 or one element per prediction \\(2\\), not 3")
  expect_error(pit(pred, 1), "`y` must have one element per prediction \\(2\\), not 1")
  expect_error(cdf(pred, NA_real_), "`thresholds` must be finite")
  expect_error(predict(f$fit, data.frame(x = "a")), "`data` must be numeric")
  expect_error(predict(f$fit, data.frame(x = NA_real_)), "`data` must not have NA")
})

test_that("in-sample CRPS over many thresholds, split over threads, matches the mass formula", {
  set.seed(22)
  d <- gen_idr_data(2000, weighted = TRUE)
  fit <- idr(d$y, d$x, weights = d$w)
  dense <- as.matrix(fit)
  xs <- sort(unique(d$x))
  cdf <- dense[match(d$x, xs), ]
  expected <- vapply(seq_along(d$y), function(i) ref_crps(cdf[i, ], fit$thresholds, d$y[i]), 0)
  old <- gpuiso_threads(1)
  on.exit(gpuiso_threads(old))
  expect_equal(crps(predict(fit), d$y), expected, tolerance = 1e-10)
  gpuiso_threads(2)
  expect_equal(crps(predict(fit), d$y), expected, tolerance = 1e-10)
  newx <- runif(500)
  expect_equal(crps(predict(fit, newx), d$y[1:500]),
               vapply(1:500, function(i) {
                 ref_crps(ref_idr_predict(dense, xs, newx[i])[1, ],
                          fit$thresholds, d$y[i])
               }, 0),
               tolerance = 1e-10)
})

test_that("long CRPS work is one call that shows a progress bar when asked", {
  set.seed(23)
  n <- 11000 # n times the n thresholds is over 1e8: long work
  x <- runif(n)
  y <- rgamma(n, shape = 2 + 5 * x)
  pred <- predict(idr(y, x))
  old <- options(gpuiso.progress_after = 0, gpuiso.progress = TRUE)
  on.exit(options(old))
  expect_output(all <- crps(pred, y), "100%")
  options(gpuiso.progress = FALSE)
  expect_silent(quiet <- crps(pred, y))
  expect_identical(quiet, all)
  # scored in short pieces, each its own call
  pieces <- split(seq_len(n), rep(1:4, length.out = n))
  by_piece <- double(n)
  for (i in pieces) by_piece[i] <- crps(pred[i], y[i])
  expect_equal(all, by_piece, tolerance = 1e-12)
})

test_that("no predictions give empty results", {
  f <- fixture()
  none <- predict(f$fit, numeric(0))
  expect_length(none, 0L)
  expect_equal(dim(qpred(none, c(0.1, 0.5))), c(0L, 2L))
  expect_equal(dim(cdf(none, c(1, 2))), c(0L, 2L))
  expect_identical(crps(none, numeric(0)), numeric(0))
  expect_identical(pit(none, numeric(0), randomize = FALSE), numeric(0))
})

test_that("new data must have the fit's covariate column, found by its name", {
  aq <- na.omit(airquality[, c("Ozone", "Temp", "Wind")])
  fit <- idr(aq$Ozone, aq[, "Temp", drop = FALSE])
  at_70 <- cdf(predict(fit, 70), fit$thresholds)
  expect_error(predict(fit, data.frame(Wind = 3)),
               "`data` must have the column \"Temp\" \\(the covariate of the fit\\), but has \"Wind\"")
  expect_error(predict(fit, cbind(Wind = 3)), "`data` must have the column \"Temp\".*but has \"Wind\"")
  expect_error(predict(fit, data.frame(a = 1, b = 2)), "but has \"a\", \"b\"")
  expect_error(predict(fit, data.frame()), "but has no columns")
  # other columns are ignored, in any order
  expect_identical(cdf(predict(fit, data.frame(Wind = 3, Temp = 70)), fit$thresholds), at_70)
  expect_identical(cdf(predict(fit, cbind(Wind = 3, Temp = 70)), fit$thresholds), at_70)
  # a fit whose covariate had no name matches new data by position
  unnamed <- idr(aq$Ozone, aq$Temp)
  expect_null(unnamed$covariate$name)
  expect_identical(names(unnamed$X), "x")
  expect_identical(cdf(predict(unnamed, data.frame(Wind = 70)), fit$thresholds), at_70)
  expect_identical(cdf(predict(unnamed, unnamed$X[3, , drop = FALSE]), fit$thresholds),
                   cdf(predict(fit, fit$X$Temp[3]), fit$thresholds))
  expect_error(predict(unnamed, data.frame(a = 1, b = 2)), "`data` must have one covariate, not 2")
})

test_that("infinite new covariate values take the CDF at the nearest fitted value", {
  aq <- na.omit(airquality[, c("Ozone", "Temp")])
  fit <- idr(aq$Ozone, aq["Temp"])
  ends <- cdf(predict(fit, data.frame(Temp = range(aq$Temp))), fit$thresholds)
  expect_identical(cdf(predict(fit, data.frame(Temp = c(-Inf, Inf))), fit$thresholds), ends)
  expect_identical(cdf(predict(fit, data.frame(Temp = c(-Inf, Inf)), interpolation = "none"),
                       fit$thresholds), ends)
  expect_error(predict(fit, data.frame(Temp = c(70, NaN))),
               "`data` must not have NA, but has one at row 2")
  bag <- idrbag(aq$Ozone, aq["Temp"], newdata = data.frame(Temp = c(Inf, max(aq$Temp))),
                b = 3, p = 0.5)
  expect_identical(cdf(bag[1], bag[[2]]$points), cdf(bag[2], bag[[2]]$points))
})

test_that("unknown arguments of predict() are errors that name them", {
  f <- fixture()
  expect_error(predict(f$fit, newdata = data.frame(x = 0.5)),
               paste0("predict\\(\\): unknown argument `newdata`; it takes `object`, `data`, `digits`, ",
                      "`interpolation`; new covariate values go in `data`"))
  expect_error(predict(f$fit, data.frame(x = 0.5), NULL, "linear", 4, type = "cdf"),
               "unknown arguments an unnamed argument, `type`")
})

test_that("digits is refused and interpolation = 'none' takes the mean of the neighbouring CDFs", {
  f <- fixture()
  newx <- c(-1, f$xs[1], runif(30, -0.1, 1.1), f$xs[10], 2)
  expect_error(predict(f$fit, data.frame(x = 0.5), digits = 3),
               "`digits` is not supported: gpuiso's CDFs are exact, so they are not rounded")
  expect_no_error(predict(f$fit, data.frame(x = 0.5), digits = NULL))
  for (bad in list(c("linear", "none"), NA_character_, 1, NULL)) {
    expect_error(predict(f$fit, data.frame(x = 0.5), interpolation = bad),
                 "`interpolation` must be one string: \"linear\", or another such as \"none\"")
  }
  linear <- predict(f$fit, data.frame(x = newx), interpolation = "linear")
  expect_identical(cdf(linear, f$fit$thresholds), cdf(predict(f$fit, data.frame(x = newx)), f$fit$thresholds))
  none <- cdf(predict(f$fit, data.frame(x = newx), interpolation = "none"), f$fit$thresholds)
  # as isodistrreg, any string other than "linear" is the midpoint
  for (other in c("midpoint", "spline")) {
    expect_identical(cdf(predict(f$fit, data.frame(x = newx), interpolation = other), f$fit$thresholds), none)
  }
  # the reference: the mean of the fitted CDFs at the neighbours; the CDF of the nearest outside
  below <- pmax(findInterval(newx, f$xs), 1L)
  above <- pmin(below + (newx > f$xs[below]), length(f$xs))
  expect_equal(unname(none), (f$ref[below, ] + f$ref[above, ]) / 2, tolerance = tol)
  between <- newx > f$xs[1] & newx < f$xs[length(f$xs)] & !newx %in% f$xs
  expect_true(sum(between) > 20 && all(below[between] != above[between]))
  # at a fitted value and outside the range, both give the fitted CDF
  same <- !between
  expect_identical(none[same, ], cdf(linear, f$fit$thresholds)[same, ])
  expect_identical(cdf(predict(f$fit, interpolation = "none"), f$fit$thresholds),
                   cdf(predict(f$fit), f$fit$thresholds))
})

# Raw ensemble forecasts (a data frame, a row per forecast) scored as their empirical CDFs.

test_that("ensemble CDFs, quantiles, CRPS and PIT follow the empirical distribution", {
  set.seed(41)
  ens <- as.data.frame(matrix(round(rnorm(30 * 7), 1), 30, 7))
  y <- round(rnorm(30), 1)
  m <- as.matrix(ens)
  thr <- c(-1, 0, 0.3, 2)
  expect_equal(unname(cdf(ens, thr)), t(apply(m, 1, function(r) stats::ecdf(r)(thr))))
  lev <- c(0, 0.2, 0.5, 3 / 7, 0.9, 1)
  want <- t(apply(m, 1, function(r) {
    s <- sort(r)
    vapply(lev, function(a) s[which(seq_along(s) / length(s) >= a)[1]], 0)
  }))
  expect_equal(unname(qpred(ens, lev)), want)
  # the CRPS of the step CDF of the members, by the mass formula of the tests
  crps_ref <- vapply(seq_len(30), function(i) {
    pts <- sort(unique(m[i, ]))
    ref_crps(stats::ecdf(m[i, ])(pts), pts, y[i])
  }, 0)
  expect_equal(crps(ens, y), crps_ref, tolerance = 1e-12)
  expect_equal(pit(ens, y, randomize = FALSE), rowMeans(m <= y))
  u <- pit(ens, y, seed = 3)
  expect_true(all(u >= rowMeans(m < y) & u <= rowMeans(m <= y)))
  expect_identical(pit(ens, y, seed = 3), u)
  for (bad in list("a", NA, 1:2, 0.5)) {
    expect_no_warning(expect_error(pit(ens, y, seed = bad), "^`seed` must be NULL or a single whole number"))
    expect_error(pit(ens, y, randomize = FALSE, seed = bad), "^`seed` must be NULL or a single whole number")
  }
  expect_equal(unname(bscore(ens, 0, y)), (rowMeans(m <= 0) - (y <= 0))^2, ignore_attr = TRUE)
  expect_error(crps(data.frame(a = c(1, NA)), 1:2), "`predictions` must have finite members")
  expect_error(cdf(data.frame(a = "x"), 1), "`predictions` must be a data frame of numeric columns")
  # a column that holds a matrix is named, not a failed assignment
  mat <- data.frame(a = 1:2, b = I(matrix(1:4, 2)))
  re <- "`predictions` must be a data frame of numeric columns \\(ensemble members\\), but column \"b\" is a matrix"
  expect_error(crps(mat, 1:2), re)
  expect_error(cdf(mat, 1), re)
  expect_error(pit(mat, 1:2), re)
  expect_error(crps(data.frame(a = 1:2, b = factor(c("u", "v"))), 1:2), "but column \"b\" is a factor")
})

# calibration_error(), calibration_bins(), log_loss(), brier_score() and the plots.

test_that("equal-width bins and the ECE match a hand computation", {
  p <- c(0.05, 0.15, 0.12, 0.55, 0.58, 0.95, 1)
  y <- c(0, 0, 1, 1, 0, 1, 1)
  b <- calibration_bins(p, y, bins = 4)
  # bins [0, .25): .05 .15 .12; [.5, .75): .55 .58; [.75, 1]: .95 1
  expect_equal(b$bin, c(1L, 3L, 4L))
  expect_equal(b$n, c(3L, 2L, 2L))
  expect_equal(b$mean_prob, c(0.32 / 3, 0.565, 0.975))
  expect_equal(b$rate, c(1 / 3, 0.5, 1))
  expect_equal(b$lower, c(0, 0.5, 0.75))
  expect_equal(b$upper, c(0.25, 0.75, 1))
  ece <- (3 * abs(0.32 / 3 - 1 / 3) + 2 * abs(0.565 - 0.5) + 2 * abs(0.975 - 1)) / 7
  expect_equal(calibration_error(p, y, bins = 4), ece)
  # a probability on an inner edge goes to the bin above it
  expect_equal(calibration_bins(c(0.25, 0.5), c(0, 1), bins = 4)$bin, c(2L, 3L))
})

test_that("equal-mass bins and the weighted ECE match a hand computation", {
  p <- c(0.1, 0.2, 0.2, 0.4, 0.7, 0.9)
  y <- c(0, 0, 1, 0, 1, 1)
  w <- c(1, 1, 1, 1, 1, 1)
  # cuts at the weighted quantiles 1/3 and 2/3: 0.2 (cumulative weight 3 of 6 reaches 2) and 0.4
  b <- calibration_bins(p, y, bins = 3, binning = "mass")
  expect_equal(b$n, c(3L, 1L, 2L))
  expect_equal(b$upper, c(0.2, 0.4, 0.9))
  expect_equal(b$mean_prob, c(0.5 / 3, 0.4, 0.8))
  expect_equal(b$rate, c(1 / 3, 0, 1))
  # weights move the cuts: the first element alone carries half the weight
  w <- c(5, 1, 1, 1, 1, 1)
  b <- calibration_bins(p, y, bins = 2, weights = w, binning = "mass")
  expect_equal(b$upper, c(0.1, 0.9))
  expect_equal(b$weight, c(5, 5))
  rate2 <- 3 / 5
  mean2 <- (0.2 + 0.2 + 0.4 + 0.7 + 0.9) / 5
  expect_equal(calibration_error(p, y, bins = 2, weights = w, binning = "mass"),
               (5 * 0.1 + 5 * abs(mean2 - rate2)) / 10)
  # ties share a bin, so there may be fewer bins than asked for
  expect_equal(nrow(calibration_bins(rep(0.3, 10), rep(c(0, 1), 5), bins = 5, binning = "mass")), 1L)
})

test_that("a calibrated curve has a small ECE on its own training data", {
  set.seed(21)
  p <- stats::runif(20000)
  y <- as.double(stats::runif(20000) < p^2)
  cal <- calibrate_isotonic(p, y)
  q <- predict(cal, p)
  expect_gt(calibration_error(p, y), 0.1)
  # isotonic fits make each block's mean prediction equal its rate; bins cut few blocks
  expect_lt(calibration_error(q, y, bins = 20, binning = "mass"), 0.01)
})

test_that("log loss and Brier score follow their formulas", {
  p <- c(0.1, 0.8, 0.5, 1, 0)
  y <- c(0, 1, 1, 1, 0)
  w <- c(1, 2, 3, 1, 1)
  expect_equal(brier_score(p, y), mean((p - y)^2))
  expect_equal(brier_score(p, y, weights = w), sum(w * (p - y)^2) / sum(w))
  eps <- 1e-15
  pc <- pmin(pmax(p, eps), 1 - eps)
  expect_equal(log_loss(p, y), -mean(y * log(pc) + (1 - y) * log(1 - pc)))
  expect_equal(log_loss(p, y, weights = w), -sum(w * (y * log(pc) + (1 - y) * log(1 - pc))) / sum(w))
  expect_equal(log_loss(c(0, 1), c(1, 0), eps = 0.01), -log(0.01))
  expect_equal(log_loss(p, as.logical(y)), log_loss(p, y))
  # tiny probabilities of a 0 label keep their digits (log1p, not log(1 - p))
  expect_equal(log_loss(1e-17, 0), 1e-17, tolerance = 1e-12)
  expect_equal(log_loss(1e-10, 0), -log1p(-1e-10), tolerance = 1e-14)
})

test_that("metrics reject bad input with clear errors", {
  expect_error(calibration_error(c(0.1, 1.2), c(0, 1)), "`prob` must be probabilities in \\[0, 1\\], but has 1.2 at element 2")
  expect_error(calibration_error(c(0.1, NA), c(0, 1)), "`prob`.*NA")
  expect_error(calibration_error(c(0.1, 0.2), c(0, 3)), "`label` must be 0 or 1")
  expect_error(calibration_error(c(0.1, 0.2), c(0L, 3L)), "must be 0 or 1, but has 3 at element 2")
  expect_error(log_loss(c(0.1, 0.2), c(NA, TRUE)), "must be 0 or 1, but has NA at element 1")
  expect_error(brier_score(c(0.1, 0.2, 0.3, 0.4), matrix(c(TRUE, FALSE, TRUE, TRUE), 2)),
               "`label` must be a vector, not a matrix")
  expect_error(calibration_error(c(0.1, 0.2), c(0, 1, 1)), "`label` must have the same length as `prob`")
  expect_error(calibration_error(c(0.1, 0.2), c(0, 1), bins = 0), "`bins`")
  expect_error(calibration_error(c(0.1, 0.2), c(0, 1), bins = 2.5), "`bins`")
  expect_error(calibration_error(c(0.1, 0.2), c(0, 1), weights = c(-1, 1)), "`weights`")
  expect_error(calibration_error(c(0.1, 0.2), c(0, 1), weights = c(0, 0)), "`weights`.*positive")
  expect_error(calibration_error(c(0.1, 0.2), c(0, 1), binning = "quantile"),
               "`binning` must be one of \"width\", \"mass\", not \"quantile\"")
  expect_error(log_loss(c(0.1, 0.2), c(0, 1), eps = -1), "`eps`")
  expect_error(brier_score("a", 1), "`prob`")
})

test_that("plots draw without error and return their input", {
  pdf(NULL)
  on.exit(dev.off())
  set.seed(22)
  g <- sample(c("a", "b", "c"), 2000, replace = TRUE)
  s <- stats::runif(2000)
  y <- as.double(stats::runif(2000) < s * c(a = 0.2, b = 0.5, c = 0.8)[g])
  cal <- calibrate_isotonic(s, y, group = g)
  expect_identical(plot(cal), cal)
  expect_identical(plot(cal, groups = c("a", "c"), type = "linear", legend = NULL), cal)
  expect_identical(plot(calibrate_isotonic(s, y)), calibrate_isotonic(s, y))
  expect_error(plot(cal, groups = "zz"), "`groups`.*\"zz\"")
  bins <- reliability_diagram(list(raw = s, calibrated = predict(cal, s, group = g)), y, binning = "mass")
  expect_named(bins, c("raw", "calibrated"))
  expect_equal(bins$raw, calibration_bins(s, y, binning = "mass"))
  expect_type(reliability_diagram(s, y), "list")
})

test_that("integer and logical labels score as their doubles", {
  set.seed(5)
  p <- runif(200)
  y <- rbinom(200, 1, p)
  w <- runif(200)
  for (alt in list(y, y == 1L)) {
    expect_identical(calibration_error(p, alt, weights = w),
                     calibration_error(p, as.double(y), weights = w))
    expect_identical(calibration_bins(p, alt, binning = "mass"),
                     calibration_bins(p, as.double(y), binning = "mass"))
    expect_identical(log_loss(p, alt, w), log_loss(p, as.double(y), w))
    expect_identical(brier_score(p, alt), brier_score(p, as.double(y)))
  }
})

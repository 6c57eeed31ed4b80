# Results at the edges of double precision: subnormal and huge weights, values near the largest
# double. Each is checked against the exact answer, which the same data at an ordinary scale give.

test_that("PAV and the hull engine with subnormal weights scale them first", {
  y <- c(0.7, 0.123456789, 0.3)
  exact <- rep(mean(y), 3)
  for (w in c(1e-320, 5e-324, 2^-1023, 1e-310)) {
    for (method in c("pav", "hull")) {
      info <- sprintf("w = %g, %s", w, method)
      expect_equal(isoreg_gpu(y, w = rep(w, 3), method = method)$fitted, exact,
                   tolerance = 4 * .Machine$double.eps, info = info)
      # unequal tiny weights: the fit of the same weights at scale 1
      v <- c(1, 3, 2) * w
      expect_equal(isoreg_gpu(y, w = v, method = method)$fitted,
                   isoreg_gpu(y, w = v / w, method = method)$fitted,
                   tolerance = 4 * .Machine$double.eps, info = info)
    }
  }
  w <- rep(1e-320, 3)
  expect_equal(isoreg_batch(rbind(y, rev(y)), w = w)[1, ], exact, tolerance = 4 * .Machine$double.eps)
  expect_equal(isoreg_batch(c(y, y), w = c(w, w), group = rep(1:2, each = 3)), c(exact, exact),
               tolerance = 4 * .Machine$double.eps)
  # an unsorted x with ties: the knots' means are formed from scaled weights too
  expect_equal(isoreg_gpu(c(3, 1, 1, 2), c(0.1, 0.7, 0.123456789, 0.3), w = rep(1e-320, 4))$fitted,
               isoreg_gpu(c(3, 1, 1, 2), c(0.1, 0.7, 0.123456789, 0.3))$fitted,
               tolerance = 4 * .Machine$double.eps)
  # tiny weights with huge y, whose scaled sums would overflow: left as they are, still exact
  expect_equal(isoreg_gpu(c(2e307, 1e307), w = c(1e-20, 1e-20))$fitted, rep(1.5e307, 2))
})

test_that("the hull engine's chunk size is capped by the row, not allocated as asked", {
  old <- options(gpuiso.hull_chunk = 1e9)
  on.exit(options(old))
  set.seed(1)
  y <- rnorm(5000)
  expect_equal(isoreg_gpu(y, method = "hull")$fitted, ref_pav(y), tolerance = 1e-12)
  expect_equal(isoreg_batch(rbind(y, -y), method = "hull")[2, ], ref_pav(-y), tolerance = 1e-12)
})

test_that("idr and idrbag with every weight below 2^-1022 fit as with unit weights", {
  y <- c(3, 5, 3, 8, 4, 9)
  x <- c(1, 2, 3, 4, 5, 6)
  ref <- idr(y, x)
  for (w in c(1e-320, 5e-324, 1e-310)) {
    fit <- idr(y, x, weights = rep(w, 6))
    expect_equal(as.matrix(fit), as.matrix(ref), info = format(w))
    p <- predict(fit, c(0, 2.5, 7))
    expect_equal(cdf(p, 1:10), cdf(predict(ref, c(0, 2.5, 7)), 1:10))
    expect_equal(qpred(p, c(0.2, 0.5, 0.9)), qpred(predict(ref, c(0, 2.5, 7)), c(0.2, 0.5, 0.9)))
    expect_true(all(is.finite(crps(p, 5))))
  }
  # huge weights, whose sums overflow unless scaled
  expect_equal(as.matrix(idr(y, x, weights = rep(1e308, 6))), as.matrix(ref))
  set.seed(3)
  a <- idrbag(y, x, newdata = c(2, 5), b = 5, p = 0.5, weights = rep(1e-320, 6), progress = FALSE)
  set.seed(3)
  b <- idrbag(y, x, newdata = c(2, 5), b = 5, p = 0.5, progress = FALSE)
  expect_equal(cdf(a, 1:10), cdf(b, 1:10))
})

test_that("calibration metrics with huge or subnormal weights equal the unweighted ones", {
  p <- c(0.1, 0.4, 0.6, 0.9)
  y <- c(0, 1, 0, 1)
  for (w in c(1e308, .Machine$double.xmax, 1e-320, 5e-324)) {
    v <- rep(w, 4)
    info <- format(w)
    expect_equal(brier_score(p, y, v), brier_score(p, y), info = info)
    expect_equal(brier_score(p, y, v), 0.185, info = info)
    expect_equal(log_loss(p, y, v), log_loss(p, y), info = info)
    expect_equal(calibration_error(p, y, weights = v), calibration_error(p, y), info = info)
    expect_equal(calibration_error(p, y, bins = 2, binning = "mass", weights = v),
                 calibration_error(p, y, bins = 2, binning = "mass"), info = info)
    b <- calibration_bins(p, y, bins = 2, weights = v)
    ref <- calibration_bins(p, y, bins = 2)
    expect_equal(b[c("mean_prob", "rate")], ref[c("mean_prob", "rate")], info = info)
    pdf(NULL)
    out <- reliability_diagram(p, y, bins = 2, weights = v)
    grDevices::dev.off()
    expect_equal(out[[1]][c("mean_prob", "rate")], ref[c("mean_prob", "rate")], info = info)
  }
  # the bins' weights are reported in the input's units
  b <- calibration_bins(p, y, bins = 2, weights = c(1e307, 2e307, 3e307, 4e307))
  expect_equal(b$weight, c(3e307, 7e307))
  expect_equal(calibration_bins(p, y, bins = 2, weights = rep(1e-320, 4))$weight, c(2e-320, 2e-320))
  expect_equal(calibration_bins(p, y, bins = 2, weights = rep(1e308, 4))$weight, c(Inf, Inf))
})

test_that("linear interpolation between values near the largest double does not overflow", {
  big <- 1e308
  fit <- isoreg_gpu(c(-big, big), c(0, 1))
  expect_equal(predict(fit, c(-big, -big / 2, 0, big / 2, big), type = "linear"),
               c(0, 0.25, 0.5, 0.75, 1))
  fit <- isoreg_gpu(c(-big, big), c(-big, big) / 4)
  expect_equal(predict(fit, c(0, big / 2), type = "linear"), c(0, big / 8))
  # ordinary values: what stats::approx gives
  fit <- isoreg_gpu(c(1, 2, 4, 8), c(1, 3, 2, 7))
  at <- c(0, 1, 1.5, 3, 5.5, 8, 9, NA)
  expect_equal(predict(fit, at, type = "linear"),
               stats::approx(fit$knots, fit$level, at, rule = 2)$y)

  # IDR: the interpolation weight between fitted values of opposite signs near the largest double
  f <- idr(c(1, 2), c(-big, big))
  p <- predict(f, c(0, big / 2))
  expect_equal(unname(cdf(p, c(1, 2))), rbind(c(0.5, 1), c(0.25, 1)))
  expect_equal(crps(p, 1), c(0.25, 0.5625))
  # CRPS over thresholds that span more than the largest double, with a finite exact value
  f <- idr(c(-big, big), c(1, 2))
  p <- predict(f, 1.5)
  expect_equal(crps(p, big), 0.25 * 2 * big)
  expect_equal(crps(p, -big), 0.25 * 2 * big)
  # ensembles
  ens <- data.frame(a = -big, b = big)
  expect_equal(crps(ens, 0), big / 2)
  expect_equal(crps(data.frame(a = 1, b = 3, c = 4), 2), ref_crps(c(1, 2, 3) / 3, c(1, 3, 4), 2))

  # calibrators: scores at both ends of the double range
  cal <- calibrate_isotonic(c(-big, big), c(0, 1))
  expect_equal(predict(cal, c(0, big / 2), type = "linear"), c(0.5, 0.75))
})

test_that("a lower bound of Inf or an upper bound of -Inf is an error, not an infinite fit", {
  expect_error(isoreg_gpu(1:3, y_min = Inf), "`y_min` must be a finite number or -Inf")
  expect_error(isoreg_gpu(1:3, y_max = -Inf), "`y_max` must be a finite number or Inf")
  expect_error(isoreg_batch(matrix(1:4, 2), y_min = Inf), "`y_min`")
  expect_equal(isoreg_gpu(c(3, 1, 2), y_min = 2.5, y_max = Inf)$fitted, c(2.5, 2.5, 2.5))
})

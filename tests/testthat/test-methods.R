# S3 methods of "gpuiso_fit" and isoreg_blocks().

make_fit <- function(increasing = TRUE) {
  x <- c(5, 1, 3, 3, 8, 2, 6, 7, 4, 9)
  y <- c(4, 1, 6, 2, 9, 3, 5, 8, 1, 7)
  w <- c(1, 2, 1, 1, 0.5, 1, 2, 1, 1, 1)
  if (!increasing) y <- -y          # so that the decreasing fit has several blocks too
  isoreg_gpu(x, y, w = w, increasing = increasing)
}

test_that("the fit object has the documented structure", {
  fit <- make_fit()
  expect_s3_class(fit, "gpuiso_fit")
  expect_true(all(c("fitted", "x", "y", "w", "knots", "level", "knot_weight", "block_start",
                    "n", "increasing", "backend", "method", "call") %in% names(fit)))
  expect_identical(fit$x, c(5, 1, 3, 3, 8, 2, 6, 7, 4, 9))
  expect_identical(fit$y, c(4, 1, 6, 2, 9, 3, 5, 8, 1, 7))
  expect_true(length(fit$block_start) > 1)
  expect_true(length(make_fit(FALSE)$block_start) > 1)
  expect_identical(fit$w, c(1, 2, 1, 1, 0.5, 1, 2, 1, 1, 1))
  expect_equal(fit$knots, c(1:9))
  expect_equal(fit$knot_weight, c(2, 1, 2, 1, 1, 2, 1, 0.5, 1))
  expect_type(fit$block_start, "integer")
  expect_equal(fit$n, 10L)
  expect_true(fit$increasing)
  expect_identical(fit$backend, "cpu")
  expect_identical(fit$method, "pav")
  expect_true(is.call(fit$call))
  expect_equal(fit$level, ref_knots(fit$x, fit$y, fit$w)$level, tolerance = 1e-12)
  fit0 <- isoreg_gpu(c(2, 1, 3))
  expect_null(fit0$x)
  expect_null(fit0$w)
  expect_identical(fit0$y, c(2, 1, 3))
  expect_equal(fit0$knots, 1:3)
  # device = "auto" and "cpu" run on the CPU
  expect_identical(isoreg_gpu(c(2, 1, 3), device = "auto")$backend, "cpu")
  expect_identical(isoreg_gpu(c(2, 1, 3), device = "cpu")$backend, "cpu")
})

test_that("print and summary write something and return invisibly", {
  fit <- make_fit()
  expect_output(print(fit))
  out <- utils::capture.output(res <- withVisible(print(fit)))
  expect_false(res$visible)
  expect_identical(res$value, fit)
  expect_true(length(out) > 0)
  s <- summary(fit)
  expect_s3_class(s, "summary.gpuiso_fit")
  expect_output(print(s))
  out <- utils::capture.output(res <- withVisible(print(s)))
  expect_false(res$visible)
  # a decreasing fit prints too, as do n = 1 and x-less fits
  expect_output(print(make_fit(FALSE)))
  expect_output(print(summary(make_fit(FALSE))))
  expect_output(print(isoreg_gpu(1)))
  expect_output(print(summary(isoreg_gpu(c(3, 2, 1)))))
})

test_that("fitted and residuals", {
  for (increasing in c(TRUE, FALSE)) {
    fit <- make_fit(increasing)
    expect_identical(fitted(fit), fit$fitted)
    expect_equal(residuals(fit), fit$y - fit$fitted)
    expect_equal(resid(fit), fit$y - fit$fitted)
  }
  fit <- isoreg_gpu(c(3, 1, 2))
  expect_equal(fitted(fit), c(2, 2, 2))
  expect_equal(residuals(fit), c(1, -1, 0))
})

test_that("predict without newdata gives the fitted values", {
  for (increasing in c(TRUE, FALSE)) {
    fit <- make_fit(increasing)
    expect_equal(predict(fit), fit$fitted)
    expect_equal(predict(fit, type = "linear"), fit$fitted)
  }
})

test_that("predict type = 'step' is the right-continuous step function", {
  for (increasing in c(TRUE, FALSE)) {
    fit <- make_fit(increasing)
    k <- fit$knots
    lev <- fit$level
    xin <- c(k, k + 0.5, k - 1e-9, sort(stats::runif(50, min(k), max(k))))
    xin <- xin[xin >= min(k) & xin <= max(k)]
    expected <- lev[findInterval(xin, k)]       # level of the last knot <= x
    expect_equal(predict(fit, xin, type = "step"), expected)
    expect_equal(predict(fit, xin), expected)  # "step" is the default
    # at the knots: the levels
    expect_equal(predict(fit, k, type = "step"), lev)
    # unsorted newdata keeps its order
    p <- sample(seq_along(xin))
    expect_equal(predict(fit, xin[p], type = "step"), expected[p])
    # outside the knots
    xout <- c(min(k) - 3, max(k) + 0.5, min(k) - 1e-9, 1e6)
    expect_equal(predict(fit, xout, type = "step", outside = "clip"),
                 c(lev[1], lev[length(lev)], lev[1], lev[length(lev)]))
    expect_equal(predict(fit, xout, type = "step", outside = "na"), rep(NA_real_, 4))
    expect_equal(predict(fit, c(xin, xout), type = "step", outside = "na"),
                 c(expected, rep(NA_real_, 4)))
    expect_error(predict(fit, xout, type = "step", outside = "error"))
    expect_error(predict(fit, c(2, max(k) + 1), type = "step", outside = "error"))
    expect_equal(predict(fit, xin, type = "step", outside = "error"), expected)
  }
})

test_that("predict type = 'linear' interpolates between knots", {
  for (increasing in c(TRUE, FALSE)) {
    fit <- make_fit(increasing)
    k <- fit$knots
    lev <- fit$level
    xin <- c(k, sort(stats::runif(50, min(k), max(k))))
    expected <- stats::approx(k, lev, xin, rule = 2)$y
    expect_equal(predict(fit, xin, type = "linear"), expected, tolerance = 1e-12)
    expect_equal(predict(fit, k, type = "linear"), lev, tolerance = 1e-12)
    xout <- c(-100, min(k) - 0.1, max(k) + 0.1, 1e9)
    expect_equal(predict(fit, xout, type = "linear"), c(lev[1], lev[1], lev[length(lev)], lev[length(lev)]))
    expect_equal(predict(fit, xout, type = "linear", outside = "na"), rep(NA_real_, 4))
    expect_equal(predict(fit, c(xout[1], xin), type = "linear", outside = "na"),
                 c(NA, expected), tolerance = 1e-12)
    expect_error(predict(fit, xout, type = "linear", outside = "error"))
    expect_equal(predict(fit, xin, type = "linear", outside = "error"), expected, tolerance = 1e-12)
    # the linear prediction is monotone in the fit's direction
    g <- predict(fit, seq(-1, 11, by = 0.01), type = "linear")
    if (increasing) expect_true(all(diff(g) >= 0)) else expect_true(all(diff(g) <= 0))
  }
  # a single knot: constant prediction
  fit <- isoreg_gpu(c(2, 2), c(1, 5))
  expect_equal(predict(fit, c(0, 2, 5), type = "linear"), c(3, 3, 3))
  expect_equal(predict(fit, c(0, 2, 5), type = "step"), c(3, 3, 3))
  expect_equal(predict(fit, c(0, 2, 5), type = "step", outside = "na"), c(NA, 3, NA))
})

test_that("predict names the arguments it does not take", {
  fit <- isoreg_gpu(c(1, 3, 2))
  expect_error(predict(fit, newx = 2),
               "predict\\(\\): unknown argument `newx`; it takes `object`, `newdata`, `type`, `outside`$")
  expect_error(predict(fit, 2, "step", "clip", TRUE), "unknown argument an unnamed argument")
})

test_that("NA in newdata gives NA, the other values are unaffected", {
  fit <- isoreg_gpu(0:4, c(1, 2, 7, 1, 2))
  expect_equal(predict(fit, c(1, NA, 2), type = "step"), c(2, NA, 10 / 3))
  expect_equal(predict(fit, c(0.5, NA), type = "linear"), c(1.5, NA))
})

test_that("predict rejects bad arguments", {
  fit <- make_fit()
  expect_error(predict(fit, 1:3, type = "cubic"))
  expect_error(predict(fit, 1:3, outside = "wrap"))
  expect_error(predict(fit, "a"))
})

test_that("as.stepfun agrees with predict type = 'step'", {
  for (increasing in c(TRUE, FALSE)) {
    fit <- make_fit(increasing)
    sf <- as.stepfun(fit)
    expect_s3_class(sf, "stepfun")
    k <- fit$knots
    xs <- c(k, k + 0.25, seq(-2, 12, by = 0.1))
    expect_equal(sf(xs), predict(fit, xs, type = "step", outside = "clip"))
  }
  fit <- isoreg_gpu(c(3, 1, 2, 5))
  expect_equal(as.stepfun(fit)(c(0.5, 1, 3.9, 4, 10)), predict(fit, c(0.5, 1, 3.9, 4, 10), type = "step"))
})

test_that("as.stepfun of a single-block fit is a constant function", {
  for (fit in list(isoreg_gpu(c(3, 2, 1)), isoreg_gpu(c(1, 2, 3), increasing = FALSE),
                   isoreg_gpu(5), isoreg_gpu(c(2, 2), c(1, 5)))) {
    sf <- as.stepfun(fit)
    expect_s3_class(sf, "stepfun")
    expect_equal(sf(c(-10, 0, 1, 2, 3, 10)), rep(fit$level[1], 6))
  }
})

test_that("plot does not error", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_no_error(plot(make_fit()))
  expect_no_error(plot(make_fit(FALSE)))
  expect_no_error(plot(isoreg_gpu(c(3, 1, 2, 5))))
  expect_no_error(plot(isoreg_gpu(7)))
})

test_that("isoreg_blocks lists the blocks", {
  fit <- isoreg_gpu(c(1, 3, 2, 4, 3, 5))
  b <- isoreg_blocks(fit)
  expect_s3_class(b, "data.frame")
  expect_equal(names(b)[1:6], c("x_start", "x_end", "level", "weight", "start", "size"))
  expect_equal(b$x_start, c(1, 2, 4, 6))
  expect_equal(b$x_end, c(1, 3, 5, 6))
  expect_equal(b$level, c(1, 2.5, 3.5, 5))
  expect_equal(b$weight, c(1, 2, 2, 1))
  expect_equal(b$start, c(1, 2, 4, 6))
  expect_equal(b$size, c(1, 2, 2, 1))

  # with x (unsorted, ties) and weights
  fit <- isoreg_gpu(c(10, 30, 20, 20, 40), c(1, 2, 5, 3, 9), w = c(1, 1, 1, 3, 2))
  b <- isoreg_blocks(fit)
  # knots 10, 20, 30, 40 with pooled values 1, 3.5 (w 4), 2 (w 1), 9 (w 2) -> 1, 3.2, 3.2, 9
  expect_equal(b$x_start, c(10, 20, 40))
  expect_equal(b$x_end, c(10, 30, 40))
  expect_equal(b$level, c(1, 16 / 5, 9))
  expect_equal(b$weight, c(1, 5, 2))
  expect_equal(b$start, c(1, 2, 4))
  expect_equal(b$size, c(1, 2, 1))
  expect_equal(fit$fitted, c(1, 3.2, 3.2, 3.2, 9))
})

# Known-answer cases gathered from other isotonic-regression software (stats::isoreg,
# scikit-learn, SciPy, Spark MLlib, R monotone, fdrtool). Expected values are written in.

tol <- 1e-12

test_that("isotonic fits of small vectors match the known answers", {
  expect_equal(isoreg_gpu(c(3, 7, 5, 9, 8, 7, 10))$fitted, c(3, 6, 6, 8, 8, 8, 10), tolerance = tol)
  expect_equal(isoreg_gpu(c(10, 0, 2))$fitted, c(4, 4, 4), tolerance = tol)
  expect_equal(isoreg_gpu(c(1, 2, 3, 4, 2))$fitted, c(1, 2, 3, 3, 3), tolerance = tol)
  expect_equal(isoreg_gpu(c(4, 2, 3, 4, 5))$fitted, c(3, 3, 3, 4, 5), tolerance = tol)
  expect_equal(isoreg_gpu(c(-1, -2, 0, 1, -1))$fitted, c(-1.5, -1.5, 0, 0, 0), tolerance = tol)
  expect_equal(isoreg_gpu(c(5, 4, 3, 2, 1))$fitted, rep(3, 5), tolerance = tol)
  # stats::isoreg's examples
  expect_equal(isoreg_gpu(c(1, 0, 4, 3, 3, 5, 4, 2, 0))$fitted,
               c(0.5, 0.5, 3, 3, 3, 3, 3, 3, 3), tolerance = tol)
  expect_equal(isoreg_gpu(1:10, c(5, 9, 1, 2, 5, 6, 7, 8, 3, 8))$fitted,
               c(rep(4.25, 4), 5, rep(6, 4), 8), tolerance = tol)
})

test_that("block starts and block weights match the known answers", {
  fit <- isoreg_gpu(c(8, 4, 8, 2, 2, 0, 8))
  expect_equal(fit$fitted, c(4, 4, 4, 4, 4, 4, 8), tolerance = tol)
  b <- isoreg_blocks(fit)
  expect_equal(nrow(b), 2L)
  expect_equal(b$start, c(1, 7))
  expect_equal(b$size, c(6, 1))
  expect_equal(b$weight, c(6, 1), tolerance = tol)
  expect_equal(b$level, c(4, 8), tolerance = tol)
  expect_equal(as.integer(fit$block_start), c(1L, 7L))

  fit <- isoreg_gpu(c(0, 6, 8, 3, 5, 2, 1, 7, 9, 4))
  expect_equal(fit$fitted, c(0, rep(25 / 6, 6), rep(20 / 3, 3)), tolerance = tol)
  b <- isoreg_blocks(fit)
  expect_equal(b$start, c(1, 2, 8))
  expect_equal(b$size, c(1, 6, 3))
  expect_equal(b$level, c(0, 25 / 6, 20 / 3), tolerance = tol)
  expect_equal(b$x_start, c(1, 2, 8))
  expect_equal(b$x_end, c(1, 7, 10))
  expect_equal(as.integer(fit$block_start), c(1L, 2L, 8L))

  # already increasing: every element its own block, fit unchanged
  y <- (0:9) / 9
  fit <- isoreg_gpu(y)
  expect_equal(fit$fitted, y, tolerance = tol)
  expect_equal(nrow(isoreg_blocks(fit)), 10L)
  expect_equal(as.integer(fit$block_start), 1:10)
})

test_that("weighted fits match the known answers", {
  y <- c(1, 41, 51, 1, 2, 5, 24)
  w <- 1:7
  expected <- c(1, rep(13.95, 5), 24)
  fit <- isoreg_gpu(y, w = w)
  expect_equal(fit$fitted, expected, tolerance = tol)
  expect_equal(isoreg_blocks(fit)$weight, c(1, 20, 7), tolerance = tol)
  # the same for any permutation of (x, y, w) with x = 1..7
  set.seed(101)
  for (r in 1:10) {
    p <- sample.int(7)
    fit <- isoreg_gpu((1:7)[p], y[p], w = w[p])
    expect_equal(fit$fitted, expected[p], tolerance = tol)
    expect_equal(fit$level, expected, tolerance = tol)
  }

  y <- c(3, 2, 1, 10, 9, 8, 20, 10)
  w <- c(1, 2, 5, 0.5, 0.5, 0.5, 1, 3)
  expected <- c(1.5, 1.5, 1.5, 9, 9, 9, 12.5, 12.5)
  expect_equal(isoreg_gpu(y, w = w)$fitted, expected, tolerance = tol)
  # replacing the weight 5 by five unit-weight copies gives the same fit
  y5 <- c(3, 2, 1, 1, 1, 1, 1, 10, 9, 8, 20, 10)
  w5 <- c(1, 2, 1, 1, 1, 1, 1, 0.5, 0.5, 0.5, 1, 3)
  expect_equal(isoreg_gpu(y5, w = w5)$fitted, expected[c(1:3, 3, 3, 3, 3, 4:8)], tolerance = tol)

  expect_equal(isoreg_gpu(c(1, 2, 3, 4, 2), w = c(1, 1, 1, 1, 2))$fitted,
               c(1, 2, 2.75, 2.75, 2.75), tolerance = tol)
  expect_equal(isoreg_gpu(c(1, 2, 3, 2, 1), w = c(1, 1, 1, 0.1, 0.1))$fitted,
               c(1, 2, 3.3 / 1.2, 3.3 / 1.2, 3.3 / 1.2), tolerance = tol)
})

test_that("decreasing fit of 10,9,10,7,6,6.1,5 is non-increasing and mirrors -y", {
  y <- c(10, 9, 10, 7, 6, 6.1, 5)
  fit <- isoreg_gpu(y, increasing = FALSE)
  expect_equal(fit$fitted, c(10, 9.5, 9.5, 7, 6.05, 6.05, 5), tolerance = tol)
  expect_true(all(diff(fit$fitted) <= 0))
  expect_equal(fit$fitted, -isoreg_gpu(-y)$fitted, tolerance = tol)
  expect_false(fit$increasing)
})

test_that("5t + sin(10t) matches R monotone's plateaus", {
  t <- (0:99) / 100
  y <- 5 * t + sin(10 * t)
  f <- isoreg_gpu(y)$fitted
  expect_true(all(diff(f) >= 0))
  expect_equal(sum(f), sum(y), tolerance = 1e-12)
  expect_true(any(abs(f - 1.57081100) < 1e-7))
  expect_true(any(abs(f - 4.86564130) < 1e-7))
  expect_equal(f, ref_pav(y), tolerance = 1e-12)
})

test_that("ties in x are pooled by weighted mean (known answers)", {
  expect_equal(isoreg_gpu(c(1, 1, 2, 3, 4, 5), 1:6)$fitted, c(1.5, 1.5, 3, 4, 5, 6), tolerance = tol)
  expect_equal(isoreg_gpu(c(1, 2, 3, 4, 5, 5), 1:6)$fitted, c(1, 2, 3, 4, 5.5, 5.5), tolerance = tol)
  expect_equal(isoreg_gpu(c(0, 1, 1, 2, 3, 4), c(0, 0, 1, 0, 0, 1))$fitted,
               c(0, 0.25, 0.25, 0.25, 0.25, 1), tolerance = tol)

  x <- c(8, 8, 8, 10, 10, 10, 12, 12, 12, 14, 14)
  y <- c(21, 23.5, 23, 24, 21, 25, 21.5, 22, 19, 23.5, 25)
  fit <- isoreg_gpu(x, y)
  expect_equal(fit$fitted, c(rep(200 / 9, 9), 24.25, 24.25), tolerance = tol)
  expect_equal(fit$knots, c(8, 10, 12, 14))
  expect_equal(fit$knot_weight, c(3, 3, 3, 2), tolerance = tol)
  expect_equal(fit$fitted[1], 22.22222, tolerance = 1e-6)

  # all x equal: every value is the weighted mean of y
  y <- c(3, -1, 7, 2)
  w <- c(1, 2, 0.5, 4)
  fit <- isoreg_gpu(rep(5, 4), y, w = w)
  expect_equal(fit$fitted, rep(sum(w * y) / sum(w), 4), tolerance = tol)
  expect_equal(fit$knots, 5)
  expect_equal(fit$knot_weight, sum(w), tolerance = tol)
  fit <- isoreg_gpu(rep(5, 4), y, w = w, increasing = FALSE)
  expect_equal(fit$fitted, rep(sum(w * y) / sum(w), 4), tolerance = tol)
})

test_that("pooled ties: levels, linear prediction and the decreasing mirror", {
  y <- c(2, 1, 4, 2, 6, 5)
  x <- c(1, 1, 2, 2, 3, 3)
  w <- c(1, 1, 1, 1, 1, 1)
  fit <- isoreg_gpu(x, y, w = w)
  expect_equal(fit$knots, c(1, 2, 3))
  expect_equal(fit$level, c(1.5, 3, 5.5), tolerance = tol)
  expect_equal(fit$knot_weight, c(2, 2, 2), tolerance = tol)
  expect_equal(fit$fitted, c(1.5, 1.5, 3, 3, 5.5, 5.5), tolerance = tol)
  expect_equal(predict(fit, c(0, 1.5, 2.5, 4), type = "linear"), c(1.5, 2.25, 4.25, 5.5),
               tolerance = tol)
  # decreasing mirror: x reflected, decreasing fit
  fitd <- isoreg_gpu(-x, y, w = w, increasing = FALSE)
  expect_equal(fitd$knots, c(-3, -2, -1))
  expect_equal(fitd$level, c(5.5, 3, 1.5), tolerance = tol)
  expect_equal(fitd$fitted, c(1.5, 1.5, 3, 3, 5.5, 5.5), tolerance = tol)
})

test_that("1 and 1 + 1e-16 are the same double, -0 and 0 the same x", {
  fit <- isoreg_gpu(c(0, 1, 1 + 1e-16, 2), c(0, 1, 2, 3))
  expect_equal(length(fit$knots), 3L)
  expect_equal(fit$level, c(0, 1.5, 3), tolerance = tol)
  expect_equal(fit$fitted, c(0, 1.5, 1.5, 3), tolerance = tol)

  fit <- isoreg_gpu(c(-0, 0, 1), c(3, 1, 0))
  expect_equal(length(fit$knots), 2L)
  expect_equal(fit$fitted, rep(4 / 3, 3), tolerance = tol)
  fit <- isoreg_gpu(c(0, 1, -0), c(0, 5, 4))
  expect_equal(length(fit$knots), 2L)
  expect_equal(fit$fitted, c(2, 5, 2), tolerance = tol)
})

test_that("linear prediction at new x matches the known answers (clipped outside)", {
  xnew <- c(-2, -1, 0.5, 0.75, 1, 2, 9)
  fit <- isoreg_gpu(0:4, c(1, 2, 7, 1, 2))
  expect_equal(fit$fitted, c(1, 2, 10 / 3, 10 / 3, 10 / 3), tolerance = tol)
  expect_equal(predict(fit, xnew, type = "linear"), c(1, 1, 1.5, 1.75, 2, 10 / 3, 10 / 3),
               tolerance = tol)
  expect_equal(predict(fit, xnew, type = "linear", outside = "clip"),
               c(1, 1, 1.5, 1.75, 2, 10 / 3, 10 / 3), tolerance = tol)

  fitd <- isoreg_gpu(0:4, c(7, 5, 3, 5, 1), increasing = FALSE)
  expect_equal(fitd$fitted, c(7, 5, 4, 4, 1), tolerance = tol)
  expect_equal(predict(fitd, xnew, type = "linear"), c(7, 7, 6, 5.5, 5, 4, 1), tolerance = tol)
})

test_that("step prediction at new x matches the known answers", {
  xnew <- c(-2, -1, 0.5, 0.75, 1, 2, 9)
  fit <- isoreg_gpu(0:4, c(1, 2, 7, 1, 2))
  expect_equal(predict(fit, xnew, type = "step"), c(1, 1, 1, 1, 2, 10 / 3, 10 / 3), tolerance = tol)
  expect_equal(predict(fit, xnew), c(1, 1, 1, 1, 2, 10 / 3, 10 / 3), tolerance = tol)
  fitd <- isoreg_gpu(0:4, c(7, 5, 3, 5, 1), increasing = FALSE)
  expect_equal(predict(fitd, xnew, type = "step"), c(7, 7, 7, 7, 5, 4, 1), tolerance = tol)
})

test_that("zero weights follow the documented rule", {
  # an element of weight 0 takes the level of the nearest positive-weight element on its left
  expect_equal(isoreg_gpu(c(1, 5, 3, 10), w = c(1, 0, 1, 1))$fitted, c(1, 1, 3, 10), tolerance = tol)
  expect_equal(isoreg_gpu(c(1, -50, 3, 10), w = c(1, 0, 1, 1))$fitted, c(1, 1, 3, 10), tolerance = tol)
  # ... the first block's level when there is none on its left
  expect_equal(isoreg_gpu(c(100, 2, 1), w = c(0, 1, 1))$fitted, c(1.5, 1.5, 1.5), tolerance = tol)
  expect_equal(isoreg_gpu(c(-100, 1, 2), w = c(0, 1, 1))$fitted, c(1, 1, 2), tolerance = tol)
  # trailing zero weight
  expect_equal(isoreg_gpu(c(1, 2, -7), w = c(1, 1, 0))$fitted, c(1, 2, 2), tolerance = tol)
  # in sorted-x order, with x in any order
  expect_equal(isoreg_gpu(c(3, 1, 2), c(10, 1, 100), w = c(1, 1, 0))$fitted, c(10, 1, 1),
               tolerance = tol)
  # decreasing
  expect_equal(isoreg_gpu(c(5, 100, 1), w = c(1, 0, 1), increasing = FALSE)$fitted, c(5, 5, 1),
               tolerance = tol)
  # a tied x whose weights are partly zero: pooled mean over the positive ones
  expect_equal(isoreg_gpu(c(1, 1, 2), c(4, 1000, 5), w = c(1, 0, 1))$fitted, c(4, 4, 5),
               tolerance = tol)
})

test_that("n = 1 works", {
  fit <- isoreg_gpu(3.5)
  expect_equal(fit$fitted, 3.5)
  expect_equal(fit$n, 1L)
  expect_equal(isoreg_gpu(2, 3.5, w = 2)$fitted, 3.5)
  expect_equal(isoreg_gpu(3.5, increasing = FALSE)$fitted, 3.5)
  expect_equal(nrow(isoreg_blocks(fit)), 1L)
})

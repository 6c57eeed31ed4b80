# isoreg_gpu(exact = FALSE): the float32 fast mode of the GPU. On the CPU the exact fit; on a
# device within the bound of the help page (the kernels are checked on the SIMT executor by
# tools/ctest/test_float32_fast.cpp) and never stepping against the direction.

test_that("`exact` is checked", {
  expect_error(isoreg_gpu(c(3, 1, 2), exact = NA), "`exact`")
  expect_error(isoreg_gpu(c(3, 1, 2), exact = "no"), "`exact`")
  expect_error(isoreg_gpu(c(3, 1, 2), exact = c(TRUE, FALSE)), "`exact`")
  expect_error(isoreg_batch(matrix(c(3, 1, 2, 0), 2), exact = NA), "`exact`")
})

test_that("on the CPU, exact = FALSE gives the exact fit", {
  set.seed(3)
  y <- cumsum(rnorm(500)) + rnorm(500)
  w <- exp(runif(500, -8, 8))
  for (precision in c("double", "single")) {
    a <- isoreg_gpu(y, w = w, device = "cpu", precision = precision, exact = FALSE)
    b <- isoreg_gpu(y, w = w, device = "cpu", precision = precision)
    expect_identical(a$fitted, b$fitted)
    expect_identical(a$fitted, isoreg_gpu(y, w = w, device = "cpu")$fitted)
  }
  ym <- matrix(y, 5)
  expect_identical(isoreg_batch(ym, device = "cpu", precision = "single", exact = FALSE),
                   isoreg_batch(ym, device = "cpu"))
})

test_that("on the GPU, float32 exact = FALSE stays within its bound and never steps down", {
  skip_without_gpu()
  set.seed(4)
  n <- 20000
  rows <- list(noise = seq(0, 3, length.out = n) + rnorm(n), increasing = sort(runif(n)),
               sawtooth = (seq_len(n) %% 97) / 97 + rnorm(n, sd = 0.01))
  for (name in names(rows)) for (weighted in c(FALSE, TRUE)) {
    y <- rows[[name]]
    w <- if (weighted) runif(n, 0.01, 1)
    yf <- as_float32(y) # the float32 data the GPU fits
    wf <- if (weighted) as_float32(w)
    for (increasing in c(TRUE, FALSE)) {
      fast <- isoreg_gpu(y, w = w, increasing = increasing, device = "gpu", precision = "single",
                         exact = FALSE)$fitted
      ref <- isoreg_gpu(yf, w = wf, increasing = increasing, device = "cpu")$fitted
      label <- sprintf("%s, weighted %s, increasing %s", name, weighted, increasing)
      expect_lte(max(abs(fast - ref)) / max(abs(yf)), 2e-4, label = label)
      expect_true(all(if (increasing) diff(fast) >= 0 else diff(fast) <= 0), label = label)
    }
  }
})

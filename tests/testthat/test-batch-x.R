# isoreg_batch() with x: each problem in the order of its x, tied x pooled as isoreg_gpu() pools
# them, against the plain-R reference fitted problem by problem.

test_that("a matrix x orders each row; ties within a row are pooled", {
  set.seed(21)
  for (trial in 1:20) {
    nr <- sample(1:5, 1)
    nc <- sample(1:12, 1)
    y <- matrix(rnorm(nr * nc), nr)
    x <- matrix(sample(1:4, nr * nc, TRUE) + if (trial %% 2) runif(nr * nc) else 0, nr)
    w <- if (trial %% 3 == 0) matrix(runif(nr * nc, 0.1, 2), nr)
    up <- trial %% 4 != 1
    fit <- isoreg_batch(y, w, increasing = up, x = x)
    expect_identical(dim(fit), dim(y))
    for (i in seq_len(nr)) {
      ref <- ref_isoreg(x[i, ], y[i, ], if (!is.null(w)) w[i, ], increasing = up)
      expect_equal(fit[i, ], ref, tolerance = 1e-12, info = paste(trial, i))
      expect_equal(fit[i, ], unname(fitted(isoreg_gpu(x[i, ], y[i, ], if (!is.null(w)) w[i, ], up))),
                   tolerance = 1e-13)
    }
  }
})

test_that("a vector x is shared by all rows; weights may be shared too", {
  y <- rbind(c(3, 1, 2, 5), c(0, 4, 4, 1), c(2, 2, 1, 1))
  x <- c(2, 4, 1, 3)
  w <- c(1, 2, 0.5, 1)
  fit <- isoreg_batch(y, w, x = x)
  for (i in 1:3) expect_equal(fit[i, ], ref_isoreg(x, y[i, ], w), tolerance = 1e-12)
  # the same as the matrix x of repeated rows, and as the columns permuted by hand
  expect_identical(fit, isoreg_batch(y, w, x = matrix(x, 3, 4, byrow = TRUE)))
  o <- order(x)
  expect_equal(fit[, o], isoreg_batch(y[, o], w[o]), tolerance = 1e-14)
  # isotonic regression Iso::pava on the sorted rows, as an independent reference
  skip_if_not_installed("Iso")
  for (i in 1:3) expect_equal(fit[i, o], Iso::pava(y[i, o], w[o]), tolerance = 1e-12)
})

test_that("groups with x: each group in the order of its x", {
  set.seed(22)
  n <- 60
  g <- sample(c("a", "b", "c", "d"), n, TRUE)
  x <- round(runif(n, 0, 5), 1)
  y <- rnorm(n) + x
  w <- runif(n)
  fit <- isoreg_batch(y, w, group = g, x = x)
  for (k in unique(g)) {
    expect_equal(fit[g == k], ref_isoreg(x[g == k], y[g == k], w[g == k]), tolerance = 1e-12)
  }
  # one problem without group: the fit of isoreg_gpu
  expect_equal(isoreg_batch(y, x = x), unname(fitted(isoreg_gpu(x, y))), tolerance = 1e-13)
  # names of y are kept
  names(y) <- paste0("e", seq_len(n))
  expect_identical(names(isoreg_batch(y, group = g, x = x)), names(y))
})

test_that("block starts with x mark the first element of each block in x order", {
  y <- c(3, 9, 1, 7, 2, 8, 8)
  g <- c("a", "b", "a", "b", "a", "b", "b")
  x <- c(3, 2, 1, 1, 2, 3, 2)
  res <- isoreg_batch(y, group = g, x = x, block_starts = TRUE)
  for (k in c("a", "b")) {
    i <- which(g == k)
    o <- i[order(x[i])]
    ref <- ref_isoreg(x[i], y[i])
    expect_equal(res$fitted[i], ref, tolerance = 1e-12)
    # in x order, a block starts where the fitted level changes (ties: at the first of them)
    lev <- res$fitted[o]
    first <- c(TRUE, diff(lev) != 0)
    expect_identical(res$block_start[o], first & !duplicated(x[o]) | c(TRUE, rep(FALSE, length(o) - 1L)))
  }
})

test_that("x of other types order the problems on their numeric scale", {
  day <- as.Date("2024-01-01") + c(3, 1, 2, 0)
  y <- rbind(c(1, 4, 2, 3), c(4, 3, 2, 1))
  expect_identical(isoreg_batch(y, x = day), isoreg_batch(y, x = as.numeric(day)))
  lev <- factor(c("hi", "lo", "mid", "lo"), levels = c("lo", "mid", "hi"), ordered = TRUE)
  expect_identical(isoreg_batch(y[1, ], x = lev), isoreg_batch(y[1, ], x = as.integer(lev)))
})

test_that("bad x, and x with gradients, are errors that name the argument", {
  y <- matrix(1:6, 2)
  expect_error(isoreg_batch(y, x = 1:2), "`x` must be a matrix of the same shape as `y` \\(2 x 3\\) or a vector of length ncol\\(y\\) \\(3\\)")
  expect_error(isoreg_batch(1:4, x = 1:3), "`x` must be a vector of the same length as `y` \\(4\\)")
  expect_error(isoreg_batch(1:4, x = c(1, NA, 2, 3)), "`x` must be finite, without NA, but has NA at element 2")
  expect_error(isoreg_batch(1:4, x = c(1, Inf, 2, 3)), "`x` must be finite")
  expect_error(isoreg_batch(1:4, x = letters[1:4]), "`x` must be numeric, not a character vector")
  expect_error(isoreg_batch(1:4, x = 1:4, gradient = TRUE), "`x` cannot be combined with `gradient = TRUE`")
  expect_error(isoreg_batch(c(1, NA, 3), x = 1:3), "`y` must be finite, without NA, but has NA at element 2")
  expect_error(isoreg_batch(1:4, w = c(1, -1, 1, 1), x = 1:4), "`w` must be finite and non-negative, but has -1 at element 2")
  expect_error(isoreg_batch(y, w = matrix(c(0, 1, 0, 1, 0, 1), 2), x = y), "`w` must have a positive weight in each row, but has none in row 1")
  expect_error(isoreg_batch(1:4, w = c(0, 0, 1, 1), group = c("u", "u", "v", "v"), x = 1:4),
               "`w` must have a positive weight in each group, but has none in group u")
  expect_error(isoreg_batch(y, w = 1:2, x = y), "`w` must be a matrix of the same shape as `y`")
  # the input is not modified
  yy <- c(3, 1, 2)
  xx <- c(2, 3, 1)
  keep <- deep_copy(list(yy, xx))
  isoreg_batch(yy, x = xx)
  expect_identical(list(yy, xx), keep)
})

test_that("on the GPU, batches with x and mixed directions are the CPU's fits", {
  skip_without_gpu()
  set.seed(23)
  y <- matrix(stats::rnorm(200 * 40), 200) * rep(c(-1, 1), 100)
  x <- matrix(sample(1:25, 200 * 40, TRUE), 200)
  cpu <- isoreg_batch(y, x = x, increasing = "auto", block_starts = TRUE)
  gpu <- isoreg_batch(y, x = x, increasing = "auto", block_starts = TRUE, device = "gpu")
  expect_lte(max(abs(gpu$fitted - cpu$fitted)), 1e-12)
  expect_identical(gpu$block_start, cpu$block_start)
  expect_identical(attr(gpu$fitted, "increasing"), attr(cpu$fitted, "increasing"))
  g <- sample(1:30, 3000, TRUE)
  v <- stats::rnorm(3000)
  xv <- round(stats::runif(3000), 2)
  expect_lte(max(abs(isoreg_batch(v, group = g, x = xv, device = "gpu") - isoreg_batch(v, group = g, x = xv))), 1e-12)
  s <- stats::runif(2000)
  l <- stats::rbinom(2000, 1, 1 - s)
  expect_equal(calibrate_isotonic(s, l, increasing = FALSE, device = "gpu")$pooled,
               calibrate_isotonic(s, l, increasing = FALSE)$pooled, tolerance = 1e-12)
})

test_that("on long input the first bad value is named, whichever thread meets it first", {
  n <- 1e5 # above the size from which the checks run in parallel slices
  x <- as.double(seq_len(n))
  x[c(70000, 30000)] <- c(NA, Inf) # the second slice's NaN comes after the first slice's Inf
  for (threads in 1:2) {
    expect_error(on_threads(threads, isoreg_batch(rnorm(n), x = x, group = rep(1:2, each = n / 2))),
                 "`x` must be finite, without NA, but has Inf at element 30000")
    w <- rep(1, n)
    w[c(90000, 60000)] <- c(-1, NaN)
    expect_error(on_threads(threads, isoreg_batch(rnorm(n), w = w, x = seq_len(n), group = rep(1:2, each = n / 2))),
                 "`w` must be finite and non-negative, but has NaN at element 60000")
  }
})

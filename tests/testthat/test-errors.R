# Bad input: a clear R error that names the argument; never a crash or a hang.

re_x <- "\\bx\\b"
re_y <- "\\by\\b"
re_w <- "\\bw\\b"
re_xy <- "\\b(x|y)\\b"

test_that("NA, NaN and Inf in y are errors naming y", {
  x <- 1:4
  for (bad in list(NA_real_, NaN, Inf, -Inf, NA_integer_)) {
    y <- c(1, 2, 3, 4)
    y[3] <- bad
    expect_error(isoreg_gpu(x, y), re_y)
    expect_error(isoreg_gpu(x, y, w = rep(1, 4)), re_y)
    expect_error(isoreg_batch(matrix(c(y, 1:4), 2, byrow = TRUE)), re_y)
    expect_error(isoreg_batch(y, group = c(1, 1, 2, 2)), re_y)
  }
  # the single-argument form: the vector is y (it may be called x, as in stats::isoreg)
  expect_error(isoreg_gpu(c(1, NA, 3)), re_xy)
  expect_error(isoreg_gpu(c(1, NaN, 3)), re_xy)
  expect_error(isoreg_gpu(c(0, Inf)), re_xy)
})

test_that("NA, NaN and Inf in x are errors naming x", {
  for (bad in list(NA_real_, NaN, Inf, -Inf)) {
    x <- c(1, 2, 3, 4)
    x[2] <- bad
    expect_error(isoreg_gpu(x, c(1, 2, 3, 4)), re_x)
  }
  expect_error(isoreg_gpu(c(1L, NA_integer_, 3L), c(1, 2, 3)), re_x)
})

test_that("NA, NaN, Inf and negative values in w are errors naming w", {
  y <- c(1, 3, 2, 4)
  for (bad in list(NA_real_, NaN, Inf, -1, -1e-300, -Inf)) {
    w <- c(1, 1, 1, 1)
    w[4] <- bad
    expect_error(isoreg_gpu(y, w = w), re_w)
    expect_error(isoreg_gpu(1:4, y, w = w), re_w)
    expect_error(isoreg_batch(rbind(y, y), w = rbind(w, rep(1, 4))), re_w)
    expect_error(isoreg_batch(rbind(y, y), w = w), re_w)
    expect_error(isoreg_batch(y, w = w, group = c(1, 2, 1, 2)), re_w)
  }
  expect_error(isoreg_gpu(y, w = c(1L, NA_integer_, 1L, 1L)), re_w)
})

test_that("all-zero weights are an error naming w", {
  expect_error(isoreg_gpu(c(1, 2, 3), w = c(0, 0, 0)), re_w)
  expect_error(isoreg_gpu(c(3, 1, 2), c(1, 2, 3), w = c(0, 0, 0)), re_w)
  expect_error(isoreg_batch(rbind(c(1, 2), c(3, 4)), w = rbind(c(1, 1), c(0, 0))), re_w)
  expect_error(isoreg_batch(c(1, 2, 3, 4), w = c(1, 0, 1, 0), group = c(1, 2, 1, 2)), re_w)
})

test_that("sums that overflow are an error, not Inf or NaN", {
  expect_error(isoreg_gpu(rep(1e307, 20)), "overflow|finite|large|\\by\\b")
  expect_error(isoreg_gpu(rep(-1e307, 20), increasing = FALSE), "overflow|finite|large|\\by\\b")
  expect_error(isoreg_gpu(c(1, 2, 3), w = c(1e308, 1e308, 1e308)), "overflow|finite|large|\\bw\\b")
  expect_error(isoreg_gpu(1:20, rep(1e307, 20), w = rep(2, 20)), "overflow|finite|large|\\b(w|y)\\b")
  expect_error(isoreg_batch(matrix(1e307, 2, 20)), "overflow|finite|large|\\by\\b")
  expect_error(isoreg_batch(rep(1e307, 40), group = rep(1:2, 20)), "overflow|finite|large|\\by\\b")
  # large but finite sums are fine
  expect_equal(isoreg_gpu(rep(1e306, 20))$fitted, rep(1e306, 20))
})

test_that("length mismatches are errors naming the argument", {
  expect_error(isoreg_gpu(1:3, c(1, 2, 3, 4)), re_xy)
  expect_error(isoreg_gpu(1:5, c(1, 2, 3, 4)), re_xy)
  expect_error(isoreg_gpu(c(1, 2, 3), w = c(1, 1)), re_w)
  expect_error(isoreg_gpu(1:3, c(1, 2, 3), w = c(1, 1, 1, 1)), re_w)
  Y <- matrix(1:6, 2, 3)
  expect_error(isoreg_batch(Y, w = matrix(1, 3, 2)), re_w)
  expect_error(isoreg_batch(Y, w = matrix(1, 2, 4)), re_w)
  expect_error(isoreg_batch(Y, w = c(1, 1)), re_w)
  expect_error(isoreg_batch(Y, w = rep(1, 6)), re_w)
  expect_error(isoreg_batch(c(1, 2, 3), w = c(1, 1), group = c(1, 1, 1)), re_w)
})

test_that("a matrix where a vector is expected is an error", {
  m <- matrix(c(1, 2, 3, 4), 2, 2)
  expect_error(isoreg_gpu(m), re_xy)
  expect_error(isoreg_gpu(1:4, m), re_y)
  expect_error(isoreg_gpu(m, 1:4), re_x)
  expect_error(isoreg_gpu(1:4, c(2, 1, 3, 4), w = m), re_w)
  expect_error(isoreg_batch(c(1, 2, 3, 4), group = m), "\\bgroup\\b")
  # arrays of more dimensions are named as such
  a <- array(1:8, c(2, 2, 2))
  expect_error(isoreg_batch(a), "^`y` must be a vector or a matrix, not a 3-d array$")
  expect_error(isoreg_batch(a, increasing = "auto"), "^`y` must be a vector or a matrix, not a 3-d array$")
  expect_error(isoreg_gpu(a), "^`y` must be a vector, not a 3-d array$")
  expect_error(isoreg_gpu(1:8, a), "^`y` must be a vector, not a 3-d array$")
})

test_that("non-numeric input is an error", {
  expect_error(isoreg_gpu(c("a", "b")), re_xy)
  expect_error(isoreg_gpu(1:2, c("a", "b")), re_y)
  expect_error(isoreg_gpu(c("a", "b"), c(1, 2)), re_x)
  expect_error(isoreg_gpu(1:2, c(1, 2), w = c("1", "1")), re_w)
  expect_error(isoreg_gpu(list(1, 2)), re_xy)
  expect_error(isoreg_gpu(1:2, list(1, 2)), re_y)
  expect_error(isoreg_gpu(factor(c("a", "b")), c(1, 2)), re_x)
  expect_error(isoreg_gpu(c(1+1i, 2)), re_xy)
  expect_error(isoreg_batch(matrix(c("a", "b"), 1)), re_y)
  expect_error(isoreg_batch(matrix(1:4, 2), w = matrix(c("a", "b", "c", "d"), 2)), re_w)
})

test_that("empty input is an error", {
  expect_error(isoreg_gpu(numeric(0)), re_xy)
  expect_error(isoreg_gpu(numeric(0), numeric(0)), re_xy)
  expect_error(isoreg_gpu(NULL))
  expect_error(isoreg_gpu(integer(0), w = numeric(0)), re_xy)
})

test_that("group of the wrong length, NA in group and bad group type are errors naming group", {
  y <- c(1, 3, 2, 4, 5)
  expect_error(isoreg_batch(y, group = c(1, 1, 2, 2)), "\\bgroup\\b")
  expect_error(isoreg_batch(y, group = c(1, 1, 2, 2, 2, 2)), "\\bgroup\\b")
  expect_error(isoreg_batch(y, group = c(1, NA, 2, 2, 1)), "\\bgroup\\b")
  expect_error(isoreg_batch(y, group = factor(c("a", NA, "b", "b", "a"))), "\\bgroup\\b")
  expect_error(isoreg_batch(y, group = c(1L, 1L, NA, 2L, 2L)), "\\bgroup\\b")
  # group with a matrix y makes no sense
  expect_error(isoreg_batch(matrix(1:4, 2), group = c(1, 2, 1, 2)), "\\bgroup\\b|\\by\\b")
})

test_that("bad scalar arguments are errors", {
  expect_error(isoreg_gpu(1:3, increasing = NA), "increasing")
  expect_error(isoreg_gpu(1:3, increasing = "yes"), "increasing")
  expect_error(isoreg_gpu(1:3, increasing = c(TRUE, FALSE)), "increasing")
  expect_error(isoreg_gpu(1:3, y_min = NA), "y_min")
  expect_error(isoreg_gpu(1:3, y_max = "a"), "y_max")
  expect_error(isoreg_gpu(1:3, device = "tpu"), "`device` must be one of \"auto\", \"cpu\", \"gpu\", not \"tpu\"")
  expect_error(isoreg_batch(matrix(1:4, 2), increasing = NA), "increasing")
})

test_that("precision must be double or single", {
  expect_error(isoreg_gpu(1:3, precision = "half"),
               "`precision` must be one of \"double\", \"single\", not \"half\"")
  expect_error(isoreg_batch(matrix(1:4, 2), precision = "half"), "`precision` must be one of")
})

test_that("errors leave no state behind: a good call after bad ones works", {
  expect_error(isoreg_gpu(c(1, NA)))
  expect_error(isoreg_gpu(c(1, 2), w = c(-1, 1)))
  expect_error(isoreg_gpu(rep(1e307, 20)))
  expect_equal(isoreg_gpu(c(2, 1))$fitted, c(1.5, 1.5))
  expect_equal(isoreg_batch(matrix(c(2, 1), 1))[1, ], c(1.5, 1.5))
})

test_that("errors of a matrix with weights shared by its rows name the right place", {
  expect_error(isoreg_batch(matrix(c(1, 2, 3, NA), 2), w = c(1, 1)), "NA at row 2, column 2")
  expect_error(isoreg_batch(matrix(c(1, 2, 3, 4), 2), w = c(1, -1)), "-1 at element 2")
  expect_error(isoreg_batch(matrix(c(1, 2, 3, 4), 2), w = c(0, 0)), "positive weight in row 1")
  expect_error(isoreg_gpu(1:3, w = c(1, -Inf, 1)), "-Inf at element 2")
})

test_that("the element reported for bad input does not depend on the number of chunks", {
  y <- stats::rnorm(5000)
  y[c(1200, 4100)] <- NaN
  for (chunks in c(1L, 2L, 7L)) {
    old <- options(gpuiso.chunks = chunks)
    expect_error(isoreg_gpu(y), "NaN at element 1200")
    options(old)
  }
})

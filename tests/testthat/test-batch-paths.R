# The batch engine's own paths give the fits of the general ones, bit for bit, and the plain-R
# references: unweighted short rows (one pass, without runs), rows of a matrix on x (sorted and
# pooled in their tiles), groups on x (one sort for all groups, long groups on all threads) and
# several long rows of a matrix (each alone on all threads).

message_of <- function(expr) tryCatch(expr, error = conditionMessage)

test_that("unweighted short rows: the bits of weights 1, and the plain-R PAV", {
  set.seed(31)
  makers <- list(
    noise = function(r, c) matrix(rnorm(r * c), r) + rep(seq(0, 3, length.out = c), each = r),
    ties = function(r, c) matrix(sample(0:3, r * c, TRUE), r),
    thirds = function(r, c) matrix(round(rnorm(r * c), 1) / 3, r),
    tiny = function(r, c) matrix(rnorm(r * c) * 1e-300, r), # products guarded: the general path
    huge = function(r, c) matrix(rnorm(r * c) * 1e300, r),
    signed_zeros = function(r, c) matrix(sample(c(0, -0, 1e-310, 0.1), r * c, TRUE), r))
  for (make in makers) {
    for (shape in list(c(200, 1), c(300, 16), c(20, 700))) {
      y <- make(shape[1], shape[2])
      for (up in c(TRUE, FALSE)) {
        for (b in list(c(-Inf, Inf), c(-0.5, 0.7))) {
          plain <- isoreg_batch(y, increasing = up, y_min = b[1], y_max = b[2], block_starts = TRUE)
          ones <- isoreg_batch(y, w = rep(1, shape[2]), increasing = up, y_min = b[1], y_max = b[2],
                               block_starts = TRUE)
          expect_identical(plain, ones)
          for (i in c(1, shape[1])) {
            ref <- pmin(pmax(ref_pav(y[i, ], increasing = up), b[1]), b[2])
            expect_equal(plain$fitted[i, ], ref, tolerance = 1e-12)
          }
        }
      }
    }
  }
  y <- matrix(rnorm(64), 4)
  y[3, 5] <- NaN
  expect_identical(message_of(isoreg_batch(y)), "`y` must be finite, but has NaN at row 3, column 5")
})

test_that("rows of a matrix on x: the single-row fits on x, 1 and 2 threads, and the groups' path", {
  set.seed(32)
  for (shape in list(c(40, 7), c(300, 16), c(25, 2000), c(2, 30000))) {
    r <- shape[1]
    k <- shape[2]
    y <- matrix(rnorm(r * k), r) + rep(seq(0, 3, length.out = k), each = r)
    x <- matrix(sample(round(runif(r * k) * k / 3)), r) # ties within rows
    w <- matrix(runif(r * k) * sample(c(0, 1, 1, 1), r * k, TRUE), r)
    w[, 1] <- 1
    shared <- sample(k) %/% 2
    for (up in c(TRUE, FALSE)) {
      one <- on_threads(1, isoreg_batch(y, w, x = x, increasing = up, block_starts = TRUE))
      two <- on_threads(2, isoreg_batch(y, w, x = x, increasing = up, block_starts = TRUE))
      expect_identical(two, one)
      groups <- isoreg_batch(as.vector(y), as.vector(w), x = as.vector(x), group = as.vector(row(y)),
                             increasing = up, block_starts = TRUE)
      expect_identical(as.vector(one$fitted), groups$fitted)
      expect_identical(as.vector(one$block_start), groups$block_start)
      v <- isoreg_batch(y, x = shared, increasing = up, y_min = -0.2)
      for (i in c(1, r)) {
        expect_identical(one$fitted[i, ], isoreg_gpu(x[i, ], y[i, ], w[i, ], increasing = up)$fitted)
        expect_equal(one$fitted[i, ], ref_isoreg(x[i, ], y[i, ], w[i, ], increasing = up), tolerance = 1e-12)
        expect_identical(v[i, ], isoreg_gpu(shared, y[i, ], increasing = up, y_min = -0.2)$fitted)
        # a block starts at the first element, in x order (ties in input order), of a new level
        o <- order(x[i, ])
        lev <- one$fitted[i, o]
        first <- c(TRUE, lev[-1] != lev[-k])
        expect_identical(one$block_start[i, o], first)
      }
    }
  }
  y <- matrix(rnorm(60), 6)
  expect_identical(message_of(isoreg_batch(replace(y, 8, NaN), x = matrix(1:60, 6))),
                   "`y` must be finite, without NA, but has NaN at element 8")
  expect_identical(message_of(isoreg_batch(y, w = replace(y * 0 + 1, 6 * (0:9) + 2, 0), x = matrix(1:60, 6))),
                   "`w` must have a positive weight in each row, but has none in row 2")
})

test_that("groups on x: long groups on all threads give the bits of the single fit in their chunks", {
  set.seed(33)
  n <- 6e5 # distinct x: two chunks of 2^18 or more
  x <- c(sample(n), sample(n) + 0.5)
  g <- rep(c("a", "b"), each = n)
  y <- x / n + rnorm(2 * n)
  w <- runif(2 * n, 0.5, 2)
  one <- on_threads(1, isoreg_batch(y, w, x = x, group = g, block_starts = TRUE))
  two <- on_threads(2, isoreg_batch(y, w, x = x, group = g, block_starts = TRUE))
  expect_identical(two, one)
  old <- options(gpuiso.chunks = 2L)
  on.exit(options(old))
  b <- n + seq_len(n)
  expect_identical(one$fitted[b], on_threads(2, isoreg_gpu(x[b], y[b], w[b]))$fitted)
  expect_equal(one$fitted[b], ref_isoreg(x[b], y[b], w[b]), tolerance = 1e-12)
})

test_that("several long rows of a matrix: each the bits of the row alone, on 1 and 2 threads", {
  set.seed(34)
  n <- 6e5
  m <- 5 # on 2 threads, whole rows a thread (at least 2 a thread); on 1, each row in its chunks
  y <- matrix(rnorm(m * n), m) + rep(seq(0, 3, length.out = n), each = m)
  w <- matrix(runif(m * n, 0.5, 2), m)
  for (ww in list(NULL, w, w[2, ])) {
    one <- on_threads(1, isoreg_batch(y, ww, block_starts = TRUE))
    two <- on_threads(2, isoreg_batch(y, ww, block_starts = TRUE))
    expect_identical(two, one)
    for (i in seq_len(m)) {
      wi <- if (is.matrix(ww)) ww[i, ] else ww
      alone <- on_threads(2, isoreg_batch(matrix(y[i, ], 1), if (is.null(wi)) NULL else matrix(wi, 1),
                                          block_starts = TRUE))
      expect_identical(one$fitted[i, ], alone$fitted[1, ])
      expect_identical(one$block_start[i, ], alone$block_start[1, ])
    }
  }
  expect_equal(one$fitted[3, ], ref_pav(y[3, ], w[2, ]), tolerance = 1e-12)
  y[3, 7777] <- Inf
  y[5, 10] <- NaN # the first bad row is the one reported, whichever thread meets it first
  expect_identical(message_of(isoreg_batch(y)), "`y` must be finite, but has Inf at row 3, column 7777")
  expect_identical(message_of(on_threads(2, isoreg_batch(y))),
                   "`y` must be finite, but has Inf at row 3, column 7777")
  w[2, 8] <- -1
  expect_identical(message_of(isoreg_batch(y, w)), "`w` must be non-negative, but has -1 at row 2, column 8")
  expect_identical(message_of(isoreg_batch(y, w[2, ])), "`w` must be non-negative, but has -1 at element 8")
})

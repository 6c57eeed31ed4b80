# Batches give the same bits on any number of threads: short rows are fitted one per thread as
# single rows are on one thread; a row long enough to be split (2^19 elements and more) is split
# into chunks by its length alone, whether it is fitted alone on all threads or beside other rows
# on one, so it equals the single-row fit in as many chunks.

batch_bits <- function(...) on_threads(1, isoreg_batch(...))

test_that("short rows of a matrix: 1 and 2 threads, and the single-row fit, agree bit for bit", {
  set.seed(21)
  for (shape in list(c(3000, 16), c(40, 1500), c(9, 40000))) {
    y <- matrix(rnorm(prod(shape)), shape[1]) + rep(seq(0, 2, length.out = shape[2]), each = shape[1])
    w <- matrix(runif(length(y), 0.5, 2), shape[1])
    for (ww in list(NULL, w, w[1, ])) {
      one <- on_threads(1, isoreg_batch(y, w = ww, block_starts = TRUE))
      two <- on_threads(2, isoreg_batch(y, w = ww, block_starts = TRUE))
      expect_identical(two, one)
      for (i in c(1, shape[1])) {
        wi <- if (is.null(ww)) NULL else if (is.matrix(ww)) ww[i, ] else ww
        expect_identical(one$fitted[i, ], on_threads(1, isoreg_gpu(y[i, ], w = wi))$fitted)
      }
    }
  }
})

test_that("a long row alone, beside another and in groups: the same bits on 1 and 2 threads", {
  set.seed(22)
  n <- 6e5 # two chunks of 2^18 or more
  y <- cumsum(rnorm(n)) / 50 + rnorm(n)
  w <- runif(n, 0.5, 2)
  alone1 <- on_threads(1, isoreg_batch(matrix(y, 1), w = w))
  alone2 <- on_threads(2, isoreg_batch(matrix(y, 1), w = w))
  expect_identical(alone2, alone1)
  pair <- on_threads(2, isoreg_batch(rbind(y, rev(y)), w = rbind(w, rev(w))))
  expect_identical(pair[1, ], alone1[1, ])
  grouped1 <- on_threads(1, isoreg_batch(c(y, rev(y)), w = c(w, rev(w)), group = rep(1:2, each = n)))
  grouped2 <- on_threads(2, isoreg_batch(c(y, rev(y)), w = c(w, rev(w)), group = rep(1:2, each = n)))
  expect_identical(grouped2, grouped1)
  expect_identical(grouped1[seq_len(n)], alone1[1, ])
  expect_identical(grouped1[n + seq_len(n)], pair[2, ])
  # the single-row fit in the same two chunks
  old <- options(gpuiso.chunks = 2L)
  on.exit(options(old))
  expect_identical(alone1[1, ], on_threads(2, isoreg_gpu(y, w = w))$fitted)
  expect_equal(alone1[1, ], ref_pav(y, w), tolerance = 1e-12)
})

test_that("errors of a long row alone name its element as the tiles do", {
  n <- 6e5
  message_of <- function(expr) tryCatch(expr, error = conditionMessage)
  y <- seq_len(n) / n
  y[4e5] <- NA
  alone <- message_of(isoreg_batch(matrix(y, 1)))
  expect_match(alone, "`y` must be finite, but has NA at row 1, column 400000", fixed = TRUE)
  expect_identical(message_of(isoreg_batch(rbind(y, seq_len(n)))), alone)
  w <- rep(1, n)
  w[5e5] <- -1
  x <- seq_len(n) / n
  alone <- message_of(isoreg_batch(matrix(x, 1), w = w))
  expect_match(alone, "`w`.*500000")
  expect_identical(message_of(isoreg_batch(matrix(x, 1), w = matrix(w, 1))),
                   message_of(isoreg_batch(rbind(x, x), w = rbind(w, w))))
})

test_that("errors of a long group fitted alone name its element and group", {
  n <- 6e5
  y <- c(seq_len(n), seq_len(n)) / n
  y[n + 123] <- NA
  expect_error(isoreg_batch(y, group = rep(1:2, each = n)),
               "`y` must be finite, but has NA at element 600123 (group 2)", fixed = TRUE)
  w <- rep(1, 2 * n)
  w[c(n + 5, 2 * n)] <- -1
  expect_error(isoreg_batch(y * 0, w = w, group = rep(c("a", "b"), each = n)),
               "`w` must be non-negative, but has -1 at element 600005 (group \"b\")", fixed = TRUE)
})

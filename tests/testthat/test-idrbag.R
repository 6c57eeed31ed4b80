# Subagging: the average of the predictive CDFs of fits to subsamples, against the reference.

tol <- 1e-12

# The reference draws the same subsamples (sample.int with the same seed, in the same order).
ref_idrbag <- function(y, x, newx, b, p, replace, grid, seed) {
  set.seed(seed)
  size <- ceiling(p * length(y))
  samples <- lapply(seq_len(b), function(i) sample.int(length(y), size, replace = replace))
  total <- 0
  for (s in samples) {
    cdf <- ref_idr(y[s], x[s])
    probs <- ref_idr_predict(cdf, sort(unique(x[s])), newx)
    k <- findInterval(grid, sort(unique(y[s])))
    total <- total + cbind(0, probs)[, k + 1L, drop = FALSE]
  }
  total / b
}

test_that("idrbag averages the predictions of the subsample fits", {
  set.seed(31)
  d <- gen_idr_data(120, ties_y = TRUE)
  newx <- c(0.1, 0.5, 0.93)
  grid <- sort(unique(d$y))
  for (replace in c(FALSE, TRUE)) {
    set.seed(7)
    pred <- idrbag(d$y, data.frame(x = d$x), data.frame(x = newx), b = 12, p = 0.5,
                   replace = replace, progress = FALSE)
    expect_length(pred, 3L)
    expect_equal(unname(cdf(pred, grid)),
                 ref_idrbag(d$y, d$x, newx, 12, 0.5, replace, grid, 7), tolerance = tol)
  }
  set.seed(7)
  small <- idrbag(d$y, d$x, newx, b = 5, p = 0.3, grid = c(2, 4, 8), progress = FALSE)
  expect_equal(unname(cdf(small, c(2, 4, 8))),
               ref_idrbag(d$y, d$x, newx, 5, 0.3, FALSE, c(2, 4, 8), 7), tolerance = tol)
  expect_true(all(qpred(pred, c(0.1, 0.9)) %in% grid))
  # a grid that stops below max(y) gets max(y), where every CDF is 1
  set.seed(7)
  short <- idrbag(d$y, d$x, newx, b = 4, p = 0.5, grid = c(4, 2, 2), progress = FALSE)
  expect_equal(unname(cdf(short, c(2, 4, max(d$y)))),
               ref_idrbag(d$y, d$x, newx, 4, 0.5, FALSE, c(2, 4, max(d$y)), 7), tolerance = tol)
  expect_true(all(cdf(short, max(d$y)) == 1))
})

test_that("a subsample with only zero weights is a clear error", {
  expect_error(idrbag(1:6 + 0, 1:6, 3.5, b = 2, p = 0.2, weights = c(0, 0, 0, 0, 0, 1), progress = FALSE),
               "`weights` are all zero in one of the subsamples")
})

test_that("idrbag shows a progress bar when asked and the work is long, and none otherwise", {
  set.seed(32)
  d <- gen_idr_data(40)
  # the bar appears after gpuiso.progress_after seconds (2 by default)
  withr_opt <- options(gpuiso.progress_after = 0)
  on.exit(options(withr_opt))
  expect_output(idrbag(d$y, d$x, 0.5, b = 3, p = 0.5, progress = TRUE), "100%")
  expect_silent(idrbag(d$y, d$x, 0.5, b = 3, p = 0.5, progress = FALSE))
  options(gpuiso.progress_after = 2)
  expect_silent(idrbag(d$y, d$x, 0.5, b = 3, p = 0.5, progress = TRUE))
})

test_that("idrbag runs on the workers of a future plan with the same result", {
  skip_on_cran()
  skip_if_not_installed("future.apply")
  set.seed(33)
  d <- gen_idr_data(200)
  run <- function() {
    set.seed(3)
    cdf(idrbag(d$y, d$x, c(0.2, 0.8), b = 6, p = 0.5, progress = FALSE), sort(unique(d$y)))
  }
  future::plan(future::sequential)
  here <- run()
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  expect_equal(run(), here, tolerance = tol)
})

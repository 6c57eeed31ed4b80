# IDR predictions and fits whose internals were edited, built by hand or saved by another version:
# every function that reads them gives an error naming the argument, never a crash or garbage.

pred_edit <- function(p, edit) {
  q <- unclass(p)
  q <- edit(q)
  class(q) <- class(p)
  q
}

expect_invalid <- function(expr, arg = "predictions") {
  expect_error(expr, sprintf("`%s` is not a valid gpuiso IDR object: .*edited", arg))
}

test_that("edited runs of a prediction are errors in cdf, qpred, crps, pit, [[ and print", {
  fit <- idr(c(3, 5, 3, 8), 1:4)
  p <- predict(fit, 2.5)
  before <- cdf(p, c(3, 5, 8))
  edits <- list(
    offset_far = function(q) { q$runs$offset[2] <- 1e6; q },
    offset_down = function(q) { q$runs$offset[2] <- 0; q },
    offset_frac = function(q) { q$runs$offset[2] <- 1.5; q },
    offset_na = function(q) { q$runs$offset[2] <- NA; q },
    offset_int = function(q) { q$runs$offset <- as.integer(q$runs$offset); q },
    start_far = function(q) { q$runs$start[length(q$runs$start)] <- 1e6L; q },
    start_neg = function(q) { q$runs$start[1] <- -1L; q },
    start_na = function(q) { q$runs$start[2] <- NA; q },
    start_short = function(q) { q$runs$start <- q$runs$start[-1]; q },
    value_big = function(q) { q$runs$value[1] <- 2; q },
    value_nan = function(q) { q$runs$value[1] <- NaN; q },
    npos_big = function(q) { q$runs$npos <- 1e12; q },
    npos_zero = function(q) { q$runs$npos <- 0; q },
    npos_text = function(q) { q$runs$npos <- "4"; q },
    no_runs = function(q) { q$runs <- NULL; q },
    runs_vector = function(q) { q$runs <- 1:3; q },
    runs_reordered = function(q) { q$runs <- q$runs[c(2, 1, 3, 4)]; q$runs$start <- NULL; q },
    pos_far = function(q) { q$pos <- 10L; q },
    pos_neg = function(q) { q$pos <- -1L; q },
    pos_double = function(q) { q$pos <- 1; q },
    lambda_nan = function(q) { q$lambda <- NaN; q },
    lambda_big = function(q) { q$lambda <- 1.5; q },
    lambda_long = function(q) { q$lambda <- c(0.5, 0.5); q },
    lambda_last = function(q) { q$pos <- 3L; q$lambda <- 0.5; q },
    thr_short = function(q) { q$thresholds <- q$thresholds[-1]; q },
    thr_unsorted = function(q) { q$thresholds <- rev(q$thresholds); q },
    thr_text = function(q) { q$thresholds <- as.character(q$thresholds); q },
    thr_inf = function(q) { q$thresholds[3] <- Inf; q }
  )
  for (name in names(edits)) {
    q <- pred_edit(p, edits[[name]])
    info <- paste("edit:", name)
    expect_invalid(cdf(q, c(3, 4, 5)))
    expect_invalid(qpred(q, c(0.1, 0.5)))
    expect_invalid(crps(q, 4))
    expect_invalid(pit(q, 4))
    expect_invalid(bscore(q, 4, 4))
    expect_invalid(qscore(q, 0.5, 4))
    # `[` rebuilds pos and lambda from the selected elements (as integer, one each), which
    # repairs these two edits
    if (!name %in% c("pos_double", "lambda_long")) {
      expect_invalid(q[[1]], "x")
      expect_invalid(capture.output(print(q)), "x")
    }
    expect_identical(cdf(p, c(3, 5, 8)), before, info = info) # the original is untouched
  }
})

test_that("a prediction built by hand in the right shape is evaluated, a wrong one is an error", {
  # two positions; at threshold 1 the CDFs 0.5 and 0.25, at threshold 2 both 1
  runs <- list(offset = c(0, 2, 3), start = c(0L, 1L, 0L), value = c(0.5, 0.25, 1), npos = 2)
  good <- structure(list(runs = runs, thresholds = c(1, 2), pos = c(0L, 1L, 0L),
                         lambda = c(0, 0, 0.5), bounds = FALSE), class = "gpuiso_idr")
  expect_equal(unname(cdf(good, c(0, 1, 2))),
               rbind(c(0, 0.5, 1), c(0, 0.25, 1), c(0, 0.375, 1)))
  expect_equal(unname(qpred(good, 0.5)[, 1]), c(1, 2, 2))
  bad <- good
  bad$runs$start <- c(0L, 0L, 0L) # a threshold's runs must have increasing starts
  expect_invalid(cdf(bad, 1))
  expect_invalid(crps(structure(list(), class = "gpuiso_idr"), numeric(0)))
  expect_invalid(cdf(structure(list(1, 2), class = "gpuiso_idr"), 1))
})

test_that("an edited IDR fit is an error in as.matrix and predict", {
  fit <- idr(c(3, 5, 3, 8), 1:4)
  bad <- fit
  bad$runs$offset[2] <- 1e6
  expect_invalid(as.matrix(bad), "x")
  expect_invalid(predict(bad, 2), "object")
  expect_invalid(predict(bad), "object")
  bad <- fit
  bad$X <- data.frame(x = 1:10) # more positions than the runs cover
  expect_invalid(as.matrix(bad), "x")
  expect_invalid(predict(bad, 9.5), "object")
  bad <- fit
  bad$thresholds <- bad$thresholds[-1]
  expect_invalid(predict(bad, 2), "object")
})

test_that("idrbag and predict of no new data give no predictions, which are valid", {
  fit <- idr(c(3, 5, 3, 8), 1:4)
  p <- idrbag(c(3, 5, 3, 8), 1:4, newdata = numeric(0), b = 2, p = 0.5)
  expect_identical(dim(cdf(p, 1:3)), c(0L, 3L))
  expect_identical(crps(p, numeric(0)), numeric(0))
  expect_identical(dim(cdf(predict(fit, numeric(0)), 1:3)), c(0L, 3L))
})

test_that("predictions saved and restored keep working", {
  fit <- idr(c(3, 5, 3, 8, 1, 7), c(1, 2, 3, 4, 5, 6))
  p <- predict(fit, c(1.5, 4, 7))
  restored <- unserialize(serialize(p, NULL))
  expect_identical(cdf(restored, 1:9), cdf(p, 1:9))
  expect_identical(crps(restored, 4), crps(p, 4))
})

# calibrate_isotonic() for scores that fall as the label rises: increasing = FALSE or "auto" fits
# a falling curve (the engines' non-increasing fit in score order); the rising fit warns when it is
# flat while the rank correlation is negative.

# The reference curve of (score, label, weight) in one direction: the isotonic regression of the
# labels on the scores (ties pooled), as a function evaluated at the training scores.
ref_curve_at <- function(score, label, w = NULL, increasing = TRUE) ref_isoreg(score, label, w, increasing)

test_that("a falling curve is the non-increasing isotonic fit of the labels", {
  set.seed(31)
  n <- 400
  score <- round(runif(n), 2)
  label <- rbinom(n, 1, 0.9 - 0.8 * score)
  w <- runif(n, 0.5, 2)
  cal <- calibrate_isotonic(score, label, w, increasing = FALSE)
  expect_false(cal$increasing)
  expect_equal(predict(cal, score), ref_curve_at(score, label, w, FALSE), tolerance = 1e-12)
  p <- cal$pooled
  expect_false(is.unsorted(p$lower))
  expect_true(all(diff(p$prob) <= 0))
  expect_true(all(p$lower <= p$upper))
  expect_equal(sum(p$weight), sum(w))
  # the mirror image of the rising curve of -score
  up <- calibrate_isotonic(-score, label, w)
  expect_equal(predict(cal, c(0.3, 0.71)), predict(up, -c(0.3, 0.71)), tolerance = 1e-14)
  expect_identical(calibrate_isotonic(score, label, w, increasing = "auto")$pooled, cal$pooled)
  out <- utils::capture.output(print(cal))
  expect_match(out[1], "falling with the score")
  s <- summary(cal)
  expect_true(s$min_prob <= s$max_prob)
  expect_equal(s$max_prob, max(p$prob))
})

test_that("the curves at the training scores are isoreg_gpu()'s fit, bit for bit, in both directions", {
  s <- c(0.1, 0.2, 0.3)
  w <- c(1, 0, 1)
  # a score of weight zero takes the level below it, whichever way the curve goes
  expect_identical(predict(calibrate_isotonic(s, c(1, 0, 0), weights = w, increasing = FALSE), 0.2), 1)
  # a block of 1 positive in 10 is 0.1, not 1 - 0.9; a tiny probability keeps its digits
  expect_identical(calibrate_isotonic(rep(0.5, 10), c(1, rep(0, 9)), increasing = FALSE)$pooled$prob, 0.1)
  expect_identical(calibrate_isotonic(c(1, 1), c(1, 0), c(1e-20, 1), increasing = FALSE)$pooled$prob, 1e-20)
  set.seed(34)
  for (rep in 1:20) {
    n <- sample(5:60, 1)
    score <- round(runif(n), sample(1:2, 1)) # with ties
    label <- rbinom(n, 1, 0.5)
    w <- runif(n) * rbinom(n, 1, 0.6)
    w[sample(n, 1)] <- 1
    g <- sample(c("a", "b"), n, TRUE)
    g[w > 0][1:2] <- c("a", "b")
    for (up in c(TRUE, FALSE)) {
      cal <- calibrate_isotonic(score, label, weights = w, group = g, increasing = up, device = "cpu")
      info <- sprintf("rep %d, increasing %s", rep, up)
      expect_identical(predict(cal, score), unname(fitted(isoreg_gpu(score, label, w, increasing = up))),
                       info = info)
      for (k in c("a", "b")) {
        i <- g == k
        expect_identical(predict(cal, score[i], group = g[i]),
                         unname(fitted(isoreg_gpu(score[i], label[i], w[i], increasing = up))), info = info)
      }
    }
  }
})

test_that("groups get falling curves too, each the reference fit of its group", {
  set.seed(32)
  n <- 300
  g <- sample(c("x", "y", "z"), n, TRUE)
  score <- runif(n)
  label <- rbinom(n, 1, 1 - score)
  cal <- calibrate_isotonic(score, label, group = g, increasing = FALSE)
  for (k in c("x", "y", "z")) {
    at <- score[g == k]
    expect_equal(predict(cal, at, group = rep(k, length(at))), ref_curve_at(at, label[g == k], NULL, FALSE),
                 tolerance = 1e-12)
  }
  expect_equal(predict(cal, score), ref_curve_at(score, label, NULL, FALSE), tolerance = 1e-12)
  # linear interpolation stays within the blocks' range, falling
  grid <- seq(0, 1, by = 0.01)
  lin <- predict(cal, grid, type = "linear")
  expect_true(all(diff(lin) <= 1e-15))
})

test_that("the rising fit of falling scores is flat, with a warning; \"auto\" chooses by Spearman", {
  score <- seq(0.01, 0.99, length.out = 50)
  label <- rep(1:0, each = 25)
  expect_warning(flat <- calibrate_isotonic(score, label),
                 "the calibration curve is flat \\(one block\\) while the scores fall as the label rises")
  expect_identical(nrow(flat$pooled), 1L)
  expect_warning(calibrate_isotonic(score, label, increasing = FALSE), NA)
  expect_warning(auto <- calibrate_isotonic(score, label, increasing = "auto"), NA)
  expect_false(auto$increasing)
  expect_equal(predict(auto, c(0.1, 0.9)), c(1, 0))
  # no warning for a flat curve of uncorrelated data, or of too few scores to tell
  expect_warning(calibrate_isotonic(c(0.1, 0.2, 0.3, 0.4), c(1, 0, 0, 1)), NA)
  expect_warning(calibrate_isotonic(c(3, 1, 2), c(0, 1, 1)), NA)
  # the rule: the 95% interval of Fisher's z of the Spearman correlation lies below 0
  n <- 12
  s <- seq_len(n)
  l <- c(1, 1, 1, 1, 0, 1, 0, 1, 0, 0, 0, 0)
  rho <- cor(s, l, method = "spearman")
  evident <- rho < -tanh(qnorm(0.975) / sqrt(n - 3))
  expect_true(evident)
  expect_warning(calibrate_isotonic(s, l), "Spearman correlation")
  l2 <- c(1, 0, 1, 1, 0, 1, 0, 1, 0, 1, 0, 0)
  rho2 <- cor(s, l2, method = "spearman")
  expect_lt(rho2, 0)
  expect_false(rho2 < -tanh(qnorm(0.975) / sqrt(n - 3)))
  expect_identical(nrow(suppressWarnings(calibrate_isotonic(s, l2))$pooled), 1L)
  expect_warning(calibrate_isotonic(s, l2), NA)
  set.seed(33)
  s <- runif(200)
  expect_warning(up <- calibrate_isotonic(s, rbinom(200, 1, s), increasing = "auto"), NA)
  expect_true(up$increasing)
  expect_error(calibrate_isotonic(s, rbinom(200, 1, s), increasing = "down"),
               "`increasing` must be TRUE, FALSE or \"auto\"")
})

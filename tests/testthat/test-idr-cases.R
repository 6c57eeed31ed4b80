# IDR cases with known answers (isodistrreg's documentation and tests). Layout of the tables:
# one row per threshold, columns the distinct x in increasing order, i.e. t(as.matrix(fit)).

tol <- 1e-12
cdf_rows <- function(y, x, w = NULL) unname(t(as.matrix(idr(y, x, weights = w))))

test_that("fitted CDFs match the known answers", {
  expect_equal(cdf_rows(1:3, 1:3, 1:3), rbind(c(1, 0, 0), c(1, 1, 0), c(1, 1, 1)), tolerance = tol)
  expect_equal(cdf_rows(c(4, 2, 3), 1:3),
               rbind(c(1, 1, 0) / 2, rep(2 / 3, 3), rep(1, 3)), tolerance = tol)
  expect_equal(cdf_rows(c(2, 4, 3, 1), 1:4),
               rbind(rep(1 / 4, 4), c(1, 1 / 3, 1 / 3, 1 / 3), c(1, 2 / 3, 2 / 3, 2 / 3), rep(1, 4)),
               tolerance = tol)
  expect_equal(cdf_rows(1:4, c(1, 2, 2, 3)),
               rbind(c(1, 0, 0), c(1, 1 / 2, 0), c(1, 1, 0), c(1, 1, 1)), tolerance = tol)
  expect_equal(cdf_rows(c(1, 2.5, 2.5, 4), 1:4),
               rbind(c(1, 0, 0, 0), c(1, 1, 1, 0), rep(1, 4)), tolerance = tol)
  expect_equal(cdf_rows(c(3, 3, 5), c(1, 3, 2)), rbind(c(1, 1 / 2, 1 / 2), c(1, 1, 1)), tolerance = tol)
  expect_equal(cdf_rows(c(6, 7, 8, 8, 9), c(0, 2, 1, 1, 3), c(1, 2, 1, 1, 1)),
               rbind(c(1, 0, 0, 0), c(1, 1 / 2, 1 / 2, 0), c(1, 1, 1, 0), rep(1, 4)), tolerance = tol)
  expect_equal(cdf_rows(c(1, 0, 2, 0, 2, 0, 2, 0, 2), c(0, 1, 1, 2, 2, 3, 3, 4, 4),
                        c(100, 9, 1, 8, 2, 7, 3, 6, 4)),
               rbind(rep(30 / 140, 5), c(1, .9, .8, .7, .6), rep(1, 5)), tolerance = tol)
  expect_equal(cdf_rows(c(3, 2, 5, 4, 1), 1:5),
               rbind(rep(1 / 5, 5), c(1 / 2, 1 / 2, 1 / 3, 1 / 3, 1 / 3), c(1, 1, 1 / 3, 1 / 3, 1 / 3),
                     c(1, 1, 2 / 3, 2 / 3, 2 / 3), rep(1, 5)), tolerance = tol)
  expect_equal(cdf_rows(c(3, 5, 6), c(2, 2, 2), 1:3), rbind(1 / 6, 1 / 2, 1), tolerance = tol)
  # -0 and 0 are one x and one threshold
  expect_equal(cdf_rows(c(-0, 5, 4, 0), c(-1, -0, 0, 1)),
               rbind(c(1, 1 / 3, 1 / 3), c(1, 2 / 3, 2 / 3), c(1, 1, 1)), tolerance = tol)
})

test_that("fits in isodistrreg's layout match its documented answers", {
  fit <- idr(c(1, 3, 2, 4), data.frame(x = 1:4))
  expect_equal(unname(as.matrix(fit)),
               rbind(c(1, 1, 1, 1), c(0, .5, 1, 1), c(0, .5, 1, 1), c(0, 0, 0, 1)), tolerance = tol)
  expect_equal(unname(as.matrix(idr(c(3, 5, 3), data.frame(x = c(7, 11, 13))))),
               rbind(c(1, 1), c(.5, 1), c(.5, 1)), tolerance = tol)
  fit <- idr(c(3, 5), data.frame(x = c(7, 7)), weights = c(1, 2), dense = TRUE)
  expect_equal(unname(fit$cdf), rbind(c(1 / 3, 1)), tolerance = tol)
  expect_equal(fit$weights, 3)
  expect_equal(fit$X, data.frame(x = 7))
  expect_equal(fit$thresholds, c(3, 5))
})

test_that("predictions, quantiles and scores match the known answers", {
  fit <- idr(c(3, 5, 3), data.frame(x = c(7, 11, 13)))
  pred <- predict(fit, data.frame(x = c(5, 7, 9, 12, 20)))
  expect_length(pred, 5L)
  expect_equal(unname(cdf(pred, c(3, 5))),
               rbind(c(1, 1), c(1, 1), c(.75, 1), c(.5, 1), c(.5, 1)), tolerance = tol)
  expect_equal(unname(qpred(pred, c(.25, .5, .75, 1))),
               rbind(c(3, 3, 3, 3), c(3, 3, 3, 3), c(3, 3, 3, 5), c(3, 3, 5, 5), c(3, 3, 5, 5)))
  expect_equal(crps(pred, 4), c(1, 1, .625, .5, .5), tolerance = tol)
  expect_equal(as.vector(bscore(pred, 3, 4)), c(1, 1, .5625, .25, .25), tolerance = tol)
  expect_equal(pit(pred, c(3, 3, 4, 5, 5), randomize = FALSE), c(1, 1, .75, 1, 1), tolerance = tol)
  # isodistrreg's layout of one prediction: the points where the CDF jumps, with bounds
  expect_equal(pred[[3]], data.frame(points = c(3, 5), lower = c(.5, 1), cdf = c(.75, 1),
                                     upper = c(1, 1)))
})

# Methods for IDR fits (summary, plot) and predictions (c, as.data.frame), against the brute-force
# reference of helper-idr.R and the predictions' own accessors.

test_that("summary gives the sizes and the predictive quantiles at five covariate values", {
  set.seed(41)
  d <- gen_idr_data(80, ties_y = TRUE)
  fit <- idr(d$y, data.frame(x = d$x))
  s <- summary(fit)
  expect_s3_class(s, "summary.gpuiso_idrfit")
  expect_identical(s$nobs, 80L)
  expect_identical(s$distinct, length(unique(d$x)))
  expect_identical(s$thresholds, length(unique(d$y)))
  expect_identical(s$range, range(d$y))
  xs <- sort(unique(d$x))
  expect_identical(s$quantiles$x, xs[c(1, 20, 40, 60, 80)])
  # quantiles by the definition inf{t : F(t) >= p} on the reference CDFs
  ref <- ref_idr(d$y, d$x)
  thr <- sort(unique(d$y))
  for (j in seq_len(nrow(s$quantiles))) {
    cdf <- ref[match(s$quantiles$x[j], xs), ]
    expect_equal(unname(unlist(s$quantiles[j, c("q10", "median", "q90")])),
                 vapply(c(0.1, 0.5, 0.9), function(p) thr[which(cdf >= p - 1e-12)[1]], 0))
  }
  out <- utils::capture.output(print(s))
  expect_match(out[2], "80 observations")
  expect_true(any(grepl("median", out)))
})

test_that("plot draws the predictive quantiles of the fit against its covariate", {
  aq <- na.omit(airquality[, c("Ozone", "Temp")])
  fit <- idr(aq$Ozone, aq[, "Temp", drop = FALSE])
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(fit), fit)
  usr <- graphics::par("usr")
  expect_true(usr[1] <= min(aq$Temp) && usr[2] >= max(aq$Temp))
  q <- qpred(predict(fit, data.frame(Temp = sort(unique(aq$Temp)))), c(0.1, 0.9))
  expect_true(usr[3] <= min(q) && usr[4] >= max(q))
  ord <- idr(c(1, 3, 2, 5, 4, 6), factor(c("a", "a", "b", "b", "c", "c"), ordered = TRUE))
  expect_silent(plot(ord, quantiles = 0.5, legend = FALSE))
  expect_error(plot(fit, quantiles = c(0, 0.5)), "`quantiles` must be probabilities strictly between 0 and 1")
  expect_error(plot(fit, n = 1), "`n` must be a number of at least 2")
})

test_that("c() of predictions of one fit concatenates them", {
  set.seed(42)
  d <- gen_idr_data(50)
  fit <- idr(d$y, data.frame(x = d$x))
  a <- predict(fit, data.frame(x = c(0.2, 0.5)))
  b <- predict(fit, data.frame(x = 0.9))
  ab <- c(a, b)
  expect_s3_class(ab, "gpuiso_idr")
  expect_identical(length(ab), 3L)
  expect_identical(ab[[3]], b[[1]])
  expect_identical(cdf(ab, d$y[1:4]), rbind(cdf(a, d$y[1:4]), cdf(b, d$y[1:4])))
})

test_that("c() of predictions of different fits keeps every CDF, on the union of thresholds", {
  set.seed(43)
  d1 <- gen_idr_data(40, ties_y = TRUE)
  d2 <- gen_idr_data(30)
  f1 <- idr(d1$y, data.frame(x = d1$x))
  f2 <- idr(d2$y, data.frame(x = d2$x))
  p1 <- predict(f1, data.frame(x = c(0.1, 0.6)))
  p2 <- predict(f2) # in sample: no bounds
  both <- c(p1, p2, p1[2])
  expect_identical(length(both), length(p1) + length(p2) + 1L)
  t <- sort(c(d1$y, d2$y, min(d1$y, d2$y) - 1, 0.5 + d2$y[1:5]))
  expect_equal(cdf(both, t), rbind(cdf(p1, t), cdf(p2, t), cdf(p1[2], t)), tolerance = 1e-15)
  # against the reference CDFs of the two fits
  r1 <- ref_idr_predict(ref_idr(d1$y, d1$x), sort(unique(d1$x)), c(0.1, 0.6))
  thr1 <- sort(unique(d1$y))
  at <- findInterval(t, thr1)
  expect_equal(cdf(both[1:2], t), cbind(0, r1)[, at + 1L], tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(crps(both, c(d1$y[1:2], d2$y, d1$y[3])), c(crps(p1, d1$y[1:2]), crps(p2, d2$y), crps(p1[2], d1$y[3])),
               tolerance = 1e-12)
  expect_equal(qpred(both, c(0.25, 0.5)), rbind(qpred(p1, c(0.25, 0.5)), qpred(p2, c(0.25, 0.5)), qpred(p1[2], c(0.25, 0.5))))
  expect_identical(both[[1]]$points, p1[[1]]$points)
  expect_error(c(p1, list(1)), "c\\(\\): argument 2 is a list; only gpuiso IDR predictions")
})

test_that("c() keeps each prediction's bounds, of one covariate or several", {
  f1 <- idr(c(1, 2, 3, 4), data.frame(x = 1:4))
  f2 <- idr(c(1, 2, 3, 4), data.frame(a = 1:4, b = 1:4))
  p1 <- predict(f1, data.frame(x = c(2.5, 9)))
  p2 <- predict(f2, data.frame(a = c(9, 2.5, 0), b = c(9, 2.5, 0)))
  inside <- predict(f2)[2]
  for (parts in list(list(p2, p2), list(p2, p1), list(p1, p2), list(p1, inside, p2))) {
    joined <- do.call(c, parts)
    expected <- unlist(lapply(parts, as.list), recursive = FALSE)
    for (i in seq_along(expected)) {
      one <- expected[[i]]
      if (is.null(one$lower)) one <- data.frame(points = one$points, lower = one$cdf, cdf = one$cdf, upper = one$cdf)
      expect_equal(joined[[i]], one, ignore_attr = TRUE, label = sprintf("prediction %d", i))
    }
    expect_named(as.data.frame(joined), c("prediction", "points", "lower", "cdf", "upper"))
  }
  # a prediction above every fitted point of several covariates has the lower bound 0
  expect_identical(c(p2, p1)[[1]]$lower, 0)
  expect_identical(c(p2, p2)[4:6][[1]], p2[[1]])
})

test_that("plot() takes isodistrreg's line types of the CDF and the bounds", {
  fit <- idr(c(1, 2, 3, 4), data.frame(a = 1:4, b = 1:4))
  p <- predict(fit, data.frame(a = 2.5, b = 2.5))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_silent(plot(p, lty.cdf = 3, lty.bounds = 4))
})

test_that("as.data.frame lists each prediction's jumps, as [[ does", {
  fit <- idr(c(3, 5, 3, 8, 6), data.frame(x = c(7, 11, 13, 15, 9)))
  p <- predict(fit, data.frame(x = c(8, 14, 20)))
  df <- as.data.frame(p)
  expect_named(df, c("prediction", "points", "lower", "cdf", "upper"))
  for (i in 1:3) {
    expect_equal(df[df$prediction == i, -1L], p[[i]], ignore_attr = TRUE)
  }
  inside <- as.data.frame(predict(fit))
  expect_named(inside, c("prediction", "points", "cdf"))
  expect_identical(max(inside$prediction), 5L)
  empty <- as.data.frame(p[integer(0)])
  expect_identical(nrow(empty), 0L)
})

test_that("c() and as.data.frame() leave objects of class \"idr\" that gpuiso did not make alone", {
  foreign <- structure(list(data.frame(points = 1:2, cdf = c(0.5, 1))), class = "idr")
  expect_identical(c(foreign, foreign), c(unclass(foreign), unclass(foreign)))
  expect_error(as.data.frame(foreign), "cannot coerce class")
})

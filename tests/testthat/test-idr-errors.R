# Bad input to idr() and idrbag(): clear errors that name the argument.

test_that("idr() rejects bad input with clear errors", {
  x <- c(1, 2, 3)
  expect_error(idr(c(1, NA, 3), x), "`y` must be finite, but has NA at element 2")
  expect_error(idr(c(1, Inf, 3), x), "`y` must be finite, but has Inf at element 2")
  expect_error(idr("a", 1), "`y` must be a numeric vector")
  expect_error(idr(numeric(0), numeric(0)), "`y` must have at least one element")
  expect_error(idr(1:3, c(1, NA, 3)), "`X` must not have NA, but has one at row 2")
  expect_error(idr(1:3, c(1, NaN, 3)), "`X` must not have NA")
  expect_error(idr(1:3, c(1, Inf, 3)), "`X` must be finite")
  expect_error(idr(1:3, 1:2), "`X` must have one row per element of `y` \\(3\\), not 2")
  expect_error(idr(1:3, data.frame(a = 1:3, b = c("u", "v", "w"))),
               "`X` must have numeric or ordered-factor columns, but column \"b\" is")
  expect_error(idr(1:3, data.frame(a = 1:3, b = c(1, NA, 2))),
               "`X` must not have NA, but column \"b\" has one at row 2")
  expect_error(idr(1:3, data.frame(a = 1:3, b = 3:1), device = "gpu"),
               "`device` must be \"auto\" or \"cpu\" with several covariates")
  expect_error(idr(1:3, data.frame(a = 1:3, b = 3:1), groups = c(a = 1, c = 2)),
               "`groups` must name each column of `X` once")
  expect_error(idr(1:3, data.frame(a = 1:3, b = 3:1), groups = c(a = 1, b = 2)),
               "`orders` must give one order to each group of `groups` \\(1, 2\\), not to 1")
  expect_error(idr(1:3, data.frame(a = 1:3, b = 3:1), orders = c(comp = 1, sd = 1)),
               "`orders` gives more than one order to a group")
  expect_error(idr(1:3, data.frame(a = ordered(1:3), b = 3:1), orders = c(sd = 1)),
               "`orders` \"sd\" needs numeric columns, but group 1 has an ordered factor")
  expect_error(idr(1:3, x, pars = list(eps_abs = 1e-6)), "`pars` sets isodistrreg's numerical solver")
  expect_error(idr(1:3, x, progress = NA), "`progress` must be TRUE or FALSE \\(or 1 or 0\\)")
  expect_error(idr(1:3, factor(c("a", "b", "c"))), "`X` must be numeric or an ordered factor")
  expect_error(idr(1:3, x, weights = c(1, -1, 1)), "`weights` must be finite and non-negative, but has -1 at element 2")
  expect_error(idr(1:3, x, weights = c(1, NA, 1)), "`weights` must be finite")
  expect_error(idr(1:3, x, weights = 1:2), "`weights` must have the same length as `y`")
  expect_error(idr(1:3, x, weights = c(0, 0, 0)), "`weights` must have at least one positive weight")
  # several covariates: the vectors' total weights within a ratio of 2^56 (the flows' doubles);
  # the same weights are fine for one covariate, and observations at one vector add up
  X2 <- data.frame(a = 1:4, b = c(1, 3, 2, 4))
  expect_error(idr(1:4, X2, weights = c(1, 1e-17, 1, 1)),
               "^`weights` must not span a ratio over 2\\^56 .* they span 1e\\+17 \\(one covariate")
  expect_silent(idr(1:4, X2, weights = c(1, 1e-16, 1, 1)))
  expect_silent(idr(1:4, data.frame(a = 1:4), weights = c(1, 1e-17, 1, 1)))
  expect_silent(idr(1:5, rbind(X2, X2[2, ]), weights = c(1, 1e-17, 1, 1, 1)))
  expect_error(idr(1:3, x, stoch = "hazard"), "`stoch` must be \"sd\"")
  expect_error(idr(1:3, x, orders = c(lex = 1)), "`orders` must be a named vector")
  expect_error(idr(1:3, x, groups = c(x = 1)), "`groups` must name each column of `X` once")
  expect_error(idr(1:3, x, dense = NA), "`dense` must be TRUE or FALSE")
  expect_error(idr(1:3, x, device = "tpu"), "`device` must be one of")
})

test_that("nothing is modified in place", {
  y <- c(3, 1, 2)
  X <- data.frame(x = c(2, 1, 3))
  w <- c(1, 2, 3)
  copies <- lapply(list(y, X, w), deep_copy)
  fit <- idr(y, X, weights = w)
  crps(predict(fit), y)
  expect_identical(list(y, X, w), copies)
})

test_that("idrbag() rejects bad input with clear errors", {
  y <- c(1, 3, 2, 4)
  X <- data.frame(x = 1:4)
  nd <- data.frame(x = 2.5)
  expect_error(idrbag(y, X, nd, b = 0, p = 0.5), "`b` must be a whole number from 1 to 1e6")
  expect_error(idrbag(y, X, nd, b = 2.5, p = 0.5), "`b` must be a whole number from 1 to 1e6")
  expect_error(idrbag(y, X, nd, b = 2, p = 1), "`p` must be a number between 0 and 1")
  expect_error(idrbag(y, X, b = 2, p = 0.5), "`newdata` is missing")
  expect_error(idrbag(y, X, data.frame(x = "a"), b = 2, p = 0.5), "`newdata` must be numeric")
  expect_error(idrbag(y, X, data.frame(z = 2.5), b = 2, p = 0.5),
               "`newdata` must have the column \"x\" \\(the covariate of the fit\\), but has \"z\"")
  expect_error(idrbag(y, X, nd, b = 2, p = 0.5, replace = NA), "`replace` must be TRUE or FALSE")
})

# The formula interface of isoreg_gpu(): the same fit as the default method on the same data, with
# the model frame that stats::lm() builds from the same arguments (subset, weights in data,
# na.action).

test_that("a formula fit is the default fit of the same variables", {
  fit <- isoreg_gpu(dist ~ speed, data = cars)
  expect_s3_class(fit, "gpuiso_fit")
  expect_equal(unname(fitted(fit)), ref_isoreg(cars$speed, cars$dist), tolerance = 1e-12)
  expect_identical(unname(fitted(fit)), fitted(isoreg_gpu(cars$speed, cars$dist)))
  expect_identical(fit$vars, c(x = "speed", y = "dist"))
  expect_identical(fit$call[[1L]], quote(isoreg_gpu))
  # a transformed covariate and response
  fit <- isoreg_gpu(log(dist) ~ sqrt(speed), data = cars, increasing = FALSE)
  expect_equal(unname(fitted(fit)), ref_isoreg(sqrt(cars$speed), log(cars$dist), increasing = FALSE),
               tolerance = 1e-12)
})

test_that("the data may be the second argument, as in lm(dist ~ speed, cars)", {
  fit <- isoreg_gpu(dist ~ speed, cars)
  expect_equal(unname(fitted(fit)), ref_isoreg(cars$speed, cars$dist), tolerance = 1e-12)
  expect_identical(fit$call$data, quote(cars))
  # with the formula's other arguments, a list and an environment
  sub <- isoreg_gpu(dist ~ speed, cars, subset = speed > 10, na.action = na.exclude)
  keep <- cars$speed > 10
  expect_identical(names(fitted(sub)), names(fitted(lm(dist ~ speed, cars, subset = speed > 10))))
  expect_equal(unname(fitted(sub)), ref_isoreg(cars$speed[keep], cars$dist[keep]), tolerance = 1e-12)
  expect_identical(fitted(isoreg_gpu(dist ~ speed, as.list(cars))), fitted(fit))
  expect_identical(unname(fitted(isoreg_gpu(dist ~ speed, list2env(as.list(cars))))), unname(fitted(fit)))
  # data given twice is still an error
  expect_error(isoreg_gpu(dist ~ speed, cars, data = cars), "`y` must be NULL when `x` is a formula")
})

test_that("fitted values carry the row names of the data, as lm's do", {
  d <- cars[c(5, 1, 30, 12, 44), ]
  rownames(d) <- c("e", "a", "ad", "l", "ar")
  fit <- isoreg_gpu(dist ~ speed, data = d)
  expect_identical(names(fitted(fit)), names(fitted(lm(dist ~ speed, data = d))))
  expect_identical(names(residuals(fit)), rownames(d))
  expect_equal(unname(residuals(fit)), d$dist - ref_isoreg(d$speed, d$dist), tolerance = 1e-12)
})

test_that("subset and weights are evaluated in data as lm evaluates them", {
  d <- transform(cars, wt = rep(c(0.5, 2, 1), length.out = 50))
  fit <- isoreg_gpu(dist ~ speed, data = d, subset = speed > 9, weights = wt)
  ref <- lm(dist ~ speed, data = d, subset = speed > 9, weights = wt)
  expect_identical(names(fitted(fit)), names(fitted(ref)))
  keep <- d$speed > 9
  expect_equal(unname(fitted(fit)), ref_isoreg(d$speed[keep], d$dist[keep], d$wt[keep]), tolerance = 1e-12)
  expect_identical(fit$w, d$wt[keep])
  expect_identical(nobs(fit), nobs(ref))
  # a variable of the calling frame, as in lm()
  v <- rep(1:2, 25)
  fit <- isoreg_gpu(dist ~ speed, data = cars, weights = v)
  expect_equal(unname(fitted(fit)), ref_isoreg(cars$speed, cars$dist, v), tolerance = 1e-12)
})

test_that("without data, the variables come from the formula's environment", {
  s <- c(4, 1, 3, 2, 5)
  r <- c(2, 1, 5, 1, 4)
  expect_equal(unname(fitted(isoreg_gpu(r ~ s))), ref_isoreg(s, r), tolerance = 1e-12)
})

test_that("na.action: rows with NA are dropped, or padded back with na.exclude", {
  d <- data.frame(x = c(1, 2, NA, 4, 5, 6), y = c(3, 1, 2, NA, 6, 5))
  omit <- isoreg_gpu(y ~ x, data = d)
  ok <- complete.cases(d)
  expect_equal(unname(fitted(omit)), ref_isoreg(d$x[ok], d$y[ok]), tolerance = 1e-12)
  expect_identical(names(fitted(omit)), names(fitted(lm(y ~ x, data = d))))
  excl <- isoreg_gpu(y ~ x, data = d, na.action = na.exclude)
  ref <- lm(y ~ x, data = d, na.action = na.exclude)
  expect_identical(is.na(fitted(excl)), is.na(fitted(ref)))
  expect_identical(names(residuals(excl)), names(residuals(ref)))
  expect_equal(unname(fitted(excl)[ok]), ref_isoreg(d$x[ok], d$y[ok]), tolerance = 1e-12)
  expect_identical(nobs(excl), 4L)
  # predict() without newdata is fitted(), padded as lm's is
  expect_identical(predict(excl), fitted(excl))
  expect_identical(is.na(predict(excl)), is.na(predict(ref)))
  expect_identical(predict(omit), fitted(omit))
  expect_identical(names(predict(omit)), names(predict(lm(y ~ x, data = d))))
  expect_error(isoreg_gpu(y ~ x, data = d, na.action = na.fail), "missing values")
  # no rows left is an error that says why, not one about an empty y
  expect_error(isoreg_gpu(y ~ x, data = d, subset = x > 10), "^`data` has no rows left to fit after `subset` and `na.action`$")
  expect_error(isoreg_gpu(y ~ x, data = d[c(3, 4), ]), "^`data` has no rows left to fit after `subset` and `na.action`$")
})

test_that("predict takes a data frame for a formula fit", {
  fit <- isoreg_gpu(dist ~ log(speed), data = cars)
  new <- data.frame(speed = c(3, 10.5, 30))
  expect_identical(predict(fit, new), predict(fit, log(new$speed)))
  expect_error(predict(fit, data.frame(wind = 1)), "`newdata` must hold the covariate `log\\(speed\\)`")
  plain <- isoreg_gpu(cars$speed, cars$dist)
  expect_error(predict(plain, new), "`newdata` is a data frame, but the fit was not made with a formula")
})

test_that("the other arguments pass to the default method; wrong formulas are errors", {
  fit <- isoreg_gpu(dist ~ speed, data = cars, increasing = FALSE, y_min = 20, method = "hull")
  expect_equal(unname(fitted(fit)), pmax(ref_isoreg(cars$speed, cars$dist, increasing = FALSE), 20),
               tolerance = 1e-12)
  expect_identical(fit$method, "hull")
  re <- "`x` must be a formula y ~ x, of a response and one covariate, not"
  expect_error(isoreg_gpu(dist ~ speed + I(speed^2), data = cars), re)
  expect_error(isoreg_gpu(~ speed, data = cars), re)
  expect_error(isoreg_gpu(dist ~ 1, data = cars), re)
  expect_error(isoreg_gpu(dist ~ speed + offset(speed), data = cars), re)
  expect_error(isoreg_gpu(dist ~ speed, data = cars, w = rep(1, 50)), "`w` must be NULL when `x` is a formula")
  expect_error(isoreg_gpu(dist ~ speed, cars$dist, data = cars), "`y` must be NULL when `x` is a formula")
  expect_error(isoreg_gpu(dist ~ speed, data = cars, weights = rep(-1, 50)), "`weights` must be finite and non-negative")
  expect_error(isoreg_gpu(dist ~ speed, data = cars, weighs = 1), "unused argument")
  # errors of the fit itself name the formula's variables and `weights`
  inf <- transform(cars, dist = replace(dist, 3, Inf))
  expect_error(isoreg_gpu(dist ~ speed, data = inf), "^`dist` must be finite, but has Inf at element 3$")
  expect_error(isoreg_gpu(dist ~ speed, data = transform(cars, speed = replace(speed, 4, -Inf))),
               "^`speed` must be finite, but has -Inf at element 4$")
  expect_error(isoreg_gpu(dist ~ speed, data = cars, weights = rep(1e307, 50)),
               "^`dist` and `weights` are too large: the weighted sums overflow")
  # the formula's arguments with vectors are errors, not ignored
  expect_error(isoreg_gpu(cars$speed, cars$dist, data = cars), "`data` only applies when `x` is a formula")
  expect_error(isoreg_gpu(cars$speed, cars$dist, weights = rep(1, 50)), "`weights` only applies when `x` is a formula")
})

test_that("the default method keeps its positional arguments and refuses unknown ones", {
  x <- c(5, 1, 4, 2, 3)
  y <- c(1, 3, 2, 5, 4)
  w <- c(1, 2, 1, 2, 1)
  expect_equal(fitted(isoreg_gpu(x, y, w, FALSE)), ref_isoreg(x, y, w, increasing = FALSE), tolerance = 1e-12)
  expect_equal(fitted(isoreg_gpu(y)), ref_pav(y), tolerance = 1e-12)
  expect_equal(fitted(isoreg_gpu(y = y)), ref_pav(y), tolerance = 1e-12)
  expect_error(isoreg_gpu(x, y, wt = w), "unused argument")
  # a formula held in a variable, and data of the calling function
  f <- r ~ s
  local({
    dd <- data.frame(s = x, r = y)
    expect_equal(unname(fitted(isoreg_gpu(f, data = dd))), ref_isoreg(x, y), tolerance = 1e-12)
  })
})

# Errors that say which argument is wrong and what it accepts, and messages that do not
# contradict themselves.

test_that("a choice argument's error names it, what it accepts and what it got", {
  choices <- list(
    list(function(v) isoreg_gpu(1:3, device = v), "device", '"auto", "cpu", "gpu"'),
    list(function(v) isoreg_gpu(1:3, method = v), "method", '"auto", "pav", "hull"'),
    list(function(v) isoreg_gpu(1:3, precision = v), "precision", '"double", "single"'),
    list(function(v) isoreg_batch(matrix(1:4, 2), device = v), "device", '"auto", "cpu", "gpu"'),
    list(function(v) isoreg_batch(matrix(1:4, 2), method = v), "method", '"auto", "pav", "hull"'),
    list(function(v) predict(isoreg_gpu(1:3), 2, type = v), "type", '"step", "linear"'),
    list(function(v) predict(isoreg_gpu(1:3), 2, outside = v), "outside", '"clip", "na", "error"'),
    list(function(v) calibration_error(c(0.2, 0.8), c(0, 1), binning = v), "binning", '"width", "mass"'),
    list(function(v) calibration_bins(c(0.2, 0.8), c(0, 1), binning = v), "binning", '"width", "mass"'),
    list(function(v) reliability_diagram(c(0.2, 0.8), c(0, 1), binning = v), "binning", '"width", "mass"'),
    list(function(v) idr(1:3, 1:3, device = v), "device", '"auto", "cpu", "gpu"'),
    list(function(v) calibrate_isotonic(1:3, c(0, 1, 1), device = v), "device", '"auto", "cpu", "gpu"'),
    list(function(v) predict(calibrate_isotonic(1:3, c(0, 1, 1)), 2, type = v), "type", '"step", "linear"'),
    list(function(v) plot(calibrate_isotonic(1:3, c(0, 1, 1)), type = v), "type", '"step", "linear"')
  )
  bad <- list(tpu = list("tpu", '"tpu"'), na = list(NA, "NA"), na_chr = list(NA_character_, "NA"),
              two = list(c("cpu", "gpu"), "2 values"), number = list(1, "a double vector"),
              none = list(NULL, "NULL"), empty = list("", '""'))
  for (ch in choices) {
    for (b in bad) {
      pattern <- sprintf("`%s` must be one of %s, not %s", ch[[2]], ch[[3]], b[[2]])
      expect_error(ch[[1]](b[[1]]), pattern, fixed = TRUE)
    }
  }
  # an empty vector is not a choice: one string is needed
  for (ch in choices) {
    expect_error(ch[[1]](character(0)), sprintf("`%s` must be a single string, one of %s, not an empty character vector",
                                                 ch[[2]], ch[[3]]), fixed = TRUE)
  }
  expect_error(isoreg_gpu(1:3, device = logical(0)), "`device` must be a single string, one of .*, not an empty logical vector")
  # as with match.arg, a unique prefix is taken
  expect_identical(isoreg_gpu(c(2, 1), device = "c", method = "h")$method, "hull")
  expect_equal(predict(isoreg_gpu(1:3), 1.5, type = "lin"), 1.5)
})

test_that("a wrong type is described as what it is", {
  cases <- list(
    list(Sys.Date() + 1:3, 'an object of class "Date"'),
    list(as.POSIXct("2024-01-01", tz = "UTC") + 1:3, 'an object of class "POSIXct", "POSIXt"'),
    list(as.difftime(1:3, units = "secs"), 'an object of class "difftime"'),
    list(list(1, 2), "a list"),
    list(new.env(), "an environment"),
    list(getClass("numeric"), 'an S4 object of class "classRepresentation"'),
    list(c("a", "b"), "a character vector"),
    list(matrix(c("a", "b")), "a character matrix"),
    list(1i, "a complex vector"),
    list(sum, "a function"),
    list(quote(a), "a symbol"),
    list(factor(1:3), "a factor"),
    list(data.frame(a = 1:3), "a data frame")
  )
  for (case in cases) {
    expect_error(isoreg_gpu(case[[1]]), sprintf("`y` must be a numeric vector, not %s", case[[2]]),
                 fixed = TRUE)
  }
  expect_error(isoreg_gpu(1:3, Sys.Date() + 1:3), '`y` must be a numeric vector, not an object of class "Date"',
               fixed = TRUE)
  expect_error(brier_score(Sys.Date(), 1), '`prob` must be a numeric vector, not an object of class "Date"',
               fixed = TRUE)
  expect_error(idr(1:3, Sys.Date() + 1:3), '`X` must be numeric or an ordered factor, not an object of class "Date"',
               fixed = TRUE)
})

test_that("a bad value of y with x unsorted is reported at its position in the input", {
  expect_error(isoreg_gpu(airquality$Wind, airquality$Ozone), "`y` must be finite, but has NA at element 5$")
  expect_error(isoreg_gpu(c(3, 2, 1), c(1, NaN, NA)), "has NaN at element 2$")
  expect_error(isoreg_gpu(c(3, 2, 1), c(1, 2, 3), w = c(1, Inf, -1)), "`w` must be finite, but has Inf at element 2$")
  expect_error(isoreg_gpu(c(3, 2, 1), c(1, 2, 3), w = c(1, -1, Inf)), "`w` must be non-negative, but has -1 at element 2$")
  # ties in x, the bad one after good ones of the same x
  expect_error(isoreg_gpu(c(2, 1, 1, 2), c(NA, 1, NaN, 2)), "has NA at element 1$")
})

test_that("a batch's error names the group by its id, not by an internal code", {
  expect_error(isoreg_batch(c(1, NA, 3, 4), group = c(2, 1, 2, 1)),
               "has NA at element 2 \\(group \"1\"\\)")
  expect_error(isoreg_batch(c(1, NA, 3, 4), group = c("b", "a", "b", "a")),
               "has NA at element 2 \\(group \"a\"\\)")
  expect_error(isoreg_batch(c(1, NA, 3, 4), group = factor(c("b", "a", "b", "a"))),
               "has NA at element 2 \\(group \"a\"\\)")
  expect_error(isoreg_batch(c(1, NA, 3, 4), group = c(2L, 1L, 2L, 1L)), "has NA at element 2 \\(group 1\\)")
  expect_error(isoreg_batch(c(1, 2, 3, 4), w = c(1, 0, 1, 0), group = c(7, 9, 7, 9)),
               "`w` must have at least one positive weight in group \"9\"")
})

test_that("zero-row ensembles, 1-d arrays and infinite b", {
  ens <- data.frame(a = numeric(0), b = numeric(0))
  expect_identical(dim(cdf(ens, c(1, 2))), c(0L, 2L))
  expect_identical(dim(qpred(ens, c(0.1, 0.5, 0.9))), c(0L, 3L))
  expect_identical(crps(ens, numeric(0)), numeric(0))
  expect_identical(pit(ens, numeric(0)), numeric(0))
  expect_identical(dim(bscore(ens, 1, numeric(0))), c(0L, 1L))
  expect_identical(dim(qscore(ens, 0.5, numeric(0))), c(0L, 1L))

  p <- predict(idr(c(3, 5, 3, 8), 1:4), c(2.5, 3))
  y <- c(3, 4)
  a <- array(y)
  expect_identical(crps(p, a), crps(p, y))
  expect_identical(pit(p, a, randomize = FALSE), pit(p, y, randomize = FALSE))
  expect_identical(qscore(p, c(0.2, 0.5), a), qscore(p, c(0.2, 0.5), y))
  expect_identical(bscore(p, 4, a), bscore(p, 4, y))
  expect_identical(cdf(p, array(c(3, 5))), cdf(p, c(3, 5)))
  ens <- data.frame(m1 = c(1, 4), m2 = c(2, 5))
  expect_identical(qscore(ens, 0.5, a), qscore(ens, 0.5, y))
  expect_identical(isoreg_gpu(array(c(3, 1, 2)))$fitted, c(2, 2, 2))

  for (b in list(Inf, -Inf, NaN, 1e9, 2.5, 0, "5", c(2, 3))) {
    expect_error(idrbag(c(3, 5, 3, 8), 1:4, newdata = 2, b = b, p = 0.5),
                 "`b` must be a whole number from 1 to 1e6")
  }
})

test_that("idrbag and predict take new data only under the covariate's name", {
  X <- data.frame(Temp = c(60, 70, 80, 90))
  y <- c(3, 5, 4, 8)
  expect_error(idrbag(y, X, newdata = data.frame(Wind = 75), b = 2, p = 0.5),
               "`newdata` must have the column \"Temp\".*but has \"Wind\"")
  expect_error(predict(idr(y, X), data.frame(Wind = 75)), "`data` must have the column \"Temp\"")
  set.seed(1)
  a <- idrbag(y, X, newdata = data.frame(Wind = 1, Temp = 75), b = 2, p = 0.5)
  set.seed(1)
  b <- idrbag(y, X, newdata = data.frame(Temp = 75), b = 2, p = 0.5)
  expect_identical(cdf(a, 1:9), cdf(b, 1:9))
})

test_that("idrbag draws its subsamples round by round, holding a bounded number at once", {
  held <- integer(0)
  draw <- function(k) {
    held <<- c(held, k)
    lapply(seq_len(k), function(i) i)
  }
  total <- gpuiso:::bag_rounds(1000, 2^22, draw, function(bags) length(bags), FALSE)
  expect_equal(total, 1000)
  expect_true(max(held) <= 4) # 2^24 indices
  held <- integer(0)
  expect_equal(gpuiso:::bag_rounds(100, 10, draw, function(bags) length(bags), FALSE), 100)
  expect_equal(max(held), 5) # 20 rounds
})

test_that("isoreg_blocks names its argument", {
  expect_error(isoreg_blocks(1:3), "`object` must be a \"gpuiso_fit\"")
})

# R conventions of the fits: covariates that are dates, times, durations or ordered factors,
# logical responses, names, the methods of stats and graphics, and increasing = "auto".

test_that("a Date, POSIXct or difftime x fits on its numeric scale, knots in its type", {
  set.seed(11)
  y <- rnorm(12)
  day <- as.Date("2023-03-01") + sample(0:8, 12, TRUE)
  fit <- isoreg_gpu(day, y)
  expect_equal(fitted(fit), ref_isoreg(as.numeric(day), y), tolerance = 1e-12)
  expect_s3_class(knots(fit), "Date")
  expect_identical(knots(fit), sort(unique(day)))
  expect_identical(predict(fit, day), fitted(fit))
  step <- stats::as.stepfun(fit) # on the numeric scale: days
  expect_equal(predict(fit, as.Date("2023-03-05") + 0:2), step(as.numeric(as.Date("2023-03-05")) + 0:2))
  expect_error(predict(fit, 19420), "`newdata` must be a Date, as the fitted x")
  # the blocks' ends in the type of x too, the ends of the runs of equal fitted values
  b <- isoreg_blocks(fit)
  expect_s3_class(b$x_start, "Date")
  runs <- rle(fit$level)$lengths
  expect_identical(b$x_start, knots(fit)[cumsum(runs) - runs + 1L])
  expect_identical(b$x_end, knots(fit)[cumsum(runs)])

  time <- as.POSIXct("2024-06-01 12:00:00", tz = "UTC") + sample(0:20, 12, TRUE) * 3600
  fit <- isoreg_gpu(time, y)
  expect_equal(fitted(fit), ref_isoreg(as.numeric(time), y), tolerance = 1e-12)
  expect_s3_class(knots(fit), "POSIXct")
  expect_identical(attr(knots(fit), "tzone"), "UTC")
  expect_identical(as.numeric(knots(fit)), sort(unique(as.numeric(time))))
  expect_identical(predict(fit, as.POSIXlt(time)), fitted(fit))

  dur <- as.difftime(sample(1:6, 12, TRUE), units = "mins")
  fit <- isoreg_gpu(dur, y)
  expect_equal(fitted(fit), ref_isoreg(as.numeric(dur), y), tolerance = 1e-12)
  expect_identical(units(knots(fit)), "mins")
  # new durations in other units are converted
  expect_identical(predict(fit, as.difftime(c(120, 300), units = "secs")),
                   predict(fit, as.difftime(c(2, 5), units = "mins")))
  expect_equal(predict(fit, as.difftime(c(2, 5), units = "mins")), stats::as.stepfun(fit)(c(2, 5)))
})

test_that("an ordered factor x fits in the order of its levels", {
  set.seed(12)
  lev <- c("low", "mid", "high", "top")
  x <- factor(sample(lev[1:3], 15, TRUE), levels = lev, ordered = TRUE)
  y <- rnorm(15) + as.integer(x)
  fit <- isoreg_gpu(x, y)
  expect_equal(fitted(fit), ref_isoreg(as.integer(x), y), tolerance = 1e-12)
  expect_identical(knots(fit), factor(c("low", "mid", "high"), levels = lev, ordered = TRUE))
  # new values as the factor or as strings; an unused level is a value between the others
  expect_equal(predict(fit, c("mid", "top")), stats::as.stepfun(fit)(c(2, 4)))
  expect_identical(predict(fit, factor(c("mid", "top"), levels = lev, ordered = TRUE)), predict(fit, c("mid", "top")))
  expect_identical(predict(fit, x), fitted(fit))
  expect_error(predict(fit, "huge"), "`newdata` has value\\(s\\) that are not levels of the fitted x: \"huge\"")
  expect_error(predict(fit, factor("mid")), "`newdata` must be an ordered factor with the levels")
  expect_error(isoreg_gpu(factor(c("a", "b")), 1:2), "`x` is a factor without an order")
})

test_that("a logical y is fitted as 0 and 1", {
  x <- c(3, 1, 2, 5, 4, 6)
  y <- c(TRUE, FALSE, TRUE, FALSE, TRUE, TRUE)
  expect_equal(fitted(isoreg_gpu(x, y)), ref_isoreg(x, as.numeric(y)), tolerance = 1e-12)
  expect_equal(fitted(isoreg_gpu(y)), stats::isoreg(as.numeric(y))$yf, tolerance = 1e-12)
  expect_equal(isoreg_batch(rbind(y, !y)), rbind(ref_pav(as.numeric(y)), ref_pav(as.numeric(!y))),
               tolerance = 1e-12, ignore_attr = TRUE)
  expect_error(isoreg_gpu(x, c(TRUE, NA, TRUE, FALSE, TRUE, TRUE)), "`y`")
})

test_that("fitted() and residuals() keep the names of y", {
  y <- c(a = 3, b = 1, c = 2, d = 5)
  fit <- isoreg_gpu(y)
  expect_identical(names(fitted(fit)), names(y))
  expect_identical(names(residuals(fit)), names(y))
  expect_identical(names(fitted(isoreg_gpu(4:1, y))), names(y))
  yi <- c(u = 2L, v = 1L) # an integer y is converted, and keeps its names
  expect_identical(names(fitted(isoreg_gpu(yi))), c("u", "v"))
  expect_null(names(fitted(isoreg_gpu(unname(y)))))
})

test_that("knots, nobs and deviance agree with their definitions and stats::isoreg", {
  set.seed(13)
  x <- sample(20)
  y <- rnorm(20) + x / 5
  w <- c(0, 0, runif(18, 0.5, 2))
  fit <- isoreg_gpu(x, y, w)
  expect_identical(knots(fit), as.double(1:20))
  expect_identical(nobs(fit), 18L)
  expect_equal(deviance(fit), sum(w * (y - ref_isoreg(x, y, w))^2), tolerance = 1e-12)
  expect_equal(deviance(fit), summary(fit)$rss)
  plain <- isoreg_gpu(x, y)
  ir <- stats::isoreg(x, y)
  expect_identical(nobs(plain), 20L)
  expect_equal(deviance(plain), sum((y[ir$ord] - ir$yf)^2), tolerance = 1e-12)
  # knots are the distinct x; the step function's jumps are among them
  expect_true(all(knots(stats::as.stepfun(plain)) %in% knots(plain)))
})

# The x, y and type of each call of graphics' lines.default() while expr runs (on a null device).
drawn_lines <- function(expr) {
  calls <- list()
  record <- function(x, y, type) calls[[length(calls) + 1L]] <<- list(x = x, y = y, type = type)
  suppressMessages(trace("lines.default", tracer = bquote(.(record)(x, y, type)), print = FALSE,
                         where = asNamespace("graphics")))
  on.exit(suppressMessages(untrace("lines.default", where = asNamespace("graphics"))))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  force(expr)
  calls
}

test_that("lines() draws the fitted step function, not a line through the data", {
  x <- c(4, 1, 3, 2, 5, 3)
  y <- c(2, 1, 5, 1, 4, 0)
  fit <- isoreg_gpu(x, y)
  ref <- ref_knots(x, y)
  seen <- drawn_lines({
    plot(x, y)
    out <- withVisible(lines(fit, col = "blue"))
  })
  expect_length(seen, 1L)
  expect_equal(seen[[1]]$x, ref$knots)
  expect_equal(seen[[1]]$y, ref$level, tolerance = 1e-12)
  expect_identical(seen[[1]]$type, "s")
  # plot() draws the same steps over the data
  seen <- drawn_lines(plot(fit))
  expect_equal(seen[[1]]$y, ref$level, tolerance = 1e-12)
  # the step function drawn is predict()'s: at each knot and just before the next
  expect_equal(predict(fit, ref$knots), ref$level, tolerance = 1e-12)
})

test_that("plot() and lines() draw fits of dates and ordered factors", {
  day <- as.Date("2023-01-01") + c(5, 1, 3, 9)
  fit <- isoreg_gpu(day, c(1, 3, 2, 4))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(fit), fit)
  # the axis is in days since 1970: the fit's knots lie within it
  usr <- graphics::par("usr")[1:2]
  expect_true(all(as.numeric(day) >= usr[1] & as.numeric(day) <= usr[2]))
  lev <- factor(c("b", "a", "c", "b"), levels = c("a", "b", "c"), ordered = TRUE)
  expect_identical(plot(isoreg_gpu(lev, c(2, 1, 3, 2))), isoreg_gpu(lev, c(2, 1, 3, 2)), ignore_attr = TRUE)
  expect_equal(graphics::par("usr")[1:2], c(1, 3) + c(-0.08, 0.08), tolerance = 1e-9)
  f <- isoreg_gpu(dist ~ speed, data = cars)
  expect_silent(plot(f))
  expect_silent(lines(f, col = "blue", lwd = 3))
})

test_that("increasing = \"auto\" follows the sign of the Spearman correlation", {
  set.seed(14)
  for (i in 1:40) {
    n <- sample(2:30, 1)
    x <- sample(1:6, n, TRUE)
    y <- round(rnorm(n) + sample(c(-1, 1), 1) * x / 3, 1)
    w <- if (i %% 2) runif(n) else NULL
    rho <- suppressWarnings(cor(x, y, method = "spearman"))
    up <- is.na(rho) || rho >= 0
    fit <- isoreg_gpu(x, y, w, increasing = "auto")
    expect_identical(fit$increasing, up)
    expect_equal(fitted(fit), ref_isoreg(x, y, w, increasing = up), tolerance = 1e-12)
  }
  # without x, the order of y; a prefix of "auto" is taken
  expect_false(isoreg_gpu(c(5, 3, 4, 1), increasing = "au")$increasing)
  expect_true(isoreg_gpu(c(1, 3, 2, 4), increasing = "auto")$increasing)
  # a correlation of exactly 0, and an undefined one, give the non-decreasing fit
  expect_true(isoreg_gpu(1:4, c(1, 2, 2, 1), increasing = "auto")$increasing)
  expect_true(isoreg_gpu(1:4, rep(2, 4), increasing = "auto")$increasing)
  # elements of weight zero do not choose the direction
  expect_true(isoreg_gpu(1:5, c(1, 2, 3, -50, -60), w = c(1, 1, 1, 0, 0), increasing = "auto")$increasing)
  y0 <- c(1, -50, 2, 3, -60, -70)
  expect_lt(cor(1:6, y0, method = "spearman"), 0)
  expect_true(isoreg_gpu(1:6, y0, w = c(1, 0, 1, 1, 0, 0), increasing = "auto")$increasing)
  expect_error(isoreg_gpu(1:3, increasing = "up"), "`increasing` must be TRUE, FALSE or \"auto\"")
  expect_error(isoreg_gpu(1:3, increasing = NA), "`increasing` must be TRUE, FALSE or \"auto\"")
})

test_that("isoreg_batch chooses the direction per row and per group", {
  set.seed(15)
  y <- rbind(1:6 + rnorm(6, sd = 0.1), 6:1 + rnorm(6, sd = 0.1), c(3, 1, 2, 2, 1, 3), rnorm(6))
  fit <- isoreg_batch(y, increasing = "auto")
  up <- apply(y, 1, function(r) cor(seq_along(r), r, method = "spearman") >= 0)
  expect_identical(attr(fit, "increasing"), up)
  for (i in 1:4) expect_equal(fit[i, ], ref_pav(y[i, ], increasing = up[i]), tolerance = 1e-12)
  # the same as each row fitted alone with "auto"
  for (i in 1:4) expect_equal(fit[i, ], unname(fitted(isoreg_gpu(y[i, ], increasing = "auto"))), tolerance = 1e-12)
  # groups, with weights and block starts
  g <- rep(c("p", "q", "r"), times = c(5, 7, 4))
  v <- c(1:5, 7:1, c(2, 1, 4, 3))
  w <- runif(16)
  res <- isoreg_batch(v, w, increasing = "auto", group = g, block_starts = TRUE)
  expect_identical(attr(res$fitted, "increasing"), c(p = TRUE, q = FALSE, r = TRUE))
  for (k in c("p", "q", "r")) {
    up <- attr(res$fitted, "increasing")[[k]]
    expect_equal(unname(res$fitted[g == k]), ref_pav(v[g == k], w[g == k], up), tolerance = 1e-12)
  }
  # one direction for all: the same fits as that direction given
  same <- isoreg_batch(rbind(c(1, 3, 2), 2:4), increasing = "auto")
  expect_identical(attr(same, "increasing"), c(TRUE, TRUE))
  expect_identical(as.vector(same), as.vector(isoreg_batch(rbind(c(1, 3, 2), 2:4))))
  expect_error(isoreg_batch(y, increasing = 2), "`increasing` must be TRUE, FALSE or \"auto\"")
})

test_that("isoreg_batch's directions cover the groups present, not a factor's unused levels", {
  v <- c(3, 1, 5, 6, 2, 4)
  # unused levels at the end, in the middle and first; groups interleaved
  for (lev in list(c("a", "b", "c"), c("a", "m", "b"), c("z", "a", "b"))) {
    g <- factor(c("a", "b", "a", "b", "a", "b"), levels = lev)
    fit <- isoreg_batch(v, group = g, increasing = "auto")
    up <- c(a = cor(1:3, v[g == "a"], method = "spearman") >= 0, b = cor(1:3, v[g == "b"], method = "spearman") >= 0)
    expect_identical(attr(fit, "increasing"), up)
    for (k in c("a", "b")) expect_equal(unname(fit[g == k]), ref_pav(v[g == k], increasing = up[[k]]), tolerance = 1e-12)
    # the same directions and fits as for the factor without those levels
    expect_identical(fit, isoreg_batch(v, group = droplevels(g), increasing = "auto"))
  }
  expect_identical(attr(isoreg_batch(c(3, 1, 2, 4), group = factor(c("a", "a", "b", "b"), levels = c("a", "b", "c")),
                                     increasing = "auto"), "increasing"), c(a = FALSE, b = TRUE))
})

test_that("arguments given at their default values fit as when left out, and are still checked", {
  # the fits skip the checks of arguments left at their defaults
  set.seed(12)
  y <- rnorm(40)
  x <- sample(40)
  w <- runif(40)
  defaults <- list(increasing = TRUE, y_min = -Inf, y_max = Inf, device = c("auto", "cpu", "gpu"),
                   method = c("auto", "pav", "hull"), precision = c("double", "single"),
                   exact = TRUE, gradient = FALSE)
  without_call <- function(fit) {
    fit$call <- NULL
    fit
  }
  short <- isoreg_gpu(x, y, w)
  expect_identical(without_call(do.call(isoreg_gpu, c(list(x, y, w), defaults))), without_call(short))
  expect_equal(short$fitted, ref_isoreg(x, y, w), tolerance = 1e-12)
  # the matched call, which update() changes by name
  expect_identical(short$call, quote(isoreg_gpu(x = x, y = y, w = w)))
  expect_identical(update(short, increasing = FALSE)$fitted, isoreg_gpu(x, y, w, increasing = FALSE)$fitted)
  expect_identical(update(short, y = rev(y))$fitted, isoreg_gpu(x, rev(y), w)$fitted)
  m <- matrix(y, 4)
  g <- rep(1:4, 10)
  expect_identical(do.call(isoreg_batch, c(list(m, block_starts = FALSE), defaults)), isoreg_batch(m))
  expect_identical(do.call(isoreg_batch, c(list(y, w, group = g), defaults)), isoreg_batch(y, w, group = g))
  for (f in list(function(...) isoreg_gpu(y, ...), function(...) isoreg_batch(m, ...))) {
    expect_error(f(increasing = NA), "`increasing` must be TRUE, FALSE or \"auto\"")
    expect_error(f(y_min = "a"), "`y_min` must be a single number")
    expect_error(f(y_max = -Inf), "`y_max` must be a finite number or Inf")
    expect_error(f(device = "tpu"), "`device` must be one of")
    expect_error(f(method = 1), "`method` must be one of")
    expect_error(f(precision = NA), "`precision` must be one of")
    expect_error(f(exact = "yes"), "`exact` must be TRUE or FALSE")
    expect_error(f(gradient = 1:2), "`gradient` must be TRUE or FALSE")
  }
  expect_error(isoreg_batch(m, block_starts = NA), "`block_starts` must be TRUE or FALSE")
  # an argument passed on missing by a caller is an error, as R makes it, not the default
  for (arg in names(defaults)) {
    pass_on <- function(d) NULL
    body(pass_on) <- as.call(c(quote(isoreg_gpu), quote(y), stats::setNames(list(quote(d)), arg)))
    expect_error(pass_on(), "argument \"d\" is missing", info = arg)
    body(pass_on) <- as.call(c(quote(isoreg_batch), quote(m), stats::setNames(list(quote(d)), arg)))
    expect_error(pass_on(), "argument \"d\" is missing", info = arg)
  }

  at <- c(-1, 3.5, 17, 50)
  expect_identical(predict(short, at, type = c("step", "linear"), outside = c("clip", "na", "error")),
                   predict(short, at))
  expect_error(predict(short, at, type = "spline"), "`type` must be one of")
  expect_error(predict(short, at, outside = TRUE), "`outside` must be one of")
  label <- as.numeric(y > 0)
  cal <- calibrate_isotonic(y, label, group = g)
  cal_defaults <- calibrate_isotonic(y, label, group = g, increasing = TRUE,
                                     device = c("auto", "cpu", "gpu"))
  cal$call <- cal_defaults$call <- NULL
  expect_identical(cal_defaults, cal)
  expect_identical(predict(cal, at, group = c(1, 2, 3, 4), type = c("step", "linear"), strict = FALSE,
                           device = c("auto", "cpu", "gpu")),
                   predict(cal, at, group = c(1, 2, 3, 4)))
  expect_error(calibrate_isotonic(y, label, increasing = "up"), "`increasing` must be TRUE, FALSE")
  expect_error(calibrate_isotonic(y, label, device = "tpu"), "`device` must be one of")
  expect_error(predict(cal, at, strict = NA), "`strict` must be TRUE or FALSE")
  expect_error(predict(cal, at, device = 2), "`device` must be one of")
  pass_on <- function(d) NULL
  for (arg in c("type", "strict", "device")) {
    body(pass_on) <- as.call(c(quote(predict), quote(cal), quote(at), stats::setNames(list(quote(d)), arg)))
    expect_error(pass_on(), "argument \"d\" is missing", info = arg)
  }
  for (arg in c("increasing", "device")) {
    body(pass_on) <- as.call(c(quote(calibrate_isotonic), quote(y), quote(label),
                               stats::setNames(list(quote(d)), arg)))
    expect_error(pass_on(), "argument \"d\" is missing", info = arg)
  }
  for (arg in c("type", "outside")) {
    body(pass_on) <- as.call(c(quote(predict), quote(short), quote(at), stats::setNames(list(quote(d)), arg)))
    expect_error(pass_on(), "argument \"d\" is missing", info = arg)
  }
})

# IDR with several covariates (partial orders): exact fits against brute force, the KKT
# conditions, the orders, predictions and subagging.

tol <- 1e-12

fitted_cdf <- function(fit) unname(cdf(predict(fit), fit$thresholds))

test_that("the fit equals the min-max formula over lower and upper sets on small posets", {
  set.seed(101)
  for (rep in 1:12) {
    d <- if (rep %% 2) 2 else 3
    g <- gen_poset_data(sample(8:25, 1), d, levels = if (d == 2) 3 else 2)
    expect_lte(nrow(unique(g$V)), 12)
    w <- if (rep %% 3 == 0) sample(c(0.5, 1, 2.5), length(g$y), TRUE) else rep(1, length(g$y))
    fit <- idr(g$y, g$X, weights = if (rep %% 3 == 0) w)
    expect_equal(fitted_cdf(fit), ref_idr_poset(g$y, g$V, w), tolerance = tol)
  }
})

test_that("every threshold's fit satisfies the KKT conditions of the QP to rounding", {
  set.seed(102)
  g <- gen_poset_data(60, 2, levels = 4)
  w <- sample(c(0.25, 1, 3), 60, TRUE)
  for (weights in list(NULL, w)) {
    fit <- idr(g$y, g$X, weights = weights)
    ww <- if (is.null(weights)) rep(1, 60) else weights
    P <- as.matrix(fit$X)
    pos <- match(apply(g$V, 1, paste, collapse = " "), apply(P, 1, paste, collapse = " "))
    W <- as.vector(tapply(ww, factor(pos, seq_len(nrow(P))), sum))
    sets <- ref_closed_sets(ref_leq(P))
    expect_lte(nrow(P), 16)
    Fm <- as.matrix(fit)
    for (k in seq_along(fit$thresholds)) {
      z <- as.vector(tapply(ww * (g$y <= fit$thresholds[k]), factor(pos, seq_len(nrow(P))), sum)) / W
      expect_lt(ref_kkt_violation(z, W, Fm[, k], sets), 1e-12 * sum(W))
    }
  }
})

test_that("the fit is antitone in the order and non-decreasing in the threshold", {
  set.seed(103)
  n <- 400
  X <- data.frame(a = runif(n), b = runif(n), c = runif(n))
  y <- X$a + 2 * X$b + X$c + rnorm(n)
  fit <- idr(y, X)
  Fm <- as.matrix(fit)
  P <- as.matrix(fit$X)
  expect_true(all(Fm[, -1] >= Fm[, -ncol(Fm)]))
  expect_true(all(Fm >= 0 & Fm <= 1))
  expect_true(all(Fm[, ncol(Fm)] == 1))
  for (i in seq_len(nrow(P))) {
    above <- which(colSums(t(P) >= P[i, ]) == ncol(P))
    expect_true(all(t(Fm[above, , drop = FALSE]) <= Fm[i, ]))
  }
})

test_that("each threshold's fit, found between its neighbours' fits, equals that threshold fitted alone", {
  # idr() fits a threshold between two already fitted, whose fits bound it and decide most cuts;
  # a fit of the single indicator 1{y <= t} (two thresholds) has no such bounds
  set.seed(108)
  old <- gpuiso_threads()
  on.exit(gpuiso_threads(old), add = TRUE)
  n <- 500
  for (d in 2:3) {
    X <- data.frame(matrix(runif(d * n), n, d))
    y <- round(rowSums(X) + rnorm(n), 1)
    w <- runif(n, 0.2, 2)
    for (weights in list(NULL, w)) {
      gpuiso_threads(1)
      fit1 <- idr(y, X, weights = weights)
      gpuiso_threads(2)
      fit2 <- idr(y, X, weights = weights)
      expect_identical(as.matrix(fit1), as.matrix(fit2))
      expect_gt(length(fit1$thresholds), 40)
      Fm <- as.matrix(fit1)
      key <- function(f) do.call(paste, unname(as.list(f$X)))
      for (k in seq_along(fit1$thresholds)) {
        alone <- idr(as.numeric(y > fit1$thresholds[k]), X, weights = weights)
        at <- match(key(fit1), key(alone))
        expect_false(anyNA(at))
        expect_equal(Fm[, k], as.matrix(alone)[at, 1], tolerance = tol)
      }
    }
  }
})

test_that("one covariate through the partial-order solver equals the one-covariate fit", {
  set.seed(104)
  for (ties in c(FALSE, TRUE)) {
    d <- gen_idr_data(300, ties_x = ties, ties_y = ties, weighted = ties)
    one <- idr(d$y, data.frame(x = d$x), weights = d$w)
    via_poset <- gpuiso:::idr_poset(d$y, data.frame(x = d$x), d$w, NULL, c(comp = 1), FALSE, FALSE)
    expect_equal(fitted_cdf(via_poset), fitted_cdf(one), tolerance = tol)
    # two columns, one constant: the same fit, through idr()
    two <- idr(d$y, data.frame(x = d$x, k = 7), weights = d$w)
    expect_equal(fitted_cdf(two), fitted_cdf(one), tolerance = tol)
    newx <- data.frame(x = c(-1, 0.2, 0.5, 2), k = 7)
    expect_equal(unname(cdf(predict(two, newx), one$thresholds)),
                 unname(cdf(predict(one, newx, interpolation = "none"), one$thresholds))[, ],
                 tolerance = tol)
  }
})

test_that("\"sd\" compares sorted members and \"icx\" their cumulative sums from the top", {
  set.seed(105)
  n <- 40
  E <- matrix(round(rnorm(n * 3), 1), n, 3)
  y <- round(rowMeans(E) + rnorm(n), 1)
  X <- stats::setNames(as.data.frame(E), c("e1", "e2", "e3"))
  groups <- c(e1 = 1, e2 = 1, e3 = 1)
  sd_fit <- idr(y, X, groups = groups, orders = c(sd = 1))
  sorted <- t(apply(E, 1, sort))
  expect_equal(fitted_cdf(sd_fit), fitted_cdf(idr(y, as.data.frame(sorted))), tolerance = tol)
  # exchangeable members: permuting them within rows changes nothing
  perm <- t(apply(E, 1, sample))
  Xp <- stats::setNames(as.data.frame(perm), c("e1", "e2", "e3"))
  expect_equal(fitted_cdf(idr(y, Xp, groups = groups, orders = c(sd = 1))), fitted_cdf(sd_fit),
               tolerance = tol)
  icx_fit <- idr(y, X, groups = groups, orders = c(icx = 1))
  top <- t(apply(E, 1, function(r) cumsum(sort(r, decreasing = TRUE))))
  expect_equal(fitted_cdf(icx_fit), fitted_cdf(idr(y, as.data.frame(top))), tolerance = tol)
  # groups of different orders together: a comp pair and an sd ensemble
  X2 <- cbind(X, h = round(runif(n), 1))
  both <- idr(y, X2, groups = c(e1 = 2, e2 = 2, e3 = 2, h = 1), orders = c(comp = 1, sd = 2))
  expect_equal(fitted_cdf(both), fitted_cdf(idr(y, data.frame(sorted, h = X2$h))), tolerance = tol)
})

test_that("new ensemble members may be infinite, unless an \"icx\" group's sums are undefined", {
  X <- data.frame(e1 = c(1, 2, 3, 4), e2 = c(2, 1, 4, 3))
  g <- c(e1 = 1, e2 = 1)
  for (kind in c("sd", "icx")) {
    fit <- idr(c(1, 3, 2, 4), X, groups = g, orders = stats::setNames(1, kind))
    expect_identical(cdf(predict(fit, data.frame(e1 = c(Inf, 2), e2 = c(3, -Inf))), 1:4),
                     cdf(predict(fit, data.frame(e1 = c(1e300, 2), e2 = c(3, -1e300))), 1:4))
  }
  expect_error(predict(fit, data.frame(e1 = Inf, e2 = -Inf)),
               "`data` has members whose cumulative sums in an \"icx\" group are undefined")
})

test_that("small sd and icx fits equal brute force on the transformed members", {
  set.seed(106)
  n <- 14
  E <- matrix(sample(1:3, n * 3, TRUE), n, 3)
  y <- rowSums(E) + sample(-1:1, n, TRUE)
  X <- stats::setNames(as.data.frame(E), c("a", "b", "c"))
  g <- c(a = 1, b = 1, c = 1)
  sorted <- t(apply(E, 1, sort, decreasing = TRUE))
  expect_lte(nrow(unique(sorted)), 12) # 10 multisets of 3 members from 1:3
  expect_equal(fitted_cdf(idr(y, X, groups = g, orders = c(sd = 1))), ref_idr_poset(y, sorted),
               tolerance = tol)
  top <- t(apply(sorted, 1, cumsum))
  expect_equal(fitted_cdf(idr(y, X, groups = g, orders = c(icx = 1))), ref_idr_poset(y, top),
               tolerance = tol)
})

# Predictions by their definition: bounds from all fitted points below and above (not only the
# nearest), their mean, one bound alone, or the CDF of all observations for incomparable points.
ref_poset_predict <- function(fit, newV, y, w = rep(1, length(y))) {
  P <- as.matrix(fit$X)
  Fm <- as.matrix(fit)
  clim <- vapply(fit$thresholds, function(t) sum(w * (y <= t)) / sum(w), 0)
  t(apply(newV, 1, function(v) {
    below <- which(colSums(t(P) <= v) == ncol(P))
    above <- which(colSums(t(P) >= v) == ncol(P))
    up <- if (length(below)) apply(Fm[below, , drop = FALSE], 2, min)
    lo <- if (length(above)) apply(Fm[above, , drop = FALSE], 2, max)
    if (length(below) && length(above)) (up + lo) / 2 else if (length(below)) up else
      if (length(above)) lo else clim
  }))
}

test_that("predictions at new covariate vectors follow isodistrreg's definition", {
  set.seed(107)
  n <- 150
  X <- data.frame(a = round(runif(n), 1), b = round(runif(n), 1))
  y <- round(X$a + X$b + rnorm(n, sd = 0.5), 1)
  w <- sample(c(1, 2, 0.5), n, TRUE)
  for (weights in list(NULL, w)) {
    fit <- idr(y, X, weights = weights)
    newX <- data.frame(a = c(0.55, 0.2, -1, 2, 0.5, 0.95, -1), b = c(0.45, 0.9, 3, -1, 0.5, 1.5, -1))
    pred <- predict(fit, newX)
    expect_equal(unname(cdf(pred, fit$thresholds)),
                 ref_poset_predict(fit, as.matrix(newX), y, if (is.null(weights)) rep(1, n) else w),
                 tolerance = tol)
    # the bounds of pred[[i]]
    one <- pred[[1]]
    Fm <- as.matrix(fit)
    P <- as.matrix(fit$X)
    below <- which(P[, 1] <= 0.55 & P[, 2] <= 0.45)
    k <- match(one$points, fit$thresholds)
    expect_equal(one$upper, unname(apply(Fm[below, k, drop = FALSE], 2, min)), tolerance = tol)
    expect_equal(one$cdf, (one$lower + one$upper) / 2, tolerance = tol)
    # below everything: only upper points, the lower bound is 0... and the reverse
    expect_equal(pred[[7]]$upper, rep(1, nrow(pred[[7]])))
    expect_equal(pred[[6]]$lower, rep(0, nrow(pred[[6]])))
  }
})

test_that("scores work on predictions of several covariates as on one", {
  set.seed(108)
  n <- 120
  X <- data.frame(a = runif(n), b = runif(n))
  y <- X$a + X$b + rnorm(n)
  fit <- idr(y, X)
  newX <- data.frame(a = runif(10), b = runif(10))
  pred <- predict(fit, newX)
  yn <- runif(10, 0, 2)
  P <- cdf(pred, fit$thresholds)
  expect_equal(crps(pred, yn), vapply(1:10, function(i) ref_crps(P[i, ], fit$thresholds, yn[i]), 0),
               tolerance = 1e-10)
  q <- qpred(pred, c(0.1, 0.5, 0.9))
  expect_equal(q, t(apply(P, 1, function(p) fit$thresholds[vapply(c(0.1, 0.5, 0.9),
                                                                   function(a) which(p >= a)[1], 1L)])),
               ignore_attr = TRUE)
  # level 0: the lowest point of each distribution, where its CDF first exceeds 0 (isodistrreg's
  # stepfun of the CDF at 0), and the quantile score there
  low <- apply(P, 1, function(p) fit$thresholds[which(p > 0)[1]])
  expect_identical(unname(qpred(pred, c(0, 0.5))[, 1]), low)
  expect_identical(unname(qscore(pred, 0, yn)[, 1]), 2 * (low > yn) * (low - yn))
  expect_equal(pit(pred, yn, randomize = FALSE), diag(cdf(pred, yn)))
  expect_equal(unname(bscore(pred, 1, yn)), (cdf(pred, 1)[, 1] - (yn <= 1))^2, ignore_attr = TRUE)
  # in-sample: one prediction per observation, with zero weights too
  w <- rep(1, n)
  w[1:3] <- 0
  fw <- idr(y, X, weights = w)
  expect_length(predict(fw), n)
  expect_equal(unname(cdf(predict(fw)[4:n], fw$thresholds)), unname(cdf(predict(fw, X[4:n, ]), fw$thresholds)),
               tolerance = tol)
  # in-sample predictions have no bounds, zero weights or not (the ones of weight zero are
  # predictions at their covariates, as out of sample)
  expect_named(predict(fw)[[1]], c("points", "cdf"))
  expect_equal(predict(fw)[[1]]$cdf, predict(fw, X[1, ])[[1]]$cdf)
  expect_named(predict(fw)[[4]], c("points", "cdf"))
})

test_that("groups and orders may be labelled by strings, as in isodistrreg", {
  set.seed(110)
  n <- 60
  X <- data.frame(a = runif(n), b = runif(n), c = runif(n))
  y <- X$a + X$b + X$c + rnorm(n)
  by_number <- idr(y, X, groups = c(a = 1, b = 2, c = 2), orders = c(comp = 1, sd = 2))
  by_name <- idr(y, X, groups = c(a = "one", b = "ens", c = "ens"), orders = c(comp = "one", sd = "ens"))
  expect_identical(as.matrix(by_name), as.matrix(by_number))
  newX <- data.frame(a = runif(5), b = runif(5), c = runif(5))
  expect_identical(cdf(predict(by_name, newX), by_name$thresholds),
                   cdf(predict(by_number, newX), by_number$thresholds))
  expect_error(idr(y, X, groups = c(a = "one", b = "ens", c = "ens"), orders = c(comp = "one", sd = "other")),
               "`orders` must give one order to each group")
  expect_error(idr(y, X, groups = c(a = TRUE, b = FALSE, c = TRUE)), "`groups` must be a vector of group labels")
})

test_that("new data must have the fit's covariate columns", {
  fit <- idr(c(1, 2, 3, 4), data.frame(a = 1:4, b = c(1, 3, 2, 4)))
  expect_error(predict(fit, data.frame(a = 1)), "`data` must have the columns of the fit's covariates .* lacks \"b\"")
  expect_error(predict(fit, data.frame(a = 1, b = "x")), "`data` must have numeric or ordered-factor columns")
  # infinite new values are compared as any others (as in isodistrreg); NA is named
  for (big in c(Inf, -Inf)) {
    far <- sign(big) * 1e300
    expect_identical(cdf(predict(fit, data.frame(a = c(2, big), b = c(big, 3))), 1:4),
                     cdf(predict(fit, data.frame(a = c(2, far), b = c(far, 3))), 1:4))
  }
  expect_error(predict(fit, data.frame(a = c(2, 3), b = c(1, NA))),
               "^`data` must not have NA, but column \"b\" has one at row 2$")
  expect_error(idr(c(1, 2, 3, 4), data.frame(a = c(1:3, -Inf), b = 1:4)), "^`X` must be finite, but column \"a\" has -Inf at row 4$")
  expect_length(predict(fit, data.frame(b = 2, a = 1, z = 0)), 1L)
  # a fit whose order was edited away is an error naming it
  for (part in c("spec", "points", "slot")) {
    broken <- fit
    broken$order[[part]] <- NULL
    expect_error(predict(broken, data.frame(a = 2, b = 2)),
                 "^`object` is not a valid gpuiso IDR object: its `order` is missing or broken$")
  }
  # a matrix without column names: columns by position, for the fit and for new data
  M <- cbind(1:4, c(1, 3, 2, 4))
  fm <- idr(c(1, 2, 3, 4), M)
  expect_equal(cdf(predict(fm, cbind(2, 2)), 1:4), cdf(predict(fit, data.frame(a = 2, b = 2)), 1:4))
})

test_that("idrbag with several covariates averages the subsample fits' predictions", {
  set.seed(109)
  n <- 80
  X <- data.frame(a = round(runif(n), 1), b = round(runif(n), 1))
  y <- round(X$a + X$b + rnorm(n), 1)
  newX <- data.frame(a = c(0.2, 0.7), b = c(0.5, 0.1))
  grid <- sort(unique(y))
  set.seed(9)
  pred <- idrbag(y, X, newX, b = 5, p = 0.5, progress = FALSE)
  set.seed(9)
  size <- ceiling(0.5 * n)
  samples <- lapply(1:5, function(i) sample.int(n, size))
  ref <- Reduce(`+`, lapply(samples, function(s) {
    f <- idr(y[s], X[s, ], progress = FALSE)
    pr <- ref_poset_predict(f, as.matrix(newX), y[s])
    cbind(0, pr)[, findInterval(grid, f$thresholds) + 1L, drop = FALSE]
  })) / 5
  expect_equal(unname(cdf(pred, grid)), unname(ref), tolerance = tol)
})

test_that("progress bars appear only when asked and the work is long enough", {
  set.seed(110)
  g <- gen_poset_data(200, 2, levels = 20, ties_y = FALSE)
  old <- options(gpuiso.progress_after = 0)
  on.exit(options(old))
  expect_output(idr(g$y, g$X, progress = TRUE), "100%")
  expect_silent(idr(g$y, g$X, progress = FALSE))
  options(gpuiso.progress_after = 2)
  expect_silent(idr(g$y, g$X, progress = 1))
  bar <- gpuiso:::progress_bar(TRUE, after = 0)
  expect_output({bar$update(0.5); bar$close()}, "50%")
})

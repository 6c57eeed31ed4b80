# Randomised comparisons with independent references: the plain-R PAV of helper-reference.R,
# Iso::pava (small n) and stats::isoreg (unweighted, increasing, distinct x).

rel_tol <- 1e-10

test_that("the plain-R reference PAV agrees with the min-max formula (tiny n)", {
  set.seed(1)
  for (r in 1:200) {
    n <- sample.int(7, 1)
    y <- round(stats::rnorm(n), 1)          # rounding makes ties between block means likely
    w <- if (r %% 2) rep(1, n) else stats::runif(n, 0.1, 2)
    expect_equal(ref_pav(y, w), ref_minmax(y, w), tolerance = 1e-12)
    expect_equal(ref_pav(y, w, increasing = FALSE), -ref_minmax(-y, w), tolerance = 1e-12)
  }
})

check_ref <- function(family, wkind, xkind, increasing, n, seed) {
  set.seed(seed)
  y <- gen_y(family, n)
  w <- gen_w(wkind, n)
  x <- gen_x(xkind, n)
  fit <- fit_gpu(x, y, w, increasing)
  info <- sprintf("family=%s w=%s x=%s increasing=%s n=%d seed=%d",
                  family, wkind, xkind, increasing, n, seed)
  expect_equal(fit$fitted, ref_isoreg(x, y, w, increasing), tolerance = rel_tol, info = info)
  if (!is.null(x)) {
    rk <- ref_knots(x, y, w, increasing)
    expect_equal(fit$knots, rk$knots, info = info)
    expect_equal(fit$level, rk$level, tolerance = rel_tol, info = info)
  }
  # knot weights: NULL only when every weight is 1 and there are no ties
  if (is.null(fit$knot_weight)) {
    expect_true(is.null(w) || all(w == 1), info = info)
    expect_false(!is.null(x) && anyDuplicated(x) > 0, info = info)
  } else {
    expect_equal(fit$knot_weight, ref_knots(x, y, w, increasing)$weight, tolerance = rel_tol,
                 info = info)
  }
  invisible(fit)
}

test_that("small fits agree with the plain-R PAV (all families, weights, x kinds, directions)", {
  seed <- 1000L
  for (family in families) for (wkind in weight_kinds) for (xkind in x_kinds)
    for (increasing in c(TRUE, FALSE)) {
      for (n in c(1L, 2L, 3L, sample(4:40, 3))) {
        seed <- seed + 1L
        check_ref(family, wkind, xkind, increasing, n, seed)
      }
    }
})

test_that("medium fits agree with the plain-R PAV", {
  seed <- 5000L
  for (family in families) for (wkind in weight_kinds) for (increasing in c(TRUE, FALSE)) {
    for (n in c(100L, 1000L)) {
      seed <- seed + 1L
      xkind <- x_kinds[(seed %% length(x_kinds)) + 1L]
      check_ref(family, wkind, xkind, increasing, n, seed)
    }
  }
  for (family in families) {
    seed <- seed + 1L
    check_ref(family, "extreme", "ties", seed %% 2 == 0, 10000L, seed)
  }
})

test_that("large fits (n = 1e5) agree with the plain-R PAV", {
  skip_on_cran()
  n <- 100000L
  check_ref("noise", "none", "none", TRUE, n, 9001L)
  check_ref("increasing", "uniform", "none", TRUE, n, 9002L)
  check_ref("sawtooth", "extreme", "ties", FALSE, n, 9003L)
  check_ref("cliff", "extreme", "none", TRUE, n, 9004L)
  check_ref("noise", "uniform", "real", FALSE, n, 9005L)
  check_ref("sawtooth", "none", "perm", TRUE, n, 9006L)
})

test_that("fits on unsorted x agree with the plain-R PAV where the sort's first pass changes", {
  skip_on_cran()
  # the radix sort takes one bucket up to 4096 elements, then a histogram of about one prefix
  # for four elements, of 16 bits from 2^18; x of every kind, a few distinct values included
  seed <- 9100L
  for (n in c(4096L, 4097L, 20000L, 262145L)) for (xkind in c("perm", "ties", "real", "few")) {
    seed <- seed + 1L
    set.seed(seed)
    y <- gen_y("noise", n)
    w <- gen_w("uniform", n)
    x <- if (xkind == "few") sample(c(-2.5, 0, 1e-300, 7), n, replace = TRUE) else gen_x(xkind, n)
    fit <- isoreg_gpu(x, y, w)
    info <- sprintf("x=%s n=%d seed=%d", xkind, n, seed)
    expect_equal(fit$fitted, ref_isoreg(x, y, w, TRUE), tolerance = rel_tol, info = info)
    expect_identical(fit$knots, sort(unique(x)), info = info)
  }
})

test_that("fits with some zero weights agree with the plain-R PAV", {
  seed <- 7000L
  for (family in families) for (increasing in c(TRUE, FALSE)) for (xkind in c("none", "perm", "ties")) {
    for (n in c(2L, 5L, 17L, 200L)) {
      seed <- seed + 1L
      set.seed(seed)
      y <- gen_y(family, n)
      w <- stats::runif(n, 0.1, 2)
      w[sample.int(n, max(1L, n %/% 3L))] <- 0
      if (all(w == 0)) w[sample.int(n, 1)] <- 1
      x <- gen_x(xkind, n)
      fit <- fit_gpu(x, y, w, increasing)
      info <- sprintf("family=%s x=%s increasing=%s n=%d seed=%d", family, xkind, increasing, n, seed)
      expect_false(anyNA(fit$fitted), info = info)
      expect_equal(fit$fitted, ref_isoreg(x, y, w, increasing), tolerance = rel_tol, info = info)
    }
  }
})

test_that("fits agree with Iso::pava for small n (sorted distinct x)", {
  skip_if_not_installed("Iso")
  seed <- 11000L
  for (family in families) for (wkind in weight_kinds) for (increasing in c(TRUE, FALSE)) {
    for (n in c(1L, 2L, sample(3:60, 4), 500L)) {
      seed <- seed + 1L
      set.seed(seed)
      y <- gen_y(family, n)
      w <- gen_w(wkind, n)
      info <- sprintf("family=%s w=%s increasing=%s n=%d seed=%d", family, wkind, increasing, n, seed)
      expected <- Iso::pava(y, w, decreasing = !increasing)
      expect_equal(isoreg_gpu(y, w = w, increasing = increasing)$fitted, expected,
                   tolerance = rel_tol, info = info)
      # the same data with x given in random order
      x <- stats::runif(n)
      o <- order(x)
      # place the rows so that sorting them by x gives back y and w
      yi <- numeric(n)
      yi[o] <- y
      wi <- NULL
      if (!is.null(w)) {
        wi <- numeric(n)
        wi[o] <- w
      }
      fit <- isoreg_gpu(x, yi, w = wi, increasing = increasing)
      expect_equal(fit$fitted[o], expected, tolerance = rel_tol, info = info)
    }
  }
})

test_that("unweighted increasing fits agree with stats::isoreg (distinct x)", {
  seed <- 13000L
  for (family in families) {
    for (n in c(1L, 2L, sample(3:100, 5), 1000L, 20000L)) {
      seed <- seed + 1L
      set.seed(seed)
      y <- gen_y(family, n)
      info <- sprintf("family=%s n=%d seed=%d", family, n, seed)
      # x = 1..n
      expect_equal(isoreg_gpu(y)$fitted, stats::isoreg(y)$yf, tolerance = rel_tol, info = info)
      # x in random order: isoreg's yf is in sorted-x order
      x <- stats::runif(n, -1, 1)
      fit <- isoreg_gpu(x, y)
      expect_equal(fit$fitted[order(x)], stats::isoreg(x, y)$yf, tolerance = rel_tol, info = info)
    }
  }
})

# Gradients of fits (isoreg_vjp): against central finite differences of the fit, through ties in
# x, zero weights and clipping; batches and groups against per-row calls; the recorded blocks.

# Central differences of f (a number) at v, one element at a time.
central <- function(f, v, h = 1e-6) {
  vapply(seq_along(v), function(i) {
    up <- down <- v
    up[i] <- v[i] + h
    down[i] <- v[i] - h
    (f(up) - f(down)) / (2 * h)
  }, 0)
}

test_that("isoreg_vjp matches central differences in y and w, both directions, on unsorted x with ties", {
  set.seed(1)
  for (rep in 1:12) {
    n <- sample(c(5, 30, 200), 1L)
    increasing <- rep %% 2 == 0
    x <- if (rep %% 3 == 0) NULL else sample(round(stats::runif(n) * n / 3), n, replace = TRUE)
    y <- (if (increasing) 1 else -1) * seq_len(n) / n + stats::rnorm(n)
    w <- stats::runif(n, 0.2, 2)
    g <- stats::rnorm(n)
    fit_of <- function(yy, ww) fitted(isoreg_gpu(if (is.null(x)) yy else x, if (is.null(x)) NULL else yy,
                                                 w = ww, increasing = increasing))
    fit <- isoreg_gpu(if (is.null(x)) y else x, if (is.null(x)) NULL else y, w = w,
                      increasing = increasing, gradient = TRUE)
    d <- isoreg_vjp(fit, g)
    label <- sprintf("rep %d, n = %d, increasing = %s, x %s", rep, n, increasing,
                     if (is.null(x)) "missing" else "with ties")
    expect_equal(d$y, central(function(v) sum(g * fit_of(v, w)), y), tolerance = 1e-6, label = label)
    expect_equal(d$w, central(function(v) sum(g * fit_of(y, v)), w), tolerance = 1e-6, label = label)
  }
})

test_that("the gradient reaches every tied x through the pooling, by its weight", {
  x <- c(2, 1, 2, 3, 2)
  y <- c(5, 1, 3, 4, 1)
  w <- c(1, 2, 3, 1, 2)
  fit <- isoreg_gpu(x, y, w = w, gradient = TRUE)
  # the knot at x = 2 (elements 1, 3, 5: mean 16 / 6) pools with nothing: 1 < 16 / 6 < 4
  expect_equal(fitted(fit)[c(1, 3, 5)], rep(16 / 6, 3))
  g <- c(1, 0, 2, 0, 3)
  d <- isoreg_vjp(fit, g)
  expect_equal(d$y[c(1, 3, 5)], w[c(1, 3, 5)] * sum(g[c(1, 3, 5)]) / 6)
  expect_equal(d$y[c(2, 4)], c(0, 0))
  expect_equal(d$w[c(1, 3, 5)], (y[c(1, 3, 5)] - 16 / 6) * sum(g[c(1, 3, 5)]) / 6)
})

test_that("the blocks are the solver's: neighbouring clipped blocks stay apart for the gradient", {
  y <- c(1, 2, 3, 4)
  fit <- isoreg_gpu(y, y_max = 2.5, gradient = TRUE)
  expect_equal(fitted(fit), c(1, 2, 2.5, 2.5))
  expect_equal(fit$block_start, 1:3)        # the levels: 3 and 4 are clipped to one level
  expect_equal(fit$grad$start, rep(TRUE, 4)) # the solver: four blocks
  expect_equal(isoreg_vjp(fit, c(1, 1, 1, 1))$y, c(1, 1, 0, 0))
  # clipped values do not move: central differences agree
  set.seed(2)
  y <- cumsum(stats::rnorm(40))
  w <- stats::runif(40, 0.5, 1.5)
  g <- stats::rnorm(40)
  lims <- stats::quantile(y, c(0.3, 0.7))
  f <- function(yy, ww) fitted(isoreg_gpu(yy, w = ww, y_min = lims[1], y_max = lims[2]))
  d <- isoreg_vjp(isoreg_gpu(y, w = w, y_min = lims[1], y_max = lims[2], gradient = TRUE), g)
  expect_equal(d$y, central(function(v) sum(g * f(v, w)), y), tolerance = 1e-6)
  expect_equal(d$w, central(function(v) sum(g * f(y, v)), w), tolerance = 1e-6)
  expect_true(any(d$y == 0) && any(d$y != 0))
})

test_that("zero weights: no gradient in y; in w, the one-sided derivative of joining the block before", {
  y <- c(1, 4, 3, 6, 2.5, 8, 9)
  w <- c(1, 1, 1, 1, 0, 1, 1)
  g <- c(0.5, -1, 2, 1, 3, -2, 1)
  fit <- isoreg_gpu(y, w = w, gradient = TRUE)
  d <- isoreg_vjp(fit, g)
  expect_equal(d$y[5], 0)
  # element 5 (y = 2.5) follows the block of 6 (level 6) and, weighted, pools with it
  h <- 1e-7
  one_sided <- (sum(g * fitted(isoreg_gpu(y, w = replace(w, 5, h)))) - sum(g * fitted(fit))) / h
  expect_equal(d$w[5], one_sided, tolerance = 1e-5)
  # leading zero weights belong to the first block: z_1 = z_2 = y_2
  y <- c(5, 0, 1, 3)
  w <- c(0, 1, 1, 1)
  d <- isoreg_vjp(isoreg_gpu(y, w = w, gradient = TRUE), c(1, 1, 1, 1))
  expect_equal(d$y, c(0, 2, 1, 1))
})

test_that("both CPU engines record the same blocks and give the same gradient", {
  set.seed(3)
  y <- stats::rnorm(5000) + seq_len(5000) / 1000
  w <- stats::runif(5000)
  g <- stats::rnorm(5000)
  old <- options(gpuiso.hull_chunk = 64)
  on.exit(options(old), add = TRUE)
  pav <- isoreg_gpu(y, w = w, gradient = TRUE)
  hull <- isoreg_gpu(y, w = w, gradient = TRUE, method = "hull")
  expect_identical(hull$grad$start, pav$grad$start)
  expect_equal(isoreg_vjp(hull, g), isoreg_vjp(pav, g), tolerance = 1e-12)
  # recording changes no fitted value
  expect_identical(fitted(pav), fitted(isoreg_gpu(y, w = w)))
  expect_identical(pav$block_start, isoreg_gpu(y, w = w)$block_start)
})

test_that("isoreg_vjp on matrix batches and groups equals per-row calls", {
  set.seed(4)
  Y <- matrix(stats::rnorm(7 * 30), 7, dimnames = list(letters[1:7], NULL))
  W <- matrix(stats::runif(7 * 30, 0.1, 2), 7)
  G <- matrix(stats::rnorm(7 * 30), 7)
  for (wt in list(NULL, W, W[1, ])) {
    b <- isoreg_batch(Y, w = wt, increasing = FALSE, gradient = TRUE)
    expect_s3_class(b, "gpuiso_batch")
    expect_output(print(b), "7 rows of 30, with the solver's blocks")
    d <- isoreg_vjp(b, G)
    expect_identical(dimnames(d$y), dimnames(Y))
    for (r in 1:7) {
      wr <- if (is.matrix(wt)) wt[r, ] else wt
      one <- isoreg_vjp(isoreg_gpu(Y[r, ], w = wr, increasing = FALSE, gradient = TRUE), G[r, ])
      expect_equal(unname(d$y[r, ]), one$y)
      expect_equal(unname(d$w[r, ]), one$w)
    }
  }
  y <- stats::rnorm(60)
  w <- stats::runif(60)
  g <- stats::rnorm(60)
  grp <- sample(c("p", "q", "r"), 60, replace = TRUE)
  d <- isoreg_vjp(isoreg_batch(y, w = w, group = grp, gradient = TRUE), g)
  for (k in unique(grp)) {
    i <- which(grp == k)
    one <- isoreg_vjp(isoreg_gpu(y[i], w = w[i], gradient = TRUE), g[i])
    expect_equal(d$y[i], one$y)
    expect_equal(d$w[i], one$w)
  }
  # one vector without groups
  expect_equal(isoreg_vjp(isoreg_batch(y, w = w, gradient = TRUE), g),
               isoreg_vjp(isoreg_gpu(y, w = w, gradient = TRUE), g))
})

test_that("bad input to isoreg_vjp and gradient = TRUE gives errors naming the argument", {
  fit <- isoreg_gpu(c(3, 1, 2, 5), gradient = TRUE)
  expect_error(isoreg_vjp(isoreg_gpu(c(3, 1, 2, 5)), 1:4), "`fit` has no recorded blocks.*gradient = TRUE")
  expect_error(isoreg_vjp(isoreg_batch(matrix(1:4, 2)), 1:4), "`fit` must be a fit of isoreg_gpu")
  expect_error(isoreg_vjp(list(fitted = 1:3), 1:3), "`fit` must be a fit")
  expect_error(isoreg_vjp(fit), "`g` is missing")
  expect_error(isoreg_vjp(fit, 1:3), "`g` must have the shape of the fitted values \\(a vector of length 4\\), not a vector of length 3")
  expect_error(isoreg_vjp(fit, matrix(1:4, 2)), "`g` must have the shape.*not a 2 x 2 matrix")
  expect_error(isoreg_vjp(fit, c(1, NA, 2, 3)), "`g` must be finite, but has NA at element 2")
  expect_error(isoreg_vjp(fit, c(1, 2, NaN, 3)), "`g` must be finite, but has NaN at element 3")
  expect_error(isoreg_vjp(fit, c("a", "b", "c", "d")), "`g` must be numeric")
  b <- isoreg_batch(matrix(c(3, 1, 2, 5), 2), gradient = TRUE)
  expect_error(isoreg_vjp(b, 1:4), "`g` must have the shape of the fitted values \\(a 2 x 2 matrix\\)")
  expect_error(isoreg_vjp(b, matrix(c(1, 2, Inf, 4), 2)), "`g` must be finite, but has Inf at row 1, column 2")
  expect_error(isoreg_gpu(1:3, gradient = NA), "`gradient` must be TRUE or FALSE")
  expect_error(isoreg_batch(matrix(1:4, 2), gradient = TRUE, block_starts = TRUE),
               "`block_starts` cannot be combined with `gradient = TRUE`")
})

test_that("an edited fit is an error naming fit, in R and in the C glue, never a crash or a wrong length", {
  fit <- isoreg_gpu(c(2, 1, 3), c(3, 1, 2), gradient = TRUE)
  g <- c(1, 0, 0)
  # the fit with parts replaced (NULL: removed), still of its class
  edit <- function(obj, ...) structure(utils::modifyList(obj, list(...)), class = class(obj))
  bad <- function(obj, problem, g = c(1, 0, 0)) {
    expect_error(isoreg_vjp(obj, g), paste0("`fit` is not a valid gpuiso fit: its ", problem))
  }
  bad(edit(fit, y = NULL), "`y`")
  bad(edit(fit, y = c(3, 1)), "`y`")
  bad(edit(fit, y = c("a", "b", "c")), "`y`")
  bad(edit(fit, w = c(1, 1)), "`w`")
  bad(edit(fit, w = list(1, 1, 1)), "`w`")
  bad(edit(fit, grad = list(start = 1:3)), "`grad\\$start`")
  bad(edit(fit, grad = list(start = c(TRUE, FALSE))), "`grad\\$start`")
  bad(edit(fit, grad = list(order = c(100L, 1L, 2L))), "`grad\\$order` is not a permutation of 1 to 3")
  bad(edit(fit, grad = list(order = c(1L, 1L, 2L))), "`grad\\$order`")
  bad(edit(fit, grad = list(order = c(2, 1, 3))), "`grad\\$order`")
  bad(edit(fit, grad = list(y_max = NULL)), "`grad\\$y_max` is not a number")
  bad(edit(fit, fitted = "a"), "`fitted`")
  b <- isoreg_batch(matrix(c(3, 1, 2, 1, 2, 3), 2), gradient = TRUE)
  gm <- matrix(1, 2, 3)
  bad(edit(b, w = 1:2), "`w`", gm)
  bad(edit(b, y = 1:6), "`y`", gm)
  bad(edit(b, grad = list(start = c(TRUE, FALSE))), "`grad\\$start`", gm)
  bg <- isoreg_batch(c(3, 1, 2, 1, 2, 3), group = c(1, 1, 1, 2, 2, 2), gradient = TRUE)
  bad(edit(bg, group = 1:2), "`group`", 1:6)
  bad(edit(bg, group = c(1, NA, 1, 2, 2, 2)), "`group`", 1:6)
  expect_error(isoreg_vjp(structure(1, class = "gpuiso_fit"), 1), "`fit` must be a fit of isoreg_gpu")
  # the C glue checks the types and lengths it is given itself
  vjp <- function(offsets, y, start = c(TRUE, FALSE, FALSE), w = NULL) {
    .Call(gpuiso:::C_vjp, offsets, y, w, c(1, 2, 3), start, g, -Inf, Inf, 0L)
  }
  expect_error(vjp(c(0, 3), c(1, 2)), "`fit` is not a valid gpuiso fit: .* differ in type or length")
  expect_error(vjp(c(0, 3), c(1, 2, 3), w = c(1, 1)), "`fit` is not a valid gpuiso fit")
  expect_error(vjp(c(0, 3), c(1, 2, 3), start = 1:3), "`fit` is not a valid gpuiso fit")
  expect_error(vjp(c(0, 4), c(1, 2, 3)), "`fit` is not a valid gpuiso fit: its rows do not match its data")
  expect_error(vjp(c(0, 2, 1, 3), c(1, 2, 3)), "`fit` is not a valid gpuiso fit: its rows do not match its data")
  expect_equal(vjp(c(0, 3), c(1, 2, 3))[[1]], rep(1 / 3, 3))
})

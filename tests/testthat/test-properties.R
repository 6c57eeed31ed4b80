# Properties every fit must have, checked on random data of the four families.

# Random problem: y of a family, optional weights, optional x (with ties).
rand_problem <- function(seed, n, family = NULL, wkind = NULL, xkind = NULL) {
  set.seed(seed)
  if (is.null(family)) family <- sample(families, 1)
  if (is.null(wkind)) wkind <- sample(weight_kinds, 1)
  if (is.null(xkind)) xkind <- sample(x_kinds, 1)
  list(y = gen_y(family, n), w = gen_w(wkind, n), x = gen_x(xkind, n),
       info = sprintf("family=%s w=%s x=%s n=%d seed=%d", family, wkind, xkind, n, seed))
}

test_that("the fit is monotone in x (exactly) and its blocks are maximal", {
  for (s in 1:60) {
    n <- if (s %% 10 == 0) 20000L else sample(1:300, 1)
    p <- rand_problem(100 + s, n)
    for (increasing in c(TRUE, FALSE)) {
      fit <- fit_gpu(p$x, p$y, p$w, increasing)
      xs <- if (is.null(p$x)) seq_len(n) else p$x
      f <- fit$fitted[order(xs)]
      d <- diff(f)
      if (increasing) expect_true(all(d >= 0), info = p$info) else expect_true(all(d <= 0), info = p$info)
      # tied x get one value
      expect_equal(fit$fitted, fit$level[match(xs, fit$knots)], info = p$info)
      # levels of neighbouring blocks differ (in the fit's direction)
      lev <- isoreg_blocks(fit)$level
      if (increasing) expect_true(all(diff(lev) > 0), info = p$info)
      else expect_true(all(diff(lev) < 0), info = p$info)
      # the fit is constant on each block
      expect_equal(fit$level, rep(lev, isoreg_blocks(fit)$size), info = p$info)
    }
  }
})

test_that("each block's level is the weighted mean of its data; block table is consistent", {
  for (s in 1:60) {
    n <- sample(c(1:50, 500, 5000), 1)
    p <- rand_problem(300 + s, n)
    increasing <- s %% 2 == 0
    fit <- fit_gpu(p$x, p$y, p$w, increasing)
    w <- if (is.null(p$w)) rep(1, n) else p$w
    xs <- if (is.null(p$x)) seq_len(n) else p$x
    b <- isoreg_blocks(fit)
    expect_s3_class(b, "data.frame")
    expect_true(all(c("x_start", "x_end", "level", "weight", "start", "size") %in% names(b)))
    expect_equal(sum(b$size), length(fit$knots), info = p$info)
    expect_equal(b$start, cumsum(c(1, utils::head(b$size, -1))), info = p$info)
    expect_equal(b$x_start, fit$knots[b$start], info = p$info)
    expect_equal(b$x_end, fit$knots[b$start + b$size - 1], info = p$info)
    expect_equal(as.numeric(fit$block_start), as.numeric(b$start), info = p$info)
    blk <- findInterval(xs, b$x_start)          # block of every element
    wsum <- as.vector(tapply(w, factor(blk, levels = seq_len(nrow(b))), sum))
    wysum <- as.vector(tapply(w * p$y, factor(blk, levels = seq_len(nrow(b))), sum))
    expect_equal(b$weight, wsum, tolerance = 1e-10, info = p$info)
    expect_equal(b$level, wysum / wsum, tolerance = 1e-10, info = p$info)
    # total weighted sum of the fit equals that of the data
    expect_equal(sum(w * fit$fitted), sum(w * p$y), tolerance = 1e-10, info = p$info)
  }
})

test_that("knots, levels and knot weights describe the pooled problem", {
  set.seed(17)
  x <- sample(c(2.5, -1, 0, 7), 40, replace = TRUE)
  y <- stats::rnorm(40)
  w <- stats::runif(40)
  fit <- isoreg_gpu(x, y, w = w)
  expect_equal(fit$knots, c(-1, 0, 2.5, 7))
  expect_equal(fit$knot_weight, as.vector(tapply(w, x, sum)), tolerance = 1e-12)
  expect_equal(fit$level, ref_pav(as.vector(tapply(w * y, x, sum) / tapply(w, x, sum)),
                                  as.vector(tapply(w, x, sum))), tolerance = 1e-12)
  expect_equal(fit$n, 40L)
  # x not given: knots are 1..n
  fit <- isoreg_gpu(y)
  expect_equal(fit$knots, seq_len(40))
  expect_equal(fit$level, fit$fitted)
  expect_null(fit$x)
  expect_null(fit$w)
})

test_that("the fit does not depend on the order of the observations", {
  for (s in 1:40) {
    n <- sample(c(1:60, 3000), 1)
    p <- rand_problem(500 + s, n, xkind = sample(c("ties", "real", "perm"), 1))
    increasing <- s %% 2 == 1
    fit <- fit_gpu(p$x, p$y, p$w, increasing)
    for (r in 1:2) {
      perm <- sample.int(n)
      fitp <- fit_gpu(p$x[perm], p$y[perm], p$w[perm], increasing)
      expect_equal(fitp$fitted, fit$fitted[perm], tolerance = 1e-12, info = p$info)
      expect_equal(fitp$knots, fit$knots, info = p$info)
      expect_equal(fitp$level, fit$level, tolerance = 1e-12, info = p$info)
    }
  }
})

test_that("integer weights give the same fit as replicated rows", {
  for (s in 1:30) {
    n <- sample(1:80, 1)
    p <- rand_problem(700 + s, n, wkind = "none", xkind = sample(c("none", "ties", "real"), 1))
    w <- sample(1:5, n, replace = TRUE)
    increasing <- s %% 2 == 0
    xs <- if (is.null(p$x)) seq_len(n) else p$x
    fitw <- isoreg_gpu(xs, p$y, w = w, increasing = increasing)
    fitr <- isoreg_gpu(rep(xs, w), rep(p$y, w), increasing = increasing)
    expect_equal(fitr$knots, fitw$knots, info = p$info)
    expect_equal(fitr$level, fitw$level, tolerance = 1e-12, info = p$info)
    expect_equal(fitr$fitted, rep(fitw$fitted, w), tolerance = 1e-12, info = p$info)
    # also when x is not given: the replicated rows are ties of x
    if (is.null(p$x)) {
      fit0 <- isoreg_gpu(p$y, w = w, increasing = increasing)
      expect_equal(fit0$fitted, fitw$fitted, tolerance = 1e-12, info = p$info)
    }
  }
})

test_that("decreasing(-y) == -increasing(y) and increasing = FALSE mirrors -y", {
  for (s in 1:40) {
    n <- sample(c(1:100, 10000), 1)
    p <- rand_problem(900 + s, n)
    up <- fit_gpu(p$x, p$y, p$w, TRUE)
    expect_equal(fit_gpu(p$x, -p$y, p$w, FALSE)$fitted, -up$fitted, tolerance = 1e-14, info = p$info)
    down <- fit_gpu(p$x, p$y, p$w, FALSE)
    expect_equal(down$fitted, -fit_gpu(p$x, -p$y, p$w, TRUE)$fitted, tolerance = 1e-14, info = p$info)
  }
  y <- c(3, 1, 4, 1, 5, 9, 2, 6)
  expect_equal(isoreg_gpu(y, increasing = FALSE)$fitted, -isoreg_gpu(-y)$fitted)
})

test_that("zero weights do not hang, give no NaN and follow the documented rule", {
  set.seed(42)
  n <- 50000
  y <- gen_y("noise", n)
  w <- stats::runif(n)
  w[sample.int(n, n / 2)] <- 0
  for (increasing in c(TRUE, FALSE)) {
    fit <- isoreg_gpu(y, w = w, increasing = increasing)
    expect_false(anyNA(fit$fitted))
    expect_true(all(is.finite(fit$fitted)))
    expect_equal(fit$fitted, ref_pav(y, w, increasing), tolerance = 1e-10)
  }
  # a single positive weight: everything gets its value
  w <- numeric(n)
  w[n / 2] <- 3
  fit <- isoreg_gpu(y, w = w)
  expect_equal(fit$fitted, rep(y[n / 2], n))
  # the same with x in random order and ties
  x <- sample(1:100, n, replace = TRUE)
  fit <- isoreg_gpu(x, y, w = w)
  expect_equal(fit$fitted, rep(y[n / 2], n))
  # zero-weight elements do not influence the fit of the others
  y <- c(2, 8, 1, 9, 3, 7)
  w <- c(1, 0, 1, 0, 1, 1)
  fit <- isoreg_gpu(y, w = w)
  keep <- w > 0
  expect_equal(fit$fitted[keep], isoreg_gpu(y[keep])$fitted)
  # zero weights in the weight column of the blocks
  expect_equal(sum(isoreg_blocks(fit)$weight), 4)
})

test_that("inputs are never modified in place", {
  set.seed(3)
  n <- 2000
  y <- gen_y("sawtooth", n)
  x <- gen_x("ties", n)
  w <- gen_w("extreme", n)
  yi <- as.integer(round(y * 10))
  xi <- as.integer(round(x))
  wi <- sample(0:3, n, replace = TRUE)
  wi[1] <- 1L
  yc <- deep_copy(y); xc <- deep_copy(x); wc <- deep_copy(w)
  yic <- deep_copy(yi); xic <- deep_copy(xi); wic <- deep_copy(wi)
  check <- function() {
    expect_identical(y, yc); expect_identical(x, xc); expect_identical(w, wc)
    expect_identical(yi, yic); expect_identical(xi, xic); expect_identical(wi, wic)
  }
  f1 <- isoreg_gpu(y); check()
  f2 <- isoreg_gpu(y, increasing = FALSE); check()
  f3 <- isoreg_gpu(x, y, w = w); check()
  f4 <- isoreg_gpu(x, y, w = w, increasing = FALSE, y_min = 0.2, y_max = 0.7); check()
  f5 <- isoreg_gpu(xi, yi, w = wi, increasing = FALSE); check()
  f6 <- isoreg_gpu(yi, w = wi); check()
  xs <- sort(x); xsc <- deep_copy(xs)
  f7 <- isoreg_gpu(xs, y, w = w); expect_identical(xs, xsc); check()
  p1 <- predict(f3, x, type = "linear"); p2 <- predict(f3, x, type = "step"); check()

  Y <- matrix(y, nrow = 20); Yc <- deep_copy(Y)
  W <- matrix(w, nrow = 20); Wc <- deep_copy(W)
  wv <- w[1:100]; wvc <- deep_copy(wv)
  b1 <- isoreg_batch(Y); expect_identical(Y, Yc)
  b2 <- isoreg_batch(Y, w = W, increasing = FALSE, block_starts = TRUE)
  expect_identical(Y, Yc); expect_identical(W, Wc)
  b3 <- isoreg_batch(Y, w = wv, y_min = 0.3); expect_identical(Y, Yc); expect_identical(wv, wvc)
  g <- sample(1:7, n, replace = TRUE); gc <- deep_copy(g)
  gf <- factor(g, levels = c(4, 2, 7, 1, 3, 6, 5)); gfc <- deep_copy(gf)
  b4 <- isoreg_batch(y, w = w, group = g); check(); expect_identical(g, gc)
  b5 <- isoreg_batch(yi, w = wi, group = gf, increasing = FALSE, block_starts = TRUE)
  check(); expect_identical(gf, gfc)
  b6 <- isoreg_batch(y, w = w); check()
})

# ---- Batches and groups -------------------------------------------------------------------------

row_fit <- function(y, w, increasing, ...) isoreg_gpu(y, w = w, increasing = increasing, ...)

starts_logical <- function(fit, n) {
  s <- logical(n)
  s[fit$block_start] <- TRUE
  s
}

test_that("a batch matrix gives the same result as row-by-row fits", {
  set.seed(21)
  for (shape in list(c(1, 1), c(1, 50), c(30, 1), c(37, 23), c(200, 64))) {
    nr <- shape[1]; nc <- shape[2]
    Y <- t(vapply(seq_len(nr), function(i) gen_y(families[(i %% 4) + 1], nc), numeric(nc)))
    if (nc == 1) Y <- matrix(Y, nr, 1)
    W <- matrix(exp(stats::runif(nr * nc, -8, 8)), nr, nc)
    wv <- stats::runif(nc, 0.1, 3)
    dimnames(Y) <- list(paste0("r", seq_len(nr)), paste0("c", seq_len(nc)))
    for (increasing in c(TRUE, FALSE)) {
      info <- sprintf("%d x %d, increasing=%s", nr, nc, increasing)
      exp_none <- exp_W <- exp_wv <- Y
      st_W <- matrix(FALSE, nr, nc)
      for (i in seq_len(nr)) {
        exp_none[i, ] <- row_fit(Y[i, ], NULL, increasing)$fitted
        fW <- row_fit(Y[i, ], W[i, ], increasing)
        exp_W[i, ] <- fW$fitted
        st_W[i, ] <- starts_logical(fW, nc)
        exp_wv[i, ] <- row_fit(Y[i, ], wv, increasing)$fitted
      }
      r0 <- isoreg_batch(Y, increasing = increasing)
      expect_true(is.matrix(r0), info = info)
      expect_identical(dimnames(r0), dimnames(Y), info = info)
      expect_equal(r0, exp_none, tolerance = 1e-12, info = info)
      expect_equal(isoreg_batch(Y, w = W, increasing = increasing), exp_W, tolerance = 1e-12, info = info)
      expect_equal(isoreg_batch(Y, w = wv, increasing = increasing), exp_wv, tolerance = 1e-12, info = info)
      rb <- isoreg_batch(Y, w = W, increasing = increasing, block_starts = TRUE)
      expect_type(rb, "list")
      expect_equal(rb$fitted, exp_W, tolerance = 1e-12, info = info)
      expect_type(rb$block_start, "logical")
      expect_equal(dim(rb$block_start), dim(Y), info = info)
      expect_equal(unname(rb$block_start), st_W, info = info)
      # against the plain-R reference too
      expect_equal(unname(rb$fitted[nr, ]), ref_pav(unname(Y[nr, ]), W[nr, ], increasing),
                   tolerance = 1e-10, info = info)
    }
  }
})

test_that("a vector without group is one row", {
  set.seed(22)
  y <- gen_y("noise", 300)
  w <- gen_w("uniform", 300)
  names(y) <- paste0("e", 1:300)
  r <- isoreg_batch(y, w = w, increasing = FALSE)
  expect_equal(unname(r), isoreg_gpu(unname(y), w = w, increasing = FALSE)$fitted, tolerance = 1e-12)
  expect_identical(names(r), names(y))
})

test_that("groups give the same result as group-by-group fits (ragged, interleaved)", {
  set.seed(23)
  for (r in 1:12) {
    n <- sample(c(1, 5, 50, 1000, 20000), 1)
    k <- sample(1:min(n, 40), 1)
    ids <- sample(c(-5L, 0L, 3L, 7L, 12L, 99L, 1:40), k)   # arbitrary integer ids
    g <- ids[sample.int(k, n, replace = TRUE, prob = stats::runif(k))]   # ragged, interleaved
    y <- gen_y(sample(families, 1), n)
    w <- if (r %% 3 == 0) NULL else gen_w("extreme", n)
    names(y) <- paste0("v", seq_len(n))
    increasing <- r %% 2 == 0
    expected <- numeric(n)
    st <- logical(n)
    for (gg in unique(g)) {
      i <- which(g == gg)                     # order of appearance
      f <- isoreg_gpu(unname(y[i]), w = w[i], increasing = increasing)
      expected[i] <- f$fitted
      st[i] <- starts_logical(f, length(i))
    }
    info <- sprintf("n=%d k=%d increasing=%s", n, k, increasing)
    for (grp in list(g, factor(g), factor(g, levels = sample(unique(g))), as.numeric(g))) {
      res <- isoreg_batch(y, w = w, increasing = increasing, group = grp)
      expect_equal(unname(res), expected, tolerance = 1e-12, info = info)
      expect_identical(names(res), names(y), info = info)
    }
    rb <- isoreg_batch(y, w = w, increasing = increasing, group = factor(g), block_starts = TRUE)
    expect_equal(unname(rb$fitted), expected, tolerance = 1e-12, info = info)
    expect_equal(unname(rb$block_start), st, info = info)
    # one group per element: the data itself
    if (n <= 1000) {
      expect_equal(unname(isoreg_batch(y, w = w, group = seq_len(n))), unname(y), info = info)
    }
  }
  # a factor with unused levels
  g <- factor(c("b", "a", "b", "a"), levels = c("a", "b", "zz"))
  expect_equal(isoreg_batch(c(2, 4, 1, 3), group = g), c(1.5, 3.5, 1.5, 3.5))
})

test_that("results do not depend on the thread count", {
  old <- gpuiso_threads()
  on.exit(gpuiso_threads(old), add = TRUE)
  set.seed(24)
  Y <- matrix(gen_y("noise", 2000 * 200), 2000, 200)
  W <- matrix(gen_w("extreme", 2000 * 200), 2000, 200)
  n <- 500000
  y <- gen_y("sawtooth", n)
  x <- stats::runif(n)
  w <- gen_w("uniform", n)
  g <- sample.int(300, n, replace = TRUE)
  run <- function(th) {
    gpuiso_threads(th)
    list(batch = isoreg_batch(Y, w = W),
         batch_dec = isoreg_batch(Y, increasing = FALSE, block_starts = TRUE),
         groups = isoreg_batch(y, w = w, group = g),
         row = isoreg_gpu(x, y, w = w)$fitted,
         row_dec = isoreg_gpu(y, increasing = FALSE)$fitted)
  }
  r1 <- run(1)
  expect_equal(gpuiso_threads(), 1L)
  r2 <- run(2)
  expect_identical(r1$batch, r2$batch)
  expect_identical(r1$batch_dec, r2$batch_dec)
  expect_identical(r1$groups, r2$groups)
  expect_equal(r1$row, r2$row, tolerance = 1e-13)
  expect_equal(r1$row_dec, r2$row_dec, tolerance = 1e-13)
})

test_that("y_min / y_max clip the fit", {
  for (s in 1:30) {
    n <- sample(c(1:100, 5000), 1)
    p <- rand_problem(1100 + s, n)
    increasing <- s %% 2 == 0
    free <- fit_gpu(p$x, p$y, p$w, increasing)$fitted
    q <- stats::quantile(free, c(0.25, 0.8), names = FALSE)
    lo <- q[1]; hi <- q[2]
    expect_equal(fit_gpu(p$x, p$y, p$w, increasing, y_min = lo, y_max = hi)$fitted,
                 pmin(pmax(free, lo), hi), tolerance = 1e-12, info = p$info)
    expect_equal(fit_gpu(p$x, p$y, p$w, increasing, y_min = lo)$fitted,
                 pmax(free, lo), tolerance = 1e-12, info = p$info)
    expect_equal(fit_gpu(p$x, p$y, p$w, increasing, y_max = hi)$fitted,
                 pmin(free, hi), tolerance = 1e-12, info = p$info)
  }
  fit <- isoreg_gpu(c(3, 7, 5, 9, 8, 7, 10), y_min = 5, y_max = 9)
  expect_equal(fit$fitted, c(5, 6, 6, 8, 8, 8, 9))
  # blocks stay maximal after clipping: the clipped ends merge with their neighbours
  fit <- isoreg_gpu(c(1, 2, 3, 4, 5), y_min = 2.5, y_max = 3.5)
  expect_equal(fit$fitted, c(2.5, 2.5, 3, 3.5, 3.5))
  expect_equal(isoreg_blocks(fit)$size, c(2, 1, 2))
  # batches clip the same way
  Y <- rbind(c(3, 7, 5, 9, 8, 7, 10), c(1, 2, 3, 4, 5, 6, 7))
  expect_equal(isoreg_batch(Y, y_min = 5, y_max = 9),
               rbind(c(5, 6, 6, 8, 8, 8, 9), c(5, 5, 5, 5, 5, 6, 7)))
  expect_equal(isoreg_batch(c(1, 9, 2, 8), group = c(1, 1, 2, 2), y_max = 4), c(1, 4, 2, 4))
})

test_that("integer input works and gives the same fit as double input", {
  y <- c(3L, 7L, 5L, 9L, 8L, 7L, 10L)
  expect_equal(isoreg_gpu(y)$fitted, isoreg_gpu(as.numeric(y))$fitted)
  expect_equal(isoreg_gpu(7:1, y, w = 1:7)$fitted, isoreg_gpu(as.numeric(7:1), as.numeric(y),
                                                            w = as.numeric(1:7))$fitted)
  expect_equal(isoreg_batch(matrix(y, 1)), matrix(c(3, 6, 6, 8, 8, 8, 10), 1))
})

test_that("tiny and huge weights give the fit of unit weights (no underflow in comparisons)", {
  y <- c(1.5, 0.5, 2.5, 1.5)
  for (method in c("pav", "hull")) {
    for (s in c(1e-170, 1e-150, 1e-300, 1e170)) {
      expect_equal(isoreg_gpu(y, w = rep(s, 4), method = method)$fitted, c(1, 1, 2, 2),
                   info = paste(method, s))
    }
    w <- c(1e-200, 1e-160, 1e-180, 1e-190)
    expect_equal(isoreg_gpu(y, w = w, method = method)$fitted, ref_pav(y, w), tolerance = 1e-12)
  }
})

test_that("fits never step against their direction, even at near-ties", {
  a <- 0.6825281233839412
  b <- 0.68252812338394131
  y <- c(a, b, b, b, a, b, b)
  w <- c(.3, 3, 3, 3, .6, .8, 3)
  set.seed(17)
  for (method in c("pav", "hull")) {
    f <- isoreg_gpu(y, w = w, method = method)
    expect_false(is.unsorted(f$fitted), info = method)
    expect_false(is.unsorted(rev(isoreg_gpu(y, w = w, increasing = FALSE, method = method)$fitted)))
    for (rep in 1:200) {
      yy <- sample(c(a, b), 12, replace = TRUE)
      ww <- stats::runif(12)
      f <- isoreg_gpu(yy, w = ww, method = method)
      expect_false(is.unsorted(f$fitted))
      expect_equal(length(f$block_start), length(rle(f$fitted)$lengths))
    }
  }
})

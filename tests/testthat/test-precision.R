# Accuracy against an exact multiple-precision reference (helper-exact.R): every engine within
# 1e-10 of the exact fit relative to 1 + |z| in float64 (2e-7 in float32), on the data families,
# the cancellation family of the paper's section 7.6, extreme weights, and values and weights
# spread over 10^-30 .. 10^30; no fit steps against its direction.

skip_if_not_installed("Rmpfr")

steps_back <- function(z, increasing) any(if (increasing) diff(z) < 0 else diff(z) > 0)

# Rows of each family in families (the wide ones at each of spans, 1e15 and 1e30 by default) and
# both directions through each of fits, function(y, w, increasing); each fit checked against the
# exact fit of exact_input(y), exact_input(w) within tol. Rows of n elements (default 20, 128 for
# the cancellation family). Returns the largest deviation of each fit.
check_families <- function(fits, tol, rows = 8, families = precision_families,
                           exact_input = identity, n = NULL, spans = c(15, 30)) {
  worst <- stats::setNames(numeric(length(fits)), names(fits))
  for (f in families) {
    for (span in if (grepl("^wide", f)) spans else 30) {
      for (r in seq_len(rows)) {
        d <- gen_precision(f, if (!is.null(n)) n else if (f == "cancellation") 128L else 20L, span)
        increasing <- r %% 2 == 1
        exact <- ref_pav_exact(exact_input(d$y), if (!is.null(d$w)) exact_input(d$w), increasing)
        for (m in names(fits)) {
          z <- fits[[m]](d$y, d$w, increasing)
          worst[[m]] <- max(worst[[m]], deviation(z, exact))
          what <- sprintf("%s, %s (span 1e%d), row %d, %s", m, f, span, r,
                          if (increasing) "increasing" else "decreasing")
          expect_lt(deviation(z, exact), tol, label = what)
          expect_false(steps_back(z, increasing), label = what)
        }
      }
    }
  }
  worst
}

cpu <- function(method) function(y, w, inc) isoreg_gpu(y, w = w, increasing = inc, method = method)$fitted

test_that("the exact reference is exact where double sums are not", {
  # (1e30 + 1 - 1e30) / 3 in doubles is 0; exactly it is 1/3
  expect_equal(ref_pav_exact(c(1e30, 1, -1e30)), rep(1 / 3, 3), tolerance = 1e-15)
  expect_equal(ref_pav(c(1e30, 1, -1e30)), rep(0, 3))
  # a weight of 1e-20 next to one of 1e20: the middle element pools with the last, not the first
  exact <- ref_pav_exact(c(-0.9, 1, -0.1), c(1e20, 1e-20, 1))
  expect_equal(exact, c(-0.9, (1e-20 - 0.1) / (1 + 1e-20), (1e-20 - 0.1) / (1 + 1e-20)))
  # on ordinary data it is the plain reference
  set.seed(70)
  for (f in families) {
    y <- gen_y(f, 30)
    w <- stats::runif(30, 0.1, 2)
    expect_equal(ref_pav_exact(y, w, FALSE), ref_pav(y, w, FALSE), tolerance = 1e-13)
  }
})

test_that("the hull engine is exact on the cases of issue 11", {
  z <- isoreg_gpu(c(-0.9, 1, -0.1), w = c(1e20, 1e-20, 1), method = "hull")$fitted
  expect_lt(deviation(z, ref_pav_exact(c(-0.9, 1, -0.1), c(1e20, 1e-20, 1))), 1e-15)
  z <- isoreg_gpu(c(4e199, -1.6e200, -1), method = "hull")$fitted
  expect_equal(z, ref_pav_exact(c(4e199, -1.6e200, -1)))
  expect_identical(z[3], -1)
})

test_that("the hull engine is within 1e-10 of the exact fit on every family", {
  set.seed(71)
  worst <- check_families(list(hull = cpu("hull")), 1e-10)
  expect_lt(worst[["hull"]], 1e-10)
})

test_that("the hull engine keeps 1e-10 with weights, and values and weights, over 1e+-150", {
  # scaled with the row (its largest weight near 1), the smallest weights come near 1e-300, and
  # a turn's products of two of their steps under the doubles' range: the exact predicates lift
  # each vector by a power of two first (a reliability audit found 7 of 20 rows wrong at 1e+-150)
  y <- c(2.88316448385135, 3.17137820409607, 3.1717837119402)
  for (w in list(c(1, 1e-300, 1e-20), c(2.58e100, 4.26e-120, 0.0635))) {
    z <- isoreg_gpu(y, w = w, method = "hull")$fitted
    expect_lt(deviation(z, ref_pav_exact(y, w)), 1e-15)
  }
  set.seed(76)
  wide <- c("wide_values", "wide_weights", "wide_both")
  for (chunk in list(NULL, 4)) {
    old <- options(gpuiso.hull_chunk = chunk)
    worst <- check_families(list(hull = cpu("hull")), 1e-10, rows = 6, families = wide,
                            n = 30L, spans = c(100, 150))
    options(old)
    expect_lt(worst[["hull"]], 1e-10)
  }
})

test_that("weights spanning past 2^1022 are the hull solver's error, and PAV fits them", {
  # scaled with the row, the smallest weight falls below the doubles' normal range, where the hull
  # engine's steps keep too few digits (a reliability audit: 7 of 20 random rows of weights over
  # 1e+-200 were off by up to 1.06 of 1 + |z|, silently)
  y <- c(0.5, 2, 1)
  for (span in c(1021, 1023)) {
    w <- c(1, 2^-span, 2^-span)
    expect_identical(isoreg_gpu(y, w = w)$fitted, c(0.5, 1.5, 1.5))
    if (span < 1022) expect_identical(isoreg_gpu(y, w = w, method = "hull")$fitted, c(0.5, 1.5, 1.5))
  }
  expect_error(isoreg_gpu(y, w = w, method = "hull"),
               "^`w` spans too wide a range for the hull solver: .* than 2\\^1022 .*one; fit it by PAV")
  expect_error(isoreg_batch(rbind(y, y), w = rbind(c(1, 1, 1), w), method = "hull"),
               "positive one in row 2; fit it by PAV")
  expect_error(isoreg_gpu(y ~ x, data.frame(x = 1:3, y = y, v = w), weights = v, method = "hull"),
               "^`weights` spans too wide a range")
  set.seed(77)
  for (k in 1:20) {
    y <- stats::rnorm(30)
    w <- 10^stats::runif(30, -200, 200)
    r <- ref_pav_exact(y, w)
    expect_lt(deviation(isoreg_gpu(y, w = w)$fitted, r), 1e-14)
    z <- tryCatch(isoreg_gpu(y, w = w, method = "hull")$fitted,
                  error = function(e) if (grepl("too wide a range", conditionMessage(e))) r else stop(e))
    expect_lt(deviation(z, r), 1e-10)
  }
})

test_that("the PAV engine is within 1e-10 of the exact fit outside the cancellation family", {
  # PAV's block sums are plain doubles: on the cancellation family they lose the small means'
  # digits (up to 3e-4 of 1 + |z|), which issue 11 leaves open
  set.seed(72)
  worst <- check_families(list(pav = cpu("pav")), 1e-10,
                          families = setdiff(precision_families, "cancellation"))
  expect_lt(worst[["pav"]], 1e-10)
})

test_that("the hull engine keeps 1e-10 across chunks, on every family", {
  # chunks of 4 points put several merge levels into rows of 20 (and of 128); a row whose chunks'
  # points cannot hold their steps (the wide families) merges its chunks' chains on the steps
  old <- options(gpuiso.hull_chunk = 4, gpuiso.hull_walk_cap = 1)
  on.exit(options(old), add = TRUE)
  set.seed(73)
  worst <- check_families(list(hull = cpu("hull")), 1e-10)
  expect_lt(worst[["hull"]], 1e-10)
})

test_that("the hull engine's wide rows keep zero weights in the block on their left, across chunks", {
  # zero weights lead the row, lead chunks of 4 and fill one: merging the chunks' chains on the
  # steps puts them in the block on their left (the first block, leading the row), where the
  # exact fit of the positive weights has them
  old <- options(gpuiso.hull_chunk = 4)
  on.exit(options(old), add = TRUE)
  set.seed(74)
  zero <- c(1, 2, 5, 9:12, 13, 14, 21, 29:31)
  for (f in c("wide_weights", "wide_both")) {
    for (span in c(15, 30)) {
      for (r in 1:6) {
        d <- gen_precision(f, 40L, span)
        d$w[zero] <- 0
        increasing <- r %% 2 == 1
        positive <- d$w > 0
        exact <- ref_pav_exact(d$y[positive], d$w[positive], increasing)[pmax(cumsum(positive), 1L)]
        z <- isoreg_gpu(d$y, w = d$w, increasing = increasing, method = "hull")$fitted
        what <- sprintf("%s (span 1e%d), row %d", f, span, r)
        expect_lt(deviation(z, exact), 1e-10, label = what)
        expect_false(steps_back(z, increasing), label = what)
      }
    }
  }
})

gpu <- function(precision) {
  function(y, w, inc) isoreg_gpu(y, w = w, increasing = inc, device = "gpu", precision = precision)$fitted
}
# float32 is the exact fit of the inputs rounded to float32
to_float <- function(v) Rmpfr::asNumeric(Rmpfr::mpfr(v, 24))

test_that("the GPU's fast path is within 1e-10 (float64) and 2e-7 (float32) of the exact fit", {
  skip_without_gpu()
  set.seed(73)
  # rows of 20 and 128: the lane kernels, several rows a warp
  expect_lt(check_families(list(gpu_float64 = gpu("double")), 1e-10)[[1]], 1e-10)
  expect_lt(check_families(list(gpu_float32 = gpu("single")), 2e-7, exact_input = to_float)[[1]], 2e-7)
})

test_that("the GPU's fast path keeps 1e-10 (float64) and 2e-7 (float32) on rows of chunks", {
  skip_without_gpu()
  set.seed(75)
  # rows of 5000, over the 4096 of a block: five chunks (of 1000, made even) merged in levels; the
  # exact reference takes seconds a row (about 20 on a slow core), so two rows a case (both
  # directions) of the families hardest on the sums
  long <- c("cancellation", "wide_both")
  expect_lt(check_families(list(gpu_float64 = gpu("double")), 1e-10, 2, long, n = 5000L)[[1]], 1e-10)
  expect_lt(check_families(list(gpu_float32 = gpu("single")), 2e-7, 2, long, to_float, 5000L)[[1]], 2e-7)
})

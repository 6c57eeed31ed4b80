# The hull engine (method = "hull") computes the PAV engine's fit from the lower convex hull of the
# cumulative sum diagram. Small chunks and walk caps (unexported options) put many merge levels,
# capped walks and bisection searches into test-sized rows.

with_hull <- function(chunk, cap, code) {
  old <- options(gpuiso.hull_chunk = chunk, gpuiso.hull_walk_cap = cap)
  on.exit(options(old), add = TRUE)
  code
}

test_that("the hull engine equals the PAV reference on every family, weighting and direction", {
  set.seed(3)
  worst <- 0
  for (family in c(families, "cancellation", "ulp", "collinear")) {
    for (wkind in c("none", "uniform", "extreme", "zeros")) {
      for (increasing in c(TRUE, FALSE)) {
        n <- sample(c(50, 300, 1200), 1L)
        y <- if (family %in% families) gen_y(family, n) else gen_stress(family, n)
        w <- if (wkind == "zeros") {
          w <- stats::runif(n); w[sample.int(n, n %/% 3L)] <- 0; w
        } else gen_w(wkind, n)
        ref <- ref_pav(y, w, increasing)
        scale <- if (family == "cancellation") max(abs(y)) else 1 + abs(ref)
        for (chunk in c(4, 8, 32)) {
          for (cap in c(1, 2)) {
            fit <- with_hull(chunk, cap, isoreg_gpu(y, w = w, increasing = increasing, method = "hull"))
            dev <- max(abs(fit$fitted - ref) / scale)
            if (family != "cancellation") worst <- max(worst, dev)
            expect_lt(dev, 1e-12, label = sprintf("%s, %s weights, C = %d, T = %d", family, wkind, chunk, cap))
            expect_identical(fit$method, "hull")
          }
        }
      }
    }
  }
  expect_lt(worst, 1e-12)
})

test_that("the hull engine agrees with PAV on unsorted x with ties, batches and groups", {
  set.seed(4)
  x <- sample(1:300, 2000, replace = TRUE) / 7
  y <- gen_y("noise", 2000)
  w <- gen_w("uniform", 2000)
  with_hull(8, 2, {
    expect_equal(isoreg_gpu(x, y, w, method = "hull")$fitted, isoreg_gpu(x, y, w)$fitted, tolerance = 1e-12)
    m <- matrix(gen_y("sawtooth", 40 * 60), 40)
    expect_equal(isoreg_batch(m, method = "hull"), isoreg_batch(m), tolerance = 1e-12)
    g <- sample(1:7, 2000, replace = TRUE)
    expect_equal(isoreg_batch(y, w, group = g, method = "hull"), isoreg_batch(y, w, group = g),
                 tolerance = 1e-12)
  })
})

test_that("the hull engine clips, counts blocks and reports bad input like PAV", {
  y <- c(5, 1, 3, 2, 8, 7)
  fit <- isoreg_gpu(y, y_min = 3, y_max = 7, method = "hull")
  expect_equal(fit$fitted, c(3, 3, 3, 3, 7, 7))
  expect_identical(fit$block_start, c(1L, 5L))
  expect_error(isoreg_gpu(c(1, NA, 3), method = "hull"), "`y`")
  expect_error(isoreg_gpu(1:3, w = c(1, -1, 1), method = "hull"), "`w`")
  expect_error(isoreg_gpu(1:3, w = c(0, 0, 0), method = "hull"), "positive weight")
  expect_error(isoreg_gpu(rep(1e307, 20), method = "hull"), "overflow")
  expect_error(isoreg_gpu(1:3, method = "simplex"), "`method` must be one of \"auto\", \"pav\", \"hull\"")
  expect_identical(isoreg_gpu(1:3)$method, "pav")
})

test_that("the hull engine's fit written over its input (batch tiles, knots on x) is its fit", {
  # The hull's short edges take their levels from the elements' sums while other chunks write
  # their levels: rows of several chunks, with weights over e^-8..e^8, on 2 threads.
  set.seed(71)
  old <- gpuiso_threads(2)
  on.exit(gpuiso_threads(old))
  y <- matrix(rnorm(4 * 5000), 4) + rep(seq(0, 3, length.out = 5000), each = 4)
  w <- matrix(exp(runif(4 * 5000, -8, 8)), 4)
  hull <- isoreg_batch(y, w, method = "hull")
  for (i in 1:4) {
    expect_equal(hull[i, ], ref_pav(y[i, ], w[i, ]), tolerance = 1e-10)
    expect_identical(hull[i, ], isoreg_gpu(y[i, ], w = w[i, ], method = "hull")$fitted)
  }
  x <- matrix(sample(4000, 4 * 5000, replace = TRUE), 4) # about 2900 knots a row
  on_x <- isoreg_batch(y, w, x = x, method = "hull")
  for (i in 1:4) {
    expect_identical(on_x[i, ], isoreg_gpu(x[i, ], y[i, ], w[i, ], method = "hull")$fitted)
  }
})

# The CUDA solver: device = "gpu" against the CPU engines on the families, weightings, directions,
# precisions and layouts; without a device, the errors and the CPU fallback of "auto".

test_that("device = 'gpu' without a device is a clear error; 'auto' uses the CPU", {
  skip_if(has_gpu(), "a CUDA device is present")
  expect_error(isoreg_gpu(c(3, 1, 2), device = "gpu"), "device = \"gpu\".*(CUDA|device)")
  expect_error(isoreg_batch(matrix(c(3, 1, 2, 4), 2), device = "gpu"), "device = \"gpu\"")
  old <- options(gpuiso.gpu_min_n = 1)
  on.exit(options(old), add = TRUE)
  fit <- expect_silent(isoreg_gpu(c(3, 1, 2)))
  expect_identical(fit$backend, "cpu")
  expect_equal(fit$fitted, c(2, 2, 2))
  expect_equal(isoreg_batch(matrix(c(3, 1, 2, 4), 1))[1, ], c(2, 2, 2, 4))
})

test_that("'auto' takes the GPU from each work's measured size, or from gpuiso.gpu_min_n", {
  old <- options(gpuiso.gpu_min_n = NULL) # the package's sizes (helper-gpu.R sets Inf)
  on.exit(options(old), add = TRUE)
  auto <- gpuiso:::gpu_auto
  # the crossovers of tools/bench/RESULTS.md (2026-12-04), each work at its own
  sizes <- c(fit = 1e5, batch = 1e6, soft = 4e5, calibrate = 1e7, vjp = 1e7)
  for (work in names(sizes)) {
    expect_false(auto(sizes[[work]] - 1, work), label = work)
    expect_true(auto(sizes[[work]], work), label = work)
  }
  expect_identical(isoreg_gpu(c(3, 1, 2))$backend, "cpu")
  expect_identical(isoreg_gpu(stats::runif(1e5))$backend, if (has_gpu()) "gpu" else "cpu")
  options(gpuiso.gpu_min_n = 10)
  expect_false(auto(9, "fit"))
  expect_true(auto(10, "calibrate"))
  expect_identical(isoreg_gpu(c(3, 1, 2))$backend, "cpu")
  options(gpuiso.gpu_min_n = Inf)
  expect_false(auto(1e9, "fit"))
  expect_identical(isoreg_gpu(stats::runif(1e5))$backend, "cpu")
  for (bad in list("many", -1, c(1, 2), NA_real_)) {
    options(gpuiso.gpu_min_n = bad)
    expect_error(isoreg_gpu(c(3, 1, 2)), "option `gpuiso.gpu_min_n` must be NULL or a single non-negative number")
  }
  expect_identical(isoreg_gpu(c(3, 1, 2), device = "cpu")$backend, "cpu")
})

# Deviation of a fit from a reference, relative to 1 + |ref| (issue 11) unless scale is given.
gpu_dev <- function(z, ref, scale = 1 + abs(ref)) max(abs(z - ref) / scale)
# The scale against the plain-double PAV reference (ref_pav): on the cancellation family its block
# sums lose the small means' digits (test-precision.R), so there the data's.
pav_scale <- function(ref, y, family) if (family == "cancellation") max(abs(y)) else 1 + abs(ref)

test_that("the GPU fits every family, weighting and direction as the CPU engines do", {
  skip_without_gpu()
  set.seed(11)
  for (family in c(families, "cancellation", "ulp", "collinear")) {
    for (wkind in c("none", "uniform", "extreme", "zeros")) {
      for (increasing in c(TRUE, FALSE)) {
        n <- sample(c(1, 40, 3000, 70000), 1L)
        y <- if (family %in% families) gen_y(family, n) else gen_stress(family, n)
        w <- if (wkind == "zeros") { w <- stats::runif(n); w[-1][stats::runif(n - 1) < 0.4] <- 0; w }
             else gen_w(wkind, n)
        hull <- isoreg_gpu(y, w = w, increasing = increasing, method = "hull")
        gpu <- isoreg_gpu(y, w = w, increasing = increasing, device = "gpu")
        label <- sprintf("%s, %s weights, n = %d, increasing = %s", family, wkind, n, increasing)
        expect_identical(gpu$backend, "gpu")
        expect_lte(gpu_dev(gpu$fitted, hull$fitted), 1e-12, label = label)
        expect_equal(length(gpu$block_start), length(hull$block_start), label = label)
        ref <- ref_pav(y, w, increasing)
        expect_lte(gpu_dev(gpu$fitted, ref, pav_scale(ref, y, family)), 1e-10, label = label)
        single <- isoreg_gpu(y, w = w, increasing = increasing, device = "gpu", precision = "single")
        yf <- as_float32(y)
        wf <- if (is.null(w)) NULL else as_float32(w)
        hull32 <- isoreg_gpu(yf, w = wf, increasing = increasing, method = "hull")$fitted
        expect_lte(gpu_dev(single$fitted, hull32), 2e-7, label = paste(label, "single"))
        ref32 <- ref_pav(yf, wf, increasing)
        expect_lte(gpu_dev(single$fitted, ref32, pav_scale(ref32, yf, family)), 2e-7,
                   label = paste(label, "single, PAV"))
        steps <- diff(single$fitted) * if (increasing) 1 else -1
        expect_true(all(steps >= 0), label = paste(label, "single, monotone"))
        expect_identical(single$precision, "single")
      }
    }
  }
})

test_that("the GPU's chunks, merges and searches agree with the CPU hull engine", {
  skip_without_gpu()
  set.seed(12)
  y <- gen_y("sawtooth", 5000)
  w <- gen_w("extreme", 5000)
  for (chunk in c(4, 32)) {
    for (cap in c(1, 64)) {
      old <- options(gpuiso.hull_chunk = chunk, gpuiso.hull_walk_cap = cap)
      hull <- isoreg_gpu(y, w = w, method = "hull")
      gpu <- isoreg_gpu(y, w = w, device = "gpu")
      options(old)
      expect_lte(gpu_dev(gpu$fitted, hull$fitted), 1e-12)
    }
  }
})

test_that("GPU batches: matrix rows, shared weights, ragged groups and unsorted x with ties", {
  skip_without_gpu()
  set.seed(13)
  y <- matrix(stats::rnorm(300 * 57), 300) + rep(seq(0, 3, length.out = 57), each = 300)
  w <- matrix(stats::runif(300 * 57), 300)
  for (wt in list(NULL, w, w[1, ])) {
    cpu <- isoreg_batch(y, w = wt, block_starts = TRUE)
    gpu <- isoreg_batch(y, w = wt, block_starts = TRUE, device = "gpu")
    expect_lte(max(abs(gpu$fitted - cpu$fitted)), 1e-12)
    expect_identical(gpu$block_start, cpu$block_start)
  }
  g <- sample(c(rep(1:50, 1:50), 51:60), replace = FALSE)
  v <- stats::rnorm(length(g))
  for (increasing in c(TRUE, FALSE)) {
    cpu <- isoreg_batch(v, group = factor(g, levels = 0:61), increasing = increasing)
    gpu <- isoreg_batch(v, group = factor(g, levels = 0:61), increasing = increasing, device = "gpu")
    expect_lte(max(abs(gpu - cpu)), 1e-12)
  }
  x <- gen_x("ties", 5000)
  yx <- stats::rnorm(5000) + x
  wx <- stats::runif(5000)
  cpu <- isoreg_gpu(x, yx, w = wx)
  gpu <- isoreg_gpu(x, yx, w = wx, device = "gpu")
  expect_lte(max(abs(gpu$fitted - cpu$fitted)), 1e-12)
  expect_equal(gpu$knots, cpu$knots)
  expect_equal(gpu$block_start, cpu$block_start)
})

test_that("unsorted x is sorted, pooled and put back on the GPU as the CPU does", {
  skip_without_gpu()
  set.seed(17)
  x <- sample(round(stats::rnorm(20000), 2)) # ties, negative x and zeros
  y <- stats::rnorm(20000) + x
  w <- stats::runif(20000)
  for (increasing in c(TRUE, FALSE)) {
    for (wt in list(NULL, w)) {
      cpu <- isoreg_gpu(x, y, w = wt, increasing = increasing, method = "hull", gradient = TRUE)
      gpu <- isoreg_gpu(x, y, w = wt, increasing = increasing, device = "gpu", gradient = TRUE)
      expect_lte(max(abs(gpu$fitted - cpu$fitted)), 1e-12)
      expect_identical(gpu$knots, cpu$knots)
      expect_lte(max(abs(gpu$knot_weight - cpu$knot_weight) / cpu$knot_weight), 1e-14)
      expect_identical(gpu$grad$order, cpu$grad$order)
      expect_identical(gpu$grad$start, cpu$grad$start)
      single <- isoreg_gpu(x, y, w = wt, increasing = increasing, device = "gpu", precision = "single")
      expect_lte(max(abs(single$fitted - cpu$fitted) / (1 + abs(cpu$fitted))), 1e-6)
    }
  }
  # errors name the element the CPU names
  cases <- list(list(x = replace(x, c(9, 30), c(NA, 5)), y = replace(y, 3, NA), w = w),
                list(x = x, y = replace(y, 500, Inf), w = replace(w, 40, -1)),
                list(x = rep(c(2, 1), 10), y = rep(1e308, 20), w = NULL))
  for (k in cases) {
    cpu <- tryCatch(isoreg_gpu(k$x, k$y, w = k$w), error = conditionMessage)
    expect_error(isoreg_gpu(k$x, k$y, w = k$w, device = "gpu"), cpu, fixed = TRUE)
  }
})

test_that("GPU errors name the argument and the place, as on the CPU", {
  skip_without_gpu()
  expect_error(isoreg_gpu(c(1, NA, 3), device = "gpu"), "`y` must be finite, but has NA at element 2")
  expect_error(isoreg_gpu(1:3, w = c(1, -1, 1), device = "gpu"), "`w` must be non-negative.*element 2")
  expect_error(isoreg_gpu(1:3, w = c(0, 0, 0), device = "gpu"), "at least one positive weight$")
  expect_error(isoreg_batch(matrix(c(1, 2, NaN, 4), 2), device = "gpu"), "row 1, column 2")
  expect_error(isoreg_batch(c(1, 2, 3, Inf), group = c(1, 2, 1, 2), device = "gpu"),
               "element 4 \\(group \"2\"\\)")
  expect_error(isoreg_gpu(rep(1e307, 20), device = "gpu"), "overflow")
  expect_equal(isoreg_gpu(c(3, 1, 2), y_min = 2.5, device = "gpu")$fitted, c(2.5, 2.5, 2.5))
})

test_that("the fast path's lane kernels (rows of up to 4096) agree with the simple path and the CPU", {
  skip_without_gpu()
  set.seed(14)
  len <- c(1, 31, 33, 512, 513, 1024, 1025, 2048, 2049, 4096, 7)
  g <- rep(seq_along(len), len)
  v <- gen_y("sawtooth", length(g))
  wv <- gen_w("extreme", length(g))
  for (increasing in c(TRUE, FALSE)) {
    cpu <- isoreg_batch(v, w = wv, group = g, increasing = increasing)
    fast <- isoreg_batch(v, w = wv, group = g, increasing = increasing, device = "gpu")
    old <- options(gpuiso.gpu_kernel = "simple")
    simple <- isoreg_batch(v, w = wv, group = g, increasing = increasing, device = "gpu")
    options(old)
    expect_lte(max(abs(fast - cpu) / (1 + abs(cpu))), 1e-12)
    expect_lte(max(abs(fast - simple) / (1 + abs(cpu))), 1e-12)
  }
})

test_that("options(gpuiso.gpu_memory) caps the device memory: batches in slices, a row in segments", {
  skip_without_gpu()
  old <- options(gpuiso.gpu_memory = 4e6)
  on.exit(options(old), add = TRUE)
  set.seed(12)
  for (increasing in c(TRUE, FALSE)) {
    y <- gen_y("noise", 3e5)
    w <- gen_w("extreme", 3e5)
    gpu <- isoreg_gpu(y, w = w, increasing = increasing, device = "gpu")$fitted
    cpu <- isoreg_gpu(y, w = w, increasing = increasing, method = "hull")$fitted
    expect_lte(max(abs(gpu - cpu) / (1 + abs(cpu))), 1e-12)
    Y <- matrix(gen_y("sawtooth", 3e5), 300)
    expect_lte(max(abs(isoreg_batch(Y, increasing = increasing, device = "gpu") -
                         isoreg_batch(Y, increasing = increasing))), 1e-12)
  }
})

# IDR on the GPU (device = "gpu") against the CPU engine: continuous data and ties, weights (zero
# weights included), ordered factors, a fit of several slices; without a device, the errors and
# "auto" on the CPU.

test_that("IDR with device = 'gpu' without a device is a clear error; 'auto' runs on the CPU", {
  skip_if(has_gpu(), "a CUDA device is present")
  x <- data.frame(x = c(1, 2, 3))
  expect_error(idr(c(3, 1, 2), x, device = "gpu"), "device = \"gpu\".*(CUDA|device)")
  expect_identical(idr(c(3, 1, 2), x)$backend, "cpu")
  expect_identical(idr(c(3, 1, 2), x, device = "cpu")$backend, "cpu")
})

test_that("'auto' runs IDR on the CPU whatever gpuiso.gpu_min_n says", {
  old <- options(gpuiso.gpu_min_n = 1)
  on.exit(options(old), add = TRUE)
  expect_identical(idr(c(3, 1, 2), data.frame(x = 1:3))$backend, "cpu")
})

# The GPU's fit against the CPU's: the same CDFs up to rounding, the same runs where the data
# make the sums exact (unit weights, continuous x), and the same predictions.
expect_idr_gpu_equal <- function(y, X, w = NULL, exact = FALSE, label = "") {
  cpu <- idr(y, X, weights = w)
  gpu <- idr(y, X, weights = w, device = "gpu")
  expect_identical(gpu$backend, "gpu")
  expect_lte(max(abs(as.matrix(gpu) - as.matrix(cpu))), 1e-10, label = label)
  if (exact) expect_identical(gpu$runs, cpu$runs, label = label)
  expect_identical(gpu[c("X", "thresholds", "weights", "nobs")], cpu[c("X", "thresholds", "weights", "nobs")])
  pg <- predict(gpu)
  pc <- predict(cpu)
  expect_lte(max(abs(crps(pg, y) - crps(pc, y))), 1e-10, label = label)
  expect_equal(qpred(pg, c(0.1, 0.5, 0.9)), qpred(pc, c(0.1, 0.5, 0.9)), label = label)
}

test_that("IDR on the GPU equals the CPU engine", {
  skip_without_gpu()
  set.seed(21)
  for (n in c(1, 2, 50, 2000)) {
    d <- gen_idr_data(n)
    expect_idr_gpu_equal(d$y, data.frame(x = d$x), exact = TRUE, label = sprintf("continuous, n = %d", n))
  }
  d <- gen_idr_data(3000, ties_x = TRUE, ties_y = TRUE)
  expect_idr_gpu_equal(d$y, data.frame(x = d$x), label = "ties")
  d <- gen_idr_data(3000, ties_x = TRUE, weighted = TRUE)
  expect_idr_gpu_equal(d$y, data.frame(x = d$x), w = d$w, label = "ties, weights")
  w <- stats::runif(3000)
  w[stats::runif(3000) < 0.2] <- 0
  expect_idr_gpu_equal(d$y, data.frame(x = d$x), w = w, label = "real and zero weights")
  xo <- factor(sample(c("lo", "mid", "hi"), 500, TRUE), levels = c("lo", "mid", "hi"), ordered = TRUE)
  expect_idr_gpu_equal(stats::rexp(500) * as.integer(xo), data.frame(x = xo), label = "ordered factor")
})

test_that("IDR on the GPU fits many thresholds in slices as the CPU does", {
  skip_without_gpu()
  set.seed(22)
  d <- gen_idr_data(20000)
  expect_idr_gpu_equal(d$y, data.frame(x = d$x), exact = TRUE, label = "n = 20000")
})

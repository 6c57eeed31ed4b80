# Gradients and soft operators on the GPU against the CPU; without a device, the errors and the
# CPU fallback of "auto".

test_that("device = 'gpu' without a device is a clear error; 'auto' uses the CPU", {
  skip_if(has_gpu(), "a CUDA device is present")
  fit <- isoreg_gpu(c(3, 1, 2), gradient = TRUE)
  expect_error(isoreg_vjp(fit, 1:3, device = "gpu"), "device = \"gpu\"")
  expect_error(soft_rank(c(3, 1, 2), device = "gpu"), "device = \"gpu\"")
  expect_error(soft_sort_vjp(c(3, 1, 2), 1:3, device = "gpu"), "device = \"gpu\"")
  old <- options(gpuiso.gpu_min_n = 1)
  on.exit(options(old), add = TRUE)
  expect_equal(expect_silent(soft_rank(c(3, 1, 2), 1e-6)), c(3, 1, 2), tolerance = 1e-6)
  expect_equal(expect_silent(isoreg_vjp(fit, c(1, 2, 3)))$y, c(2, 2, 2))
})

test_that("the GPU's soft operators and their gradients equal the CPU's", {
  skip_without_gpu()
  set.seed(7)
  for (shape in list(c(1, 5000), c(64, 300), c(300, 7))) {
    X <- matrix(stats::rnorm(prod(shape)), shape[1])
    G <- matrix(stats::rnorm(prod(shape)), shape[1])
    for (eps in c(1 / shape[2], 1)) {
      for (dec in c(FALSE, TRUE)) {
        label <- sprintf("%d x %d, epsilon = %g, decreasing = %s", shape[1], shape[2], eps, dec)
        expect_equal(soft_rank(X, eps, dec, device = "gpu"), soft_rank(X, eps, dec), tolerance = 1e-10, label = label)
        expect_equal(soft_sort(X, eps, dec, device = "gpu"), soft_sort(X, eps, dec), tolerance = 1e-10, label = label)
        expect_equal(soft_rank_vjp(X, G, eps, dec, device = "gpu"), soft_rank_vjp(X, G, eps, dec),
                     tolerance = 1e-10, label = label)
        expect_equal(soft_sort_vjp(X, G, eps, dec, device = "gpu"), soft_sort_vjp(X, G, eps, dec),
                     tolerance = 1e-10, label = label)
      }
    }
  }
})

test_that("the GPU records the solver's blocks and differentiates fits as the CPU does", {
  skip_without_gpu()
  set.seed(8)
  for (n in c(10, 1500, 70000)) {
    y <- stats::rnorm(n) + seq_len(n) / n
    w <- stats::runif(n)
    g <- stats::rnorm(n)
    gpu <- isoreg_gpu(y, w = w, device = "gpu", gradient = TRUE)
    hull <- isoreg_gpu(y, w = w, method = "hull", gradient = TRUE)
    expect_identical(gpu$grad$start, hull$grad$start)
    expect_identical(fitted(gpu), fitted(isoreg_gpu(y, w = w, device = "gpu")))
    expect_equal(isoreg_vjp(gpu, g, device = "gpu"), isoreg_vjp(hull, g), tolerance = 1e-10)
  }
  Y <- matrix(stats::rnorm(40 * 3000), 40)
  G <- matrix(stats::rnorm(40 * 3000), 40)
  b <- isoreg_batch(Y, device = "gpu", gradient = TRUE)
  expect_equal(isoreg_vjp(b, G, device = "gpu"), isoreg_vjp(isoreg_batch(Y, gradient = TRUE), G),
               tolerance = 1e-10)
})

# calibrate_isotonic(device = "gpu") against the CPU: continuous scores and ties, weights (zero
# weights included), many groups, groups of one score, no groups, falling curves, and the errors;
# without a device, the error of "gpu" and "auto" on the CPU.

test_that("calibration with device = 'gpu' without a device is a clear error; 'auto' uses the CPU", {
  skip_if(has_gpu(), "a CUDA device is present")
  s <- c(0.1, 0.5, 0.9, 0.3)
  y <- c(0, 1, 1, 0)
  expect_error(calibrate_isotonic(s, y, device = "gpu"), "device = \"gpu\".*(CUDA|device)")
  old <- options(gpuiso.gpu_min_n = 1)
  on.exit(options(old), add = TRUE)
  expect_identical(calibrate_isotonic(s, y)$backend, "cpu")
})

test_that("without a device, the GPU pipeline's entry point fails with the error 'auto' falls back on", {
  skip_if(has_gpu(), "a CUDA device is present")
  gpu_call <- function() {
    .Call(gpuiso:::C_calibrate, c(0.1, 0.2, 0.3), c(0, 1, 1), NULL, c(1L, 2L, 1L), c("a", "b"), TRUE, TRUE)
  }
  expect_error(gpu_call(), if (gpuiso_backend()$cuda_built) "^CUDA error" else "built without CUDA")
})

test_that("'auto' calibrates on the CPU below 1e7 scores or gpuiso.gpu_min_n", {
  s <- c(0.1, 0.5, 0.9, 0.3)
  y <- c(0, 1, 1, 0)
  expect_identical(calibrate_isotonic(s, y)$backend, "cpu")
  expect_identical(calibrate_isotonic(s, y, device = "cpu")$backend, "cpu")
  old <- options(gpuiso.gpu_min_n = 10)
  on.exit(options(old), add = TRUE)
  expect_identical(calibrate_isotonic(s, y)$backend, "cpu")
})

# The GPU's calibrator against the CPU's: the same blocks (scores and weights exactly where the
# sums are of integers), probabilities within 1e-10, the same predictions.
expect_calibrator_gpu_equal <- function(score, label, w = NULL, group = NULL, label_text = "",
                                        increasing = TRUE) {
  cpu <- calibrate_isotonic(score, label, weights = w, group = group, increasing = increasing)
  gpu <- calibrate_isotonic(score, label, weights = w, group = group, increasing = increasing, device = "gpu")
  expect_identical(gpu$backend, "gpu")
  for (part in c("pooled", "curves")) {
    a <- gpu[[part]]
    b <- cpu[[part]]
    expect_identical(is.null(a), is.null(b))
    if (is.null(a)) next
    expect_identical(a[setdiff(names(a), c("prob", "weight"))], b[setdiff(names(b), c("prob", "weight"))],
                     label = paste(label_text, part))
    expect_lte(max(abs(a$prob - b$prob)), 1e-10, label = paste(label_text, part))
    expect_equal(a$weight, b$weight, tolerance = 1e-12, label = paste(label_text, part))
  }
  expect_identical(gpu[c("groups", "first", "n", "n_group")], cpu[c("groups", "first", "n", "n_group")])
  s <- stats::runif(200, -0.1, 1.1)
  expect_equal(predict(gpu, s), predict(cpu, s), tolerance = 1e-10)
}

test_that("calibration on the GPU equals the CPU", {
  skip_without_gpu()
  set.seed(31)
  for (ties in c(FALSE, TRUE)) for (weighted in c(FALSE, TRUE)) {
    d <- sim_traffic(20000, sprintf("g%03d", 1:300), ties, weighted)
    text <- sprintf("ties %s, weighted %s", ties, weighted)
    expect_calibrator_gpu_equal(d$score, d$label, d$w, d$group, text)
    expect_calibrator_gpu_equal(d$score, d$label, d$w, label_text = paste(text, "no groups"))
  }
  d <- sim_traffic(5000, 1:2000, ties = TRUE)
  expect_calibrator_gpu_equal(d$score, d$label, group = d$group, label_text = "many small groups")
  w <- stats::runif(5000)
  w[stats::runif(5000) < 0.3] <- 0
  w[!duplicated(d$group)] <- 1 # a positive weight in every group
  expect_calibrator_gpu_equal(d$score, d$label, w, d$group, "zero weights")
  expect_calibrator_gpu_equal(-d$score, d$label, w, d$group, "falling, zero weights", increasing = FALSE)
  expect_calibrator_gpu_equal(-d$score, d$label, w, label_text = "falling, zero weights, no groups",
                              increasing = FALSE)
  expect_calibrator_gpu_equal(c(0.2, 0.2, 0.7, -0, 0, 3), c(1, 0, 1, 0, 1, 1), c(1, 0, 2, 0, 1, 1),
                              c("one", "one", "two", "tied", "tied", "three"), "hand-made")
  expect_calibrator_gpu_equal(0.5, 1, label_text = "one score")
})

test_that("calibration on the GPU reports bad input as the CPU does", {
  skip_without_gpu()
  s <- c(0.1, 0.5, 0.9, 0.3)
  y <- c(0, 1, 1, 0)
  expect_error(calibrate_isotonic(c(0.1, NA, 0.9, 0.3), y, device = "gpu"),
               "`score` must be finite, but has NA at element 2")
  expect_error(calibrate_isotonic(s, y, weights = c(1, -1, 1, 1), device = "gpu"),
               "`weights` must be finite and non-negative, but has -1 at element 2")
  expect_error(calibrate_isotonic(s, y, weights = c(1, NA, 1, 1), device = "gpu"), "`weights` must be finite")
  expect_error(calibrate_isotonic(s, y, weights = c(0, 0, 1, 1), group = c("a", "a", "b", "b"), device = "gpu"),
               "`weights` must have at least one positive weight in group \"a\"")
  expect_error(calibrate_isotonic(s, y, weights = c(0, 0, 0, 0), device = "gpu"),
               "`weights` must have at least one positive weight")
})

# predict() of a calibrator on the GPU (device = "gpu", or "auto" for a calibrator fitted there)
# against the CPU, bit for bit; without a device, the error of "gpu" and "auto" on the CPU.

calibrator_data <- function(n = 3000) {
  set.seed(7)
  group <- sample(sprintf("g%02d", 1:25), n, replace = TRUE)
  score <- round(runif(n), 3)
  list(score = score, label = rbinom(n, 1, score^2), group = group)
}

new_scores <- function(n = 4000) {
  s <- c(runif(n, -0.2, 1.2), NA, NaN, -0, 0, Inf, -Inf, .Machine$double.xmax, 0.5)
  list(score = s, group = sample(c(sprintf("g%02d", 1:25), "unseen"), length(s), replace = TRUE))
}

test_that("predict(device = 'gpu') without a device is a clear error; 'auto' uses the CPU", {
  skip_if(has_gpu(), "a CUDA device is present")
  d <- calibrator_data()
  cal <- calibrate_isotonic(d$score, d$label, group = d$group)
  expect_error(predict(cal, 0.5, device = "gpu"), "device = \"gpu\".*(CUDA|device)")
  # a calibrator fitted on the GPU predicts on the CPU, silently, where no GPU is usable now
  cal_gpu <- cal
  cal_gpu$backend <- "gpu"
  q <- new_scores()
  for (type in c("step", "linear")) {
    want <- suppressWarnings(predict(cal, q$score, group = q$group, type = type, device = "cpu"))
    expect_silent(got <- suppressWarnings(predict(cal_gpu, q$score, group = q$group, type = type)))
    expect_identical(got, want)
  }
})

test_that("without a device, the GPU predictions' entry point fails with the error 'auto' falls back on", {
  skip_if(has_gpu(), "a CUDA device is present")
  pooled <- list(lower = c(0, 0.5), upper = c(0.2, 1), prob = c(0.1, 0.6))
  gpu_call <- function() .Call(gpuiso:::C_predict_calibrator, pooled, NULL, NULL, NULL, c(0.1, 0.7), FALSE, TRUE)
  expect_error(gpu_call(), if (gpuiso_backend()$cuda_built) "^CUDA error" else "built without CUDA")
  expect_identical(.Call(gpuiso:::C_predict_calibrator, pooled, NULL, NULL, NULL, c(0.1, 0.7), FALSE, FALSE),
                   c(0.1, 0.6))
})

test_that("predict() checks `device`", {
  cal <- calibrate_isotonic(c(0.1, 0.2, 0.3), c(0, 1, 1))
  expect_error(predict(cal, 0.5, device = "tpu"), "`device`")
  expect_error(predict(cal, 0.5, device = NA), "`device`")
  expect_identical(predict(cal, c(0.15, 0.25), device = "cpu"), predict(cal, c(0.15, 0.25)))
})

test_that("predictions on the GPU are the CPU's, bit for bit", {
  skip_without_gpu()
  d <- calibrator_data()
  q <- new_scores()
  for (fitted_on in c("cpu", "gpu")) {
    cal <- calibrate_isotonic(d$score, d$label, group = d$group, device = fitted_on)
    for (type in c("step", "linear")) {
      want <- suppressWarnings(predict(cal, q$score, group = q$group, type = type, device = "cpu"))
      got <- suppressWarnings(predict(cal, q$score, group = q$group, type = type, device = "gpu"))
      expect_identical(got, want, label = paste(fitted_on, type))
      expect_identical(predict(cal, q$score, type = type, device = "gpu"),
                       predict(cal, q$score, type = type, device = "cpu"), label = paste(fitted_on, type, "pooled"))
    }
  }
  # "auto" on a calibrator fitted on the GPU, from gpuiso.gpu_min_n scores on: the GPU's values
  # (the same), with a factor's groups
  old <- options(gpuiso.gpu_min_n = 1)
  on.exit(options(old), add = TRUE)
  cal <- calibrate_isotonic(d$score, d$label, group = factor(d$group), device = "gpu")
  g <- factor(sample(sprintf("g%02d", 1:25), length(q$score), replace = TRUE))
  expect_identical(predict(cal, q$score, group = g), predict(cal, q$score, group = g, device = "cpu"))
})

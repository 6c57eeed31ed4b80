# A GPU lost to a sticky CUDA error (an illegal address, a failed launch, ...: the CUDA context is
# then unusable until the process ends). Without a GPU, the test hook test_cuda_failure() reports
# a CUDA error the way the CUDA engine does (classified, recorded when sticky, as an R error); each
# test forgets the lost state on exit, so that it does not leak into other tests.

illegal_address <- "an illegal memory access was encountered (cudaErrorIllegalAddress = 700, in a test)"

# Loses the GPU as a sticky error in a fit would, checking the error of that fit.
lose_gpu <- function(code = 700L, message = illegal_address) {
  err <- expect_error(gpuiso:::test_cuda_failure(code, message), "^the GPU failed: ")
  expect_true(grepl(message, conditionMessage(err), fixed = TRUE))
  invisible(err)
}

test_that("a sticky CUDA error is a clear R error and loses the GPU for the session", {
  on.exit(gpuiso:::test_cuda_lost_reset(), add = TRUE)
  before <- gpuiso_backend()
  expect_false(before$unusable)
  expect_identical(before$reason, NA_character_)
  expect_false(any(grepl("unusable", utils::capture.output(print(before)))))

  err <- lose_gpu()
  expect_match(conditionMessage(err), "rest of the R session .*restart R to use the GPU again")

  b <- gpuiso_backend()
  expect_true(b$unusable)
  expect_identical(b$reason, illegal_address)
  expect_identical(b$cuda_built, before$cuda_built)
  out <- utils::capture.output(print(b))
  expect_true(any(grepl("GPU unusable for the rest of this R session (restart R to use it again): ",
                        out, fixed = TRUE)))
  expect_true(any(grepl(illegal_address, out, fixed = TRUE)))

  # the first sticky error stays the reason
  lose_gpu(719L, "unspecified launch failure (cudaErrorLaunchFailure = 719, in a test)")
  expect_identical(gpuiso_backend()$reason, illegal_address)

  gpuiso:::test_cuda_lost_reset()
  expect_false(gpuiso_backend()$unusable)
})

test_that("the sticky CUDA errors lose the GPU; out of memory and other errors do not", {
  on.exit(gpuiso:::test_cuda_lost_reset(), add = TRUE)
  sticky <- c(ECCUncorrectable = 214L, Contained = 226L, IllegalAddress = 700L, LaunchTimeout = 702L,
              Assert = 710L, HardwareStackError = 714L, IllegalInstruction = 715L,
              MisalignedAddress = 716L, InvalidAddressSpace = 717L, InvalidPc = 718L,
              LaunchFailure = 719L, TensorMemoryLeak = 721L, MpsClientTerminated = 810L,
              ExternalDevice = 911L)
  for (name in names(sticky)) {
    text <- sprintf("a test (cudaError%s = %d, in a test)", name, sticky[[name]])
    lose_gpu(sticky[[name]], text)
    expect_identical(gpuiso_backend()$reason, text, label = name)
    gpuiso:::test_cuda_lost_reset()
  }
  ordinary <- c(InvalidValue = 1L, MemoryAllocation = 2L, InvalidConfiguration = 9L,
                InsufficientDriver = 35L, NoDevice = 100L, LaunchOutOfResources = 701L,
                Unknown = 999L)
  for (name in names(ordinary)) {
    text <- sprintf("a test (cudaError%s = %d, in a test)", name, ordinary[[name]])
    err <- expect_error(gpuiso:::test_cuda_failure(ordinary[[name]], text), "^CUDA error: ")
    expect_identical(conditionMessage(err), paste("CUDA error:", text))
    b <- gpuiso_backend()
    expect_false(b$unusable, label = name)
    expect_identical(b$reason, NA_character_)
  }
})

test_that("after a lost GPU, device = 'auto' fits on the CPU without trying the GPU", {
  on.exit(gpuiso:::test_cuda_lost_reset(), add = TRUE)
  old <- options(gpuiso.gpu_min_n = 1)
  on.exit(options(old), add = TRUE)
  set.seed(11)
  y <- rnorm(300)
  x <- runif(300)
  m <- matrix(rnorm(200), 4)
  g <- rep(1:3, 100)
  score <- runif(300)
  label <- as.double(runif(300) < score)
  ref <- list(
    fit = isoreg_gpu(x, y, device = "cpu"), matrix = isoreg_batch(m, device = "cpu"),
    groups = isoreg_batch(y, group = g, device = "cpu"),
    cal = calibrate_isotonic(score, label, group = g, device = "cpu"),
    idr = idr(y, data.frame(x = x), device = "cpu")
  )
  # with a device, "auto" would run these on the GPU
  if (has_gpu()) expect_identical(isoreg_gpu(x, y)$backend, "gpu")

  lose_gpu()
  expect_silent(fit <- isoreg_gpu(x, y))
  expect_identical(fit$backend, "cpu")
  expect_identical(fitted(fit), fitted(ref$fit))
  expect_silent(expect_identical(isoreg_batch(m), ref$matrix))
  expect_silent(expect_identical(isoreg_batch(y, group = g), ref$groups))
  expect_silent(cal <- calibrate_isotonic(score, label, group = g))
  expect_identical(cal$backend, "cpu")
  expect_identical(cal[c("pooled", "curves")], ref$cal[c("pooled", "curves")])
  expect_silent(expect_identical(idr(y, data.frame(x = x)), ref$idr))
})

test_that("after a lost GPU, device = 'gpu' is an error that names the reason", {
  on.exit(gpuiso:::test_cuda_lost_reset(), add = TRUE)
  lose_gpu()
  reason <- "^`device = \"gpu\"`: the GPU failed earlier in this R session and is not used again until R is restarted: "
  y <- c(3, 1, 2)
  calls <- list(
    isoreg_gpu = function() isoreg_gpu(y, device = "gpu"),
    isoreg_batch = function() isoreg_batch(rbind(y, y), device = "gpu"),
    isoreg_batch_groups = function() isoreg_batch(y, group = c(1, 2, 1), device = "gpu"),
    calibrate_isotonic = function() calibrate_isotonic(c(0.2, 0.5, 0.7), c(0, 1, 1), device = "gpu"),
    idr = function() idr(y, data.frame(x = 1:3), device = "gpu")
  )
  for (f in names(calls)) {
    err <- expect_error(calls[[f]](), reason, label = f)
    expect_true(grepl(illegal_address, conditionMessage(err), fixed = TRUE), label = f)
  }
})

test_that("a GPU lost in a fit that 'auto' sent to it hands the fit to the CPU", {
  on.exit(gpuiso:::test_cuda_lost_reset(), add = TRUE)
  fit <- function(code) {
    function(engine) {
      if (engine == gpuiso:::engine_code("gpu", "pav")) {
        gpuiso:::test_cuda_failure(code, sprintf("a test (code %d)", code))
      }
      engine
    }
  }
  cpu <- list(value = gpuiso:::engine_code("cpu", "pav"), backend = "cpu")
  # an ordinary CUDA error: the CPU redoes the fit, and the GPU stays usable
  expect_message(res <- gpuiso:::run_on("gpu", "auto", "pav", fit(2L)),
                 "^gpuiso: the GPU failed \\(CUDA error: a test \\(code 2\\)\\); fitting on the CPU")
  expect_identical(res, cpu)
  expect_false(gpuiso_backend()$unusable)
  # errors of the GPU's fit that the CPU can do without: out of memory as a plan foresees it (no
  # CUDA call failed), the same where the error says why (the device's free memory holds none of
  # the work), and weights beyond the hull solver's range (the CPU fits them by PAV); the CPU
  # redoes the fit, and a GPU asked for by name reports the error
  failing <- function(why) {
    function(engine) {
      if (engine == gpuiso:::engine_code("gpu", "pav")) stop(simpleError(why))
      engine
    }
  }
  cases <- list(
    list("gpuiso: out of memory", "the GPU's memory cannot hold the fit", "^gpuiso: out of memory$"),
    list("gpuiso: out of memory: the device's free memory (1000 bytes) holds none of it",
         "the GPU's memory cannot hold the fit", "device's free memory \\(1000 bytes\\)"),
    list("`w` spans too wide a range for the hull solver: its largest weight ...",
         "the weights span too wide a range for the GPU's hull solver", "^`w` spans too wide a range"))
  for (case in cases) {
    expect_message(res <- gpuiso:::run_on("gpu", "auto", "pav", failing(case[[1]])),
                   paste0("^gpuiso: ", case[[2]], "; fitting on the CPU"))
    expect_identical(res, cpu)
    expect_false(gpuiso_backend()$unusable)
    expect_error(gpuiso:::run_on("gpu", "gpu", "pav", failing(case[[1]])), case[[3]])
  }
  # other errors of the GPU's fit (bad input) are not handed on
  bad <- function(engine) stop(simpleError("`y` must be finite, but has NaN at element 2"))
  expect_error(gpuiso:::run_on("gpu", "auto", "pav", bad), "must be finite")
  # a sticky one: the same, and the GPU is lost
  expect_message(res <- gpuiso:::run_on("gpu", "auto", "pav", fit(700L)),
                 "^gpuiso: the GPU failed: a test \\(code 700\\);.*restart R.*; fitting on the CPU")
  expect_identical(res, cpu)
  expect_true(gpuiso_backend()$unusable)
  gpuiso:::test_cuda_lost_reset()
  # asked for by name, the GPU reports its error
  expect_error(gpuiso:::run_on("gpu", "gpu", "pav", fit(700L)), "^the GPU failed: a test \\(code 700\\)")
  expect_true(gpuiso_backend()$unusable)
})

# gpuiso_backend() and gpuiso_threads().

test_that("gpuiso_backend() has the documented structure", {
  b <- gpuiso_backend()
  expect_s3_class(b, "gpuiso_backend")
  expect_true(all(c("cuda_built", "device_count", "devices", "error", "unusable", "reason") %in% names(b)))
  expect_type(b$cuda_built, "logical")
  expect_length(b$cuda_built, 1L)
  expect_false(is.na(b$cuda_built))
  expect_type(b$device_count, "integer")
  expect_length(b$device_count, 1L)
  expect_true(b$device_count >= 0L)
  expect_s3_class(b$devices, "data.frame")
  expect_true(all(c("name", "compute_capability", "memory_gb") %in% names(b$devices)))
  expect_equal(nrow(b$devices), b$device_count)
  expect_type(b$error, "character")
  expect_length(b$error, 1L)
  expect_identical(b$unusable, FALSE)  # a lost GPU: test-gpu-lost.R
  expect_identical(b$reason, NA_character_)
  if (!b$cuda_built) {
    expect_equal(b$device_count, 0L)
  }
  if (b$device_count > 0L) {
    expect_true(is.na(b$error))
  }
  expect_output(print(b))
  out <- utils::capture.output(res <- withVisible(print(b)))
  expect_false(res$visible)
  # calling it again gives the same answer
  expect_equal(gpuiso_backend()$device_count, b$device_count)
})

test_that("visible CUDA devices are described", {
  b <- gpuiso_backend()
  skip_if_not(b$device_count > 0, "no CUDA device")
  d <- b$devices
  expect_type(d$name, "character")
  expect_true(all(nzchar(d$name)))
  expect_match(d$compute_capability, "^[0-9]+\\.[0-9]+$")
  expect_true(all(d$memory_gb > 0))
  expect_true(is.na(b$error))
})

test_that("gpuiso_threads gets, sets and restores the thread count", {
  old <- gpuiso_threads()
  on.exit(gpuiso_threads(old), add = TRUE)
  expect_true(is.numeric(old))
  expect_length(old, 1L)
  expect_true(old >= 1)

  res <- withVisible(gpuiso_threads(1))
  expect_false(res$visible)
  expect_equal(res$value, old)
  expect_equal(gpuiso_threads(), 1)

  prev <- gpuiso_threads(2)
  expect_equal(prev, 1)
  expect_true(gpuiso_threads() %in% c(1, 2))   # capped to the maximum (1 without OpenMP)

  # a huge request is capped to the maximum, not refused
  gpuiso_threads(100000L)
  mx <- gpuiso_threads()
  expect_true(mx >= 1)
  expect_true(mx <= max(1L, parallel::detectCores(), na.rm = TRUE))

  gpuiso_threads(old)
  expect_equal(gpuiso_threads(), old)
})

test_that("gpuiso_threads rejects bad values", {
  old <- gpuiso_threads()
  on.exit(gpuiso_threads(old), add = TRUE)
  expect_error(gpuiso_threads(0), "threads")
  expect_error(gpuiso_threads(-2), "threads")
  expect_error(gpuiso_threads(NA), "threads")
  expect_error(gpuiso_threads("two"), "threads")
  expect_error(gpuiso_threads(c(1, 2)), "threads")
  expect_equal(gpuiso_threads(), old)
})

test_that("the default thread count honours OMP_THREAD_LIMIT and OMP_NUM_THREADS", {
  skip_on_cran()
  skip_on_os("windows")
  rscript <- file.path(R.home("bin"), "Rscript")
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  lib <- dirname(find.package("gpuiso"))
  code <- sprintf("suppressMessages(library(gpuiso, lib.loc = %s)); cat(gpuiso_threads())",
                  deparse(lib))
  # env -u removes the variables this session may have set; the rest set them for the child only
  run <- function(set = character()) {
    args <- c("-u", "OMP_NUM_THREADS", "-u", "OMP_THREAD_LIMIT", paste0("R_LIBS=", libs), set,
              rscript, "--vanilla", "-e", shQuote(code))
    out <- suppressWarnings(system2("env", args, stdout = TRUE, stderr = FALSE))
    as.integer(utils::tail(out, 1))
  }
  expect_equal(run("OMP_NUM_THREADS=1"), 1L)
  expect_equal(run("OMP_THREAD_LIMIT=1"), 1L)
  expect_equal(run(c("OMP_THREAD_LIMIT=1", "OMP_NUM_THREADS=2")), 1L)
  free <- run()
  expect_true(free >= 1L)
  expect_true(free <= max(1L, parallel::detectCores(), na.rm = TRUE))
})

test_that("processes forked after a parallel fit run on one thread instead of hanging", {
  skip_on_os("windows") # no fork
  skip_if_not_installed("callr")
  # OpenMP's threads do not survive fork(): a forked child's first parallel region would wait for
  # them forever. In a fresh R (callr), with a time limit, so that a hang fails the test.
  out <- callr::r(function() {
    suppressPackageStartupMessages(library(gpuiso))
    gpuiso_threads(2)
    set.seed(1)
    n <- 1e6 # above every engine's parallel threshold
    x <- runif(n)
    y <- rnorm(n)
    fits <- function() {
      list(threads = gpuiso_threads(), set = gpuiso_threads(2), after = gpuiso_threads(),
           fit = fitted(isoreg_gpu(x, y)), batch = isoreg_batch(matrix(y, 4)),
           calibrate = calibrate_isotonic(x, y > 0)$pooled$prob)
    }
    parent <- fits() # starts OpenMP's threads in this process
    children <- parallel::mclapply(1:2, function(i) fits(), mc.cores = 2)
    list(parent = parent, children = children)
  }, timeout = 120)
  # with one thread (one processor, OMP_THREAD_LIMIT = 1) OpenMP starts no threads to lose
  skip_if(out$parent$after < 2L, "one thread in the parent: no OpenMP threads to lose in a fork")
  for (child in out$children) {
    expect_identical(c(child$threads, child$after), c(1L, 1L)) # gpuiso_threads(2) capped there
    # the same fits up to rounding: one thread pools the chunks of a row in another order
    for (part in c("fit", "batch", "calibrate")) {
      expect_lte(max(abs(child[[part]] - out$parent[[part]])), 1e-12)
    }
  }
})

test_that("a bad gpuiso.gpu_memory option is a clear error", {
  for (bad in list(-1, 0, NA, "1e9", c(1, 2), Inf)) {
    old <- options(gpuiso.gpu_memory = bad)
    expect_error(isoreg_gpu(c(3, 1, 2)), "gpuiso.gpu_memory", info = deparse(bad))
    options(old)
  }
  old <- options(gpuiso.gpu_memory = 1e9)
  on.exit(options(old), add = TRUE)
  expect_equal(isoreg_gpu(c(3, 1, 2))$fitted, c(2, 2, 2))
})

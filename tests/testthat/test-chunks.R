# A long row is split into chunks that are fitted in parallel and merged. Rows that long are too
# slow for the tests, so the unexported option gpuiso.chunks splits short rows into many chunks,
# which puts chunk boundaries inside blocks, runs and zero-weight stretches.

with_chunks <- function(chunks, code) {
  old <- options(gpuiso.chunks = chunks)
  on.exit(options(old), add = TRUE)
  code
}

test_that("chunked fits equal the reference PAV on every family, weighting and direction", {
  set.seed(20261129)
  for (family in families) {
    for (wkind in c(weight_kinds, "zeros")) {
      for (increasing in c(TRUE, FALSE)) {
        for (rep in 1:6) {
          n <- sample(c(2:40, 200, 1000), 1L)
          y <- gen_y(family, n)
          w <- if (wkind == "zeros") {
            w <- stats::runif(n)
            w[sample.int(n, n %/% 2L)] <- 0
            if (all(w == 0)) w[n] <- 1
            w
          } else gen_w(wkind, n)
          chunks <- sample(c(2:9, 64L), 1L)
          fit <- with_chunks(chunks, isoreg_gpu(y, w = w, increasing = increasing))
          ref <- ref_pav(y, w, increasing)
          expect_equal(fit$fitted, ref, tolerance = 1e-10,
                       info = sprintf("%s, %s weights, n = %d, chunks = %d", family, wkind, n, chunks))
          expect_equal(length(fit$block_start), sum(diff(ref) != 0) + 1L)
        }
      }
    }
  }
})

test_that("chunk boundaries at leading zero weights and all-zero chunks follow the zero-weight rule", {
  y <- c(5, 1, 3, 2, 8, 7, 9, 4)
  for (w in list(c(0, 0, 0, 1, 1, 0, 0, 1), c(0, 0, 0, 0, 0, 0, 1, 1), c(1, 0, 0, 0, 0, 0, 0, 0),
                 c(1, 1, 0, 0, 0, 0, 1, 1))) {
    for (chunks in 2:8) {
      fit <- with_chunks(chunks, isoreg_gpu(y, w = w))
      expect_equal(fit$fitted, ref_pav(y, w), tolerance = 1e-12, info = paste(w, collapse = ","))
    }
  }
})

test_that("chunked fits do not depend on the number of chunks or threads", {
  set.seed(7)
  y <- gen_y("sawtooth", 5000)
  w <- gen_w("extreme", 5000)
  one <- with_chunks(1L, isoreg_gpu(y, w = w))
  old <- gpuiso_threads()
  on.exit(gpuiso_threads(old), add = TRUE)
  for (threads in 1:2) {
    gpuiso_threads(threads)
    for (chunks in c(2L, 3L, 17L, 64L)) {
      fit <- with_chunks(chunks, isoreg_gpu(y, w = w))
      expect_equal(fit$fitted, one$fitted, tolerance = 1e-12)
      expect_identical(fit$block_start, one$block_start)
    }
  }
})

test_that("rows whose cross products would overflow are fitted like the reference", {
  set.seed(11)
  for (chunks in c(1L, 4L)) {
    n <- 300
    y <- gen_y("noise", n) * 1e150
    w <- exp(stats::runif(n, -3, 3)) * 1e100
    fit <- with_chunks(chunks, isoreg_gpu(y, w = w))
    expect_equal(fit$fitted, ref_pav(y, w), tolerance = 1e-10)
    fit <- with_chunks(chunks, isoreg_gpu(-y, w = w, increasing = FALSE))
    expect_equal(fit$fitted, ref_pav(-y, w, increasing = FALSE), tolerance = 1e-10)
  }
})

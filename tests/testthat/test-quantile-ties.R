# Quantiles at levels that a CDF value equals exactly: qpred() is inf{t : F(t) >= p} (for p = 0,
# where F first exceeds 0: the lowest point, as isodistrreg's qpred() gives it), and the
# rounding of the CDF values must not move it to the next threshold. The references are exact:
# unweighted CDF values are ratios of integer counts, and the levels are p = i / 16, so that
# F(t) >= p is count * 16 >= i * size in integers.

test_that("IDR quantiles at levels equal to CDF values follow the definition exactly", {
  set.seed(61)
  devices <- c("cpu", if (has_gpu()) "gpu")
  i <- 0:16
  ties <- 0
  for (case in 1:80) {
    npos <- sample(2:12, 1)
    # equal sizes at every x in half of the cases, mixed in the others
    size <- if (case %% 2) rep(sample(c(1:4, 6, 8, 16), 1), npos) else sample(c(1:4, 6, 8), npos, TRUE)
    x <- rep(seq_len(npos), size)
    y <- sample(sample(2:8, 1), length(x), TRUE) + x %/% 3
    ref <- ref_idr_counts(y, x)
    thr <- sort(unique(y))
    # smallest threshold with count * 16 >= i * size (count > 0 for i = 0), per distinct x (rows)
    # and level (columns)
    expected <- t(vapply(seq_len(npos), function(j) {
      vapply(i, function(k) thr[which(ref$count[j, ] * 16 >= pmax(k * ref$size[j, ], 1))[1]], 0)
    }, numeric(length(i))))
    ties <- ties + sum(vapply(seq_len(npos), function(j) sum(i %in% (16 * ref$count[j, ] / ref$size[j, ])), 0))
    for (device in devices) {
      label <- sprintf("case %d on the %s", case, device)
      fit <- idr(y, data.frame(x = x), device = device)
      # every value is its block's count over its size, rounded once
      expect_identical(unname(as.matrix(fit)), ref$count / ref$size, label = label)
      expect_identical(unname(qpred(predict(fit, data.frame(x = seq_len(npos))), i / 16)), expected,
                       label = label)
      expect_identical(unname(qpred(predict(fit), i / 16)), expected[x, , drop = FALSE], label = label)
    }
  }
  # the levels hit CDF values often enough for the test to mean something
  expect_gt(ties, 500)
})

test_that("a median at a CDF value of exactly 1/2 is the threshold where it is reached", {
  # x = 1 holds one of its three observations at or below 1, x = 2 two of three: pooled, 3/6
  fit <- idr(c(1, 5, 5, 1, 1, 5), data.frame(x = rep(1:2, each = 3)))
  expect_identical(unname(as.matrix(fit)[, 1]), c(0.5, 0.5))
  expect_identical(unname(qpred(predict(fit, data.frame(x = c(1, 1.5, 2))), 0.5)[, 1]), c(1, 1, 1))
  expect_identical(unname(qpred(predict(fit), c(0.5, 0.5 + 2^-52))), matrix(c(1, 5), 6, 2, byrow = TRUE))
})

test_that("ensemble quantiles at levels equal to the empirical CDF follow the definition", {
  set.seed(62)
  for (n in c(1, 2, 3, 4, 5, 7, 8, 10, 16)) {
    ens <- as.data.frame(matrix(as.double(sample(6, 20 * n, TRUE)), 20, n))
    m <- as.matrix(ens)
    lev <- c(0, seq_len(n) / n, 0.5, 1 / 3, 0.1)
    lev <- lev[lev <= 1]
    # the smallest member whose CDF value, as cdf() gives it, reaches the level
    want <- t(vapply(seq_len(20), function(r) {
      pts <- sort(unique(m[r, ]))
      p <- cdf(ens[r, , drop = FALSE], pts)
      vapply(lev, function(a) pts[which(p >= a)[1]], 0)
    }, numeric(length(lev))))
    expect_identical(unname(qpred(ens, lev)), unname(want), label = sprintf("%d members", n))
    # and in exact arithmetic, for the levels k / n with n a power of two: count >= k
    if (bitwAnd(n, n - 1) == 0) {
      exact <- t(apply(m, 1, function(r) vapply(seq_len(n), function(k) sort(r)[k], 0)))
      expect_identical(unname(qpred(ens, seq_len(n) / n)), matrix(exact, 20), label = sprintf("%d members", n))
    }
  }
  two <- data.frame(a = 1, b = 2)
  expect_identical(unname(qpred(two, c(0.5, 0.5 + 1e-10, 0.5 - 1e-10))), matrix(c(1, 2, 1), 1))
})

# Soft ranks and soft sorts: their limits in epsilon, sums, symmetries, rows of matrices, the
# plain-R formula, and their gradients against central differences.

central_x <- function(f, x, g, h = 1e-6) {
  vapply(seq_along(x), function(i) {
    up <- down <- x
    up[i] <- x[i] + h
    down[i] <- x[i] - h
    (sum(g * f(up)) - sum(g * f(down))) / (2 * h)
  }, 0)
}

# The formula in plain R: sort, a non-increasing isotonic fit, back to the input's order.
ref_soft_rank <- function(x, epsilon) {
  n <- length(x)
  o <- order(x / epsilon, decreasing = TRUE)
  s <- (x / epsilon)[o]
  v <- fitted(isoreg_gpu(s - n:1, increasing = FALSE))
  out <- numeric(n)
  out[o] <- s - v
  out
}
ref_soft_sort <- function(x, epsilon) {
  n <- length(x)
  r <- (n:1) / epsilon
  rev(r - fitted(isoreg_gpu(r - sort(x, decreasing = TRUE), increasing = FALSE)))
}

test_that("soft ranks follow the formula, sum to n (n + 1) / 2 and reach their limits", {
  set.seed(1)
  for (n in c(1, 2, 10, 500)) {
    x <- stats::rnorm(n)
    for (eps in c(1e-3, 0.3, 1, 50)) {
      r <- soft_rank(x, eps)
      expect_equal(r, ref_soft_rank(x, eps), tolerance = 1e-12)
      expect_equal(sum(r), n * (n + 1) / 2, tolerance = 1e-12)
    }
    expect_equal(soft_rank(x, 1e-9), rank(x), tolerance = 1e-6)
    expect_equal(soft_rank(x, 1e9), rep((n + 1) / 2, n), tolerance = 1e-6)
  }
  # tied values get equal soft ranks
  r <- soft_rank(c(2, 1, 2, 3), 0.01)
  expect_equal(r[1], r[3])
  expect_equal(r, c(2.5, 1, 2.5, 4))
})

test_that("soft sorts follow the formula and reach sort(x) and mean(x)", {
  set.seed(2)
  for (n in c(1, 3, 40, 700)) {
    x <- stats::runif(n, -2, 5)
    for (eps in c(1e-3, 1, 20)) expect_equal(soft_sort(x, eps), ref_soft_sort(x, eps), tolerance = 1e-12)
    # exactly sorted once 1 / epsilon exceeds every gap between neighbours
    expect_equal(soft_sort(x, 1e-4), sort(x), tolerance = 1e-9)
    expect_equal(soft_sort(x, 1e9), rep(mean(x), n), tolerance = 1e-6)
    expect_equal(sum(soft_sort(x, 0.5)), sum(x), tolerance = 1e-12)
  }
})

# The exact soft rank (kind "rank") or soft sort: the targets and their non-increasing fit by PAV
# over Rmpfr numbers of `bits` bits, which hold every sum here exactly, rounded once at the end.
ref_soft_exact <- function(x, epsilon, kind, bits = 4000) {
  n <- length(x)
  r <- Rmpfr::mpfr(n:1, bits)
  if (kind == "rank") {
    o <- order(x, decreasing = TRUE)
    key <- Rmpfr::mpfr(x[o], bits) / Rmpfr::mpfr(epsilon, bits)
    z <- key - r
  } else {
    key <- Rmpfr::mpfr(sort(x, decreasing = TRUE), bits)
    z <- r / Rmpfr::mpfr(epsilon, bits) - key
  }
  S <- vector("list", n)
  size <- integer(n)
  k <- 0L
  for (i in seq_len(n)) {
    k <- k + 1L
    S[[k]] <- z[i]
    size[k] <- 1L
    while (k > 1L && S[[k - 1L]] * size[k] <= S[[k]] * size[k - 1L]) {
      S[[k - 1L]] <- S[[k - 1L]] + S[[k]]
      size[k - 1L] <- size[k - 1L] + size[k]
      k <- k - 1L
    }
  }
  v <- do.call(c, lapply(seq_len(k), function(b) rep(S[[b]] / size[b], size[b])))
  if (kind == "rank") {
    out <- numeric(n)
    out[o] <- Rmpfr::asNumeric(key - v)
    out
  } else {
    rev(Rmpfr::asNumeric(r / Rmpfr::mpfr(epsilon, bits) - v))
  }
}

test_that("soft ranks and sorts keep their digits where |x| / epsilon or n / epsilon is large", {
  skip_if_not_installed("Rmpfr")
  # an audit's cases: the keys or n / epsilon so much larger than the ranks or x that the
  # targets held only them (ranks of 0, sorts of 0, sorted values not sorted)
  expect_identical(soft_rank(c(1, 2, 3), epsilon = 1e-17), c(1, 2, 3))
  expect_identical(soft_rank(c(3, 1, 2) * 1e-9, epsilon = 1e-25), c(3, 1, 2))
  expect_identical(soft_rank(5, epsilon = 1e-300), 1)
  expect_identical(soft_rank(c(1e16, 1e16 + 4, 1e16 + 8)), c(1, 2, 3))
  expect_identical(soft_rank(c(1e300, -1e300)), c(2, 1))
  expect_identical(soft_sort(0.3, epsilon = 1e-8), 0.3)
  expect_identical(soft_sort(c(0.1, 0.2, 0.3), epsilon = 1e-17), c(0.1, 0.2, 0.3))
  expect_identical(soft_sort(c(0, 1e-9, 2e-9), epsilon = 1e-8), c(0, 1e-9, 2e-9))
  set.seed(12)
  x <- stats::rnorm(1e4)
  expect_identical(soft_sort(x, 1e-4), sort(x))
  # random rows, some values close (blocks) and far apart, offsets and tiny epsilons, against the
  # exact projection
  set.seed(13)
  worst <- c(rank = 0, sort = 0)
  for (case in 1:60) {
    n <- sample(c(1:6, 20, 50), 1)
    x <- 10^stats::runif(1, -3, 3) * round(stats::rnorm(n), sample(0:3, 1)) + sample(c(0, 1e6, -1e9), 1)
    epsilon <- 10^stats::runif(1, -20, 2)
    if (!all(is.finite(n / epsilon))) next
    scale <- max(abs(x)) + 1e-300 # the sort's values, near x: a rounding of x's size
    worst["rank"] <- max(worst["rank"], abs(soft_rank(x, epsilon) - ref_soft_exact(x, epsilon, "rank")))
    worst["sort"] <- max(worst["sort"], abs(soft_sort(x, epsilon) - ref_soft_exact(x, epsilon, "sort")) / scale)
  }
  expect_lt(worst[["rank"]], 1e-9)
  expect_lt(worst[["sort"]], 1e-9)
})

test_that("decreasing = TRUE gives ranks from the largest and sorts from the largest", {
  set.seed(3)
  x <- stats::rnorm(25)
  for (eps in c(0.01, 1, 10)) {
    expect_equal(soft_rank(x, eps, decreasing = TRUE), 26 - soft_rank(x, eps), tolerance = 1e-12)
    expect_equal(soft_rank(x, eps, decreasing = TRUE), soft_rank(-x, eps), tolerance = 1e-12)
    expect_equal(soft_sort(x, eps, decreasing = TRUE), rev(soft_sort(x, eps)), tolerance = 1e-12)
  }
  expect_equal(soft_rank(x, 1e-9, decreasing = TRUE), rank(-x), tolerance = 1e-6)
  expect_equal(soft_sort(x, 1e-4, decreasing = TRUE), sort(x, decreasing = TRUE), tolerance = 1e-9)
})

test_that("the rows of a matrix equal one-row calls, and names are kept", {
  set.seed(4)
  X <- matrix(stats::rnorm(6 * 50), 6, dimnames = list(paste0("q", 1:6), paste0("i", 1:50)))
  G <- matrix(stats::rnorm(6 * 50), 6)
  for (dec in c(FALSE, TRUE)) {
    R <- soft_rank(X, 0.2, decreasing = dec)
    S <- soft_sort(X, 0.2, decreasing = dec)
    DR <- soft_rank_vjp(X, G, 0.2, decreasing = dec)
    DS <- soft_sort_vjp(X, G, 0.2, decreasing = dec)
    expect_identical(dimnames(R), dimnames(X))
    expect_identical(dimnames(S), list(rownames(X), NULL))
    expect_identical(dimnames(DS), dimnames(X))
    for (r in 1:6) {
      expect_equal(unname(R[r, ]), soft_rank(X[r, ], 0.2, decreasing = dec)[], ignore_attr = TRUE)
      expect_equal(S[r, ], soft_sort(unname(X[r, ]), 0.2, decreasing = dec))
      expect_equal(unname(DR[r, ]), unname(soft_rank_vjp(X[r, ], G[r, ], 0.2, decreasing = dec)))
      expect_equal(unname(DS[r, ]), unname(soft_sort_vjp(X[r, ], G[r, ], 0.2, decreasing = dec)))
    }
  }
  x <- c(a = 3, b = 1, c = 2)
  expect_identical(names(soft_rank(x)), c("a", "b", "c"))
  expect_null(names(soft_sort(x)))
  expect_identical(names(soft_sort_vjp(x, 1:3)), c("a", "b", "c"))
})

test_that("the vector-Jacobian products match central differences", {
  set.seed(5)
  for (n in c(2, 8, 60)) {
    x <- stats::rnorm(n)
    g <- stats::rnorm(n)
    for (eps in c(0.05, 0.5, 3)) {
      for (dec in c(FALSE, TRUE)) {
        label <- sprintf("n = %d, epsilon = %g, decreasing = %s", n, eps, dec)
        expect_equal(soft_rank_vjp(x, g, eps, dec),
                     central_x(function(v) soft_rank(v, eps, dec), x, g), tolerance = 1e-6, label = label)
        expect_equal(soft_sort_vjp(x, g, eps, dec),
                     central_x(function(v) soft_sort(v, eps, dec), x, g), tolerance = 1e-6, label = label)
      }
    }
  }
})

test_that("soft ranks are the projection: their gradient sums to zero, and a constant g gives none", {
  set.seed(6)
  x <- stats::rnorm(30)
  expect_equal(sum(soft_rank_vjp(x, stats::rnorm(30), 0.3)), 0, tolerance = 1e-12)
  expect_equal(soft_rank_vjp(x, rep(2, 30), 0.3), rep(0, 30), tolerance = 1e-12)
  # soft sorts: a constant g moves every output with the mean of x
  expect_equal(soft_sort_vjp(x, rep(1, 30), 0.3), rep(1, 30), tolerance = 1e-12)
})

test_that("gradient = TRUE keeps the sort order, and the backward pass given it agrees", {
  set.seed(9)
  x <- c(stats::rnorm(40), 0.25, 0.25, 0.25, -1) # ties
  g <- stats::rnorm(44)
  for (dec in c(FALSE, TRUE)) {
    for (eps in c(0.02, 1)) {
      label <- sprintf("epsilon = %g, decreasing = %s", eps, dec)
      r <- soft_rank(x, eps, dec, gradient = TRUE)
      s <- soft_sort(x, eps, dec, gradient = TRUE)
      # the order of the keys from the largest: x / epsilon for ranks (-x when decreasing), x for
      # sorts, ties in their order (R's radix order is stable)
      expect_identical(attr(r, "order"), order(x, decreasing = !dec, method = "radix"), label = label)
      expect_identical(attr(s, "order"), order(x, decreasing = TRUE, method = "radix"), label = label)
      expect_identical(c(r), soft_rank(x, eps, dec), label = label)
      expect_identical(c(s), soft_sort(x, eps, dec), label = label)
      expect_identical(soft_rank_vjp(x, g, eps, dec, order = attr(r, "order")),
                       soft_rank_vjp(x, g, eps, dec), label = label)
      expect_identical(soft_sort_vjp(x, g, eps, dec, order = attr(s, "order")),
                       soft_sort_vjp(x, g, eps, dec), label = label)
    }
  }
  X <- matrix(round(stats::rnorm(5 * 30), 1), 5) # ties in every row
  G <- matrix(stats::rnorm(5 * 30), 5)
  r <- soft_rank(X, 0.1, gradient = TRUE)
  expect_identical(attr(r, "order"), t(apply(X, 1, order, decreasing = TRUE, method = "radix")))
  expect_identical(soft_rank_vjp(X, G, 0.1, order = attr(r, "order")), soft_rank_vjp(X, G, 0.1))
  s <- soft_sort(X, 0.1, TRUE, gradient = TRUE)
  expect_identical(soft_sort_vjp(X, G, 0.1, TRUE, order = attr(s, "order")),
                   soft_sort_vjp(X, G, 0.1, TRUE))
  expect_null(attr(soft_rank(X, 0.1), "order"))
})

test_that("an order that is not the forward pass's is an error naming it", {
  x <- c(1, 2, 2, 3)
  o <- attr(soft_rank(x, gradient = TRUE), "order")
  expect_identical(o, c(4L, 2L, 3L, 1L))
  msg <- "`order` is not the sort order of `x`"
  expect_error(soft_rank_vjp(x, 1:4, order = c(4L, 3L, 2L, 1L)), msg) # ties out of order
  expect_error(soft_rank_vjp(x, 1:4, order = c(4L, 2L, 2L, 1L)), msg)
  expect_error(soft_rank_vjp(x, 1:4, order = c(4L, 2L, 3L, 5L)), msg)
  expect_error(soft_rank_vjp(x, 1:4, order = c(4L, 2L, NA, 1L)), msg)
  expect_error(soft_rank_vjp(x, 1:4, decreasing = TRUE, order = o), msg)
  expect_error(soft_rank_vjp(c(1, 5, 2, 3), 1:4, order = o), msg)
  expect_error(soft_rank_vjp(x, 1:4, order = as.numeric(o)), "`order` must be the attribute \"order\"")
  expect_error(soft_rank_vjp(x, 1:4, order = o[-1]), "`order` must be the attribute \"order\"")
  X <- rbind(x, rev(x))
  O <- attr(soft_sort(X, gradient = TRUE), "order")
  expect_error(soft_sort_vjp(X, X, order = O[, 4:1]), "`order` is not the sort order of row 1 of `x`")
  expect_error(soft_sort_vjp(X, X, order = c(O)), "`order` must be the attribute \"order\"")
  expect_error(soft_rank(x, gradient = NA), "`gradient` must be TRUE or FALSE")
  expect_error(soft_rank_vjp(c(1, NA, 2, 3), 1:4, order = o), "`x` must be finite, but has NA at element 2")
})

test_that("the GPU records no order and sorts again in the backward pass", {
  skip_without_gpu()
  set.seed(10)
  X <- matrix(stats::rnorm(3 * 2000), 3)
  G <- matrix(stats::rnorm(3 * 2000), 3)
  expect_null(attr(soft_rank(X, 0.5, device = "gpu", gradient = TRUE), "order"))
  o <- attr(soft_rank(X, 0.5, gradient = TRUE), "order")
  expect_equal(soft_rank_vjp(X, G, 0.5, device = "gpu", order = o), soft_rank_vjp(X, G, 0.5),
               tolerance = 1e-10)
})

test_that("bad input to the soft operators gives errors naming the argument", {
  expect_error(soft_rank(c(1, NA, 3)), "`x` must be finite, but has NA at element 2")
  expect_error(soft_sort(matrix(c(1, 2, NaN, 4), 2)), "`x` must be finite, but has NaN at row 1, column 2")
  expect_error(soft_rank(numeric(0)), "`x` must have at least one element")
  expect_error(soft_rank("a"), "`x` must be a numeric vector or matrix, not a character vector")
  expect_error(soft_rank(data.frame(a = 1)), "`x` must be a numeric vector or matrix, not a data frame")
  expect_error(soft_rank(array(1:8, c(2, 2, 2))), "`x` must be a vector or a matrix, not an array")
  for (bad in list(0, -1, Inf, NA, c(1, 2), "1")) {
    expect_error(soft_rank(1:3, bad), "`epsilon` must be a positive finite number")
  }
  expect_error(soft_sort(1:3, decreasing = NA), "`decreasing` must be TRUE or FALSE")
  expect_error(soft_rank_vjp(1:3), "`g` is missing")
  expect_error(soft_rank_vjp(1:3, 1:2), "`g` must have the shape of `x` \\(a vector of length 3\\), not a vector of length 2")
  expect_error(soft_sort_vjp(matrix(1:4, 2), 1:4), "`g` must have the shape of `x` \\(a 2 x 2 matrix\\)")
  expect_error(soft_rank_vjp(1:3, c(1, Inf, 2)), "`g` must be finite, but has Inf at element 2")
  expect_error(soft_rank(c(1e300, 1), 1e-10), "`x / epsilon` overflows double precision at element 1")
  expect_error(soft_sort(1:3, 1e-310), "^`n / epsilon` overflows double precision .* rows of 3\\); use a larger `epsilon`$")
  expect_error(soft_sort(c(1e308, -1e308), 1e300), "^the sums of the soft sort overflow .*; rescale `x`$")
  expect_error(soft_rank(1:3, device = "tpu"), "`device` must be one of")
})

# increasing = "auto" picks each problem's direction by the sign of Spearman's rank correlation
# over its elements of positive weight (src/core/rank_direction.c). Reference: stats::cor with
# method = "spearman", problem by problem, on data whose correlations are clearly not 0; exact
# zeros and constant problems (an undefined correlation) count as rising.

spearman_up <- function(x, y, w, problem, k) {
  keep <- if (is.null(w)) rep(TRUE, length(y)) else w > 0
  vapply(seq_len(k), function(p) {
    at <- keep & problem == p
    if (sum(at) < 2L) return(TRUE)
    r <- suppressWarnings(stats::cor(x[at], y[at], method = "spearman"))
    is.na(r) || r >= 0
  }, logical(1))
}

test_that("the direction of each problem is the sign of its Spearman correlation", {
  set.seed(11)
  for (case in 1:40) {
    k <- sample(c(1L, 3L, 17L), 1L)
    n <- sample(c(5L, 60L, 2000L), 1L)
    problem <- sample(k, n, replace = TRUE)
    slope <- sample(c(-1, 1), k, replace = TRUE)[problem]
    x <- if (case %% 3 == 0) round(stats::runif(n) * 5) else stats::rnorm(n) # ties in x
    y <- slope * x + stats::rnorm(n, sd = 0.3)
    if (case %% 4 == 0) y <- round(y) # ties in y
    w <- switch(case %% 3 + 1, NULL, stats::runif(n), ifelse(stats::runif(n) < 0.3, 0, 1))
    want <- spearman_up(x, y, w, problem, k)
    r <- suppressWarnings(vapply(seq_len(k), function(p) {
      at <- (if (is.null(w)) TRUE else w > 0) & problem == p
      if (sum(at) < 3L) return(1)
      abs(stats::cor(x[at], y[at], method = "spearman"))
    }, numeric(1)))
    clear <- is.na(r) | r > 1e-6 # cor's rounding decides nothing here
    expect_identical(gpuiso:::rank_direction(x, y, w, problem, k)[clear], want[clear])
  }
})

test_that("a correlation of exactly 0, a constant problem and an empty one count as rising", {
  # ranks of y: 1.5 3.5 3.5 1.5 against 1 2 3 4: covariance exactly 0
  expect_true(gpuiso:::rank_direction(1:4, c(1, 2, 2, 1)))
  expect_false(gpuiso:::rank_direction(1:4, c(1, 2, 2, 0)))
  expect_identical(gpuiso:::rank_direction(c(1, 2, 3, 4, 5), c(5, 4, 3, 3, 3), problem = c(1L, 1L, 1L, 2L, 2L), k = 3L),
                   c(FALSE, TRUE, TRUE))
  # weight 0 leaves an element out of its problem's ranks
  expect_true(gpuiso:::rank_direction(1:4, c(1, 2, 3, -10), w = c(1, 1, 1, 0)))
  expect_false(gpuiso:::rank_direction(1:4, c(1, 2, 3, -10), w = c(0, 0, 1, 1)))
})

test_that("integer and logical inputs rank as their numbers; NA and Inf leave it to the fit", {
  expect_false(gpuiso:::rank_direction(1:6, c(TRUE, TRUE, TRUE, FALSE, FALSE, FALSE)))
  expect_false(gpuiso:::rank_direction(6:1, c(0L, 0L, 1L, 1L, 2L, 2L)))
  expect_identical(gpuiso:::rank_direction(c(1, NA, 3), c(3, 2, 1), k = 1L), TRUE)
  expect_identical(gpuiso:::rank_direction(c(1, Inf, 3), c(3, 2, 1), k = 1L), TRUE)
})

test_that("the ranks are exact however many elements tie: large problems of few values", {
  set.seed(5)
  n <- 2e5
  x <- sample(0:3, n, replace = TRUE)
  y <- x %% 2 # rises and falls: the covariance is a sum of large, cancelling terms
  want <- stats::cor(x, y, method = "spearman") >= 0
  expect_identical(gpuiso:::rank_direction(x, y), want)
  expect_identical(gpuiso:::rank_direction(x, -y), stats::cor(x, -y, method = "spearman") >= 0)
})

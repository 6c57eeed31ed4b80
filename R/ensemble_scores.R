#' Scores of raw ensemble forecasts
#'
#' Methods of [cdf()], [qpred()], [crps()] and [pit()] (and so of [bscore()] and [qscore()]) for a
#' data frame whose rows are ensemble forecasts (one column per member), as in isodistrreg: each
#' row is taken as the empirical distribution of its members. They let a study score the raw
#' forecasts beside their IDR postprocessing with the same functions.
#'
#' @param predictions A data frame of numeric columns: one row per forecast (possibly none), one
#'   column per member, no `NA`.
#' @inheritParams idr_scores
#' @return As for IDR predictions (see [idr_scores]).
#' @examples
#' ens <- data.frame(m1 = c(1, 4), m2 = c(2, 5), m3 = c(3, 9))
#' cdf(ens, c(2, 5))
#' qpred(ens, 0.5)
#' crps(ens, c(2, 6))
#' pit(ens, c(2, 6), randomize = FALSE)
#' @name ensemble_scores
NULL

# The members as a numeric matrix with a row per forecast.
ensemble_matrix <- function(predictions) {
  need <- "must be a data frame of numeric columns (ensemble members)"
  if (ncol(predictions) == 0L) stop_arg("predictions", need)
  for (j in seq_along(predictions)) {
    v <- predictions[[j]]
    if (!is.numeric(v) || length(dim(v)) > 1L) {
      what <- if (is.numeric(v)) sprintf("%s (give each member a column of its own)", array_shape(v)) else describe(v)
      stop_arg("predictions", sprintf("%s, but column \"%s\" is %s", need, names(predictions)[j], what))
    }
  }
  m <- data.matrix(predictions)
  if (anyNA(m) || any(!is.finite(m))) stop_arg("predictions", "must have finite members, without NA")
  m
}

#' @rdname ensemble_scores
#' @export
cdf.data.frame <- function(predictions, thresholds) {
  m <- ensemble_matrix(predictions)
  thresholds <- check_finite(check_vector(thresholds, "thresholds"), "thresholds")
  # counts over n in one division (rowMeans divides in long double, then rounds again)
  out <- vapply(thresholds, function(t) rowSums(m <= t) / ncol(m), numeric(nrow(m)))
  matrix(out, nrow(m), length(thresholds), dimnames = list(NULL, format(thresholds, digits = 6)))
}

# The members of each forecast in increasing order.
sort_rows <- function(m) matrix(m[order(row(m), m)], nrow(m), ncol(m), byrow = TRUE)

#' @rdname ensemble_scores
#' @export
qpred.data.frame <- function(predictions, quantiles) {
  m <- ensemble_matrix(predictions)
  quantiles <- check_vector(quantiles, "quantiles")
  if (anyNA(quantiles) || any(quantiles < 0 | quantiles > 1)) {
    stop_arg("quantiles", "must be levels between 0 and 1")
  }
  sorted <- sort_rows(m)
  # The k-th smallest member for the smallest k with k / n >= level, k / n divided as in cdf(),
  # so that a level equal to a CDF value gives that member. ceiling(level * n) - 1 is rounded:
  # never above that k and at most two below it.
  n <- ncol(m)
  k <- pmin(pmax(ceiling(quantiles * n) - 1, 1), n)
  for (step in 1:2) k <- k + (k / n < quantiles)
  out <- sorted[, k, drop = FALSE]
  dimnames(out) <- list(NULL, format(quantiles, digits = 6))
  out
}

#' @rdname ensemble_scores
#' @export
crps.data.frame <- function(predictions, y) {
  m <- ensemble_matrix(predictions)
  y <- check_observations(y, nrow(m))
  # CRPS = E|X - y| - E|X - X'| / 2 for the members X, X' of the forecast, with E|X - X'| =
  # sum_j c_j x_(j) over the sorted members, c_j = 2 (2j - n - 1) / n^2: no partial sum exceeds
  # twice the largest |member|. It is homogeneous of degree 1, so members or observations beyond
  # a quarter of the largest double are halved (exactly) to keep |X - y| finite, and the score
  # doubled.
  n <- ncol(m)
  s <- if (max(abs(m), abs(y), 0) > .Machine$double.xmax / 4) 2 else 1
  c_j <- 2 * (2 * seq_len(n) - n - 1) / n^2
  spread <- as.vector(sort_rows(m / s) %*% c_j)
  s * (rowMeans(abs(m / s - y / s)) - spread / 2)
}

#' @rdname ensemble_scores
#' @export
pit.data.frame <- function(predictions, y, randomize = TRUE, seed = NULL) {
  m <- ensemble_matrix(predictions)
  y <- check_observations(y, nrow(m), single = FALSE)
  randomize <- check_flag(randomize, "randomize")
  seed <- check_seed(seed)
  upper <- rowSums(m <= y) / ncol(m)
  if (!randomize) return(upper)
  lower <- rowSums(m < y) / ncol(m)
  lower + with_seed(seed, stats::runif(length(y))) * (upper - lower)
}

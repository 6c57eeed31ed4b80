#' Evaluate and score IDR predictive distributions
#'
#' Functions on the predictive distributions of [predict.gpuiso_idrfit()] and [idrbag()], with the
#' names and arguments of isodistrreg. They are generics that know gpuiso's predictions (class
#' `"gpuiso_idr"`) and raw ensembles in a data frame ([ensemble_scores]); anything else, such as
#' isodistrreg's `"idr"` predictions, is an error that says so (call isodistrreg's functions,
#' e.g. `isodistrreg::crps()`, on those). A predictive CDF is a step function: it jumps only at the
#' thresholds of the fit, and is 0 below the first and 1 from the last on.
#'
#' The parts of a `"gpuiso_idr"` object (its runs of CDF values, thresholds, positions and
#' interpolation weights) are checked before they are used: an object edited by hand, built by
#' hand or saved by an incompatible version of gpuiso is an error that names the argument.
#'
#' * `cdf()`: the CDF at `thresholds`.
#' * `qpred()`: lower quantiles, the smallest threshold at which the CDF reaches each level (at
#'   level 0, the smallest at which it exceeds 0: the lowest point of the distribution).
#' * `crps()`: the continuous ranked probability score, \eqn{\int (F(t) - 1\{t \ge y\})^2 dt}{integral of (F(t) - 1{t >= y})^2 dt},
#'   computed exactly for the step CDFs. Long work shows a progress bar after a few seconds in
#'   interactive sessions; `options(gpuiso.progress = TRUE)` or `FALSE` chooses.
#' * `pit()`: the probability integral transform \eqn{F(y)}; with `randomize = TRUE` a uniform
#'   draw between \eqn{F(y-)} and \eqn{F(y)} where the CDF jumps at `y`.
#' * `bscore()`: Brier scores \eqn{(F(t) - 1\{y \le t\})^2}{(F(t) - 1{y <= t})^2}.
#' * `qscore()`: quantile scores \eqn{2 (1\{q > y\} - \alpha)(q - y)}{2 (1{q > y} - alpha)(q - y)}, with \eqn{\alpha}{alpha} the quantile level.
#'
#' @param predictions A `"gpuiso_idr"` object.
#' @param thresholds Numeric vector of thresholds.
#' @param quantiles Numeric vector of levels in \[0, 1\].
#' @param y Observations: one per prediction, or one for all (`pit()` needs one per prediction).
#' @param randomize Randomize the PIT where the CDF jumps?
#' @param seed With `randomize`, a seed for the draws (`NULL`, or a single whole number as
#'   [set.seed()] takes); the random number state of the session is left as it was.
#' @return `cdf()`, `bscore()`: a matrix with a row per prediction and a column per threshold;
#'   `qpred()`, `qscore()`: a matrix with a column per quantile level; `crps()`, `pit()`: a
#'   vector with one value per prediction.
#' @references Gneiting, T. and Raftery, A. E. (2007). Strictly proper scoring rules, prediction,
#'   and estimation. Journal of the American Statistical Association, 102(477), 359-378.
#' @examples
#' fit <- idr(c(3, 5, 3), data.frame(x = c(7, 11, 13)))
#' pred <- predict(fit, data.frame(x = c(5, 7, 9, 12, 20)))
#' cdf(pred, c(3, 5))
#' qpred(pred, c(0.25, 0.5, 0.75, 1))
#' crps(pred, 4)
#' bscore(pred, 3, 4)
#' qscore(pred, 0.5, 4)
#' pit(pred, c(3, 3, 4, 5, 5), randomize = FALSE)
#' @name idr_scores
NULL

#' @rdname idr_scores
#' @export
cdf <- function(predictions, thresholds) UseMethod("cdf")

#' @rdname idr_scores
#' @export
cdf.gpuiso_idr <- function(predictions, thresholds) {
  thresholds <- check_finite(check_vector(thresholds, "thresholds"), "thresholds")
  out <- cdf_values(predictions, thresholds)
  colnames(out) <- format(thresholds, digits = 6)
  out
}

#' @rdname idr_scores
#' @export
qpred <- function(predictions, quantiles) UseMethod("qpred")

#' @rdname idr_scores
#' @export
qpred.gpuiso_idr <- function(predictions, quantiles) {
  quantiles <- check_vector(quantiles, "quantiles")
  if (anyNA(quantiles) || any(quantiles < 0 | quantiles > 1)) {
    stop_arg("quantiles", "must be levels between 0 and 1")
  }
  k <- .Call(C_cdf_quantile, predictions, quantiles, "predictions")
  out <- matrix(pred_part(predictions, "thresholds")[k + 1], nrow = nrow(k), ncol = ncol(k))
  colnames(out) <- format(quantiles, digits = 6)
  out
}

# The default methods of the generics: predictions that gpuiso did not make.
unknown_predictions <- function(predictions) {
  stop_arg("predictions", sprintf(paste0(
    "must be gpuiso's predictions (class \"gpuiso_idr\", from predict() of an idr() fit or from ",
    "idrbag()) or a data frame of ensemble members, not an object of class %s%s"),
    quoted_list(class(predictions)), if (inherits(predictions, "idr"))
      "; isodistrreg's predictions go to isodistrreg's functions (isodistrreg::cdf() etc.)" else ""))
}

#' @export
cdf.default <- function(predictions, thresholds) unknown_predictions(predictions)

#' @export
qpred.default <- function(predictions, quantiles) unknown_predictions(predictions)

#' @export
crps.default <- function(predictions, y) unknown_predictions(predictions)

#' @export
pit.default <- function(predictions, y, randomize = TRUE, seed = NULL) unknown_predictions(predictions)

# Observations: finite, one per prediction or one for all (when `single` is allowed).
check_observations <- function(y, n, single = TRUE) {
  if (n == 0L && is.numeric(y) && length(y) == 0L) return(as.double(y))
  y <- check_finite(check_vector(y, "y"), "y")
  if (length(y) == n) return(y)
  if (single && length(y) == 1L) return(rep(y, n))
  stop_arg("y", sprintf("must have %sone element per prediction (%d), not %d",
                        if (single) "length 1 or " else "", n, length(y)))
}

#' @rdname idr_scores
#' @export
crps <- function(predictions, y) UseMethod("crps")

#' @rdname idr_scores
#' @export
crps.gpuiso_idr <- function(predictions, y) {
  n <- length(predictions)
  y <- check_observations(y, n)
  # Long work shows a progress bar after a few seconds in interactive sessions (option
  # gpuiso.progress: TRUE or FALSE to choose). One call: the scores of all predictions share a
  # sweep over the thresholds, which pieces would each repeat.
  nthr <- length(pred_part(predictions, "thresholds"))
  if (as.double(n) * nthr <= 1e8) return(.Call(C_cdf_crps, predictions, y, "predictions", NULL))
  bar <- progress_bar(check_progress(getOption("gpuiso.progress", interactive())))
  on.exit(bar$close())
  .Call(C_cdf_crps, predictions, y, "predictions", bar$update)
}

#' @rdname idr_scores
#' @export
pit <- function(predictions, y, randomize = TRUE, seed = NULL) UseMethod("pit")

#' @rdname idr_scores
#' @export
pit.gpuiso_idr <- function(predictions, y, randomize = TRUE, seed = NULL) {
  y <- check_observations(y, length(predictions), single = FALSE)
  randomize <- check_flag(randomize, "randomize")
  seed <- check_seed(seed)
  upper <- cdf_values(predictions, y, paired = TRUE)
  if (!randomize) return(upper)
  lower <- cdf_values(predictions, y, paired = TRUE, left_open = TRUE)
  lower + with_seed(seed, stats::runif(length(y))) * (upper - lower)
}

# A seed: NULL, or a single whole number that set.seed() takes (as an integer).
check_seed <- function(seed) {
  if (is.null(seed)) return(NULL)
  if (!is.numeric(seed) || length(seed) != 1L || !is.finite(seed) || seed != round(seed) ||
      abs(seed) > .Machine$integer.max) {
    shown <- if (is.numeric(seed) && length(seed) == 1L) format(seed) else describe(seed)
    stop_arg("seed", sprintf("must be NULL or a single whole number (at most 2^31 - 1 in size), not %s", shown))
  }
  as.integer(seed)
}

# Runs `draw` with the given seed (if any, as check_seed returns it: its callers check it before
# the state is touched, so that no error leaves it half restored), leaving the session's random
# number state as it was.
with_seed <- function(seed, draw) {
  if (is.null(seed)) return(draw)
  had <- exists(".Random.seed", envir = globalenv(), inherits = FALSE)
  if (had) old <- get(".Random.seed", envir = globalenv(), inherits = FALSE)
  on.exit(if (had) assign(".Random.seed", old, envir = globalenv()) else
    rm(".Random.seed", envir = globalenv()))
  set.seed(seed)
  draw
}

#' @rdname idr_scores
#' @export
bscore <- function(predictions, thresholds, y) {
  probs <- cdf(predictions, thresholds)
  y <- check_observations(y, nrow(probs))
  (probs - outer(y, thresholds, "<="))^2
}

#' @rdname idr_scores
#' @export
qscore <- function(predictions, quantiles, y) {
  q <- qpred(predictions, quantiles)
  y <- check_observations(y, nrow(q))
  # 2 (1{q > y} - alpha) (q - y), with the factor applied before the difference can overflow,
  # and from halves where q - y exceeds the largest double
  d <- q - y
  weight <- 2 * sweep(q > y, 2L, quantiles)
  wide <- is.infinite(d)
  d[wide] <- (q / 2 - y / 2)[wide]
  weight[wide] <- 2 * weight[wide]
  d * weight
}

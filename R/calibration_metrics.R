#' How well probabilities are calibrated
#'
#' `calibration_bins()` sorts predicted probabilities into bins and compares, in each bin, the
#' mean prediction with the observed rate of positive labels. `calibration_error()` is the
#' expected calibration error (ECE), the weighted mean distance between the two over the bins:
#' \deqn{\mathrm{ECE} = \sum_b \frac{W_b}{W} \left| \bar p_b - \bar y_b \right|,}{ECE = sum_b
#' (W_b / W) |mean prob_b - rate_b|,}
#' where \eqn{W_b} is the weight of bin \eqn{b}, \eqn{\bar p_b}{mean prob_b} its weighted mean
#' probability and \eqn{\bar y_b}{rate_b} its weighted mean label. `log_loss()` and
#' `brier_score()` are the weighted mean log loss (cross-entropy) and squared error of the
#' probabilities, which reward sharpness as well as calibration.
#'
#' **Bins.** `binning = "width"` cuts `[0, 1]` into `bins` intervals of equal width,
#' \eqn{[0, 1/B), [1/B, 2/B), \dots, [(B-1)/B, 1]}{[0, 1/B), [1/B, 2/B), ..., [(B-1)/B, 1]}.
#' `binning = "mass"` cuts at the weighted quantiles \eqn{q_j} of `prob`,
#' \eqn{j = 1, \dots, B - 1}{j = 1, ..., B - 1} (the smallest probability whose cumulative weight
#' reaches \eqn{j/B} of the total, less a relative \eqn{10^{-12}}{1e-12}, so that the
#' rounding of the cumulative sums cannot move a cut past a probability that reaches it exactly),
#' into \eqn{[\min, q_1], (q_1, q_2], \dots,
#' (q_{B-1}, \max]}{[min, q_1], (q_1, q_2], ..., (q_(B-1), max]}: bins of about equal weight, which suit probabilities crowded near 0 (click
#' rates, say). Equal probabilities always share a bin, so there may be fewer bins than asked for.
#' Bins without weight are left out.
#'
#' @param prob Numeric vector of predicted probabilities, in `[0, 1]`.
#' @param label The outcomes: a logical vector, or numeric `0` and `1`, the length of `prob`.
#' @param bins Number of bins, a whole number from 1 to 1e6.
#' @param weights Optional non-negative weights, the length of `prob`, at least one positive. Only
#'   their ratios matter: weights near the largest double or subnormal ones give the scores of
#'   the same weights at scale 1 (the `weight` column of `calibration_bins()` is in the input's
#'   units, `Inf` where a bin's total exceeds the largest double).
#' @param binning `"width"` (equal-width bins) or `"mass"` (equal-mass bins).
#' @param eps A number in `[0, 0.5)`: `log_loss()` takes the probability given to the observed
#'   label as at least `eps`,
#'   so that a probability of exactly 0 or 1 (which isotonic calibration can give) costs a large
#'   but finite loss, `-log(eps)`; `eps = 0` gives `Inf` for such a prediction. Predictions of
#'   weight zero add nothing.
#' @return `calibration_bins()`: a data frame with one row per bin with weight, columns `bin`
#'   (its number), `lower` and `upper` (its edges), `n` (probabilities in it), `weight`,
#'   `mean_prob` and `rate`. The others: a single number.
#' @seealso [reliability_diagram()], [calibrate_isotonic()].
#' @examples
#' set.seed(1)
#' p <- runif(2000)
#' y <- rbinom(2000, 1, p^2) # p is too high
#' calibration_error(p, y)
#' calibration_error(p, y, binning = "mass")
#' calibration_bins(p, y, bins = 5)
#' c(log_loss = log_loss(p, y), brier = brier_score(p, y))
#' @name calibration_error
NULL

#' @rdname calibration_error
#' @export
calibration_error <- function(prob, label, bins = 10, weights = NULL, binning = c("width", "mass")) {
  bins_error(scaled_bins(prob, label, bins, weights, binning))
}

# The ECE of a table of bins (their weights on any common scale).
bins_error <- function(b) sum(b$weight * abs(b$mean_prob - b$rate)) / sum(b$weight)

#' @rdname calibration_error
#' @export
calibration_bins <- function(prob, label, bins = 10, weights = NULL, binning = c("width", "mass")) {
  unscale_bins(scaled_bins(prob, label, bins, weights, binning))
}

# The table of calibration_bins() with the weights scaled by 2^e (see check_scored), e in the
# attribute "weight_exponent": the means and the ECE come from these sums, which do not overflow.
scaled_bins <- function(prob, label, bins, weights, binning) {
  binning <- check_choice(binning, c("width", "mass"), "binning")
  d <- check_scored(prob, label, weights)
  if (!is.numeric(bins) || length(bins) != 1L || !is.finite(bins) || bins < 1 || bins != round(bins)) {
    stop_arg("bins", "must be a single positive whole number")
  }
  if (bins > 1e6) stop_arg("bins", sprintf("must be at most 1e6, not %s", format(bins, digits = 15)))
  edges <- if (binning == "width") seq_len(bins - 1L) / bins else mass_edges(d$prob, d$weights, bins)
  bin <- findInterval(d$prob, edges, left.open = binning == "mass") + 1L
  weight <- tabulate_weight(d$weights, bin, bins)
  keep <- weight > 0
  lower <- c(if (binning == "width") 0 else min(d$prob), edges)
  upper <- c(edges, if (binning == "width") 1 else max(d$prob))
  out <- data.frame(
    bin = seq_len(bins), lower = lower, upper = upper, n = tabulate(bin, bins), weight = weight,
    mean_prob = tabulate_weight(d$weights * d$prob, bin, bins) / weight,
    rate = tabulate_weight(d$weights * d$label, bin, bins) / weight
  )[keep, , drop = FALSE]
  attr(out, "weight_exponent") <- d$exponent
  out
}

# The bins' weights in the units of the input (Inf where their sum exceeds the largest double).
unscale_bins <- function(b) {
  b$weight <- times_pow2(b$weight, -attr(b, "weight_exponent"))
  attr(b, "weight_exponent") <- NULL
  b
}

#' @rdname calibration_error
#' @export
log_loss <- function(prob, label, weights = NULL, eps = 1e-15) {
  d <- check_scored(prob, label, weights)
  if (!is.numeric(eps) || length(eps) != 1L || is.na(eps) || eps < 0 || eps >= 0.5) {
    stop_arg("eps", "must be a single number in [0, 0.5)")
  }
  use <- d$weights > 0 # a prediction of weight zero adds nothing, not 0 * Inf
  p <- d$prob[use]
  # log1p: 1 - p would round a tiny p away
  loss <- ifelse(d$label[use] == 1, log(pmax(p, eps)), pmax(log1p(-p), log(eps)))
  -sum(d$weights[use] * loss) / sum(d$weights)
}

#' @rdname calibration_error
#' @export
brier_score <- function(prob, label, weights = NULL) {
  d <- check_scored(prob, label, weights)
  sum(d$weights * (d$prob - d$label)^2) / sum(d$weights)
}

# Probabilities, their labels and weights (1 when NULL), checked. The weights come back times
# 2^exponent, which puts the largest in [1, 2): every score is a ratio of weighted sums, which
# this leaves unchanged but keeps from overflowing (weights near the largest double) or from
# losing digits (subnormal weights).
check_scored <- function(prob, label, weights) {
  prob <- check_vector(prob, "prob")
  if (anyNA(prob) || any(prob < 0 | prob > 1)) {
    bad <- which(is.na(prob) | prob < 0 | prob > 1)[1L]
    stop_arg("prob", sprintf("must be probabilities in [0, 1], but has %s at element %d",
                             format(prob[bad], digits = 17L), bad))
  }
  n <- length(prob)
  label <- check_label(label, n, "prob")
  exponent <- 0
  if (is.null(weights)) {
    weights <- rep(1, n)
  } else {
    weights <- check_weights(weights, n, "prob")
    exponent <- weight_exponent(weights)
    weights <- times_pow2(weights, exponent)
  }
  list(prob = prob, label = label, weights = weights, exponent = exponent)
}

# The weighted quantiles of prob at 1/bins, ..., (bins - 1)/bins: the smallest prob whose
# cumulative weight reaches each fraction (a relative 1e-12 below it, so that rounding in the
# cumulative sums does not move a cut past a probability that reaches it exactly).
mass_edges <- function(prob, weights, bins) {
  o <- order(prob)
  cw <- cumsum(weights[o])
  targets <- seq_len(bins - 1L) / bins * cw[length(cw)] * (1 - 1e-12)
  prob[o][findInterval(targets, cw, left.open = TRUE) + 1L]
}

tabulate_weight <- function(v, bin, bins) {
  out <- numeric(bins)
  s <- rowsum(v, bin)
  out[as.integer(rownames(s))] <- s
  out
}

#' Predictive distributions from an IDR fit
#'
#' The predictive CDF at a new covariate value is interpolated linearly between the fitted CDFs at
#' the neighbouring distinct covariate values of the fit, and is the CDF at the nearest one
#' outside their range (as isodistrreg does; for an ordered factor, or with
#' `interpolation = "none"`, between two fitted values the mean of their two CDFs).
#'
#' With several covariates (as isodistrreg defines it): the CDF at a new covariate vector lies
#' between an upper bound, the least of the fitted CDFs at the greatest fitted vectors below it in
#' the order, and a lower bound, the greatest of the fitted CDFs at the least fitted vectors above
#' it. The prediction is the mean of the two bounds when both exist, the one bound that exists
#' otherwise (the other being 1 or 0), and the CDF of all training observations (weighted) at a
#' vector comparable to no fitted one. `interpolation` has no effect there.
#'
#' The predictions are held compactly (they refer to the fit's CDFs) and are evaluated with
#' [cdf()], [qpred()], [crps()], [pit()], [bscore()] and [qscore()]. For compatibility with
#' isodistrreg, `pred[[i]]` is the `i`-th prediction as a data frame with the `points` where its
#' CDF jumps and the `cdf` there (plus `lower` and `upper`, the CDFs at the neighbouring fitted
#' covariate values, for out-of-sample predictions); `length()`, `[` and `as.list()` work too.
#'
#' @param object A `"gpuiso_idrfit"` object from [idr()].
#' @param data New covariate values, in the form `X` had in [idr()]: a data frame (or matrix
#'   with column names) that has the fit's covariate columns, found by their names (other columns
#'   are ignored), or for one covariate a numeric vector or ordered factor. When `X` had no name (a vector), a
#'   one-column data frame or matrix of any name is taken. `NULL` (the default) gives the
#'   in-sample predictions: one per observation of the fit, in its order. Values may be `Inf` or
#'   `-Inf` (as in isodistrreg; with one covariate they take the CDF at the largest or smallest
#'   fitted value), not `NA`.
#' @param digits Accepted for compatibility with isodistrreg, which rounds its CDFs (computed by
#'   a numerical solver) to `digits` decimal places. gpuiso's CDFs are exact and are not rounded:
#'   `digits` must be left `NULL`; round the values of [cdf()] where a rounded table is wanted.
#' @param interpolation Between two fitted covariate values: `"linear"` interpolation of their
#'   CDFs (the default), or any other string, such as `"none"` or `"midpoint"`: the mean of the
#'   two CDFs, whatever the distance (as isodistrreg, which takes any value other than
#'   `"linear"` so). Ordered factors always take the mean.
#' @param ... Nothing: an argument that is not one of the above is an error (for example
#'   `newdata`; new covariate values go in `data`).
#' @return An object of class `"gpuiso_idr"` (gpuiso's own class; isodistrreg's `"idr"`
#'   predictions are left alone): predictive distributions, one per row of `data`. A fit whose
#'   parts were edited so that its CDFs no longer hold together is an error that names `object`.
#' @seealso [idr()], [cdf()], [plot.gpuiso_idr()].
#' @examples
#' fit <- idr(c(3, 5, 3), data.frame(x = c(7, 11, 13)))
#' pred <- predict(fit, data.frame(x = c(5, 9, 12)))
#' pred[[2]]
#' cdf(pred, c(3, 5))
#' # the mean of the CDFs at x = 7 and x = 11, not weighted by distance
#' cdf(predict(fit, data.frame(x = 8), interpolation = "none"), c(3, 5))
#' @export
predict.gpuiso_idrfit <- function(object, data = NULL, digits = NULL, interpolation = "linear",
                                  ...) {
  check_no_dots(..., hint = "new covariate values go in `data`")
  if (!is.null(digits)) {
    stop_arg("digits", paste0("is not supported: gpuiso's CDFs are exact, so they are not rounded; ",
                              "leave `digits` NULL (and round the values of cdf() for a rounded table)"))
  }
  if (!is.character(interpolation) || length(interpolation) != 1L || is.na(interpolation)) {
    stop_arg("interpolation", paste0("must be one string: \"linear\", or another such as \"none\" ",
                                     "for the mean of the neighbouring CDFs"))
  }
  if (!is.null(object$order)) { # several covariates
    if (is.null(data)) return(check_predictions(poset_in_sample(object), "object"))
    v <- order_values(data, NROW(data), spec = fit_order(object)$spec, arg = "data")$value
    return(check_predictions(poset_predictions(object, v), "object"))
  }
  xs <- object$X[[1L]]
  x <- if (is.null(data)) object$x else covariate_values(object$covariate, data)
  factor_levels <- !is.null(object$covariate$levels)
  midpoint <- factor_levels || interpolation != "linear"
  grid <- if (factor_levels) as.double(as.integer(xs)) else xs
  at <- findInterval(x, grid)
  nx <- length(grid)
  pos <- pmax(at, 1L)
  lambda <- double(length(x))
  inside <- at >= 1L & at < nx & x > grid[pmax(at, 1L)]
  if (any(inside)) {
    i <- at[inside]
    lambda[inside] <- if (midpoint) 0.5 else interp_fraction(x[inside], grid[i], grid[i + 1L])
  }
  # checked here, so that an edited fit is an error of predict(), not of what uses the predictions
  check_predictions(new_idr_predictions(object$runs, object$thresholds, pos - 1L, lambda,
                                        bounds = !is.null(data)), "object")
}

# The covariate of new data (the argument called arg) as numbers, checked against the covariate
# of a fit (list(name, levels)). A fit whose covariate has a name takes that column of a data
# frame or named matrix, never another one in its place.
covariate_values <- function(covariate, data, arg = "data") {
  cols <- if (is.data.frame(data)) names(data) else if (is.matrix(data)) colnames(data)
  if (!is.null(covariate$name) && !is.null(cols)) {
    if (!covariate$name %in% cols) {
      stop_arg(arg, sprintf("must have the column \"%s\" (the covariate of the fit), but has %s",
                            covariate$name, if (length(cols)) quoted_list(cols) else "no columns"))
    }
    # the column itself: a data frame's `[` took a third of a small prediction
    data <- if (is.data.frame(data)) {
      .subset2(data, covariate$name)
    } else {
      data[, covariate$name, drop = FALSE]
    }
  }
  cov <- idr_covariate(data, NROW(data), arg, finite = FALSE)
  if (!identical(cov$levels, covariate$levels)) {
    stop_arg(arg, if (is.null(covariate$levels)) "must be numeric, as the covariate of the fit" else
      "must be an ordered factor with the levels of the covariate of the fit")
  }
  cov$value
}

# Predictions: the query positions (0-based) and interpolation fractions into a set of runs.
# bounds: FALSE (in-sample), TRUE (one covariate: the bounds are the CDFs at the positions on
# either side) or "pair" (several covariates: the upper bound at pos, the lower one at pos + 1);
# for predictions of both kinds joined by c(), a code of bound_modes() each.
new_idr_predictions <- function(runs, thresholds, pos, lambda, bounds = FALSE) {
  structure(list(runs = runs, thresholds = thresholds, pos = as.integer(pos),
                 lambda = as.double(lambda), bounds = bounds),
            class = "gpuiso_idr")
}

pred_part <- function(x, name) .subset2(x, name)

# The bounds of each prediction in x: "none" (in-sample), "one" (one covariate) or "pair"
# (several covariates), as new_idr_predictions() describes them.
bound_modes <- function(x) {
  mode <- pred_part(x, "bounds")
  rep_len(if (isTRUE(mode)) "one" else if (isFALSE(mode)) "none" else mode, length(x))
}

# Checks every part of predictions that C code reads (see predictions_from_r in src/r_idr.c): an
# object edited, built by hand or saved by another version is an error that names `arg`. (The C
# entry points check what they are given themselves.)
check_predictions <- function(x, arg = "predictions") {
  .Call(C_check_predictions, x, arg)
  x
}

#' @export
length.gpuiso_idr <- function(x) length(pred_part(x, "pos"))

#' @export
`[.gpuiso_idr` <- function(x, i) {
  idx <- seq_len(length(x))[i]
  if (anyNA(idx)) stop_arg("i", "selects predictions that do not exist")
  bounds <- pred_part(x, "bounds")
  new_idr_predictions(pred_part(x, "runs"), pred_part(x, "thresholds"), pred_part(x, "pos")[idx],
                      pred_part(x, "lambda")[idx], if (length(bounds) > 1L) bounds[idx] else bounds)
}

check_prediction_index <- function(i, n, name) {
  if (!is.numeric(i) || length(i) != 1L || is.na(i) || i < 1 || i > n) {
    stop_arg(name, sprintf("must be one index between 1 and %d", n))
  }
}

#' @export
`[[.gpuiso_idr` <- function(x, i) {
  check_prediction_index(i, length(x), "i")
  one <- x[i]
  thr <- pred_part(one, "thresholds")
  mode <- bound_modes(one)
  bounds <- mode != "none"
  if (bounds) { # with the lower and upper bound, in one evaluation
    p <- pred_part(one, "pos")
    lambda <- pred_part(one, "lambda")
    # one covariate: the CDFs at the fitted values on either side (the lower at the greater);
    # several ("pair"): the upper bound at p, the lower one at p + 1
    lower <- p + as.integer(lambda > 0 || mode == "pair")
    one <- new_idr_predictions(pred_part(one, "runs"), thr, c(p, lower, p), c(lambda, 0, 0))
  }
  value <- cdf_values(one, thr, arg = "x")
  jump <- c(value[1L, 1L] > 0, diff(value[1L, ]) > 0)
  out <- data.frame(points = thr[jump], cdf = value[1L, jump])
  if (bounds) {
    out$lower <- value[2L, jump]
    out$upper <- value[3L, jump]
    out <- out[c("points", "lower", "cdf", "upper")]
  }
  out
}

#' @export
as.list.gpuiso_idr <- function(x, ...) lapply(seq_len(length(x)), function(i) x[[i]])

# The CDFs of the predictions (the argument called arg) at the values `at` (double; with
# left_open, just below them): a matrix with a row per prediction, or with paired = TRUE one
# value per prediction.
cdf_values <- function(pred, at, paired = FALSE, left_open = FALSE, arg = "predictions") {
  .Call(C_cdf_eval, pred, at, paired, left_open, arg)
}

#' @export
print.gpuiso_idr <- function(x, ...) {
  n <- length(x)
  cat(sprintf("IDR predictions: %d predictive distribution%s on %d thresholds\n", n,
              if (n == 1L) "" else "s", length(pred_part(x, "thresholds"))))
  if (n > 0L) {
    cat("First prediction (points where its CDF jumps):\n")
    print(utils::head(x[[1L]]))
    if (n > 1L) cat("...\n")
  }
  invisible(x)
}

#' Plot an IDR predictive CDF
#'
#' Draws the predictive CDF of one prediction as a step function (base graphics), with the CDFs
#' at the neighbouring fitted covariate values as bounds for out-of-sample predictions.
#'
#' @param x A `"gpuiso_idr"` object from [predict.gpuiso_idrfit()] or [idrbag()].
#' @param index Which prediction to draw.
#' @param bounds Draw the bounds (out-of-sample predictions only)?
#' @param col.cdf,col.bounds Colours of the CDF and of the bounds.
#' @param lty.cdf,lty.bounds Line types of the CDF and of the bounds.
#' @param xlab,ylab,main Axis labels and title.
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' aq <- na.omit(airquality[, c("Ozone", "Temp")])
#' fit <- idr(aq$Ozone, aq[, "Temp", drop = FALSE])
#' plot(predict(fit, data.frame(Temp = 85)))
#' @export
plot.gpuiso_idr <- function(x, index = 1, bounds = TRUE, col.cdf = "black", col.bounds = "blue",
                            lty.cdf = 1, lty.bounds = 2, xlab = "Threshold", ylab = "CDF",
                            main = "IDR predictive CDF", ...) {
  check_prediction_index(index, length(x), "index")
  one <- x[[index]]
  bounds <- check_flag(bounds, "bounds") && !is.null(one$lower)
  step <- function(v) stats::stepfun(one$points, c(0, v))
  graphics::plot(step(one$cdf), xlab = xlab, ylab = ylab, main = main, col = col.cdf, lty = lty.cdf,
                 do.points = FALSE, verticals = TRUE, ylim = c(0, 1), ...)
  if (bounds) {
    for (b in list(one$lower, one$upper)) {
      graphics::lines(step(b), col = col.bounds, lty = lty.bounds, do.points = FALSE, verticals = TRUE)
    }
  }
  invisible(x)
}

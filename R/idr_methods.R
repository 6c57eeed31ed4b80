# Methods for IDR fits ("gpuiso_idrfit": summary, plot) and predictions ("gpuiso_idr": c,
# as.data.frame). They reach fits through predict(), qpred() and the predictions' own methods.

#' Summary of an IDR fit
#'
#' The sizes of the fit and its predictive quantiles (10%, 50% and 90%) at five of its distinct
#' covariate values: the smallest, the quartiles and the largest, in the order of the distinct
#' values (with several covariates, their stored order, by fitted mean).
#'
#' @param object A `"gpuiso_idrfit"` from [idr()].
#' @param ... Unused.
#' @return An object of class `"summary.gpuiso_idrfit"`: a list with `nobs`, `weight` (the summed
#'   weight), `distinct` (the number of distinct covariate values), `thresholds` (their number),
#'   `range` (of the response), `blocks` (the blocks that hold the CDFs), `backend`, and
#'   `quantiles`, a data frame of the covariate values and the quantiles there.
#' @seealso [idr()], [plot.gpuiso_idrfit()].
#' @examples
#' aq <- na.omit(airquality[, c("Ozone", "Temp")])
#' summary(idr(aq$Ozone, aq[, "Temp", drop = FALSE]))
#' @export
summary.gpuiso_idrfit <- function(object, ...) {
  X <- object$X
  rows <- unique(stats::quantile(seq_len(nrow(X)), c(0, 0.25, 0.5, 0.75, 1), type = 1, names = FALSE))
  at <- X[rows, , drop = FALSE]
  q <- qpred(stats::predict(object, at), c(0.1, 0.5, 0.9))
  colnames(q) <- c("q10", "median", "q90")
  rownames(at) <- NULL
  structure(list(
    nobs = object$nobs, weight = sum(object$weights), distinct = nrow(X),
    thresholds = length(object$thresholds), range = range(object$thresholds),
    blocks = length(object$runs$value), backend = object$backend,
    quantiles = data.frame(at, q, check.names = FALSE)
  ), class = "summary.gpuiso_idrfit")
}

#' @export
print.summary.gpuiso_idrfit <- function(x, ...) {
  cat(sprintf("Isotonic distributional regression (gpuiso, %s)\n", x$backend))
  cat(sprintf("  %d observations (summed weight %s), %d distinct covariate values\n", x$nobs,
              format(x$weight, digits = 6L), x$distinct))
  cat(sprintf("  %d thresholds (distinct responses) in [%s, %s]; CDFs stored as %.0f blocks\n",
              x$thresholds, format(x$range[1L], digits = 6L), format(x$range[2L], digits = 6L), x$blocks))
  cat("Predictive quantiles at the smallest, quartile and largest distinct covariate values:\n")
  print(x$quantiles, digits = 4L, row.names = FALSE)
  invisible(x)
}

#' Plot an IDR fit
#'
#' Draws predictive quantiles of the fit against its covariate (base graphics): for a numeric
#' covariate at `n` points across its range and at its distinct values, for an ordered factor at
#' its levels that occur in the fit. Between two fitted covariate values the predictive CDF is
#' interpolated (see [predict.gpuiso_idrfit()]), so a quantile curve moves in steps between them.
#'
#' @param x A `"gpuiso_idrfit"` from [idr()] with one covariate.
#' @param quantiles The probabilities of the quantile curves, in (0, 1).
#' @param n The number of points across the range of a numeric covariate.
#' @param col Colours of the curves, recycled.
#' @param lty,lwd Line types and widths, recycled; by default the median is solid and wider,
#'   the other quantiles dashed.
#' @param legend Draw a legend of the quantile levels?
#' @param xlab,ylab,main Axis labels and title; `xlab` is by default the covariate's name.
#' @param ... Passed to [graphics::matplot()].
#' @return `x`, invisibly.
#' @seealso [idr()], [plot.gpuiso_idr()] for one predictive CDF.
#' @examples
#' aq <- na.omit(airquality[, c("Ozone", "Temp")])
#' plot(idr(aq$Ozone, aq[, "Temp", drop = FALSE]))
#' @export
plot.gpuiso_idrfit <- function(x, quantiles = c(0.1, 0.25, 0.5, 0.75, 0.9), n = 200,
                               col = "firebrick", lty = ifelse(quantiles == 0.5, 1, 2),
                               lwd = ifelse(quantiles == 0.5, 2, 1), legend = TRUE, xlab = NULL,
                               ylab = "Response", main = "IDR predictive quantiles", ...) {
  if (ncol(x$X) != 1L) stop_arg("x", "must be a fit with one covariate: the plot draws quantiles against it")
  if (!is.numeric(quantiles) || length(quantiles) == 0L || anyNA(quantiles) ||
      any(quantiles <= 0 | quantiles >= 1)) {
    stop_arg("quantiles", "must be probabilities strictly between 0 and 1")
  }
  if (!is.numeric(n) || length(n) != 1L || is.na(n) || n < 2) stop_arg("n", "must be a number of at least 2")
  legend <- check_flag(legend, "legend")
  name <- names(x$X)
  fitted_x <- x$X[[1L]]
  ordered <- is.factor(fitted_x)
  at <- if (ordered) fitted_x else sort(unique(c(seq(min(fitted_x), max(fitted_x), length.out = n), fitted_x)))
  q <- qpred(stats::predict(x, stats::setNames(data.frame(at), name)), quantiles)
  graphics::matplot(if (ordered) as.integer(at) else at, q, type = if (ordered) "b" else "s",
                    pch = 19, cex = 0.6, col = col, lty = lty, lwd = lwd,
                    xlab = if (is.null(xlab)) name else xlab, ylab = ylab, main = main,
                    xaxt = if (ordered) "n" else "s", ...)
  if (ordered) graphics::axis(1L, at = as.integer(at), labels = as.character(at))
  if (legend) {
    graphics::legend("topleft", legend = format(quantiles), col = col, lty = lty, lwd = lwd,
                     bty = "n", title = "quantile")
  }
  invisible(x)
}

#' Combine and tabulate IDR predictions
#'
#' `c()` joins predictions, from one fit or from several (or from [idrbag()]), into one
#' `"gpuiso_idr"` object, in the order given: `c(p, q)[[length(p) + 1]]` is `q[[1]]`. Predictions
#' of different fits are put on the union of their thresholds (each CDF is a step function, so
#' its values there are its own; no value changes). `as.data.frame()` lists the predictions in
#' long form: one row per point where a predictive CDF jumps.
#'
#' @param ... For `c()`, `"gpuiso_idr"` predictions; for `as.data.frame()`, unused.
#' @param x A `"gpuiso_idr"` object.
#' @param row.names,optional Unused; for compatibility with [as.data.frame()].
#' @return `c()`: a `"gpuiso_idr"` object. `as.data.frame()`: a data frame with columns
#'   `prediction` (the index of the prediction), `points` and `cdf` (as `x[[i]]`), and for
#'   out-of-sample predictions `lower` and `upper`.
#' @seealso [predict.gpuiso_idrfit()].
#' @examples
#' fit <- idr(c(3, 5, 3, 8), data.frame(x = c(7, 11, 13, 15)))
#' p <- c(predict(fit, data.frame(x = 9)), predict(fit, data.frame(x = 14)))
#' as.data.frame(p)
#' @name gpuiso_idr-combine
NULL

#' @rdname gpuiso_idr-combine
#' @export
c.gpuiso_idr <- function(...) {
  parts <- list(...)
  for (i in seq_along(parts)) {
    if (!inherits(parts[[i]], "gpuiso_idr")) {
      stop(sprintf("c(): argument %d is %s; only gpuiso IDR predictions (class \"gpuiso_idr\") can be combined",
                   i, describe(parts[[i]])), call. = FALSE)
    }
    check_predictions(parts[[i]], "...")
  }
  get <- function(name) lapply(parts, pred_part, name)
  runs <- get("runs")
  thresholds <- get("thresholds")
  pos <- get("pos")
  lambda <- unlist(get("lambda"))
  # each prediction keeps its bounds; in-sample ones beside others show their CDF as both bounds
  modes <- unlist(lapply(parts, bound_modes))
  if (any(modes != "none")) modes[modes == "none"] <- "one"
  bounds <- if (length(unique(modes)) > 1L) modes
            else switch(c(modes, "none")[1L], none = FALSE, one = TRUE, pair = "pair")
  same <- vapply(seq_along(parts), function(i) {
    identical(runs[[i]], runs[[1L]]) && identical(thresholds[[i]], thresholds[[1L]])
  }, TRUE)
  if (all(same)) return(new_idr_predictions(runs[[1L]], thresholds[[1L]], unlist(pos), lambda, bounds))
  grid <- sort(unique(unlist(thresholds)))
  npos <- vapply(runs, function(r) as.double(r$npos), 0)
  shift <- c(0, cumsum(npos))
  pieces <- lapply(seq_along(parts), function(i) {
    r <- runs[[i]]
    k <- findInterval(grid, thresholds[[i]]) # 0: below the fit's first threshold, where its CDFs are 0
    count <- ifelse(k > 0L, r$offset[k + 1L] - r$offset[pmax(k, 1L)], 1)
    idx <- sequence(count, ifelse(k > 0L, r$offset[pmax(k, 1L)] + 1, 1))
    below <- rep(k == 0L, count)
    list(at = rep(seq_along(grid), count),
         start = ifelse(below, 0L, r$start[idx]) + as.integer(shift[i]),
         value = ifelse(below, 0, r$value[idx]))
  })
  at <- unlist(lapply(pieces, `[[`, "at"))
  o <- order(at, method = "radix") # stable: within a threshold, the parts in order
  merged <- list(offset = c(0, cumsum(tabulate(at, length(grid)))),
                 start = unlist(lapply(pieces, `[[`, "start"))[o],
                 value = unlist(lapply(pieces, `[[`, "value"))[o], npos = sum(npos))
  pos <- unlist(lapply(seq_along(parts), function(i) pos[[i]] + as.integer(shift[i])))
  check_predictions(new_idr_predictions(merged, grid, pos, lambda, bounds), "...")
}

#' @rdname gpuiso_idr-combine
#' @export
as.data.frame.gpuiso_idr <- function(x, row.names = NULL, optional = FALSE, ...) {
  parts <- as.list(x)
  columns <- if (length(parts)) names(parts[[1L]]) else c("points", "cdf")
  size <- vapply(parts, nrow, 0L)
  values <- lapply(stats::setNames(columns, columns), function(col) as.double(unlist(lapply(parts, `[[`, col))))
  data.frame(prediction = rep(seq_along(parts), size), values)
}

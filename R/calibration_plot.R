#' Plot the curves of a calibrator
#'
#' Draws calibrated probability against score (base graphics): the pooled curve of all scores and
#' the curves of several groups on one plot, with a legend. When the scores lie in `[0, 1]`, the
#' diagonal (a score that is already a calibrated probability) is drawn dotted.
#'
#' @param x A `"gpuiso_calibrator"` from [calibrate_isotonic()].
#' @param groups The groups whose curves to draw (ids as in training). `NULL` draws the
#'   `max_groups` largest groups by weight; `character(0)` none.
#' @param max_groups How many groups to draw when `groups` is `NULL`.
#' @param pooled Whether to draw the pooled curve (in black).
#' @param type `"step"` or `"linear"`, as in [predict.gpuiso_calibrator()].
#' @param col Colours of the groups' curves; by default an HCL palette.
#' @param legend Position of the legend (see [graphics::legend()]), or `NULL` for none.
#' @param xlab,ylab,main Axis labels and title.
#' @param ... Passed to [graphics::plot()] (for example `xlim`, `log = "x"`).
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' g <- sample(c("a", "b", "c"), 3000, replace = TRUE)
#' s <- runif(3000)
#' y <- rbinom(3000, 1, s * c(a = 0.2, b = 0.5, c = 0.8)[g])
#' plot(calibrate_isotonic(s, y, group = g))
#' @export
plot.gpuiso_calibrator <- function(x, groups = NULL, max_groups = 6, pooled = TRUE,
                                   type = c("step", "linear"), col = NULL, legend = "topleft",
                                   xlab = "score", ylab = "calibrated probability",
                                   main = "Isotonic calibration", ...) {
  type <- check_choice(type, c("step", "linear"), "type")
  pooled <- check_flag(pooled, "pooled")
  if (!is.numeric(max_groups) || length(max_groups) != 1L || is.na(max_groups) || max_groups < 0) {
    stop_arg("max_groups", "must be a single non-negative number")
  }
  if (is.null(groups) && !is.null(x$groups)) {
    weight <- rowsum(x$curves$weight, rep(seq_along(x$groups), diff(x$first)))
    groups <- x$groups[utils::head(order(weight, decreasing = TRUE), max_groups)]
  }
  code <- match(groups, x$groups)
  if (anyNA(code)) stop_arg("groups", sprintf("has group(s) not in the calibrator: %s", quoted_list(groups[is.na(code)])))
  if (is.null(col)) col <- grDevices::hcl.colors(max(length(code), 1L), "Dark 3")
  col <- rep_len(col, length(code))
  curves <- lapply(c(if (pooled) 0L, code), function(k) calibrator_curve(x, k))
  if (length(curves) == 0L) stop_arg("groups", "selects no curve to draw (and `pooled` is FALSE)")
  all <- do.call(rbind, curves)
  graphics::plot(range(all$lower, all$upper), range(0, all$prob), type = "n", xlab = xlab,
                 ylab = ylab, main = main, ...)
  if (min(all$lower) >= 0 && max(all$upper) <= 1) graphics::abline(0, 1, lty = 3, col = "grey50")
  draw <- function(curve, col, lwd) {
    if (curve$lower[1L] == curve$upper[nrow(curve)]) { # one score: a point, not an empty line
      graphics::points(curve$lower, curve$prob, col = col, pch = 19)
    } else if (type == "step") {
      last <- nrow(curve)
      graphics::lines(c(curve$lower, curve$upper[last]), c(curve$prob, curve$prob[last]),
                      type = "s", col = col, lwd = lwd)
    } else {
      graphics::lines(rbind(curve$lower, curve$upper), rbind(curve$prob, curve$prob), col = col,
                      lwd = lwd)
    }
  }
  for (j in seq_along(code)) draw(curves[[j + pooled]], col[j], 1.5)
  if (pooled) draw(curves[[1L]], "black", 2.5)
  if (!is.null(legend)) {
    graphics::legend(legend, legend = c(if (pooled) "all (pooled)", as.character(groups)),
                     col = c(if (pooled) "black", col), lwd = c(if (pooled) 2.5, rep(1.5, length(code))),
                     bty = "n", cex = 0.8)
  }
  invisible(x)
}

#' Reliability diagram
#'
#' Plots, per bin of predicted probability, the observed rate of positive labels against the mean
#' prediction (base graphics), with the diagonal of perfect calibration. Several sets of
#' predictions of the same labels (say, before and after calibration) go on one plot; the legend
#' gives each one's expected calibration error.
#'
#' @inheritParams calibration_error
#' @param prob A numeric vector of predicted probabilities, or a named list of them (one point set
#'   per element).
#' @param col,pch Colours and point symbols of the sets.
#' @param legend Position of the legend (see [graphics::legend()]), or `NULL` for none.
#' @param xlab,ylab,main Axis labels and title.
#' @param ... Passed to [graphics::plot()] (for example `xlim` and `ylim`). By default both axes
#'   run from 0 to the largest mean prediction or rate, so that rare events fill the plot.
#' @return The bins of each set (a list of [calibration_bins()] data frames), invisibly.
#' @examples
#' set.seed(1)
#' p <- runif(5000)
#' y <- rbinom(5000, 1, p^2)
#' cal <- calibrate_isotonic(p, y)
#' reliability_diagram(list(raw = p, calibrated = predict(cal, p)), y, binning = "mass")
#' @export
reliability_diagram <- function(prob, label, bins = 10, weights = NULL,
                                binning = c("width", "mass"), col = NULL, pch = 19,
                                legend = "topleft", xlab = "mean predicted probability",
                                ylab = "observed rate", main = "Reliability diagram", ...) {
  binning <- check_choice(binning, c("width", "mass"), "binning")
  sets <- if (is.list(prob)) prob else list(prob)
  if (length(sets) == 0L) stop_arg("prob", "must hold at least one set of probabilities")
  unnamed <- if (is.null(names(sets))) rep(TRUE, length(sets)) else names(sets) == ""
  names(sets)[unnamed] <- if (length(sets) == 1L) "prediction" else paste("set", which(unnamed))
  table <- lapply(sets, scaled_bins, label = label, bins = bins, weights = weights, binning = binning)
  ece <- vapply(table, bins_error, 0)
  if (is.null(col)) col <- grDevices::hcl.colors(max(length(sets), 2L), "Dark 3")
  col <- rep_len(col, length(sets))
  pch <- rep_len(pch, length(sets))
  lim <- c(0, max(vapply(table, function(b) max(b$mean_prob, b$rate), 0)))
  graphics::plot(lim, lim, type = "n", xlab = xlab, ylab = ylab, main = main, ...)
  graphics::abline(0, 1, lty = 3, col = "grey50")
  for (j in seq_along(table)) {
    graphics::lines(table[[j]]$mean_prob, table[[j]]$rate, type = "b", col = col[j], pch = pch[j])
  }
  if (!is.null(legend)) {
    graphics::legend(legend, legend = sprintf("%s (ECE %.4f)", names(sets), ece), col = col,
                     pch = pch, lty = 1, bty = "n", cex = 0.8)
  }
  invisible(lapply(table, unscale_bins))
}

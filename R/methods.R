# Methods for "gpuiso_fit" objects, and the check of the `...` of predict methods.

# An error naming the arguments that reached the `...` of a method that uses none: a misspelt or
# misplaced argument (predict(fit, newdata = ...) where the method takes `data`) would otherwise
# be dropped without a word. hint, if given, ends the message.
check_no_dots <- function(..., hint = NULL) {
  n <- ...length()
  if (n == 0L) return(invisible())
  given <- names(substitute(list(...)))[-1L]
  if (is.null(given)) given <- character(n)
  shown <- ifelse(nzchar(given), sprintf("`%s`", given), "an unnamed argument")
  caller <- sys.parent()
  own <- setdiff(names(formals(sys.function(caller))), "...")
  # the generic's name when the method was dispatched to, else the name it was called by
  env <- parent.frame()
  fun <- if (exists(".Generic", envir = env, inherits = FALSE)) get(".Generic", envir = env) else
    deparse(sys.call(caller)[[1L]])
  stop(sprintf("%s(): unknown argument%s %s; it takes %s%s", fun,
               if (n > 1L) "s" else "", paste(shown, collapse = ", "), paste0("`", own, "`", collapse = ", "),
               if (is.null(hint)) "" else paste0("; ", hint)), call. = FALSE)
}

#' The blocks of an isotonic fit
#'
#' One row per block of the fit: the first and last knot (distinct `x`) of the block, its level,
#' its summed weight, the index of its first knot and its number of knots. The knots are in the
#' type of `x`, as [knots()] gives them (a `Date` stays a `Date`).
#'
#' @param object A `"gpuiso_fit"` from [isoreg_gpu()].
#' @return A data frame with columns `x_start`, `x_end`, `level`, `weight`, `start`, `size`.
#' @examples
#' isoreg_blocks(isoreg_gpu(c(8, 4, 8, 2, 2, 0, 8)))
#' @export
isoreg_blocks <- function(object) {
  if (!inherits(object, "gpuiso_fit")) {
    stop_arg("object", sprintf("must be a \"gpuiso_fit\" from isoreg_gpu(), not %s", describe(object)))
  }
  start <- object$block_start
  end <- c(start[-1L] - 1L, length(object$knots))
  size <- end - start + 1L
  weight <- if (is.null(object$knot_weight)) {
    as.double(size)
  } else {
    as.vector(rowsum(object$knot_weight, rep.int(seq_along(start), size), reorder = FALSE))
  }
  data.frame(x_start = x_restore(object$knots[start], object$x_type),
             x_end = x_restore(object$knots[end], object$x_type),
             level = object$level[start], weight = weight, start = start, size = size)
}

#' @export
print.gpuiso_fit <- function(x, ...) {
  cat(sprintf("Isotonic regression (%s), %s\n",
              if (x$increasing) "non-decreasing" else "non-increasing", fit_backend(x)))
  cat(sprintf("n = %.0f, distinct x = %.0f, blocks = %.0f\n",
              x$n, length(x$knots), length(x$block_start)))
  shown <- utils::head(x$fitted, 8L)
  cat("fitted:", format(shown, digits = 4L), if (x$n > length(shown)) "...", "\n")
  invisible(x)
}

fit_backend <- function(x) sprintf("%s (%s)", x$backend, x$method)

#' Summary of an isotonic fit
#'
#' @param object A `"gpuiso_fit"` from [isoreg_gpu()].
#' @param ... Unused.
#' @return An object of class `"summary.gpuiso_fit"`: sizes, the weighted residual sum of
#'   squares, the range of the fit, and the blocks' sizes.
#' @examples
#' summary(isoreg_gpu(dist ~ speed, cars))
#' @export
summary.gpuiso_fit <- function(object, ...) {
  sizes <- diff(c(object$block_start, length(object$knots) + 1L))
  structure(list(
    n = object$n, knots = length(object$knots), blocks = length(object$block_start),
    increasing = object$increasing, rss = deviance.gpuiso_fit(object),
    range = span_of(object$fitted),
    block_size = summary(sizes), backend = fit_backend(object), call = object$call
  ), class = "summary.gpuiso_fit")
}

#' @export
print.summary.gpuiso_fit <- function(x, ...) {
  cat("Call:\n")
  print(x$call)
  cat(sprintf("\n%s isotonic fit on %s\n",
              if (x$increasing) "Non-decreasing" else "Non-increasing", x$backend))
  cat(sprintf("n = %.0f, distinct x = %.0f, blocks = %.0f\n", x$n, x$knots, x$blocks))
  cat(sprintf("weighted residual sum of squares: %s\n", format(x$rss, digits = 6L)))
  cat(sprintf("fitted range: [%s, %s]\n", format(x$range[1], digits = 6L),
              format(x$range[2], digits = 6L)))
  cat("knots per block:\n")
  print(x$block_size)
  invisible(x)
}

#' Predictions from an isotonic fit
#'
#' Evaluates the fitted monotone function at new `x`: as the step function of the fit
#' (`type = "step"`, right-continuous: the level of the last knot at or below the new `x`), or by
#' linear interpolation between the fitted points (`type = "linear"`).
#'
#' @param object A `"gpuiso_fit"` from [isoreg_gpu()].
#' @param newdata New `x`: a numeric vector, or for an `x` of another type (a `Date`, date-time,
#'   `difftime` or ordered factor) a vector of that type (an ordered factor with the fit's levels,
#'   or those levels as strings); for a formula fit also a data frame holding the covariate's
#'   variables. When missing, the fitted values, as [fitted()] gives them (with `NA` at the rows
#'   that `na.action = na.exclude` left out).
#' @param type `"step"` or `"linear"`.
#' @param outside What to do with `newdata` outside the range of the fitted `x`: `"clip"` (the
#'   level at the nearest end), `"na"` (`NA`) or `"error"`.
#' @param ... Nothing: an argument that is not one of the above is an error.
#' @return A numeric vector the length of `newdata`; `NA` where `newdata` is `NA`.
#' @examples
#' fit <- isoreg_gpu(0:4, c(1, 2, 7, 1, 2))
#' predict(fit, c(-1, 0.5, 2, 9), type = "linear")
#' predict(fit, c(-1, 0.5, 2, 9), outside = "na")
#' @export
predict.gpuiso_fit <- function(object, newdata, type = c("step", "linear"),
                               outside = c("clip", "na", "error"), ...) {
  check_no_dots(...)
  if (missing(newdata)) return(fitted.gpuiso_fit(object))
  newdata <- fit_newdata(object, newdata)
  # arguments left at their defaults need no check (as in isoreg_gpu), once evaluated
  list(type, outside)
  type <- if (missing(type)) type[1L] else check_choice(type, c("step", "linear"), "type")
  outside <- if (missing(outside)) {
    outside[1L]
  } else {
    check_choice(outside, c("clip", "na", "error"), "outside")
  }
  if (!is.numeric(newdata) || length(dim(newdata)) > 1L) {
    stop_arg("newdata", sprintf("must be a numeric vector, not %s", describe(newdata)))
  }
  knots <- object$knots
  level <- object$level
  if (!is.numeric(knots) || !is.numeric(level) || length(knots) == 0L ||
      length(knots) != length(level)) {
    stop_arg("object", "is not a valid gpuiso fit: its knots and levels do not match")
  }
  nd <- if (is.double(newdata)) newdata else as.double(newdata)
  res <- .Call(C_predict_fit, as.double(knots), as.double(level), nd, type == "linear",
               outside == "na")
  if (outside == "error" && res[[2]] > 0) {
    stop_arg("newdata", sprintf("has %d value(s) outside the fitted range [%g, %g]",
                                res[[2]], knots[1L], knots[length(knots)]))
  }
  res[[1]]
}

# New x of predict(): the covariate of a data frame for a formula fit; a Date, date-time,
# difftime or ordered factor on the fit's numeric scale.
fit_newdata <- function(object, newdata) {
  if (is.data.frame(newdata)) {
    if (is.null(object$terms)) {
      stop_arg("newdata", "is a data frame, but the fit was not made with a formula: give the new x as a vector")
    }
    newdata <- tryCatch(
      stats::model.frame(stats::delete.response(object$terms), newdata, na.action = stats::na.pass)[[1L]],
      error = function(e) stop_arg("newdata", sprintf("must hold the covariate `%s` of the fit: %s",
                                                      object$vars[["x"]], conditionMessage(e))))
  }
  x_new(newdata, object$x_type)
}

#' Fitted values, residuals and other parts of an isotonic fit
#'
#' The methods of the generics of \pkg{stats} for a `"gpuiso_fit"`. [fitted()] and [residuals()]
#' have the names of `y` (for a formula fit, the row names of the data) and, for a formula fit with
#' `na.action = na.exclude`, `NA` at the rows left out. [knots()] gives the distinct `x` of the fit
#' (where its step function may jump), in the type of `x` (a `Date` stays a `Date`, an ordered
#' factor gives the levels that occur, as an ordered factor). [nobs()] counts the observations of
#' positive weight, as for [stats::lm()] fits. [deviance()] is the weighted residual sum of
#' squares, `sum(w * (y - fitted)^2)`, that the fit minimises among monotone fits (within
#' `y_min` and `y_max` when they are given).
#'
#' @param object,Fn A `"gpuiso_fit"` from [isoreg_gpu()].
#' @param ... Unused.
#' @return `fitted()` and `residuals()`: numeric vectors in the order of the data. `knots()`: the
#'   distinct `x`, increasing. `nobs()`: a count. `deviance()`: a number.
#' @seealso [isoreg_gpu()], [lines.gpuiso_fit()], [predict.gpuiso_fit()].
#' @examples
#' fit <- isoreg_gpu(dist ~ speed, data = cars)
#' head(residuals(fit))
#' knots(fit)
#' c(nobs(fit), deviance(fit))
#' @name gpuiso_fit-methods
NULL

#' @rdname gpuiso_fit-methods
#' @export
fitted.gpuiso_fit <- function(object, ...) stats::napredict(object$na.action, object$fitted)

#' @rdname gpuiso_fit-methods
#' @export
residuals.gpuiso_fit <- function(object, ...) stats::naresid(object$na.action, object$y - object$fitted)

#' @rdname gpuiso_fit-methods
#' @importFrom stats knots
#' @export
knots.gpuiso_fit <- function(Fn, ...) x_restore(Fn$knots, Fn$x_type)

#' @rdname gpuiso_fit-methods
#' @importFrom stats nobs
#' @export
nobs.gpuiso_fit <- function(object, ...) if (is.null(object$w)) object$n else sum(object$w != 0)

#' @rdname gpuiso_fit-methods
#' @importFrom stats deviance
#' @export
deviance.gpuiso_fit <- function(object, ...) {
  r <- object$y - object$fitted
  sum(if (is.null(object$w)) r^2 else object$w * r^2)
}

#' The fit as a step function
#'
#' @param x A `"gpuiso_fit"` from [isoreg_gpu()].
#' @param ... Unused.
#' @return A right-continuous [stats::stepfun()] that jumps at the first knot of each block.
#' @examples
#' f <- stats::as.stepfun(isoreg_gpu(c(1, 3, 2, 4, 3, 5)))
#' f(c(0, 2.5, 10))
#' @importFrom stats as.stepfun
#' @export
as.stepfun.gpuiso_fit <- function(x, ...) {
  start <- x$block_start
  if (length(start) == 1L) { # stepfun() needs a jump: a constant with a jump of size 0
    return(stats::stepfun(x$knots[1L], rep(x$level[1L], 2L)))
  }
  stats::stepfun(x$knots[start][-1L], x$level[start])
}

#' Plot an isotonic fit
#'
#' `plot()` draws the data and the fitted step function (base graphics); `lines()` adds the
#' fitted step function to a plot: a horizontal segment from each knot to the next, at its level
#' (the right-continuous step function of `predict(type = "step")`), not a line through the data.
#' An `x` that is a `Date`, date-time or `difftime` is drawn on an axis of its type; an ordered
#' factor at its level codes 1, 2, ..., labelled with the levels.
#'
#' @param x A `"gpuiso_fit"` from [isoreg_gpu()].
#' @param col.points,col.fit Colours of the data and of the fit.
#' @param xlab,ylab,main Axis labels and title; by default the names of the variables of a formula
#'   fit, `"x"` and `"y"` otherwise.
#' @param col,lwd,type Colour, width and type of the line (`type = "s"`: steps).
#' @param ... Passed to [graphics::plot()] or [graphics::lines()].
#' @return `x`, invisibly.
#' @examples
#' fit <- isoreg_gpu(dist ~ speed, cars)
#' plot(fit)
#' plot(dist ~ speed, cars)
#' lines(fit, col = "blue")
#' @export
plot.gpuiso_fit <- function(x, col.points = "grey40", col.fit = "firebrick", xlab = NULL, ylab = NULL,
                            main = "Isotonic regression", ...) {
  xs <- if (is.null(x$x)) seq_len(x$n) else x$x
  vars <- if (is.null(x$vars)) c(x = "x", y = "y") else x$vars
  if (is.null(xlab)) xlab <- vars[["x"]]
  if (is.null(ylab)) ylab <- vars[["y"]]
  ordered <- identical(x$x_type$kind, "ordered")
  graphics::plot(if (ordered) xs else x_restore(xs, x$x_type), x$y, col = col.points, xlab = xlab,
                 ylab = ylab, main = main, xaxt = if (ordered) "n" else "s", ...)
  if (ordered) graphics::axis(1L, at = seq_along(x$x_type$levels), labels = x$x_type$levels)
  lines.gpuiso_fit(x, col = col.fit, lwd = 2)
  invisible(x)
}

#' @rdname plot.gpuiso_fit
#' @importFrom graphics lines
#' @export
lines.gpuiso_fit <- function(x, col = "firebrick", lwd = 1, type = "s", ...) {
  at <- if (identical(x$x_type$kind, "ordered")) x$knots else x_restore(x$knots, x$x_type)
  graphics::lines(at, x$level, col = col, lwd = lwd, type = type, ...)
  invisible(x)
}

#' Isotonic distributional regression (IDR)
#'
#' Estimates the conditional distribution of `y` given one covariate `x` under the assumption that
#' `y` tends to be larger when `x` is larger (first-order stochastic dominance): for every
#' threshold `t` among the distinct values of `y`, the conditional CDF \eqn{F(t \mid x)}{F(t | x)} is the
#' non-increasing (antitonic) weighted least-squares fit in `x` of the indicators
#' \eqn{1\{y \le t\}}{1{y <= t}} (Henzi, Ziegel and Gneiting, 2021). The interface follows the package
#' isodistrreg for one covariate, so that a study can switch by changing the `library()` line.
#'
#' On the CPU the fit sweeps the thresholds in increasing order and updates the previous
#' antitonic fit, re-pooling only the blocks that hold the newly counted observations (Henzi,
#' Moesching and Duembgen, 2022); slices of thresholds run on the threads of [gpuiso_threads()].
#' On a GPU (`device = "gpu"`) the indicator rows of a slice of thresholds are made on the device
#' from the observations, fitted there as one batch of antitonic rows by the CUDA solver, and only
#' their blocks are copied back. Both results are exact, and equal up to rounding. The CDFs are stored compactly: per threshold only the blocks of its antitonic fit (a
#' start and a value each), which is a few dozen per threshold for 10^5 observations with a
#' continuous response, instead of a dense matrix of (distinct x) x (thresholds) values. Use
#' `dense = TRUE` or [as.matrix()] for the dense matrix of small fits.
#'
#' Ties in `x` are pooled; observations of weight zero do not enter the fit (but get
#' in-sample predictions). Only one covariate (a total order) is supported.
#'
#' @param y Numeric vector of responses, finite.
#' @param X The covariate: a data frame with one numeric or ordered-factor column, or a numeric
#'   vector (or one-column matrix).
#' @param weights Optional non-negative weights, one per observation; only their ratios matter
#'   (they are scaled by a power of two, so weights near the largest double or subnormal ones fit
#'   as the same weights at scale 1).
#' @param groups,pars Accepted for compatibility with isodistrreg; they only matter with several
#'   covariates, which gpuiso does not support, and must be left `NULL`.
#' @param orders Accepted for compatibility with isodistrreg: with one covariate every order
#'   (`"comp"`, `"sd"`, `"icx"`) is the usual order of the numbers.
#' @param stoch The stochastic order: only `"sd"` (first-order stochastic dominance).
#' @param progress Accepted for compatibility with isodistrreg; the fit reports no progress
#'   (it takes seconds even for 10^5 observations).
#' @param dense If `TRUE`, also store the fitted CDFs as a dense matrix `cdf` (distinct x by
#'   thresholds), as isodistrreg does.
#' @param device `"auto"` (the CPU), `"cpu"` or `"gpu"` (a CUDA device; an error naming the
#'   reason when the package was built without CUDA or no device is found). `"auto"` stays on the
#'   CPU until the size from which the GPU is faster has been measured.
#' @return An object of class `"gpuiso_idrfit"` (gpuiso's own class, so that isodistrreg's
#'   `"idrfit"` objects and their methods are left alone when both packages are loaded): a list
#'   with `X` (a data frame of the distinct covariate values, increasing), `thresholds` (the
#'   distinct `y`, increasing), `weights` (the summed weight of each distinct `x`), `runs` (the
#'   compact CDFs), `nobs`, `x` (the covariate of each observation, for in-sample predictions),
#'   `covariate` (its name, `NULL` when `X` had none, and its levels), `backend` (`"cpu"` or
#'   `"gpu"`: where the fit ran) and, with `dense = TRUE`, `cdf`.
#' @references
#' Henzi, A., Ziegel, J. F. and Gneiting, T. (2021). Isotonic distributional regression. Journal
#' of the Royal Statistical Society: Series B, 83(5), 963-993.
#'
#' Henzi, A., Moesching, A. and Duembgen, L. (2022). Accelerating the pool-adjacent-violators
#' algorithm for isotonic distributional regression. Methodology and Computing in Applied
#' Probability, 24, 2633-2645.
#' @seealso [predict.gpuiso_idrfit()] for predictive distributions, [cdf()], [qpred()], [crps()],
#'   [pit()], [bscore()], [qscore()] to use and score them, [idrbag()] for subagging.
#' @examples
#' aq <- na.omit(airquality[, c("Ozone", "Temp")])
#' fit <- idr(aq$Ozone, aq[, "Temp", drop = FALSE])
#' fit
#' pred <- predict(fit, data.frame(Temp = c(60, 75, 90)))
#' qpred(pred, c(0.1, 0.5, 0.9))
#' mean(crps(predict(fit), aq$Ozone))
#' @export
idr <- function(y, X, weights = NULL, groups = NULL, orders = c("comp" = 1), stoch = "sd",
                pars = NULL, progress = FALSE, dense = FALSE, device = c("auto", "cpu", "gpu")) {
  check_idr_options(groups, orders, stoch, pars)
  dense <- check_flag(dense, "dense")
  backend <- idr_device(device)
  y <- check_finite(check_vector(y, "y"), "y")
  cov <- idr_covariate(X, length(y))
  w <- if (!is.null(weights)) check_weights(weights, length(y))
  w_fit <- if (!is.null(w)) scale_weights(w)
  keep <- if (is.null(w)) rep(TRUE, length(y)) else w_fit > 0
  xk <- cov$value[keep]
  yk <- y[keep]
  xs <- sort(unique(xk))
  thresholds <- sort(unique(yk))
  pos <- match(xk, xs) - 1L
  runs <- .Call(C_idr_fit, pos, match(yk, thresholds) - 1L, if (is.null(w)) NULL else w_fit[keep],
                length(xs), length(thresholds), backend == "gpu")
  X_out <- stats::setNames(data.frame(cov$restore(xs)), covariate_label(cov))
  fit <- structure(list(
    X = X_out, thresholds = thresholds,
    weights = if (is.null(w)) tabulate(pos + 1L, length(xs)) else
      as.vector(rowsum(w[keep], pos, reorder = TRUE)),
    runs = runs, nobs = length(y), x = cov$value,
    covariate = cov[c("name", "levels")], backend = backend
  ), class = "gpuiso_idrfit")
  if (dense) fit$cdf <- as.matrix(fit)
  fit
}

# The backend of an IDR fit: "auto" is the CPU (the crossover of IDR on the GPU has not been
# measured; gpuiso.gpu_min_n is the solver's), "gpu" a CUDA device or an error saying why not.
idr_device <- function(device) {
  device <- check_choice(device, c("auto", "cpu", "gpu"), "device")
  if (device == "auto") "cpu" else resolve_device(device, 0)
}

check_idr_options <- function(groups, orders, stoch, pars) {
  if (!is.null(groups) || !is.null(pars)) {
    stop_arg(if (is.null(groups)) "pars" else "groups",
             "only applies to several covariates (partial orders), which gpuiso does not support; leave it NULL")
  }
  if (!is.numeric(orders) || is.null(names(orders)) ||
      !all(names(orders) %in% c("comp", "sd", "icx"))) {
    stop_arg("orders", "must be a named vector with names in \"comp\", \"sd\", \"icx\"")
  }
  if (!identical(stoch, "sd")) {
    stop_arg("stoch", "must be \"sd\" (first-order stochastic dominance); other orders are not supported")
  }
}

check_finite <- function(v, name) {
  bad <- which(!is.finite(v))
  if (length(bad)) {
    stop_arg(name, sprintf("must be finite, but has %s at element %d",
                           format(v[bad[1L]]), bad[1L]))
  }
  v
}


# The covariate as numbers (ordered factors as their codes), with what is needed to map new data
# and to show the distinct values: list(value, name, levels, restore). name is the column name of
# a data frame or matrix, NULL for a vector (new data are then matched by position only).
idr_covariate <- function(X, n, name = "X") {
  col_name <- NULL
  if (is.data.frame(X)) {
    if (ncol(X) != 1L) {
      stop_arg(name, sprintf(paste0("must have one covariate, not %d: IDR with several covariates ",
                                    "needs partial orders, which gpuiso does not support"), ncol(X)))
    }
    col_name <- names(X)[1L]
    X <- X[[1L]]
  } else if (is.matrix(X)) {
    if (ncol(X) != 1L) {
      stop_arg(name, sprintf(paste0("must have one column, not %d: IDR with several covariates ",
                                    "needs partial orders, which gpuiso does not support"), ncol(X)))
    }
    col_name <- colnames(X)[1L]
    X <- X[, 1L]
  }
  levels <- NULL
  if (is.ordered(X)) {
    levels <- levels(X)
    value <- as.double(as.integer(X))
  } else if (is.factor(X) || !is.numeric(X)) {
    stop_arg(name, sprintf("must be numeric or an ordered factor, not %s", describe(X)))
  } else {
    value <- as.double(X)
  }
  if (length(value) != n) {
    stop_arg(name, sprintf("must have one row per element of `y` (%d), not %d", n, length(value)))
  }
  if (anyNA(value)) stop_arg(name, sprintf("must not have NA, but has one at row %d", which(is.na(value))[1L]))
  check_finite(value, name)
  restore <- if (is.null(levels)) identity else function(v) factor(levels[v], levels, ordered = TRUE)
  list(value = value, name = col_name, levels = levels, restore = restore)
}

# The covariate's name to show: "x" for one that came without a name.
covariate_label <- function(covariate) if (is.null(covariate$name)) "x" else covariate$name

#' @export
print.gpuiso_idrfit <- function(x, ...) {
  runs <- x$runs
  cat("Isotonic distributional regression (gpuiso)\n")
  cat(sprintf("  %d observations, %d distinct values of %s, %d thresholds\n",
              x$nobs, nrow(x$X), covariate_label(x$covariate), length(x$thresholds)))
  cat(sprintf("  CDFs stored as %.0f blocks (%.1f per threshold)\n",
              length(runs$value), length(runs$value) / length(x$thresholds)))
  invisible(x)
}

#' Dense matrix of fitted IDR CDFs
#'
#' @param x A `"gpuiso_idrfit"` object from [idr()].
#' @param ... Not used.
#' @return A matrix with one row per distinct covariate value and one column per threshold:
#'   the fitted CDFs at the thresholds (the layout of isodistrreg's `fit$cdf`).
#' @examples
#' fit <- idr(c(1, 3, 2, 4), data.frame(x = 1:4))
#' as.matrix(fit)
#' @export
as.matrix.gpuiso_idrfit <- function(x, ...) {
  nx <- nrow(x$X)
  m <- length(x$thresholds)
  if (as.double(nx) * m > 2^31 - 1) {
    stop_arg("x", sprintf("is too large for a dense matrix (%d x %d); use the predictions instead", nx, m))
  }
  at_fit <- new_idr_predictions(x$runs, x$thresholds, seq_len(nx) - 1L, double(nx))
  out <- cdf_values(at_fit, x$thresholds, arg = "x")
  dimnames(out) <- list(NULL, format(x$thresholds, digits = 6))
  out
}

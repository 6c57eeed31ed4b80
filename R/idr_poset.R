# IDR with several covariates: the partial order of the covariate vectors, the fit on it and the
# predictions at new vectors (see the details of ?idr and ?predict.gpuiso_idrfit).

# The number of covariates in X: columns of a data frame or matrix, 1 for a vector.
covariate_count <- function(X) if (is.data.frame(X) || is.matrix(X)) ncol(X) else 1L

# The covariates X (the argument called arg) as the numbers the order compares: a matrix whose
# rows are compared componentwise. Groups with "sd" have their members sorted, with "icx" the
# cumulative sums of their members sorted decreasingly (isodistrreg's prepareData); ordered
# factors are their codes. spec (from a fit) gives the columns, groups, orders and levels that new
# data must match; without it they are taken from X, groups and orders. New data (with spec) may
# be infinite, as in isodistrreg: the order compares infinities as any other values.
order_values <- function(X, n, groups = NULL, orders = NULL, spec = NULL, arg = "X") {
  new_data <- !is.null(spec)
  if (is.matrix(X)) {
    if (!is.numeric(X)) stop_arg(arg, sprintf("must be numeric, not %s", describe(X)))
    # a matrix without column names has the columns x1, x2, ... (new data are then matched by
    # position)
    if (is.null(colnames(X))) colnames(X) <- paste0("x", seq_len(ncol(X)))
    X <- as.data.frame(X)
  }
  if (!is.data.frame(X)) stop_arg(arg, "must be a data frame or a matrix of covariates")
  if (!is.null(spec)) {
    missing <- setdiff(spec$columns, names(X))
    if (length(missing)) {
      stop_arg(arg, sprintf("must have the columns of the fit's covariates (%s), but lacks %s",
                            quoted_list(spec$columns), quoted_list(missing)))
    }
    X <- X[spec$columns]
  } else {
    if (anyDuplicated(names(X)) || any(names(X) == "")) {
      stop_arg(arg, "must have distinct, non-empty column names")
    }
    spec <- list(columns = names(X), groups = check_groups(groups, orders, names(X)),
                 orders = orders,
                 levels = lapply(X, function(v) if (is.ordered(v)) levels(v)))
  }
  if (nrow(X) != n) {
    stop_arg(arg, sprintf("must have one row per element of `y` (%d), not %d", n, nrow(X)))
  }
  value <- matrix(0, nrow(X), ncol(X))
  for (j in seq_along(X)) {
    v <- X[[j]]
    lev <- spec$levels[[j]]
    col <- spec$columns[j]
    if (!is.null(lev)) {
      if (!is.ordered(v) || !identical(levels(v), lev)) {
        stop_arg(arg, sprintf("must have in column \"%s\" an ordered factor with the levels of the fit", col))
      }
      v <- as.double(as.integer(v))
    } else if (is.factor(v) || !is.numeric(v)) {
      stop_arg(arg, sprintf("must have numeric or ordered-factor columns, but column \"%s\" is %s",
                            col, describe(v)))
    }
    if (anyNA(v)) stop_arg(arg, sprintf("must not have NA, but column \"%s\" has one at row %d",
                                        col, which(is.na(v))[1L]))
    v <- as.double(v)
    bad <- if (new_data) 0 else first_bad(v)
    if (bad > 0) stop_arg(arg, sprintf("must be finite, but column \"%s\" has %s at row %.0f", col, format(v[bad]), bad))
    value[, j] <- v
  }
  for (g in unique(spec$groups)) {
    kind <- names(spec$orders)[spec$orders == g]
    members <- which(spec$groups == g)
    if (kind == "comp" || length(members) < 2L) next
    if (any(!vapply(spec$levels[members], is.null, TRUE))) {
      stop_arg("orders", sprintf("\"%s\" needs numeric columns, but group %s has an ordered factor", kind, g))
    }
    sorted <- t(apply(value[, members, drop = FALSE], 1L, sort, decreasing = TRUE))
    value[, members] <- if (kind == "sd") sorted else t(apply(sorted, 1L, cumsum))
  }
  if (anyNA(value)) {
    stop_arg(arg, "has members whose cumulative sums in an \"icx\" group are undefined (Inf + -Inf)")
  }
  if (!new_data && !all(is.finite(value))) {
    stop_arg(arg, "has members whose cumulative sums overflow")
  }
  list(value = value, X = X, spec = spec)
}

# The distinct rows of the matrix v in lexicographic order: list(points, index) with index the
# row of points (1-based) of each row of v.
distinct_points <- function(v) {
  o <- do.call(order, unname(as.data.frame(v)))
  sorted <- v[o, , drop = FALSE]
  new <- c(TRUE, rowSums(sorted[-1L, , drop = FALSE] != sorted[-nrow(sorted), , drop = FALSE]) > 0)
  index <- integer(nrow(v))
  index[o] <- cumsum(new)
  list(points = sorted[new, , drop = FALSE], index = index, first = o[new])
}

idr_poset <- function(y, X, weights, groups, orders, progress, dense) {
  n <- length(y)
  ov <- order_values(X, n, groups, orders)
  w <- if (!is.null(weights)) check_weights(weights, n)
  w_fit <- if (!is.null(w)) scale_weights(w)
  keep <- if (is.null(w)) rep(TRUE, n) else w_fit > 0
  yk <- y[keep]
  wk <- if (is.null(w)) rep(1, length(yk)) else w_fit[keep]
  pts <- distinct_points(ov$value[keep, , drop = FALSE])
  npos <- nrow(pts$points)
  poset <- .Call(C_poset_reduce, pts$points)
  y_codes <- .Call(C_distinct_codes, yk)
  thresholds <- y_codes[[1]]
  thr <- y_codes[[2]]
  # Stored in the order of the fitted mean (antitonic fit of -y, scaled against overflow), ties
  # in the lexicographic order: neighbouring CDFs are alike, so a threshold has few runs.
  scale <- max(abs(yk))
  weight <- as.vector(rowsum(wk, pts$index, reorder = TRUE))
  # the flows hold the vectors' weights in doubles: exact against a rational solver in random
  # tests up to ratios of 1e20, with the first misses from about 1e19 (?idr); a margin below
  if (max(weight) > 2^56 * min(weight)) {
    stop_arg("weights", paste0(
      "must not span a ratio over 2^56 (about 7e16) between the covariate vectors' total weights ",
      "with several covariates, where the fit's flows, in double precision, would lose the ",
      "lightest ones; they span ", format(max(weight) / min(weight), digits = 3),
      " (one covariate has no such limit)"))
  }
  neg_sum <- as.vector(rowsum(-wk * (yk / if (scale > 0) scale else 1), pts$index, reorder = TRUE))
  mean_fit <- .Call(C_poset_antitonic, poset, neg_sum, weight)
  by_mean <- order(-mean_fit, seq_len(npos))
  slot <- integer(npos)
  slot[by_mean] <- seq_len(npos) - 1L
  bar <- progress_bar(progress)
  on.exit(bar$close())
  runs <- .Call(C_idr_poset_fit, poset, pts$index - 1L, thr, if (is.null(w)) NULL else wk,
                length(thresholds), slot, if (progress) bar$update)
  bar$update(1)
  clim <- cumsum(as.vector(rowsum(wk, thr, reorder = TRUE)))
  clim <- c(clim[-length(clim)] / clim[length(clim)], 1)
  obs_slot <- rep(NA_integer_, n)
  obs_slot[keep] <- slot[pts$index]
  X_out <- ov$X[keep, , drop = FALSE][pts$first[by_mean], , drop = FALSE]
  rownames(X_out) <- NULL
  fit <- structure(list(
    X = X_out, thresholds = thresholds,
    weights = (if (is.null(w)) weight else as.vector(rowsum(w[keep], pts$index, reorder = TRUE)))[by_mean],
    runs = runs, nobs = n, x = ov$value,
    covariate = list(name = ov$spec$columns, levels = NULL), backend = "cpu",
    order = list(spec = ov$spec, points = pts$points, slot = slot, obs_slot = obs_slot,
                 climatology = clim)
  ), class = "gpuiso_idrfit")
  if (dense) fit$cdf <- as.matrix(fit)
  fit
}

# The order of a fit of several covariates, checked for the parts that predictions read (the fit
# may have been edited).
fit_order <- function(object) {
  ord <- object$order
  if (!is.list(ord) || !is.list(ord$spec) || !is.matrix(ord$points) || !is.integer(ord$slot)) {
    stop_arg("object", "is not a valid gpuiso IDR object: its `order` is missing or broken")
  }
  ord
}

# Predictions of a fit of several covariates at the rows of the compared values v (a matrix).
poset_predictions <- function(object, v) {
  ord <- fit_order(object)
  if (nrow(v) == 0L) {
    return(new_idr_predictions(object$runs, object$thresholds, integer(0), double(0), bounds = "pair"))
  }
  p <- .Call(C_idr_poset_predict, object$runs, ord$points, ord$slot, v, ord$climatology, "object")
  new_idr_predictions(p$runs, object$thresholds, 2L * (seq_len(nrow(v)) - 1L), p$lambda,
                      bounds = "pair")
}

# The in-sample predictions of a fit of several covariates: each observation's fitted CDF, or,
# when some had weight zero (and may sit at no fitted point), the predictions at their values,
# shown as in-sample ones (without bounds).
poset_in_sample <- function(object) {
  slot <- object$order$obs_slot
  if (!anyNA(slot)) return(new_idr_predictions(object$runs, object$thresholds, slot, double(length(slot))))
  p <- poset_predictions(object, object$x)
  new_idr_predictions(pred_part(p, "runs"), object$thresholds, pred_part(p, "pos"), pred_part(p, "lambda"))
}

# A progress bar (utils::txtProgressBar) for long work: shown once it has run for `after`
# seconds (the unexported option gpuiso.progress_after, 2 by default, so that tests can see it),
# when `show`. update(done) takes the fraction done; close() completes and closes the bar.
progress_bar <- function(show, after = getOption("gpuiso.progress_after", 2)) {
  start <- proc.time()[["elapsed"]]
  bar <- NULL
  update <- function(done) {
    if (!show) return(invisible(NULL))
    if (is.null(bar) && proc.time()[["elapsed"]] - start >= after) {
      bar <<- utils::txtProgressBar(min = 0, max = 1, style = 3)
    }
    if (!is.null(bar)) utils::setTxtProgressBar(bar, done)
    invisible(NULL)
  }
  close <- function() {
    if (!is.null(bar)) {
      utils::setTxtProgressBar(bar, 1)
      base::close(bar)
    }
  }
  list(update = update, close = close)
}

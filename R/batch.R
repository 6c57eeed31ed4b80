#' Many isotonic fits at once
#'
#' Fits independent isotonic regressions in one call, multi-threaded over the problems: the rows
#' of a matrix, or the groups of a vector. Without `x`, each problem is fitted in its own order
#' (the columns of a row, or a group's order of appearance in `y`). With `x`, each problem is
#' fitted in the order of its `x`, as [isoreg_gpu()] fits one: its elements are sorted (stably)
#' by `x`, tied `x` within a problem are pooled (the weighted mean of their `y`, their weights
#' summed) and the fitted values are returned in the input order.
#'
#' **Direction.** With `increasing = "auto"`, the direction is chosen for each problem (each row,
#' or each group) on its own, by the rule of [isoreg_gpu()]: non-decreasing where the Spearman
#' correlation of the problem's `x` (without `x`, its order) and `y`, over its elements of positive
#' weight, is at least 0. Each problem is a separate regression, so this is the fit that
#' `isoreg_gpu(increasing = "auto")` gives each; scikit-learn, which fits one problem at a time,
#' likewise decides once per problem. The directions chosen are returned as the attribute
#' `"increasing"` of the result (a logical vector, one per row or per group in the order of
#' `unique(group)`, or of the levels of a factor that occur).
#'
#' Weights follow the rules of [isoreg_gpu()]: finite, non-negative, at least one positive per
#' problem; an element of weight zero takes the level of the nearest positive-weight element
#' before it in its problem.
#'
#' @param y A numeric matrix (one problem per row), or a numeric vector (one problem, or one per
#'   group with `group`).
#' @param w Optional weights: for a matrix `y` a matrix of the same shape or a vector of length
#'   `ncol(y)` shared by all rows; for a vector `y` a vector of the same length.
#' @param increasing `TRUE` for non-decreasing fits, `FALSE` for non-increasing ones, `"auto"` to
#'   choose for each problem (see Direction).
#' @param group For a vector `y`: a factor or vector of group ids the length of `y`, without
#'   `NA`. Groups may be of any sizes and interleaved.
#' @param block_starts If `TRUE`, also return where the blocks of each fit start (where the fitted
#'   level changes).
#' @param y_min,y_max Bounds the fitted values are clipped to (see [isoreg_gpu()]).
#' @param device `"auto"`, `"cpu"` or `"gpu"` (see [isoreg_gpu()]).
#' @param method The CPU engine for every problem: `"auto"`, `"pav"` or `"hull"` (see
#'   [isoreg_gpu()]).
#' @param precision On the GPU, `"double"` or `"single"` (see [isoreg_gpu()]). On the GPU all
#'   problems are fitted in one call: rows and groups are laid out one after another (groups
#'   without padding), sent, fitted and brought back.
#' @param exact `TRUE` (the default) for the exact sums; `FALSE`, with `precision = "single"` on the
#'   GPU, for the plain float32 lane sums of [isoreg_gpu()]'s `exact = FALSE` (the paper's fast
#'   mode; in this engine it saves little work, its speed on a device has not been measured, and
#'   its accuracy is given there). The CPU has no float32 mode.
#' @param gradient If `TRUE`, record the blocks the solver pooled each problem into, for
#'   [isoreg_vjp()] (see [isoreg_gpu()]); it cannot be combined with `block_starts` or `x`.
#' @param x Optional covariate values that order each problem: for a matrix `y` a matrix of the
#'   same shape, or a vector of length `ncol(y)` shared by all rows; for a vector `y` a vector of
#'   the same length. Numeric, or a `Date`, date-time, `difftime` or ordered factor (see
#'   [isoreg_gpu()]); finite, without `NA`. With `x`, `block_starts` marks the first element, in
#'   the order of `x` (ties in input order), of each block.
#' @return The fitted values, in the shape of `y` (a matrix for a matrix, a vector in input order
#'   for a vector; dimnames and names are kept). With `block_starts = TRUE`, a list with
#'   `fitted` and `block_start`, a logical array of the same shape that is `TRUE` at the first
#'   element of each block. With `gradient = TRUE`, an object of class `"gpuiso_batch"`: a list
#'   with `fitted`, the data `y`, `w` and `group` (as given, or `NULL`), and `grad`, the solver's
#'   blocks (`start`, a logical array of the shape of `y` that is `TRUE` where a block starts in
#'   its problem's order) and the bounds `y_min` and `y_max`; it prints as its fitted values.
#'   With `increasing = "auto"`, the result (its `fitted` for a list) has the attribute
#'   `"increasing"` (see Direction).
#' @seealso [isoreg_gpu()], [gpuiso_threads()].
#' @examples
#' y <- matrix(c(3, 1, 2, 5, 4, 6), nrow = 2, byrow = TRUE)
#' isoreg_batch(y)
#'
#' # One fit per group, groups interleaved
#' g <- c("a", "b", "a", "b", "a", "b")
#' isoreg_batch(c(3, 9, 1, 7, 2, 8), group = g, block_starts = TRUE)
#'
#' # Rows in the order of x, and a direction chosen per row
#' x <- matrix(c(3, 1, 2, 1, 2, 3), nrow = 2, byrow = TRUE)
#' isoreg_batch(y, x = x, increasing = "auto")
#' @export
isoreg_batch <- function(y, w = NULL, increasing = TRUE, group = NULL, block_starts = FALSE,
                         y_min = -Inf, y_max = Inf, device = c("auto", "cpu", "gpu"),
                         method = c("auto", "pav", "hull"), precision = c("double", "single"),
                         exact = TRUE, gradient = FALSE, x = NULL) {
  if (length(dim(y)) > 2L) stop_arg("y", sprintf("must be a vector or a matrix, not %s", array_shape(y)))
  # arguments left at their defaults need no check (as in isoreg_gpu), once evaluated
  list(increasing, block_starts, y_min, y_max, device, method, precision, exact, gradient)
  if (!missing(increasing)) increasing <- check_direction(increasing)
  method <- if (missing(method)) default_method else resolve_method(method)
  if (!missing(block_starts)) block_starts <- check_flag(block_starts, "block_starts")
  if (!missing(gradient)) gradient <- check_flag(gradient, "gradient")
  if (block_starts && gradient) {
    stop_arg("block_starts", "cannot be combined with `gradient = TRUE` (the result's `grad$start` holds the solver's blocks)")
  }
  if (gradient && !is.null(x)) {
    stop_arg("x", "cannot be combined with `gradient = TRUE`: the gradients of batches are for problems in their own order")
  }
  bounds <- if (missing(y_min) && missing(y_max)) c(y_min, y_max) else check_bounds(y_min, y_max)
  single <- !missing(precision) && check_precision(precision) == "single"
  if (!missing(exact)) exact <- check_flag(exact, "exact")
  if (single && !exact) single <- 2L # float32 without the pairs (see isoreg_gpu)
  if (is.logical(y)) storage.mode(y) <- "double"
  if (!is.null(x)) x <- batch_x(x, y)
  backend <- if (missing(device)) {
    auto_backend(length(y), "batch")
  } else {
    resolve_device(device, length(y), "batch")
  }
  # the problems laid out for the direction of each (copies of the data: only for "auto")
  problems <- if (identical(increasing, "auto")) batch_problems(y, w, group, x)
  up <- if (identical(increasing, "auto")) {
    with(problems, rank_direction(key, y, w, problem, k))
  } else {
    increasing
  }
  fit <- function(engine) {
    one <- function(keep, up) {
      if (is.matrix(y)) {
        # no subset when every row is kept: `v[TRUE, ]` would copy the whole matrix
        pick <- function(v) if (is.matrix(v) && !is.null(keep)) v[keep, , drop = FALSE] else v
        if (is.null(x) || engine != engine_code("gpu", method)) {
          batch_matrix(pick(y), pick(w), group, up, bounds, engine, single, block_starts, gradient, pick(x))
        } else { # on the GPU, the rows' knots as groups
          if (!is.numeric(y)) stop_arg("y", sprintf("must be a numeric matrix, not a %s matrix", typeof(y)))
          if (!is.null(group)) stop_arg("group", "must be NULL when `y` is a matrix (each row is a problem)")
          ym <- pick(y)
          batch_xy(as.vector(ym), flatten(check_matrix_w(pick(w), ym), ym), flatten(pick(x), ym),
                   as.vector(row(ym)), up, bounds, engine, single, block_starts, what = "row")
        }
      } else {
        at <- if (is.null(keep)) TRUE else keep[problems$problem]
        pick <- function(v) if (is.null(v) || is.null(keep)) v else v[at]
        if (is.null(x)) batch_groups(pick(y), pick(w), pick(group), up, bounds, engine, single, block_starts, gradient)
        else batch_xy(pick(y), pick(w), pick(x), if (is.null(group)) NULL else pick(group), up, bounds,
                      engine, single, block_starts)
      }
    }
    if (length(up) == 1L || all(up) || !any(up)) return(one(NULL, up[1L]))
    # mixed directions: the problems of each direction in one call, merged in element order
    at <- up[problems$problem]
    merge <- function(a, b) {
      out <- vector(typeof(a), length(at))
      out[at] <- a
      out[!at] <- b
      out
    }
    a <- one(up, TRUE)
    b <- one(!up, FALSE)
    if (is.list(a)) list(merge(a[[1]], b[[1]]), merge(a[[2]], b[[2]])) else merge(a, b)
  }
  res <- run_on(backend, device, method, fit)$value
  if (identical(increasing, "auto")) up <- stats::setNames(up, if (is.matrix(y)) rownames(y) else problems$labels)
  if (is.matrix(y)) {
    shape <- function(v) {
      dim(v) <- dim(y)
      dimnames(v) <- dimnames(y)
      if (identical(increasing, "auto")) attr(v, "increasing") <- up
      v
    }
  } else {
    shape <- function(v) {
      v <- stats::setNames(v, names(y))
      if (identical(increasing, "auto")) attr(v, "increasing") <- up
      v
    }
  }
  plain <- function(v) {
    attr(v, "increasing") <- NULL
    v
  }
  if (gradient) {
    return(structure(list(fitted = shape(res[[1]]), y = y, w = w, group = group,
                          grad = list(start = plain(shape(res[[2]])), y_min = bounds[1], y_max = bounds[2])),
                     class = "gpuiso_batch"))
  }
  if (block_starts) list(fitted = shape(res[[1]]), block_start = plain(shape(res[[2]]))) else shape(res)
}

# A matrix (or a vector shared by the rows of a matrix y) as a vector in y's element order.
flatten <- function(v, y) {
  if (is.null(v) || is.matrix(v)) return(as.vector(v))
  rep(v, each = nrow(y))
}

# The x of a batch, checked against y, on its numeric scale (Dates as days, ...).
batch_x <- function(x, y) {
  shape <- dim(x)
  x <- x_numeric(x, "x")$value
  if (!is.numeric(x)) stop_arg("x", sprintf("must be numeric, not %s", describe(x)))
  if (is.matrix(y)) {
    if (!(identical(shape, dim(y)) || (is.null(shape) && length(x) == ncol(y)))) {
      stop_arg("x", sprintf("must be a matrix of the same shape as `y` (%d x %d) or a vector of length ncol(y) (%d)",
                            nrow(y), ncol(y), ncol(y)))
    }
    if (!is.null(shape) && !identical(dim(x), shape)) dim(x) <- shape # (setting it copies x)
  } else if (length(shape) > 1L || length(x) != length(y)) {
    stop_arg("x", sprintf("must be a vector of the same length as `y` (%.0f)", length(y)))
  }
  bad <- first_bad(x)
  if (bad > 0) stop_arg("x", sprintf("must be finite, without NA, but has %s at element %.0f", format(x[bad]), bad))
  if (!is.double(x)) storage.mode(x) <- "double"
  x
}

# Each element's problem (1..k), the values that order it (x, or its place in the problem) and
# the data as vectors in element order, for increasing = "auto"; data that are not numeric give
# no directions here (they are errors of the fit).
batch_problems <- function(y, w, group, x) {
  ok <- is.numeric(y) && (is.null(w) || is.numeric(w))
  if (is.matrix(y)) {
    return(list(y = if (ok) as.vector(y) else double(0), w = if (ok) flatten(w, y),
                problem = if (ok) as.vector(row(y)) else integer(0), k = nrow(y),
                key = if (!ok) double(0) else if (is.null(x)) as.vector(col(y)) else flatten(x, y)))
  }
  ids <- if (!is.null(group) && is.atomic(group) && length(group) == length(y) && !anyNA(group)) {
    if (is.factor(group)) {
      used <- droplevels(group) # a factor's unused levels are no problems: the fit skips them
      list(codes = as.integer(used), labels = levels(used))
    } else {
      ids <- first_codes(group)
      list(codes = ids$codes, labels = as.character(ids$first))
    }
  } else {
    list(codes = rep.int(1L, length(y)))
  }
  ok <- ok && length(w) %in% c(0L, length(y))
  list(y = if (ok) as.vector(y) else double(0), w = if (ok) w, k = max(ids$codes, 1L), labels = ids$labels,
       problem = if (ok) ids$codes else integer(0), key = if (!ok) double(0) else if (is.null(x)) seq_along(y) else x)
}

# Rows of a matrix y, each in its own order (x NULL) or, on the CPU, in that of x (a matrix of
# y's shape or a vector shared by the rows, checked by batch_x); the values are checked as
# batch_xy checks and scales them, so that errors and fits are the same.
batch_matrix <- function(y, w, group, increasing, bounds, engine, single, block_starts, gradient, x = NULL) {
  if (!is.numeric(y)) stop_arg("y", sprintf("must be a numeric matrix, not a %s matrix", typeof(y)))
  if (length(y) == 0L) stop_arg("y", "must have at least one element")
  if (!is.null(group)) stop_arg("group", "must be NULL when `y` is a matrix (each row is a problem)")
  w <- check_matrix_w(w, y)
  if (!is.double(y)) storage.mode(y) <- "double"
  if (!is.null(x)) {
    check_xy_values(y, flatten(w, y), as.vector(row(y)), nrow(y), NULL, "row")
    if (!is.null(w)) w <- scale_weights(w)
  }
  .Call(C_batch_matrix, y, w, x, increasing, bounds[1], bounds[2], engine, single,
        block_starts || gradient, gradient)
}

batch_groups <- function(y, w, group, increasing, bounds, engine, single, block_starts, gradient) {
  y <- check_vector(y, "y")
  n <- length(y)
  if (!is.null(w)) w <- check_vector(w, "w", n)
  if (is.null(group)) { # one row: the single-row engine, with its chunks and interrupt checks
    res <- .Call(C_isoreg_fit, NULL, y, w, increasing, bounds[1], bounds[2], engine, single, gradient,
                 NULL)
    if (gradient) return(list(res[[1]], res[[7]]))
    if (!block_starts) return(res[[1]])
    starts <- logical(n)
    starts[res[[5]]] <- TRUE
    return(list(res[[1]], starts))
  }
  ids <- check_batch_group(group, n)
  .Call(C_batch_groups, y, w, ids$codes, max(ids$codes), ids$labels, increasing, bounds[1],
        bounds[2], engine, single, block_starts || gradient, gradient)
}

# The weights of a matrix y: a matrix of its shape or a vector shared by its rows, as double.
check_matrix_w <- function(w, y) {
  if (is.null(w)) return(NULL)
  if (!is.numeric(w)) stop_arg("w", sprintf("must be numeric, not %s", describe(w)))
  same_shape <- is.matrix(w) && identical(dim(w), dim(y))
  if (!same_shape && !(is.null(dim(w)) && length(w) == ncol(y))) {
    stop_arg("w", sprintf("must be a matrix of the same shape as `y` (%d x %d) or a vector of length ncol(y) (%d)",
                          nrow(y), ncol(y), ncol(y)))
  }
  if (!is.double(w)) storage.mode(w) <- "double"
  w
}

check_batch_group <- function(group, n) {
  if (!is.atomic(group) || length(dim(group)) > 1L) {
    stop_arg("group", sprintf("must be a factor or a vector of group ids, not %s", describe(group)))
  }
  if (length(group) != n) {
    stop_arg("group", sprintf("must have the same length as `y` (%.0f), not %.0f", n, length(group)))
  }
  if (anyNA(group)) stop_arg("group", sprintf("must not contain NA (element %d)", which(is.na(group))[1L]))
  group_ids(group)
}

# Fits of y in the order of x within each problem (group: the group of each element, or the row
# of a matrix y flattened, with `what` "group" or "row"; NULL for one problem). Tied x within a
# problem are pooled in C as isoreg_gpu() pools them (one sort by x for all problems), into knots
# that are fitted as groups of one batch; the fitted values (and with block_starts the first
# element, in x order, of each block) are returned in input order. The data are checked here, so
# that errors name the element of the input and its problem.
batch_xy <- function(y, w, x, group, increasing, bounds, engine, single, block_starts, what = "group") {
  y <- check_vector(y, "y")
  n <- length(y)
  ids <- if (is.null(group)) list(codes = rep.int(1L, n), labels = NULL) else check_batch_group(group, n)
  k <- max(ids$codes)
  if (!is.null(w)) w <- check_vector(w, "w", n)
  check_xy_values(y, w, ids$codes, k, ids$labels, what)
  if (!is.null(w)) w <- scale_weights(w)
  .Call(C_batch_xy, y, w, x, ids$codes, k, ids$labels, increasing, bounds[1], bounds[2], engine,
        single, block_starts)
}

# The values of problems fitted on x (codes: each element's problem, 1..k; labels: their names or
# NULL): y finite, w finite and non-negative with a positive weight in each problem.
check_xy_values <- function(y, w, codes, k, labels, what) {
  bad <- first_bad(y)
  if (bad > 0) stop_arg("y", sprintf("must be finite, without NA, but has %s at element %.0f", format(y[bad]), bad))
  if (is.null(w)) return(invisible())
  bad <- first_bad(w, nonnegative = TRUE)
  if (bad > 0) {
    stop_arg("w", sprintf("must be finite and non-negative, but has %s at element %.0f", format(w[bad]), bad))
  }
  none <- which(tabulate(codes[w > 0], k) == 0L & tabulate(codes, k) > 0L)
  if (length(none)) {
    label <- if (is.null(labels)) none[1L] else labels[none[1L]]
    stop_arg("w", sprintf("must have a positive weight in each %s, but has none in %s %s", what, what, label))
  }
}

# Group codes 1..K, and the group of each code for error messages (NULL when the codes are the
# ids). Which code a group gets does not matter (results come back in input order), so factor
# codes and small positive integer ids are used as they are, without hashing.
group_ids <- function(group) {
  if (is.factor(group)) return(list(codes = as.integer(group), labels = levels(group)))
  if (is.integer(group)) {
    r <- span_of(group)
    if (r[1] >= 1L && r[2] <= length(group)) return(list(codes = group, labels = NULL))
  }
  ids <- first_codes(group)
  list(codes = ids$codes, labels = as.character(ids$first))
}

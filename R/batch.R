#' Many isotonic fits at once
#'
#' Fits independent isotonic regressions in one call, multi-threaded over the problems: the rows
#' of a matrix, or the groups of a vector. Each problem is fitted in its own order (the columns of
#' a row, or a group's order of appearance in `y`); there is no `x`.
#'
#' Weights follow the rules of [isoreg_gpu()]: finite, non-negative, at least one positive per
#' problem; an element of weight zero takes the level of the nearest positive-weight element
#' before it in its problem.
#'
#' @param y A numeric matrix (one problem per row), or a numeric vector (one problem, or one per
#'   group with `group`).
#' @param w Optional weights: for a matrix `y` a matrix of the same shape or a vector of length
#'   `ncol(y)` shared by all rows; for a vector `y` a vector of the same length.
#' @param increasing `TRUE` for non-decreasing fits, `FALSE` for non-increasing ones.
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
#' @param gradient If `TRUE`, record the blocks the solver pooled each problem into, for
#'   [isoreg_vjp()] (see [isoreg_gpu()]); it cannot be combined with `block_starts`.
#' @return The fitted values, in the shape of `y` (a matrix for a matrix, a vector in input order
#'   for a vector; dimnames and names are kept). With `block_starts = TRUE`, a list with
#'   `fitted` and `block_start`, a logical array of the same shape that is `TRUE` at the first
#'   element of each block. With `gradient = TRUE`, an object of class `"gpuiso_batch"`: a list
#'   with `fitted`, the data `y`, `w` and `group` (as given, or `NULL`), and `grad`, the solver's
#'   blocks (`start`, a logical array of the shape of `y` that is `TRUE` where a block starts in
#'   its problem's order) and the bounds `y_min` and `y_max`; it prints as its fitted values.
#' @seealso [isoreg_gpu()], [gpuiso_threads()].
#' @examples
#' y <- matrix(c(3, 1, 2, 5, 4, 6), nrow = 2, byrow = TRUE)
#' isoreg_batch(y)
#'
#' # One fit per group, groups interleaved
#' g <- c("a", "b", "a", "b", "a", "b")
#' isoreg_batch(c(3, 9, 1, 7, 2, 8), group = g, block_starts = TRUE)
#' @export
isoreg_batch <- function(y, w = NULL, increasing = TRUE, group = NULL, block_starts = FALSE,
                         y_min = -Inf, y_max = Inf, device = c("auto", "cpu", "gpu"),
                         method = c("auto", "pav", "hull"), precision = c("double", "single"),
                         gradient = FALSE) {
  increasing <- check_flag(increasing, "increasing")
  method <- resolve_method(method)
  block_starts <- check_flag(block_starts, "block_starts")
  gradient <- check_flag(gradient, "gradient")
  if (block_starts && gradient) {
    stop_arg("block_starts", "cannot be combined with `gradient = TRUE` (the result's `grad$start` holds the solver's blocks)")
  }
  bounds <- check_bounds(y_min, y_max)
  single <- check_precision(precision) == "single"
  backend <- resolve_device(device, length(y))
  fit <- function(engine) {
    if (is.matrix(y)) batch_matrix(y, w, group, increasing, bounds, engine, single, block_starts, gradient)
    else batch_groups(y, w, group, increasing, bounds, engine, single, block_starts, gradient)
  }
  res <- run_on(backend, device, method, fit)$value
  if (is.matrix(y)) {
    shape <- function(v) {
      dim(v) <- dim(y)
      dimnames(v) <- dimnames(y)
      v
    }
  } else {
    shape <- function(v) stats::setNames(v, names(y))
  }
  if (gradient) {
    return(structure(list(fitted = shape(res[[1]]), y = y, w = w, group = group,
                          grad = list(start = shape(res[[2]]), y_min = bounds[1], y_max = bounds[2])),
                     class = "gpuiso_batch"))
  }
  if (block_starts) list(fitted = shape(res[[1]]), block_start = shape(res[[2]])) else shape(res)
}

batch_matrix <- function(y, w, group, increasing, bounds, engine, single, block_starts, gradient) {
  if (!is.numeric(y)) stop_arg("y", sprintf("must be a numeric matrix, not a %s matrix", typeof(y)))
  if (length(y) == 0L) stop_arg("y", "must have at least one element")
  if (!is.null(group)) stop_arg("group", "must be NULL when `y` is a matrix (each row is a problem)")
  if (!is.null(w)) {
    if (!is.numeric(w)) stop_arg("w", sprintf("must be numeric, not %s", describe(w)))
    same_shape <- is.matrix(w) && identical(dim(w), dim(y))
    if (!same_shape && !(is.null(dim(w)) && length(w) == ncol(y))) {
      stop_arg("w", sprintf("must be a matrix of the same shape as `y` (%d x %d) or a vector of length ncol(y) (%d)",
                            nrow(y), ncol(y), ncol(y)))
    }
    if (!is.double(w)) w <- as.double(w)
  }
  if (!is.double(y)) storage.mode(y) <- "double"
  .Call(C_batch_matrix, y, w, increasing, bounds[1], bounds[2], engine, single,
        block_starts || gradient, gradient)
}

batch_groups <- function(y, w, group, increasing, bounds, engine, single, block_starts, gradient) {
  y <- check_vector(y, "y")
  n <- length(y)
  if (!is.null(w)) w <- check_vector(w, "w", n)
  if (is.null(group)) { # one row: the single-row engine, with its chunks and interrupt checks
    res <- .Call(C_isoreg_fit, NULL, y, w, increasing, bounds[1], bounds[2], engine, single, gradient)
    if (gradient) return(list(res[[1]], res[[7]]))
    if (!block_starts) return(res[[1]])
    starts <- logical(n)
    starts[res[[5]]] <- TRUE
    return(list(res[[1]], starts))
  }
  if (!is.atomic(group) || length(dim(group)) > 1L) {
    stop_arg("group", sprintf("must be a factor or a vector of group ids, not %s", describe(group)))
  }
  if (length(group) != n) {
    stop_arg("group", sprintf("must have the same length as `y` (%.0f), not %.0f", n, length(group)))
  }
  if (anyNA(group)) stop_arg("group", sprintf("must not contain NA (element %d)", which(is.na(group))[1L]))
  ids <- group_ids(group)
  .Call(C_batch_groups, y, w, ids$codes, max(ids$codes), ids$labels, increasing, bounds[1],
        bounds[2], engine, single, block_starts || gradient, gradient)
}

# Group codes 1..K, and the group of each code for error messages (NULL when the codes are the
# ids). Which code a group gets does not matter (results come back in input order), so factor
# codes and small positive integer ids are used as they are, without hashing.
group_ids <- function(group) {
  if (is.factor(group)) return(list(codes = as.integer(group), labels = levels(group)))
  if (is.integer(group)) {
    r <- range(group)
    if (r[1] >= 1L && r[2] <= length(group)) return(list(codes = group, labels = NULL))
  }
  first <- unique(group)
  list(codes = match(group, first), labels = as.character(first))
}

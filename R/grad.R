#' Gradient of an isotonic fit
#'
#' The vector-Jacobian product of a fit with an upstream gradient `g` (the gradient of some loss
#' with respect to the fitted values): the gradient of that loss with respect to the data `y` and
#' the weights `w`. The fit is the weighted mean of `y` over its blocks, so
#' \deqn{\partial / \partial y_i = w_i G / W, \qquad \partial / \partial w_i = (y_i - z_i) G / W,}{
#' d/dy_i = w_i G / W,   d/dw_i = (y_i - z_i) G / W,}
#' with \eqn{z} the fit and \eqn{G} and \eqn{W} the sums of `g` and `w` over the block of element
#' \eqn{i}.
#'
#' The blocks are those the solver pooled the data into, which the fit records when it is made
#' with `gradient = TRUE` (see [isoreg_gpu()]). The fit is differentiable wherever small changes of
#' the data keep these blocks; where two neighbouring blocks have exactly equal means it is not,
#' and the product is that of the solver's partition (a one-sided derivative).
#'
#' **Ties in `x`.** Tied `x` are pooled into one point before the fit, so the gradient reaches
#' every tied element through the pooling: each gets its own weight's share of its block's `G`.
#'
#' **Zero weights and bounds.** An element of weight zero does not move the fit (its derivative in
#' `y` is 0); it belongs to the block before it (the first block when it comes before every
#' positive weight), and its derivative in `w` is the one-sided derivative of adding it to that
#' block. Fitted values clipped to `y_min` or `y_max` do not move with the data: their `g` counts 0.
#'
#' @param fit A fit of [isoreg_gpu()] or [isoreg_batch()] made with `gradient = TRUE`.
#' @param g The upstream gradient, finite, in the shape of the fitted values (a vector of their
#'   length, or a matrix of their dimensions for a matrix batch).
#' @param device `"auto"`, `"cpu"` or `"gpu"`, as for [isoreg_gpu()]. On the GPU a warp sums each
#'   tile of 1024 elements of a row, and blocks that cross tiles add the tiles' boundary sums,
#'   without atomic operations.
#' @return A list with `y` and `w`, the gradients with respect to the data and the weights, in the
#'   shape of the fitted values (the gradient in `w` is given even when the fit had no weights:
#'   it is then at weights 1).
#' @seealso [soft_rank()], whose gradient is built on this one.
#' @examples
#' y <- c(1, 3, 2, 4, 3.5, 5)
#' fit <- isoreg_gpu(y, w = c(1, 2, 1, 1, 1, 1), gradient = TRUE)
#' fitted(fit)
#' # d sum(fitted) / d y_i = w_i * m / W, for a block of m elements and summed weight W
#' isoreg_vjp(fit, rep(1, 6))
#'
#' # rows of a matrix
#' Y <- matrix(c(3, 1, 2, 1, 2, 3), nrow = 2, byrow = TRUE)
#' b <- isoreg_batch(Y, gradient = TRUE)
#' isoreg_vjp(b, matrix(1:6, nrow = 2))$y
#' @export
isoreg_vjp <- function(fit, g, device = c("auto", "cpu", "gpu")) {
  if (!inherits(fit, c("gpuiso_fit", "gpuiso_batch")) || !is.list(fit)) {
    stop_arg("fit", sprintf("must be a fit of isoreg_gpu() or isoreg_batch(), not %s", describe(fit)))
  }
  if (is.null(fit$grad)) {
    stop_arg("fit", "has no recorded blocks: make the fit with `gradient = TRUE`")
  }
  check_vjp_fit(fit)
  if (missing(g)) stop_arg("g", "is missing")
  g <- check_upstream(g, fit$fitted, "the fitted values")
  rows <- vjp_rows(fit)
  backend <- resolve_device(device, length(g), "vjp")
  res <- run_on(backend, device, "pav", function(engine) {
    .Call(C_vjp, rows$offsets, as.double(rows$take(fit$y)),
          if (!is.null(fit$w)) as.double(rows$take_w(fit$w)), as.double(rows$take(fit$fitted)),
          rows$start, as.double(rows$take(g)), fit$grad$y_min,
          fit$grad$y_max, engine)
  })$value
  list(y = rows$back(res[[1]]), w = rows$back(res[[2]]))
}

# Checks the types and shapes of every part of a fit that the vector-Jacobian product reads, so
# that a fit edited, built by hand or saved by another version is an error naming `fit`. (C_vjp
# checks the lengths it is given again.)
check_vjp_fit <- function(fit) {
  invalid <- function(problem) stop_arg("fit", paste("is not a valid gpuiso fit:", problem))
  fitted <- fit$fitted
  one <- inherits(fit, "gpuiso_fit")
  if (!is.numeric(fitted) || length(fitted) == 0L || length(dim(fitted)) > (if (one) 1L else 2L)) {
    invalid(sprintf("its `fitted` is not a numeric %s", if (one) "vector" else "vector or matrix"))
  }
  like_fitted <- function(v) identical(dim(v), dim(fitted)) && length(v) == length(fitted)
  if (!is.numeric(fit$y) || !like_fitted(fit$y)) invalid("its `y` does not match its fitted values in shape")
  w <- fit$w
  shared_w <- is.matrix(fitted) && is.null(dim(w)) && length(w) == ncol(fitted)
  if (!is.null(w) && (!is.numeric(w) || !(like_fitted(w) || shared_w))) {
    invalid("its `w` does not match its fitted values in shape")
  }
  grad <- fit$grad
  if (!is.list(grad) || !is.logical(grad$start) || !like_fitted(grad$start)) {
    invalid("its `grad$start` is not a logical array of the shape of its fitted values")
  }
  for (bound in c("y_min", "y_max")) {
    v <- grad[[bound]]
    if (!is.numeric(v) || length(v) != 1L || is.na(v)) invalid(sprintf("its `grad$%s` is not a number", bound))
  }
  order <- grad$order
  n <- length(fitted)
  if (one && !is.null(order) && (length(order) != n || !.Call(C_is_permutation, order))) {
    invalid(sprintf("its `grad$order` is not a permutation of 1 to %.0f", n))
  }
  group <- fit$group
  if (!one && !is.matrix(fitted) && !is.null(group) &&
      (!is.atomic(group) || length(dim(group)) > 1L || length(group) != n || anyNA(group))) {
    invalid(sprintf("its `group` is not a vector of %.0f group ids without NA", n))
  }
}

#' @export
print.gpuiso_batch <- function(x, ...) {
  f <- x$fitted
  what <- if (is.matrix(f)) sprintf("%d rows of %d", nrow(f), ncol(f))
          else if (!is.null(x$group)) sprintf("%.0f elements in %d groups", length(f), length(unique(x$group)))
          else sprintf("one row of %.0f", length(f))
  cat(sprintf("Isotonic fits of a batch, %s, with the solver's blocks for isoreg_vjp()\n", what))
  cat("fitted:\n")
  print(f, ...)
  invisible(x)
}

# The problems of a fit laid out as rows one after another, as the C glue takes them: offsets,
# take(v) (an element array in the fit's layout, into rows), take_w(w) (the weights as given),
# back(v) (rows into the fit's shape, with its names) and start, the solver's block flags in
# rows (a fit of isoreg_gpu() has them in x order already).
vjp_rows <- function(fit) {
  fitted <- fit$fitted
  n <- length(fitted)
  as_rows <- function(perm) {
    list(offsets = c(0, n),
         take = function(v) if (is.null(perm)) v else v[perm],
         back = function(v) {
           if (!is.null(perm)) v[perm] <- v
           names(v) <- names(fitted)
           v
         })
  }
  if (inherits(fit, "gpuiso_fit")) {
    rows <- as_rows(fit$grad$order)
    rows$take_w <- rows$take
    rows$start <- fit$grad$start
    return(rows)
  }
  if (is.matrix(fitted)) {
    nr <- nrow(fitted)
    nc <- ncol(fitted)
    rows <- list(offsets = as.double(0:nr) * nc,
                 take = function(v) t(v),
                 back = function(v) {
                   m <- matrix(v, nrow = nr, ncol = nc, byrow = TRUE)
                   dimnames(m) <- dimnames(fitted)
                   m
                 })
    rows$take_w <- function(w) if (is.matrix(w)) t(w) else rep(w, times = nr)
  } else if (!is.null(fit$group)) {
    ids <- group_ids(fit$group)$codes
    rows <- as_rows(order(ids, method = "radix"))
    rows$offsets <- c(0, cumsum(as.double(tabulate(ids, max(ids)))))
  } else {
    rows <- as_rows(NULL)
  }
  if (is.null(rows$take_w)) rows$take_w <- rows$take
  rows$start <- as.logical(rows$take(fit$grad$start))
  rows
}

#' Differentiable soft ranks and soft sorts
#'
#' The soft rank and soft sort of Blondel, Teboul, Berthet and Djolonga (2020) with quadratic
#' (\eqn{L_2}{L2}) regularisation of strength `epsilon`, of a vector or of each row of a matrix, and
#' their vector-Jacobian products. Both are projections onto a permutahedron (the convex hull of
#' the permutations of a vector), computed by one isotonic regression of the sorted values, so
#' they are piecewise linear in `x`, with exact gradients.
#'
#' With \eqn{n} values, `soft_rank` projects \eqn{\theta = x / \epsilon}{theta = x / epsilon}
#' onto the permutahedron of \eqn{(n, n - 1, \dots, 1)}{(n, n - 1, ..., 1)}: with \eqn{s} the
#' values of \eqn{\theta}{theta} sorted decreasingly and \eqn{v} the non-increasing isotonic
#' regression of \eqn{s - (n, \dots, 1)}{s - (n, ..., 1)}, the soft ranks are \eqn{s - v}, in the
#' order of `x`. As `epsilon` tends to 0 they tend to `rank(x)` (the largest value gets \eqn{n});
#' as it grows every soft rank tends to \eqn{(n + 1) / 2}. They always sum to
#' \eqn{n (n + 1) / 2}, and tied values get equal soft ranks.
#'
#' `soft_sort` projects \eqn{r = (n, \dots, 1) / \epsilon}{r = (n, ..., 1) / epsilon} onto the
#' permutahedron of `x`: with \eqn{s} the values of `x` sorted decreasingly and \eqn{v} the
#' non-increasing isotonic regression of \eqn{r - s}, the soft sort is \eqn{r - v} in reverse
#' (increasing) order. It tends to `sort(x)` as `epsilon` tends to 0 (it is `sort(x)` once
#' `1 / epsilon` exceeds every gap between neighbouring values) and to `mean(x)` everywhere as it
#' grows.
#'
#' `decreasing = TRUE` gives the descending versions: ranks counted from the largest value (the
#' largest gets rank 1; they equal \eqn{n + 1} minus the increasing ones) and values sorted from
#' the largest (the increasing soft sort reversed).
#'
#' `soft_rank_vjp` and `soft_sort_vjp` return the gradient with respect to `x` of
#' `sum(g * soft_rank(x, ...))` (and of `soft_sort`): the vector-Jacobian product, through the
#' blocks of the isotonic step (see [isoreg_vjp()]). They compute the forward pass again: its
#' isotonic fit in one pass, and its sort too unless `order` gives it. With `gradient = TRUE` the
#' forward pass keeps its sort order as the attribute `"order"` of its result (an integer array
#' of the shape of `x`: each row's indices from the largest key to the smallest, ties in their
#' order), and `order = attr(r, "order")` saves the backward pass that sort, most of its time; it
#' is checked in one pass against `x`, `epsilon` and `decreasing`. Where two blocks of the
#' isotonic step have exactly equal means the soft operators are not differentiable, and the
#' gradient is that of the solver's partition.
#'
#' On the CPU, the rows are sorted by a radix sort and fitted by pool adjacent violators, in
#' parallel over rows (see [gpuiso_threads()]). Each row is cut where no block of the isotonic
#' step can cross (soft ranks: between sorted keys more than \eqn{2n} apart), and each piece is
#' fitted from its own first value, so that the results keep their digits however small `epsilon`
#' is (against an exact multiple-precision projection: within 1e-13 for ranks, and a few roundings
#' of `x` for sorts), and are `rank(x)` and `sort(x)` exactly once it is small enough. With
#' `device = "gpu"` the rows are sorted, fitted (the hull-merge solver, one batch for all rows,
#' each row one piece) and differentiated on the GPU; where that would keep fewer digits, with
#' `max(abs(x)) / epsilon` (ranks) or `n / epsilon / max(abs(x))` (sorts) above \eqn{2^{23}}, the CPU
#' computes them instead. `"auto"` follows the rule of [isoreg_gpu()]. The GPU sorts in both
#' passes: it records no `"order"` and does not read one.
#'
#' @param x A numeric vector, or a matrix whose rows are the vectors; finite.
#' @param epsilon The regularisation strength, a positive finite number.
#' @param decreasing `FALSE` for ranks from the smallest value and increasing soft sorts, `TRUE`
#'   for ranks from the largest and decreasing soft sorts.
#' @param device `"auto"`, `"cpu"` or `"gpu"` (see [isoreg_gpu()]).
#' @param gradient For `soft_rank()` and `soft_sort()`: `TRUE` to keep the sort order for the
#'   backward pass, as the attribute `"order"` of the result (on the CPU).
#' @param g For `soft_rank_vjp()` and `soft_sort_vjp()`: the upstream gradient, finite, of the shape of `x`.
#' @param order For `soft_rank_vjp()` and `soft_sort_vjp()`: `NULL` (sort `x` again), or the attribute `"order"` of
#'   the forward pass made with `gradient = TRUE` on the same `x`, `epsilon` and `decreasing`.
#' @return An array of the shape of `x`: the soft ranks or soft sorts, row by row for a matrix, or
#'   (`soft_rank_vjp()`, `soft_sort_vjp()`) the gradient with respect to `x`. Names and dimnames of `x` are kept, except the
#'   names of positions for soft sorts (the sorted values belong to no element). With `gradient =
#'   TRUE` (on the CPU) it has the attribute `"order"`.
#' @references Blondel, M., Teboul, O., Berthet, Q. and Djolonga, J. (2020). Fast differentiable
#'   sorting and ranking. *Proceedings of the 37th International Conference on Machine Learning*,
#'   PMLR 119, 950--959.
#' @seealso [isoreg_vjp()]; `vignette("differentiable-ranking", package = "gpuiso")` trains a
#'   linear scoring model with a soft Spearman loss.
#' @examples
#' x <- c(0.5, 2, -1, 1.9)
#' soft_rank(x, epsilon = 0.01) # close to rank(x)
#' soft_rank(x, epsilon = 1)
#' soft_rank(x, epsilon = 100)  # close to (n + 1) / 2
#' soft_sort(x, epsilon = 0.1)
#' soft_rank(x, decreasing = TRUE)
#'
#' # gradient of a loss of the soft ranks
#' g <- soft_rank(x) - c(2, 4, 1, 3)
#' soft_rank_vjp(x, g)
#' # the same, reusing the forward pass's sort
#' r <- soft_rank(x, gradient = TRUE)
#' soft_rank_vjp(x, r - c(2, 4, 1, 3), order = attr(r, "order"))
#'
#' # rows of a matrix
#' soft_rank(matrix(c(3, 1, 2, 1, 2, 3), nrow = 2, byrow = TRUE), epsilon = 0.1)
#' @export
soft_rank <- function(x, epsilon = 1, decreasing = FALSE, device = c("auto", "cpu", "gpu"),
                      gradient = FALSE) {
  soft_call(0L, x, NULL, epsilon, decreasing, device, check_flag(gradient, "gradient"))
}

#' @rdname soft_rank
#' @export
soft_sort <- function(x, epsilon = 1, decreasing = FALSE, device = c("auto", "cpu", "gpu"),
                      gradient = FALSE) {
  soft_call(1L, x, NULL, epsilon, decreasing, device, check_flag(gradient, "gradient"))
}

#' @rdname soft_rank
#' @export
soft_rank_vjp <- function(x, g, epsilon = 1, decreasing = FALSE, device = c("auto", "cpu", "gpu"),
                          order = NULL) {
  if (missing(g)) stop_arg("g", "is missing")
  soft_call(0L, x, g, epsilon, decreasing, device, order)
}

#' @rdname soft_rank
#' @export
soft_sort_vjp <- function(x, g, epsilon = 1, decreasing = FALSE, device = c("auto", "cpu", "gpu"),
                          order = NULL) {
  if (missing(g)) stop_arg("g", "is missing")
  soft_call(1L, x, g, epsilon, decreasing, device, order)
}

# kind 0: rank, 1: sort; g NULL: the values (order TRUE: with the sort order recorded), else the
# vector-Jacobian product (order NULL, or the forward pass's sort order).
soft_call <- function(kind, x, g, epsilon, decreasing, device, order) {
  x <- check_soft_x(x)
  epsilon <- check_epsilon(epsilon)
  decreasing <- check_flag(decreasing, "decreasing")
  if (!is.null(g)) {
    g <- check_upstream(g, x, "`x`")
    order <- check_order(order, x)
  }
  backend <- resolve_device(device, length(x), "soft")
  out <- run_on(backend, device, "pav", function(engine) {
    .Call(C_soft, kind, x, g, epsilon, decreasing, engine, order)
  })$value
  dim(out) <- dim(x)
  if (kind == 0L || !is.null(g)) {
    dimnames(out) <- dimnames(x)
    names(out) <- names(x)
  } else if (is.matrix(x)) {
    dimnames(out) <- list(rownames(x), NULL)
  }
  out
}

# The sort order of a forward pass: NULL, or integers of the shape of x (values checked in C).
check_order <- function(order, x) {
  if (is.null(order)) return(NULL)
  same <- if (is.matrix(x)) is.matrix(order) && identical(dim(order), dim(x))
          else is.null(dim(order)) && length(order) == length(x)
  if (!is.integer(order) || !same) {
    stop_arg("order", sprintf("must be the attribute \"order\" of the forward pass with `gradient = TRUE`, integers of the shape of `x`, not %s",
                              describe(order)))
  }
  order
}

check_soft_x <- function(x) {
  if (!is.numeric(x)) stop_arg("x", sprintf("must be a numeric vector or matrix, not %s", describe(x)))
  if (length(dim(x)) > 2L) stop_arg("x", "must be a vector or a matrix, not an array")
  if (length(x) == 0L) stop_arg("x", "must have at least one element")
  if (!is.double(x)) storage.mode(x) <- "double"
  x
}

check_epsilon <- function(epsilon) {
  if (!is.numeric(epsilon) || length(epsilon) != 1L || !is.finite(epsilon) || epsilon <= 0) {
    shown <- if (is.numeric(epsilon) && length(epsilon) == 1L) format(epsilon) else describe(epsilon)
    stop_arg("epsilon", sprintf("must be a positive finite number, not %s", shown))
  }
  as.double(epsilon)
}

# An upstream gradient: numeric, of the shape of like (described as what), finite; as double.
check_upstream <- function(g, like, what) {
  shape <- function(v) {
    if (is.matrix(v)) sprintf("a %d x %d matrix", nrow(v), ncol(v))
    else if (!is.null(dim(v))) "an array"
    else sprintf("a vector of length %.0f", length(v))
  }
  if (!is.numeric(g)) stop_arg("g", sprintf("must be numeric, not %s", describe(g)))
  same <- if (is.matrix(like)) is.matrix(g) && identical(dim(g), dim(like))
          else is.null(dim(g)) && length(g) == length(like)
  if (!same) stop_arg("g", sprintf("must have the shape of %s (%s), not %s", what, shape(like), shape(g)))
  if (!all(is.finite(g))) {
    i <- which(!is.finite(g))[1L]
    value <- if (is.nan(g[i])) "NaN" else if (is.na(g[i])) "NA" else format(g[i])
    where <- if (is.matrix(g)) sprintf("row %d, column %d", (i - 1L) %% nrow(g) + 1L, (i - 1L) %/% nrow(g) + 1L)
             else sprintf("element %.0f", i)
    stop_arg("g", sprintf("must be finite, but has %s at %s", value, where))
  }
  if (!is.double(g)) storage.mode(g) <- "double"
  g
}

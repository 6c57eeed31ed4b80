#' Exact weighted isotonic regression
#'
#' Fits the non-decreasing (or non-increasing) sequence closest to `y` in weighted least squares,
#' ordered by `x`. The fit is exact: it is the weighted mean of `y` over blocks of consecutive
#' points, the solution that pool adjacent violators and the lower convex hull of the cumulative
#' sum diagram both give.
#'
#' As in [stats::isoreg()], a single vector argument is taken as `y` with `x = seq_along(y)`.
#' `x` may come in any order: it is sorted (stably), tied `x` values are pooled into one point
#' (the weighted mean of their `y`, their weights summed), the fit is computed over the distinct
#' `x`, and the fitted values are returned in the input order. `-0` and `0` are one value.
#'
#' **Weights.** `w` must be finite and non-negative. An element of weight zero does not influence
#' the fit; it takes the level of the nearest positive-weight element on its left (the first
#' block's level when there is none). At least one weight must be positive. The fit does not
#' depend on the scale of the weights: subnormal weights (below 2^-1022) are scaled up by a power
#' of two before their products with `y` are formed, so they give the fit of the same weights at
#' scale 1.
#'
#' **Errors.** `NA`, `NaN` or infinite values in `x`, `y` or `w`, negative weights, lengths that
#' differ, matrices, non-numeric and empty input are errors that name the argument. So are data
#' whose weighted sums `sum(w * abs(y))` overflow double precision (for example `rep(1e307, 20)`),
#' since the cumulative sum diagram cannot then be represented.
#'
#' **Engines.** `method = "pav"` is pool adjacent violators in C. A row of 2^18 elements or more
#' is cut into one chunk per thread (see [gpuiso_threads()]); the chunks are fitted in parallel
#' and their blocks merged. `method = "hull"` computes the same fit as the slopes of the lower
#' convex hull of the cumulative sum diagram, merging the hulls of chunks of 1024 points along
#' bridges, level by level and in parallel, with each node of the merge tree held as a list of
#' segments of the chunks' hulls (the GPU's algorithm); its coordinates are double-double numbers,
#' so its fit is at least as accurate as PAV's. `method = "auto"` chooses PAV, which is faster on
#' CPUs at every row length and thread count measured (`tools/bench/RESULTS.md` in the package's
#' source repository). An unsorted `x` is sorted by a parallel radix sort.
#'
#' **Devices.** `device = "gpu"` runs the CUDA solver (the hull-merge engine on the GPU: a
#' thread builds each chunk's hull, a thread runs each merge of the chunk hulls, a thread
#' reconstructs each chunk's fitted values); it is an error when the package was built without
#' CUDA or no device is found (see [gpuiso_backend()]). `method` chooses the CPU engine and is
#' not used on the GPU. An unsorted `x` is sorted and its ties pooled on the CPU; the pooled
#' knots are fitted on the GPU. `device = "auto"` uses the CPU: the size from which the GPU,
#' transfers included, is faster has not been measured yet. Set `options(gpuiso.gpu_min_n = n)`
#' to let `"auto"` use a GPU, when present, from `n` elements on; a CUDA error then falls back to
#' the CPU with a message. After a CUDA error that leaves the GPU unusable (an illegal memory
#' access, a failed kernel launch, ...), the GPU is not used for the rest of the R session:
#' `"auto"` runs on the CPU and `"gpu"` is an error (see [gpuiso_backend()]); restart R to use it
#' again.
#'
#' **Precision on the GPU.** `precision = "double"` fits the data as they are. With `"single"`,
#' `y` and `w` are rounded to float32 before they are sent, which halves the bytes moved; sums,
#' slopes and the hull's tests are still computed in double (double-double for the sums), and
#' each fitted value is rounded to float32 once, so the fit is that of the rounded data to about
#' 6e-8 relative and never steps against its direction. On the CPU the fit is always in double.
#'
#' @param x Numeric vector of covariate values, in any order; or `y` when `y` is `NULL`.
#' @param y Numeric vector of responses.
#' @param w Optional numeric vector of non-negative weights, the length of `y`.
#' @param increasing `TRUE` for a non-decreasing fit, `FALSE` for a non-increasing one.
#' @param y_min,y_max Bounds that the fitted values are clipped to after the fit (as in
#'   scikit-learn's `IsotonicRegression`); `-Inf` and `Inf` for none. `y_min = Inf` and
#'   `y_max = -Inf`, which would make every fitted value infinite, are errors.
#' @param device `"auto"`, `"cpu"` or `"gpu"`. For this and the other choices (`method`,
#'   `precision`), a unique prefix is taken, as [match.arg()] does; anything else is an error that
#'   names the argument and its choices.
#' @param method The CPU engine: `"auto"`, `"pav"` or `"hull"` (see Engines).
#' @param precision On the GPU, `"double"` or `"single"` (see Precision on the GPU).
#' @param gradient If `TRUE`, the fit also records the blocks the solver pooled the data into, so
#'   that [isoreg_vjp()] can differentiate it. These are the solver's own blocks, recorded as it
#'   forms them, not found afterwards from equal fitted values: two neighbouring blocks can share
#'   a level (after clipping, or when their means round to the same double) and still move apart
#'   when the data move. The fitted values are the same either way.
#' @return An object of class `"gpuiso_fit"`, a list with
#'   \item{fitted}{the fitted values, in the order of the input;}
#'   \item{x, y, w}{the inputs (`x` and `w` are `NULL` when not given);}
#'   \item{knots}{the distinct `x`, increasing;}
#'   \item{level}{the fitted value at each knot;}
#'   \item{knot_weight}{the summed weight at each knot (`NULL` when every weight is 1);}
#'   \item{block_start}{the index into `knots` of the first knot of each block;}
#'   \item{grad}{with `gradient = TRUE`, the solver's blocks for [isoreg_vjp()]: `order`, the
#'     elements in the order of `x` (`NULL` when that is the input order), `start`, `TRUE` where a
#'     block starts in that order, and the bounds `y_min` and `y_max`; `NULL` otherwise;}
#'   \item{n, increasing, backend, method, precision, call}{the size, the direction, the backend
#'     (`"cpu"` or `"gpu"`) and engine (`"pav"` or `"hull"`; the GPU's is `"hull"`) that ran, the
#'     precision of the fit, and the call.}
#'   The blocks as a table (start and end `x`, level, weight, size) come from [isoreg_blocks()].
#' @seealso [predict.gpuiso_fit()], [isoreg_batch()] for many fits at once, [stats::isoreg()].
#' @examples
#' fit <- isoreg_gpu(c(3, 7, 5, 9, 8, 7, 10))
#' fitted(fit)
#' isoreg_blocks(fit)
#'
#' # Weighted fit of y on an unsorted x
#' fit <- isoreg_gpu(cars$speed, cars$dist, w = rep(1:2, 25))
#' predict(fit, c(5, 12.5, 30), type = "linear")
#' plot(fit)
#' @export
isoreg_gpu <- function(x, y = NULL, w = NULL, increasing = TRUE, y_min = -Inf, y_max = Inf,
                       device = c("auto", "cpu", "gpu"), method = c("auto", "pav", "hull"),
                       precision = c("double", "single"), gradient = FALSE) {
  call <- match.call()
  if (is.null(y)) {
    if (missing(x)) stop_arg("y", "is missing")
    y <- x
    x <- NULL
  }
  y <- check_vector(y, "y")
  n <- length(y)
  if (!is.null(x)) x <- check_vector(x, "x", n)
  if (!is.null(w)) w <- check_vector(w, "w", n)
  increasing <- check_flag(increasing, "increasing")
  bounds <- check_bounds(y_min, y_max)
  backend <- resolve_device(device, n)
  method <- resolve_method(method)
  single <- check_precision(precision) == "single"
  gradient <- check_flag(gradient, "gradient")

  run <- run_on(backend, device, method, function(engine) {
    .Call(C_isoreg_fit, x, y, w, increasing, bounds[1], bounds[2], engine, single, gradient)
  })
  res <- run$value
  backend <- run$backend
  if (backend == "gpu") method <- "hull"
  fitted <- res[[1]]
  structure(list(
    fitted = fitted,
    x = x, y = y, w = w,
    knots = if (!is.null(res[[2]])) res[[2]] else if (is.null(x)) seq_len(n) else x,
    level = if (!is.null(res[[3]])) res[[3]] else fitted,
    knot_weight = if (!is.null(res[[4]])) res[[4]] else w,
    block_start = res[[5]],
    grad = if (gradient) list(order = res[[6]], start = res[[7]], y_min = bounds[1], y_max = bounds[2]),
    n = n, increasing = increasing, backend = backend, method = method,
    precision = if (backend == "gpu" && single) "single" else "double", call = call
  ), class = "gpuiso_fit")
}

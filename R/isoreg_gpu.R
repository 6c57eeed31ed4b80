#' Exact weighted isotonic regression
#'
#' Fits the non-decreasing (or non-increasing) sequence closest to `y` in weighted least squares,
#' ordered by `x`. The fit is exact, not an iterative approximation: it is the weighted mean of `y`
#' over blocks of consecutive points, the solution that pool adjacent violators and the lower
#' convex hull of the cumulative sum diagram both give. Its levels are computed in double
#' precision: with `method = "pav"` to a few units in the last place of the block's weighted mean
#' of `abs(y)`, so values of opposite signs that cancel lose digits (`c(1e17, 3, -1e17)` fits as
#' 0, not 1); `method = "hull"` and the GPU sum in double-double and keep them (see Engines).
#'
#' As in [stats::isoreg()], a single vector argument is taken as `y` with `x = seq_along(y)`.
#' With a formula as first argument, `isoreg_gpu(y ~ x, data)`, the response and the one covariate
#' are taken from `data` as [stats::lm()] takes them, with its `subset`, `weights` and
#' `na.action`.
#' `x` may come in any order: it is sorted (stably), tied `x` values are pooled into one point
#' (the weighted mean of their `y`, their weights summed), the fit is computed over the distinct
#' `x`, and the fitted values are returned in the input order. `-0` and `0` are one value.
#'
#' **Types of x and y.** Besides numbers, `x` may be a `Date`, a date-time (`POSIXct`, or
#' `POSIXlt`, taken as `POSIXct`), a `difftime` or an ordered factor. The fit is computed on their
#' numeric scale (days since 1970-01-01, seconds since 1970-01-01 UTC, the units of the difftime,
#' the level codes 1, 2, ... of the factor); [knots()] gives the knots, and [plot()] and [lines()]
#' draw the fit, in the type of `x`, and [predict()] takes new `x` of that type. `fit$knots` and
#' [as.stepfun()] stay on the numeric scale. A factor without an order is an error. `y` may be
#' logical (`FALSE` and `TRUE` as 0 and 1). The names of `y` (for a formula, the row names of the
#' data) are kept by [fitted()] and [residuals()].
#'
#' **Direction.** `increasing = "auto"` chooses the direction as scikit-learn's
#' `IsotonicRegression(increasing = "auto")` does: non-decreasing when the Spearman rank
#' correlation of `x` and `y` is at least 0, non-increasing when it is negative. It is computed
#' over the elements of positive weight (the others do not influence the fit), without weights;
#' when it is undefined (`x` or `y` constant there), both directions give the same fit, reported
#' as non-decreasing. `fit$increasing` holds the direction chosen.
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
#' so its fit is at least as accurate as PAV's. Its weights are scaled so that the largest is
#' near 1, and the smallest positive one must then stay in the doubles' normal range: a row whose
#' largest weight is more than 2^1022 (about 4e307) times its smallest positive one is an error
#' that says so (on the GPU too, where `device = "auto"` then fits on the CPU); PAV fits it.
#' `method = "auto"` chooses PAV, which is faster on
#' CPUs at every row length and thread count measured (`tools/bench/RESULTS.md` in the package's
#' source repository). An unsorted `x` is sorted by a parallel radix sort. For many small
#' problems, one call of [isoreg_batch()] (with `group` for rows of unequal length) fits them all
#' many times faster than a loop of `isoreg_gpu()` calls, each of which costs about 15
#' microseconds, most of it R's checks and result, whatever the fit's size.
#'
#' **Devices.** `device = "gpu"` runs the CUDA solver (the hull-merge engine on the GPU: rows of
#' up to 4096 elements in a warp or a block, several short rows to a warp, their lanes' hulls kept
#' as bit masks and merged in rounds; longer rows, in the same batch, in chunks of up to 1024
#' points, a warp per chunk's hull, merged level by level on segment lists by a thread or a warp
#' per merge, and every element's fitted value computed in parallel); it is an error when the
#' package was built without CUDA or no device is found (see [gpuiso_backend()]). A batch larger
#' than the device memory free runs in slices of rows; a row larger than it in segments, fitted one after another on the
#' device and joined on the host, where only blocks next to the cuts are pooled again.
#' `options(gpuiso.gpu_memory = bytes)` caps the device memory a fit takes, for a GPU shared with
#' other work (default: what is free). `method` chooses the CPU engine and is not used on the GPU. An unsorted `x` is sorted there too (a radix sort), its ties pooled
#' and the fit put back in input order, with the data sent in slices whose copies overlap the
#' kernels. `device = "auto"` uses a GPU, when one is usable, for work of at least a size chosen
#' from timings on an NVIDIA H200 beside 16 CPU cores, transfers included (2026-12-04, the run
#' of 10:13; the run of 16:41 found the crossovers of one fit and of a batch unchanged;
#' `tools/bench/RESULTS.md`):
#' 1e5 elements for `isoreg_gpu()` and 1e6 for [isoreg_batch()] (where the GPU became the faster),
#' 1e7 for [calibrate_isotonic()] and [isoreg_vjp()] (the one size timed, 5.6 to 7.4 times
#' faster),
#' 4e5 for [soft_rank()] and [soft_sort()] (between a shape the CPU won and one the GPU won); IDR
#' stays on the CPU (see [idr()]). Below those sizes it uses the CPU. The first GPU call of a
#' session also starts the CUDA runtime (about 0.16 s there), which these sizes do not count.
#' `options(gpuiso.gpu_min_n = n)` sets one size for all of them instead (`Inf`: never), for a
#' machine whose CPU or GPU differs; a CUDA error falls back to the CPU with a message. After a
#' CUDA error that leaves the GPU unusable (an illegal memory
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
#' **`exact = FALSE`.** With `precision = "single"` on the GPU, `exact = FALSE` is the paper's
#' fast mode: within each lane of 32 elements the points of the cumulative sum diagram are plain
#' float32 sums from the lane's start instead of double-double sums (the lanes' starts, the chunk
#' level and the merges are unchanged). The points are still held as pairs of doubles, each the
#' lane's start plus its float32 sums, so in this engine the mode saves little work: it is there
#' for the paper's comparison and for its accuracy, stated here. A lane's running sums are then
#' rounded to float32, so the last bits of each element's step are lost and the hull is
#' taken on those rounded points. The fit still never steps against its direction. Measured on
#' the SIMT executor (the kernels run on the CPU, `make ctest`; tools/bench/RESULTS.md) against
#' the exact fit of the same float32 data, over noise, increasing, sawtooth, cliff, cancellation
#' and consecutive-float rows of 1 to 7169 elements, both directions: without weights or with
#' weights within a factor of 100 of each other, within `6e-5` times the row's largest `|y|`
#' (`1.2e-4` relative to `1 + |fit|`, except where the values cancel to a fit near 0: `6e-2` on
#' the cancellation family); with weights spanning `e^-8` to `e^8`, up to `0.3` times
#' the row's largest `|y|`, as a lane's float32 sum of weights loses the smallest ones whole: use
#' the default `exact = TRUE` for such weights. `exact` has no effect in double precision (whose
#' sums keep their pairs), on the CPU (which has no float32 mode) or with
#' `options(gpuiso.gpu_kernel = )` set to the simple or row-PAV kernels. Its speed on a device has
#' not been measured yet.
#'
#' @param x The covariate values, in any order: numeric, or a `Date`, date-time, `difftime` or
#'   ordered factor (see Types of x and y); or `y` when `y` is `NULL`; or a formula `y ~ x`, of a
#'   response and one covariate (which may be a transformation such as `log(speed)`), whose
#'   variables are taken from `data`.
#' @param y Numeric or logical vector of responses; `NULL` with a formula, or the formula's
#'   `data` (a data frame, list or environment) when `data` is not given, as in
#'   `isoreg_gpu(dist ~ speed, cars)`.
#' @param w Optional numeric vector of non-negative weights, the length of `y`; `NULL` with a
#'   formula, whose weights go in `weights`.
#' @param increasing `TRUE` for a non-decreasing fit, `FALSE` for a non-increasing one, `"auto"`
#'   to choose from the sign of the Spearman correlation (see Direction).
#' @param y_min,y_max Bounds that the fitted values are clipped to after the fit (as in
#'   scikit-learn's `IsotonicRegression`); `-Inf` and `Inf` for none. `y_min = Inf` and
#'   `y_max = -Inf`, which would make every fitted value infinite, are errors.
#' @param device `"auto"`, `"cpu"` or `"gpu"`. For this and the other choices (`method`,
#'   `precision`), a unique prefix is taken, as [match.arg()] does; anything else is an error that
#'   names the argument and its choices.
#' @param method The CPU engine: `"auto"`, `"pav"` or `"hull"` (see Engines).
#' @param precision On the GPU, `"double"` or `"single"` (see Precision on the GPU).
#' @param exact `TRUE` (the default) for the exact sums; `FALSE`, with `precision = "single"` on
#'   the GPU, for plain float32 sums within lanes, at the accuracy stated under
#'   `exact = FALSE` below.
#' @param gradient If `TRUE`, the fit also records the blocks the solver pooled the data into, so
#'   that [isoreg_vjp()] can differentiate it. These are the solver's own blocks, recorded as it
#'   forms them, not found afterwards from equal fitted values: two neighbouring blocks can share
#'   a level (after clipping, or when their means round to the same double) and still move apart
#'   when the data move. The fitted values are the same either way.
#' @param data,subset,weights,na.action With a formula only, as in [stats::lm()]: a data frame (or
#'   list or environment) holding its variables (by default the environment of the formula); a
#'   vector that selects the rows to use; weights, evaluated in `data` like the variables, with the
#'   rules of `w`; and what to do with rows that have `NA`: a function such as [stats::na.omit()]
#'   (the default, from `getOption("na.action")`), [stats::na.exclude()] (the rows are left out of
#'   the fit, and [fitted()] and [residuals()] have `NA` for them) or [stats::na.fail()].
#' @return An object of class `"gpuiso_fit"`, a list with
#'   \item{fitted}{the fitted values, in the order of the input;}
#'   \item{x, y, w}{the inputs (`x` and `w` are `NULL` when not given);}
#'   \item{knots}{the distinct `x`, increasing;}
#'   \item{level}{the fitted value at each knot;}
#'   \item{knot_weight}{the summed weight at each knot (without `w`, the number of tied `x`
#'     pooled into it; it may then be `NULL` where no `x` are tied, every knot having weight 1);}
#'   \item{block_start}{the index into `knots` of the first knot of each block;}
#'   \item{grad}{with `gradient = TRUE`, the solver's blocks for [isoreg_vjp()]: `order`, the
#'     elements in the order of `x` (`NULL` when that is the input order), `start`, `TRUE` where a
#'     block starts in that order, and the bounds `y_min` and `y_max`; `NULL` otherwise;}
#'   \item{x_type}{for an `x` that is not numeric, its type (`kind`: `"Date"`, `"POSIXct"`,
#'     `"difftime"` or `"ordered"`, with the time zone, units or levels); `NULL` otherwise;}
#'   \item{terms, na.action, vars}{for a formula fit, its [stats::terms()], the rows left out
#'     (see [stats::na.action()]) and the names of the covariate and the response; `NULL`
#'     otherwise;}
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
#'
#' # The same data with a formula, and the direction chosen from the data
#' fit <- isoreg_gpu(dist ~ speed, data = cars, weights = rep(1:2, 25), increasing = "auto")
#' plot(fit)
#' lines(isoreg_gpu(dist ~ speed, data = cars, subset = speed > 10), col = "blue")
#' deviance(fit)
#'
#' # A Date covariate
#' days <- as.Date("2024-01-01") + c(0, 3, 1, 7, 5)
#' knots(isoreg_gpu(days, c(2, 5, 1, 9, 4)))
#' @export
isoreg_gpu <- function(x, y = NULL, w = NULL, increasing = TRUE, y_min = -Inf, y_max = Inf,
                       device = c("auto", "cpu", "gpu"), method = c("auto", "pav", "hull"),
                       precision = c("double", "single"), exact = TRUE, gradient = FALSE, data,
                       subset, weights, na.action) {
  call <- match.call()
  frame <- NULL
  if (!missing(x) && is.object(x) && inherits(x, "formula")) {
    # isoreg_gpu(y ~ x, d): the second argument is the data, as lm() takes it
    if (missing(data) && (is.list(y) || is.environment(y))) {
      names(call)[names(call) == "y"] <- "data"
      y <- NULL
    }
    if (!is.null(y)) stop_arg("y", "must be NULL when `x` is a formula (the response is its left-hand side)")
    if (!is.null(w)) stop_arg("w", "must be NULL when `x` is a formula: give the weights as `weights`, evaluated in `data`")
    frame <- formula_frame(call, parent.frame())
    x <- frame$x
    y <- frame$y
    w <- frame$w
  } else {
    given <- !c(missing(data), missing(subset), missing(weights), missing(na.action))
    if (any(given)) {
      stop_arg(c("data", "subset", "weights", "na.action")[given][1L],
               "only applies when `x` is a formula (weights of vectors go in `w`)")
    }
    if (missing(x)) x <- NULL
    if (is.null(y)) {
      if (is.null(x)) stop_arg("y", "is missing")
      y <- x
      x <- NULL
    }
  }
  y_names <- names(y)
  if (is.logical(y)) storage.mode(y) <- "double"
  y <- check_vector(y, "y")
  n <- length(y)
  x_type <- NULL
  if (!is.null(x)) {
    x <- x_numeric(x, "x")
    x_type <- x$type
    x <- check_vector(x$value, "x", n)
  }
  if (!is.null(w)) w <- check_vector(w, "w", n)
  # arguments left at their defaults need no check (in a small fit the checks took most of the
  # time); all are evaluated first, so that one passed on missing by a caller is still an error
  list(increasing, y_min, y_max, device, method, precision, exact, gradient)
  if (!missing(increasing)) increasing <- check_direction(increasing)
  bounds <- if (missing(y_min) && missing(y_max)) c(y_min, y_max) else check_bounds(y_min, y_max)
  backend <- if (missing(device)) auto_backend(n, "fit") else resolve_device(device, n)
  method <- if (missing(method)) default_method else resolve_method(method)
  single <- !missing(precision) && check_precision(precision) == "single"
  if (!missing(exact)) exact <- check_flag(exact, "exact")
  if (!missing(gradient)) gradient <- check_flag(gradient, "gradient")
  if (increasing == "auto") increasing <- rank_direction(if (is.null(x)) seq_len(n) else x, y, w)

  run <- run_on(backend, device, method, function(engine) {
    # single: 2 for float32 without the pairs (exact = FALSE)
    .Call(C_isoreg_fit, x, y, w, increasing, bounds[1], bounds[2], engine,
          if (single && !exact) 2L else single, gradient,
          if (!is.null(frame)) c(frame$vars[["x"]], frame$vars[["y"]], "weights"))
  })
  res <- run$value
  backend <- run$backend
  if (backend == "gpu") method <- "hull"
  fitted <- res[[1]]
  level <- if (!is.null(res[[3]])) res[[3]] else fitted
  if (!is.null(y_names)) names(fitted) <- y_names # names<- would copy the fit even to set none
  # list() and class<- rather than structure(), which costs as much again in a small fit
  fit <- list(
    fitted = fitted,
    x = x, y = y, w = w,
    knots = if (!is.null(res[[2]])) res[[2]] else if (is.null(x)) seq_len(n) else x,
    level = level,
    knot_weight = if (!is.null(res[[4]])) res[[4]] else w,
    block_start = res[[5]],
    grad = if (gradient) list(order = res[[6]], start = res[[7]], y_min = bounds[1], y_max = bounds[2]),
    x_type = x_type, terms = frame$terms, na.action = frame$na.action, vars = frame$vars,
    n = n, increasing = increasing, backend = backend, method = method,
    precision = if (backend == "gpu" && single) "single" else "double", call = call
  )
  class(fit) <- "gpuiso_fit"
  fit
}

# The model frame of a formula fit, built as lm() builds it from the call's formula (its x),
# data, subset, weights and na.action, evaluated in the caller's frame env: the covariate, the
# response (with the data's row names), the weights (checked here, so that errors name
# `weights`), the terms, the rows left out and the names of the two variables.
formula_frame <- function(call, env) {
  mf <- call[c(1L, match(c("x", "data", "subset", "weights", "na.action"), names(call), 0L))]
  names(mf)[names(mf) == "x"] <- "formula"
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, env)
  terms <- attr(mf, "terms")
  covariate <- attr(terms, "term.labels")
  if (attr(terms, "response") != 1L || length(covariate) != 1L || !covariate %in% names(mf) ||
      !is.null(attr(terms, "offset"))) {
    stop_arg("x", sprintf("must be a formula y ~ x, of a response and one covariate, not %s",
                          paste(deparse(stats::formula(terms)), collapse = " ")))
  }
  if (nrow(mf) == 0L) stop_arg("data", "has no rows left to fit after `subset` and `na.action`")
  w <- stats::model.weights(mf)
  list(x = mf[[covariate]], y = stats::model.response(mf),
       w = if (!is.null(w)) check_weights(w, nrow(mf)), terms = terms,
       na.action = attr(mf, "na.action"), vars = c(x = covariate, y = names(mf)[1L]))
}

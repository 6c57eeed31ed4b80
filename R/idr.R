#' Isotonic distributional regression (IDR)
#'
#' Estimates the conditional distribution of `y` given covariates `X` under the assumption that
#' `y` tends to be larger when `X` is larger (first-order stochastic dominance): for every
#' threshold `t` among the distinct values of `y`, the conditional CDF \eqn{F(t \mid x)}{F(t | x)} is the
#' non-increasing (antitonic) weighted least-squares fit in `x` of the indicators
#' \eqn{1\{y \le t\}}{1{y <= t}} (Henzi, Ziegel and Gneiting, 2021). The interface follows the package
#' isodistrreg. A study that uses `idr()`, [`predict()`][predict.gpuiso_idrfit()], [cdf()],
#' [qpred()], [crps()], [pit()], [bscore()] and [qscore()] can switch by changing its `library()`
#' line if it gives `idr()`'s arguments after `y` and `X` by name (the third is `weights` here,
#' `groups` in isodistrreg) and does not set what gpuiso does not take: `stoch = "hazard"`, the
#' solver settings `pars`, or `predict()`'s `digits` and `asplitAvail` (gpuiso's fits are exact,
#' not a solver's, and are not rounded). [idrbag()] takes its arguments in another order and
#' lacks some of isodistrreg's: see there.
#'
#' **One covariate.** On the CPU the fit sweeps the thresholds in increasing order and updates the
#' previous antitonic fit, as only the indicators of the observations equal to the new threshold
#' change. The fit is the slope of the least concave majorant of the cumulative sums, kept in a
#' balanced tree of hull bridges (Overmars and van Leeuwen, 1981) whose nodes above the changed
#' observations are joined again: \eqn{O(\log^3 n)}{O(log^3 n)} a changed observation, and a time
#' that does not depend on how long the fit's blocks are. Its arithmetic is exact: the weights
#' are counted as integers, in units of the largest power of two that divides all of them, with
#' 32-bit coordinates where they suffice (unweighted fits up to \eqn{2^{30}}{2^30} observations)
#' and 128-bit ones otherwise (such as \eqn{n = 10^6}{n = 1e6} weights drawn from Exp(1)). Weights whose total exceeds
#' \eqn{2^{124}}{2^124} such units (for weights with full 53-bit fractions, a total above about
#' \eqn{2^{72}}{2^72} times the smallest weight; \eqn{2^{26}}{2^26} units where the compiler
#' lacks 128-bit integers) are re-pooled instead only in the blocks that hold the changed observations (Henzi, Moesching and
#' Duembgen, 2022), comparing levels as ratios of pooled sums whatever the weights' range; this
#' costs the length of those blocks, so it is slow where the covariate says little about `y`
#' (about a minute for \eqn{n = 10^5}{n = 1e5} on one core, against a second for the tree). Slices
#' of thresholds run on the threads of
#' [gpuiso_threads()]. On a GPU (`device = "gpu"`) the indicator rows of a slice of thresholds are
#' made on the device from the observations, fitted there as one batch of antitonic rows by the
#' CUDA solver, and only their blocks are copied back. Both results are exact, and equal up to
#' rounding.
#'
#' **Several covariates.** The columns of `X` are assigned to `groups`, each compared by its order
#' in `orders`: `"comp"` componentwise; `"sd"` (empirical first-order stochastic dominance of the
#' group's members, for exchangeable members such as an ensemble) componentwise on the members
#' sorted; `"icx"` (increasing convex order) componentwise on the cumulative sums of the members
#' sorted decreasingly, as isodistrreg. A covariate vector is below another when it is below in
#' every group. The distinct covariate vectors form a partial order, whose transitive reduction is
#' computed once (all pairs compared, \eqn{O(m^2 d)}{O(m^2 d)} for \eqn{m}{m} distinct
#' vectors of \eqn{d}{d} numbers, the covers then read from bit sets of the vectors above each,
#' \eqn{m^2/16}{m^2/16} bytes, up to some 64,000 vectors). Each threshold's CDF is then the
#' exact antitonic least-squares fit on that order, found by recursive partitioning with minimum
#' cuts (Hochbaum and Queyranne, 2003; Luss, Rosset and Shahar, 2012): a block is split at its
#' weighted mean by a maximum-weight closure (a maximum flow on the reduction, by push-relabel),
#' and each part is fitted the same way. For unweighted data the
#' cuts are computed in whole numbers, so the fit is exact, not a solver's tolerance as with
#' isodistrreg's quadratic programs. With weights, the gains are formed from exact products and
#' the blocks' sums as pairs of doubles, and the flows are in doubles: against an exact rational
#' solver, 200 random posets each with weights over 1e+-3, 1e+-5 and 1e+-7 fitted within 3e-11
#' (within 3e-15 but for one), and 50 each over 1e+-8 to 1e+-10 within 2.3e-16; the first misses
#' came where the covariate vectors' total weights spanned a ratio of about 1e19, so a ratio over
#' \eqn{2^{56}}{2^56} (about 7e16) is an error that says so (one covariate has no such limit).
#' Neighbouring thresholds share work: the exact CDF rises with
#' the threshold, so the thresholds are fitted by bisection, each between the two nearest already
#' fitted, whose CDFs bound it; the bounds decide on which side of each cut most covariate vectors
#' lie, so that the flows see only the vectors whose CDF may cross the cut's value (the result is
#' the same exact fit). Slices of thresholds run on the threads of [gpuiso_threads()], a thread
#' whose slice is done taking thresholds still queued by another (the fit is the same bit for bit
#' on any number of threads); several covariates always run on the CPU.
#'
#' The CDFs are stored compactly: per threshold only the runs of equal values over the distinct
#' covariate values (the blocks of its antitonic fit for one covariate; with several, the
#' distinct vectors are stored in the order of their fitted mean, so that alike CDFs are
#' neighbours), instead of a dense matrix of (distinct x) x (thresholds) values. Use
#' `dense = TRUE` or [as.matrix()] for the dense matrix of small fits.
#'
#' Ties in `X` are pooled; observations of weight zero do not enter the fit (but get
#' in-sample predictions).
#'
#' @param y Numeric vector of responses, finite.
#' @param X The covariates: a data frame of numeric or ordered-factor columns, a numeric vector or
#'   a numeric matrix.
#' @param weights Optional non-negative weights, one per observation; only their ratios matter
#'   (they are scaled by a power of two, so weights near the largest double or subnormal ones fit
#'   as the same weights at scale 1).
#' @param groups With several covariates: a vector named by the columns of `X` that gives each
#'   column's group, a number or a string (as isodistrreg); `NULL` (the default) puts all columns
#'   in group 1.
#' @param orders A vector named by orders (`"comp"`, `"sd"`, `"icx"`) whose values are the groups
#'   they apply to; every group needs one. `"sd"` and `"icx"` need numeric columns. With one
#'   covariate every order is the usual order of the numbers.
#' @param stoch The stochastic order: only `"sd"` (first-order stochastic dominance).
#' @param pars isodistrreg's settings of its numerical solver; gpuiso's fits are exact, so it must
#'   be left `NULL`.
#' @param progress Show a progress bar ([utils::txtProgressBar()]) when the fit of several
#'   covariates takes more than about two seconds: `TRUE` or `FALSE` (or 1, 0). The default shows it
#'   in interactive sessions only. The fit of one covariate takes seconds even for 10^5
#'   observations and shows none.
#' @param dense If `TRUE`, also store the fitted CDFs as a dense matrix `cdf` (distinct x by
#'   thresholds), as isodistrreg does.
#' @param device `"auto"` (the CPU), `"cpu"` or `"gpu"` (a CUDA device, for one covariate; an
#'   error naming the reason when the package was built without CUDA or no device is found).
#'   `"auto"` stays on the CPU, which was the faster on an NVIDIA H200 beside 16 cores
#'   (2026-12-04; n = 1e5: 3.4 s on the GPU, 0.6 s on the CPU; `tools/bench/RESULTS.md`).
#' @return An object of class `"gpuiso_idrfit"` (gpuiso's own class, so that isodistrreg's
#'   `"idrfit"` objects and their methods are left alone when both packages are loaded): a list
#'   with `X` (a data frame of the distinct covariate values of the observations of positive
#'   weight: increasing for one covariate, in the stored order for several), `thresholds` (the
#'   distinct `y` of those observations, increasing), `weights` (the
#'   summed weight of each distinct `X`), `runs` (the compact CDFs), `nobs`, `x` (the covariate of
#'   each observation, for in-sample predictions; with several covariates the matrix of the
#'   compared values), `covariate` (its name or names, `NULL` when `X` had none, and the levels
#'   of one ordered-factor covariate; those of several are in `order$spec$levels`),
#'   `backend` (`"cpu"` or `"gpu"`: where the fit ran), with several covariates `order` (the
#'   groups and orders, and what predictions need) and, with `dense = TRUE`, `cdf`.
#' @references
#' Henzi, A., Ziegel, J. F. and Gneiting, T. (2021). Isotonic distributional regression. Journal
#' of the Royal Statistical Society: Series B, 83(5), 963-993.
#'
#' Henzi, A., Moesching, A. and Duembgen, L. (2022). Accelerating the pool-adjacent-violators
#' algorithm for isotonic distributional regression. Methodology and Computing in Applied
#' Probability, 24, 2633-2645.
#'
#' Hochbaum, D. S. and Queyranne, M. (2003). Minimum cut procedures for the isotonic regression
#' problem. Operations Research, 51(2), 339-348 (as the convex cost closure problem).
#'
#' Luss, R., Rosset, S. and Shahar, M. (2012). Efficient regularized isotonic regression with
#' application to gene-gene interaction search. Annals of Applied Statistics, 6(1), 253-283.
#'
#' Overmars, M. H. and van Leeuwen, J. (1981). Maintenance of configurations in the plane.
#' Journal of Computer and System Sciences, 23(2), 166-204.
#' @seealso [predict.gpuiso_idrfit()] for predictive distributions, [cdf()], [qpred()], [crps()],
#'   [pit()], [bscore()], [qscore()] to use and score them, [idrbag()] for subagging.
#' @examples
#' aq <- na.omit(airquality[, c("Ozone", "Temp", "Wind")])
#' fit <- idr(aq$Ozone, aq[, "Temp", drop = FALSE])
#' fit
#' pred <- predict(fit, data.frame(Temp = c(60, 75, 90)))
#' qpred(pred, c(0.1, 0.5, 0.9))
#' mean(crps(predict(fit), aq$Ozone))
#'
#' # two covariates, componentwise: ozone rises with temperature and falls with wind
#' aq$calm <- -aq$Wind
#' fit2 <- idr(aq$Ozone, aq[, c("Temp", "calm")])
#' qpred(predict(fit2, data.frame(Temp = c(70, 90), calm = c(-10, -5))), 0.5)
#'
#' # an ensemble of exchangeable members, compared by stochastic dominance
#' set.seed(1)
#' ens <- data.frame(matrix(rnorm(300), 100, 3, dimnames = list(NULL, c("m1", "m2", "m3"))))
#' obs <- rowMeans(ens) + rnorm(100)
#' fit3 <- idr(obs, ens, groups = c(m1 = 1, m2 = 1, m3 = 1), orders = c(sd = 1))
#' # the predictive median where all members forecast 0, and where all forecast 1
#' qpred(predict(fit3, data.frame(m1 = c(0, 1), m2 = c(0, 1), m3 = c(0, 1))), 0.5)
#' @export
idr <- function(y, X, weights = NULL, groups = NULL, orders = c("comp" = 1), stoch = "sd",
                pars = NULL, progress = interactive(), dense = FALSE,
                device = c("auto", "cpu", "gpu")) {
  check_idr_options(orders, stoch, pars)
  progress <- check_progress(progress)
  dense <- check_flag(dense, "dense")
  y <- check_finite(check_vector(y, "y"), "y")
  if (covariate_count(X) > 1L) {
    device <- check_choice(device, c("auto", "cpu", "gpu"), "device")
    if (device == "gpu") {
      stop_arg("device", "must be \"auto\" or \"cpu\" with several covariates: their fit runs on the CPU")
    }
    return(idr_poset(y, X, weights, groups, orders, progress, dense))
  }
  backend <- idr_device(device)
  cov <- idr_covariate(X, length(y))
  check_groups(groups, orders, if (is.null(cov$name)) NULL else cov$name)
  w <- if (!is.null(weights)) check_weights(weights, length(y))
  w_fit <- if (!is.null(w)) scale_weights(w)
  keep <- if (is.null(w)) rep(TRUE, length(y)) else w_fit > 0
  xk <- cov$value[keep]
  yk <- y[keep]
  # sort(unique()) and match() of each in one sort in C (a third of a small fit's time)
  x_codes <- .Call(C_distinct_codes, xk)
  y_codes <- .Call(C_distinct_codes, yk)
  xs <- x_codes[[1]]
  thresholds <- y_codes[[1]]
  pos <- x_codes[[2]]
  runs <- .Call(C_idr_fit, pos, y_codes[[2]], if (is.null(w)) NULL else w_fit[keep],
                length(xs), length(thresholds), backend == "gpu")
  X_out <- list2DF(stats::setNames(list(cov$restore(xs)), covariate_label(cov)))
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

# The backend of an IDR fit: "auto" is the CPU (on an H200, n = 1e5 took 3.4 s on the GPU against
# 0.6 s on 16 cores; gpuiso.gpu_min_n is the solver's), "gpu" a CUDA device or an error saying
# why not.
idr_device <- function(device) {
  device <- check_choice(device, c("auto", "cpu", "gpu"), "device")
  if (device == "auto") "cpu" else resolve_device(device, 0)
}

check_idr_options <- function(orders, stoch, pars) {
  if (!is.null(pars)) {
    stop_arg("pars", paste0("sets isodistrreg's numerical solver; gpuiso's fits are exact and take ",
                            "no solver settings: leave it NULL"))
  }
  if (!(is.numeric(orders) || is.character(orders)) || is.null(names(orders)) || anyNA(orders) ||
      !all(names(orders) %in% c("comp", "sd", "icx"))) {
    stop_arg("orders", "must be a named vector with names in \"comp\", \"sd\", \"icx\"")
  }
  if (anyDuplicated(unname(orders))) {
    stop_arg("orders", "gives more than one order to a group")
  }
  if (!identical(stoch, "sd")) {
    stop_arg("stoch", "must be \"sd\" (first-order stochastic dominance); other orders are not supported")
  }
}

# isodistrreg's progress: TRUE, FALSE, 1 or 0.
check_progress <- function(progress) {
  if (is.numeric(progress) && length(progress) == 1L && progress %in% c(0, 1)) {
    return(progress == 1)
  }
  if (!is.logical(progress) || length(progress) != 1L || is.na(progress)) {
    stop_arg("progress", "must be TRUE or FALSE (or 1 or 0)")
  }
  progress
}

# groups (NULL: every column in group 1) checked against the column names of X and orders;
# returns the group of each column.
check_groups <- function(groups, orders, columns) {
  if (is.null(groups)) {
    if (length(orders) != 1L || orders != 1) {
      stop_arg("orders", "must apply to group 1 when `groups` is NULL (every column in group 1)")
    }
    return(rep(1, length(columns)))
  }
  if (!(is.numeric(groups) || is.character(groups)) || anyNA(groups) || is.null(names(groups))) {
    stop_arg("groups", "must be a vector of group labels (numbers or strings) named by the columns of `X`")
  }
  if (is.null(columns) || !setequal(names(groups), columns) || anyDuplicated(names(groups))) {
    stop_arg("groups", sprintf("must name each column of `X` once (%s), but names %s",
                               if (is.null(columns)) "which has no column names" else quoted_list(columns),
                               quoted_list(names(groups))))
  }
  if (!setequal(unname(groups), unname(orders))) {
    stop_arg("orders", sprintf("must give one order to each group of `groups` (%s), not to %s",
                               paste(sort(unique(groups)), collapse = ", "),
                               paste(sort(unname(orders)), collapse = ", ")))
  }
  unname(groups[columns])
}

check_finite <- function(v, name) {
  bad <- first_bad(v)
  if (bad > 0) stop_arg(name, sprintf("must be finite, but has %s at element %d", format(v[bad]), bad))
  v
}


# The covariate as numbers (ordered factors as their codes), with what is needed to map new data
# and to show the distinct values: list(value, name, levels, restore). name is the column name of
# a data frame or matrix, NULL for a vector (new data are then matched by position only). New data
# may be infinite (finite = FALSE): such a value predicts as the nearest fitted one, as in
# isodistrreg.
idr_covariate <- function(X, n, name = "X", finite = TRUE) {
  col_name <- NULL
  if (is.data.frame(X)) {
    if (ncol(X) != 1L) {
      stop_arg(name, sprintf("must have one covariate, not %d", ncol(X)))
    }
    col_name <- names(X)[1L]
    X <- X[[1L]]
  } else if (is.matrix(X)) {
    if (ncol(X) != 1L) {
      stop_arg(name, sprintf("must have one column, not %d", ncol(X)))
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
  if (finite) check_finite(value, name)
  restore <- if (is.null(levels)) identity else function(v) factor(levels[v], levels, ordered = TRUE)
  list(value = value, name = col_name, levels = levels, restore = restore)
}

# The covariate's name to show: "x" for one that came without a name.
covariate_label <- function(covariate) {
  if (is.null(covariate$name)) "x" else paste(covariate$name, collapse = ", ")
}

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

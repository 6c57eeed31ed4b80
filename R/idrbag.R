#' IDR predictions with subagging or bagging
#'
#' Draws `b` subsamples of `ceiling(p * length(y))` observations (without replacement, or with
#' it for bagging), fits [idr()] to each, predicts at `newdata` and averages the predictive CDFs
#' on `grid`, as isodistrreg's `idrbag()` does.
#'
#' **Differences from isodistrreg's `idrbag()`.** A call written for isodistrreg does not always
#' run unchanged. The arguments come in another order: here `newdata` is the third (isodistrreg's
#' third is `groups`, and its `newdata` comes after `groups`, `orders`, `stoch`, `pars` and
#' `progress`), so give every argument after `y` and `X` by name (`idrbag(y, X, newdata = nd,
#' b = 100, p = 0.5)` runs in both packages). isodistrreg's `pars`, `digits`, `interpolation` and
#' `asplitAvail` are not arguments here, and a call that gives any of them is an error: the fits
#' are exact and take no solver settings (`pars`), the averaged CDFs are not rounded (`digits`),
#' and each subsample's prediction is made with [predict.gpuiso_idrfit()]'s default
#' `interpolation = "linear"` (isodistrreg's default too; its other choice, the mean of the two
#' neighbouring CDFs, is not available here). `weights` is gpuiso's own addition.
#'
#' When the package future.apply is installed, the subsamples run on the workers of the current
#' [future::plan()]: `plan(multisession)` on the cores of one machine, `plan(cluster)` or a
#' batchtools plan across machines; without a plan they run one after the other. They run in
#' rounds (at least one subsample per worker, at most 20 rounds unless memory bounds them):
#' before each round the calling session draws that round's subsamples, in order, and hands each
#' worker its share, so that no more than about 2^24 drawn indices (or one subsample per worker)
#' are held at once whatever `b` is. The subsamples depend on the seed only, not on the plan or
#' the number of workers (the averaged CDFs then agree up to the rounding of the sums, which
#' workers add in their own order).
#'
#' @inheritParams idr
#' @param X The covariates, as in [idr()]: one, or several (compared by `groups` and `orders`).
#' @param newdata Covariate values to predict at (as `data` in [predict.gpuiso_idrfit()]).
#' @param b Number of subsamples, a whole number from 1 to 10^6.
#' @param p Size of each subsample, relative to the data: a number in (0, 1).
#' @param replace Draw with replacement (bagging) instead of without (subagging)?
#' @param grid Thresholds at which the averaged CDFs are held; default the distinct `y`. A grid
#'   that ends below `max(y)` gets that point added, where every CDF reaches 1.
#' @param progress Show a progress bar once the work has taken about two seconds? `TRUE` or
#'   `FALSE` (or 1, 0); the default shows it in interactive sessions only.
#' @param groups,orders As in [idr()]: with several covariates, the groups of the columns of `X`
#'   and their orders.
#' @return A `"gpuiso_idr"` object: the averaged predictive distributions, one per row of
#'   `newdata`.
#' @seealso [idr()], [predict.gpuiso_idrfit()].
#' @examples
#' aq <- na.omit(airquality[, c("Ozone", "Temp")])
#' set.seed(1)
#' pred <- idrbag(aq$Ozone, aq[, "Temp", drop = FALSE], newdata = data.frame(Temp = c(70, 90)),
#'                b = 20, p = 0.5, progress = FALSE)
#' qpred(pred, c(0.1, 0.5, 0.9))
#' @export
idrbag <- function(y, X, newdata, b, p, replace = FALSE, grid = NULL, weights = NULL,
                   groups = NULL, orders = c("comp" = 1), stoch = "sd", progress = interactive()) {
  check_idr_options(orders, stoch, NULL)
  y <- check_finite(check_vector(y, "y"), "y")
  n <- length(y)
  several <- covariate_count(X) > 1L
  if (several) {
    ov <- order_values(X, n, groups, orders)
    spec <- ov$spec
  } else {
    cov <- idr_covariate(X, n)
    check_groups(groups, orders, if (is.null(cov$name)) NULL else cov$name)
  }
  w <- if (!is.null(weights)) check_weights(weights, n)
  # Each subsample is an IDR fit of its own: a million of them is hours of work, more a mistake.
  if (!is.numeric(b) || length(b) != 1L || is.na(b) || b < 1 || b > 1e6 || b != round(b)) {
    stop_arg("b", sprintf("must be a whole number from 1 to 1e6 (the number of subsamples), not %s",
                          if (is.numeric(b) && length(b) == 1L) format(b) else describe(b)))
  }
  if (!is.numeric(p) || length(p) != 1L || is.na(p) || p <= 0 || p >= 1) {
    stop_arg("p", "must be a number between 0 and 1 (exclusive)")
  }
  replace <- check_flag(replace, "replace")
  progress <- check_progress(progress)
  grid <- if (is.null(grid)) y else check_finite(check_vector(grid, "grid"), "grid")
  # Every CDF reaches 1 at max(y): a grid that stops below it gets that point too.
  grid <- sort(unique(c(grid, if (max(grid) < max(y)) max(y))))
  if (missing(newdata)) stop_arg("newdata", "is missing: give the covariate values to predict at")
  if (several) {
    # checked here, so that a bad newdata is an error of idrbag(), not of a subsample's predict()
    order_values(newdata, NROW(newdata), spec = spec, arg = "newdata")
    x <- ov$X
    newx <- newdata
    fit_sub <- function(s, ws) {
      idr(y[s], x[s, , drop = FALSE], weights = ws, groups = stats::setNames(spec$groups, spec$columns),
          orders = spec$orders, progress = FALSE)
    }
  } else {
    # The subsample fits take the covariate as a vector, and newdata as the vector it maps to.
    newx <- cov$restore(covariate_values(cov[c("name", "levels")], newdata, "newdata"))
    x <- cov$restore(cov$value)
    fit_sub <- function(s, ws) idr(y[s], x[s], weights = ws)
  }

  size <- ceiling(p * n)
  draw <- function(count) lapply(seq_len(count), function(i) sample.int(n, size, replace = replace))
  one_bag <- function(s) {
    if (!is.null(w) && !any(w[s] > 0)) {
      stop_arg("weights", "are all zero in one of the subsamples; use a larger `p` or fewer zero weights")
    }
    fit <- fit_sub(s, if (is.null(w)) NULL else w[s])
    cdf(stats::predict(fit, newx), grid)
  }
  sum_bags <- function(bags) Reduce(`+`, lapply(bags, one_bag))
  total <- bag_rounds(b, size, draw, sum_bags, progress)
  preds <- total / b
  runs <- .Call(C_cdf_dense, preds)
  new_idr_predictions(runs, grid, seq_len(nrow(preds)) - 1L, double(nrow(preds)))
}

# Runs sum_bags over b samples in rounds, on the workers of the current future plan when
# future.apply is installed, and returns the sum; draw(k) draws the next k samples (of `size`
# indices each) in the calling session, just before their round; the progress bar moves after
# each round (see progress_bar()). A round has at least one sample per worker and at most about
# 2^24 indices.
bag_rounds <- function(b, size, draw, sum_bags, progress) {
  use_future <- requireNamespace("future.apply", quietly = TRUE)
  workers <- if (use_future) future::nbrOfWorkers() else 1
  # A plan may report infinitely many workers: then one chunk per sample.
  workers <- as.integer(max(1, min(workers, b)))
  per_round <- max(workers, min(ceiling(b / 20), floor(2^24 / size)))
  bar <- progress_bar(progress)
  on.exit(bar$close())
  total <- 0
  done <- 0
  while (done < b) {
    count <- min(per_round, b - done)
    samples <- draw(count)
    chunks <- split(samples, seq_len(count) %% workers)
    parts <- if (use_future) {
      future.apply::future_lapply(chunks, sum_bags)
    } else {
      lapply(chunks, sum_bags)
    }
    total <- total + Reduce(`+`, parts)
    done <- done + count
    bar$update(done / b)
  }
  total
}

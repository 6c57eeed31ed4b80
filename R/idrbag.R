#' IDR predictions with subagging or bagging
#'
#' Draws `b` subsamples of `ceiling(p * length(y))` observations (without replacement, or with
#' it for bagging), fits [idr()] to each, predicts at `newdata` and averages the predictive CDFs
#' on `grid`, as isodistrreg's `idrbag()` does.
#'
#' When the package future.apply is installed, the subsamples run on the workers of the current
#' [future::plan()]: `plan(multisession)` on the cores of one machine, `plan(cluster)` or a
#' batchtools plan across machines; without a plan they run one after the other. The subsamples
#' are drawn in the calling session before any work is sent out, so they depend on the seed only,
#' not on the plan or the number of workers (the averaged CDFs then agree up to the rounding of
#' the sums, which workers add in their own order).
#'
#' @inheritParams idr
#' @param newdata Covariate values to predict at (as `data` in [predict.gpuiso_idrfit()]).
#' @param b Number of subsamples.
#' @param p Size of each subsample, relative to the data: a number in (0, 1).
#' @param replace Draw with replacement (bagging) instead of without (subagging)?
#' @param grid Thresholds at which the averaged CDFs are held; default the distinct `y`. A grid
#'   that ends below `max(y)` gets that point added, where every CDF reaches 1.
#' @param progress Show a progress bar (default: in interactive sessions)?
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
                   orders = c("comp" = 1), stoch = "sd", progress = interactive()) {
  check_idr_options(NULL, orders, stoch, NULL)
  y <- check_finite(check_vector(y, "y"), "y")
  n <- length(y)
  cov <- idr_covariate(X, n)
  w <- if (!is.null(weights)) check_weights(weights, n)
  if (!is.numeric(b) || length(b) != 1L || is.na(b) || b < 1 || b != round(b)) {
    stop_arg("b", "must be a positive whole number")
  }
  if (!is.numeric(p) || length(p) != 1L || is.na(p) || p <= 0 || p >= 1) {
    stop_arg("p", "must be a number between 0 and 1 (exclusive)")
  }
  replace <- check_flag(replace, "replace")
  progress <- check_flag(progress, "progress")
  grid <- if (is.null(grid)) y else check_finite(check_vector(grid, "grid"), "grid")
  # Every CDF reaches 1 at max(y): a grid that stops below it gets that point too.
  grid <- sort(unique(c(grid, if (max(grid) < max(y)) max(y))))
  if (missing(newdata)) stop_arg("newdata", "is missing: give the covariate values to predict at")
  # The subsample fits take the covariate as a vector, and newdata as the vector it maps to.
  newx <- cov$restore(covariate_values(cov[c("name", "levels")], newdata, "newdata"))
  x <- cov$restore(cov$value)

  size <- ceiling(p * n)
  samples <- lapply(seq_len(b), function(i) sample.int(n, size, replace = replace))
  one_bag <- function(s) {
    if (!is.null(w) && !any(w[s] > 0)) {
      stop_arg("weights", "are all zero in one of the subsamples; use a larger `p` or fewer zero weights")
    }
    fit <- idr(y[s], x[s], weights = if (is.null(w)) NULL else w[s])
    cdf(stats::predict(fit, newx), grid)
  }
  sum_bags <- function(bags) Reduce(`+`, lapply(bags, one_bag))
  total <- bag_rounds(samples, sum_bags, progress)
  preds <- total / b
  runs <- .Call(C_cdf_dense, preds)
  new_idr_predictions(runs, grid, seq_len(nrow(preds)) - 1L, double(nrow(preds)))
}

# Runs sum_bags over the samples in rounds, on the workers of the current future plan when
# future.apply is installed, and returns the sum; the progress bar moves after each round.
bag_rounds <- function(samples, sum_bags, progress) {
  use_future <- requireNamespace("future.apply", quietly = TRUE)
  workers <- if (use_future) future::nbrOfWorkers() else 1
  # A plan may report infinitely many workers: then one chunk per sample.
  workers <- as.integer(max(1, min(workers, length(samples))))
  b <- length(samples)
  rounds <- split(seq_len(b), ceiling(seq_len(b) / max(workers, ceiling(b / 20))))
  if (progress) {
    bar <- utils::txtProgressBar(min = 0, max = b, style = 3)
    on.exit(close(bar))
  }
  total <- 0
  done <- 0L
  for (round in rounds) {
    chunks <- split(samples[round], seq_along(round) %% workers)
    parts <- if (use_future) {
      future.apply::future_lapply(chunks, sum_bags)
    } else {
      lapply(chunks, sum_bags)
    }
    total <- total + Reduce(`+`, parts)
    done <- done + length(round)
    if (progress) utils::setTxtProgressBar(bar, done)
  }
  total
}

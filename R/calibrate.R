#' Calibrate classifier scores by isotonic regression
#'
#' Turns the scores of a binary classifier into calibrated probabilities: the isotonic
#' (non-decreasing) regression of the 0/1 labels on the scores, fitted for all scores together and,
#' with `group`, separately for each group (for example one curve per country or campaign). Each
#' curve is the non-decreasing step function of the score that is closest to the labels in
#' weighted least squares; a calibrated probability is the weighted rate of positive labels in the
#' block of neighbouring scores it falls in.
#'
#' The scores may come in any order. They are sorted once; equal scores are pooled (their labels
#' averaged with their weights, the weights summed), per group and for the pooled curve; and the
#' curves of all groups are fitted as one batch of ragged problems, in parallel over groups (see
#' [gpuiso_threads()]). The curve of all scores together is always fitted too: [predict()] uses
#' it for groups it has not seen.
#'
#' **Weights.** `weights` must be finite and non-negative, with at least one positive weight in
#' each group, and sum to less than \eqn{2^{1023}}{2^1023} (only their ratios matter: divide
#' larger ones by a constant); a score of weight zero does not move the curve's probabilities. As in
#' [isoreg_gpu()], it takes the probability of the nearest lower score of positive weight (of the
#' nearest higher one when there is none), whether the curve rises or falls, and so joins that
#' block: its score can become the block's first or last, which the linear interpolation of
#' [predict()] (`type = "linear"`) runs between.
#'
#' **Device.** With `device = "gpu"` the whole pipeline runs on a CUDA device: the scores go up
#' once, are sorted there by score and by group and score, pooled and fitted as one batch, and only
#' the blocks of the curves come back. The curves are those of the CPU up to rounding. Such a
#' calibrator's [predict()] runs on the GPU too (see its `device`). `"gpu"` is
#' an error when the package was built without
#' CUDA or no device is found; `"auto"` runs on a usable GPU from 1e7 scores (where it was
#' measured 6.3 times faster than the CPU path on 16 cores with 301 curves, and 7.4 times with
#' one: an NVIDIA H200, 2026-12-04; `tools/bench/RESULTS.md`), or from `options(gpuiso.gpu_min_n = )`
#' where that is set, else on the CPU, and falls back to the CPU, with a message, when the GPU
#' fails (see [isoreg_gpu()]).
#'
#' @param score Numeric vector of classifier scores (probabilities, logits or any other monotone
#'   score), in any order, without `NA` or infinite values.
#' @param label The outcome of each score: a logical vector, or numeric `0` and `1`.
#' @param weights Optional non-negative weights, the length of `score` (for example, the inverse of
#'   a sampling rate).
#' @param group Optional factor or vector of group ids, the length of `score`, without `NA`. A
#'   factor's levels must all occur; other ids become groups in sorted order.
#' @param increasing `TRUE` (the default) for probabilities that rise with the score, `FALSE` for
#'   scores that are higher for the negative class (the curves then fall), `"auto"` to choose from
#'   the sign of the Spearman correlation of the scores and labels of positive weight, all groups
#'   together (as in [isoreg_gpu()]). With `TRUE`, a pooled curve that is flat (one block) while
#'   that correlation is evidently negative (its 95% confidence interval, by Fisher's z, lies
#'   below 0) gives a warning: the scores then fall as the label rises, which a rising curve cannot
#'   follow.
#' @param device `"auto"`, `"cpu"` or `"gpu"`.
#' @return An object of class `"gpuiso_calibrator"`, a list with
#'   \item{pooled}{the curve of all scores: a data frame with one row per block, `lower` and
#'     `upper` (the first and last score of the block), `prob` (its calibrated probability) and
#'     `weight` (its summed weight, the number of scores without weights);}
#'   \item{curves}{with `group`, the curves of the groups in one data frame of the same columns
#'     and a first column `group`, ordered by group and score; `NULL` without;}
#'   \item{groups}{the group ids (the levels of a factor), `NULL` without `group`;}
#'   \item{first}{the row of `curves` where each group's curve starts (and one past the last);}
#'   \item{n, n_group}{the number of scores, in all and per group;}
#'   \item{increasing}{the direction of the curves (`TRUE`: rising with the score);}
#'   \item{backend, call}{the backend that ran (`"cpu"` or `"gpu"`) and the call.}
#' @seealso [predict.gpuiso_calibrator()] for calibrated probabilities,
#'   [plot.gpuiso_calibrator()], [calibration_error()], [reliability_diagram()];
#'   `vignette("calibration", package = "gpuiso")` for a worked case.
#' @examples
#' set.seed(1)
#' n <- 5000
#' country <- sample(c("FR", "DE", "IT"), n, replace = TRUE)
#' score <- runif(n)
#' click <- rbinom(n, 1, score^2 * ifelse(country == "DE", 0.5, 0.3))
#' cal <- calibrate_isotonic(score, click, group = country)
#' cal
#' # "ES" was not in the training data: its score gets the pooled curve, with a warning
#' predict(cal, c(0.1, 0.5, 0.9), group = c("FR", "DE", "ES"))
#' plot(cal)
#' @export
calibrate_isotonic <- function(score, label, weights = NULL, group = NULL, increasing = TRUE,
                               device = c("auto", "cpu", "gpu")) {
  call <- match.call()
  score <- check_vector(score, "score")
  n <- length(score)
  label <- check_label(label, n)
  if (!is.null(weights)) {
    weights <- check_weights(weights, n, "score")
    # a margin below the largest double (about 2^1024) for the rounding of the engines' sums
    if (!(sum(weights) < 2^1023)) {
      stop_arg("weights", paste0("are too large: their sum reaches 2^1023, too near the largest ",
                                 "double; divide them by a constant (the calibrated probabilities ",
                                 "do not change)"))
    }
  }
  groups <- if (!is.null(group)) check_group(group, n)
  list(increasing, device) # evaluated: defaults need no check (as in isoreg_gpu)
  direction <- if (missing(increasing)) increasing else check_direction(increasing)
  # the rank correlation (a sort of 1e7 scores takes 4x the fit) only where it is needed
  up <- if (direction == "auto") rank_direction(score, label, weights) else direction
  backend <- if (missing(device)) {
    auto_backend(n, "calibrate")
  } else {
    resolve_device(device, n, "calibrate")
  }
  # the engines fit falling curves themselves, in score order: a score of weight zero joins the
  # block below it, and the probabilities are those of isoreg_gpu(), bit for bit
  run <- run_on(backend, device, "pav", function(engine) {
    .Call(C_calibrate, score, label, weights, groups$codes,
          if (!is.null(groups)) as.character(groups$levels), up, engine == engine_code("gpu", "pav"))
  })
  res <- run$value
  backend <- run$backend
  pooled <- blocks_frame(res[[1]])
  if (isTRUE(direction) && nrow(pooled) == 1L && !rank_direction(score, label, weights)) {
    warn_if_falling(score, label, weights)
  }
  curves <- first <- NULL
  if (!is.null(groups)) {
    first <- res[[2]]$first
    curves <- blocks_frame(res[[2]], group = rep(groups$levels, diff(first)))
  }
  structure(list(
    pooled = pooled, curves = curves, groups = groups$levels, first = first,
    n = n, n_group = groups$counts, increasing = up,
    backend = backend, call = call
  ), class = "gpuiso_calibrator")
}

# The warning of a flat rising curve where the scores evidently fall as the label rises: the 95%
# confidence interval of the Spearman correlation (by Fisher's z, as scikit-learn's
# check_increasing forms it) lies below 0.
warn_if_falling <- function(score, label, weights) {
  keep <- if (is.null(weights)) TRUE else weights > 0
  s <- score[keep]
  n <- length(s)
  if (n <= 3L) return(invisible())
  rho <- stats::cor(rank(s), rank(label[keep]))
  if (rho < -tanh(stats::qnorm(0.975) / sqrt(n - 3))) {
    warning(sprintf(paste0("the calibration curve is flat (one block) while the scores fall as the ",
                           "label rises (Spearman correlation %.2f); for scores that are higher for ",
                           "the negative class use `increasing = FALSE` or \"auto\""), rho), call. = FALSE)
  }
}

# The blocks of the curves as a data frame, ordered by score within each curve, after a column
# `group` where given (by list2DF: data.frame() would take most of a small calibration's time).
blocks_frame <- function(b, group = NULL) {
  cols <- list(lower = b$lower, upper = b$upper, prob = b$prob, weight = b$weight)
  list2DF(if (is.null(group)) cols else c(list(group = group), cols))
}

# The curve of group k (0: the pooled curve) as a data frame of blocks.
calibrator_curve <- function(object, k) {
  if (k == 0L) return(object$pooled)
  object$curves[seq.int(object$first[k], length.out = object$first[k + 1L] - object$first[k]), -1L]
}

# The curves at scores s of groups code (0: the pooled curve; NULL: the pooled curve for all), in
# C. "step": the probability of the last block of the score's curve that starts at or below it
# (the first block's below the curve); "linear": linear interpolation between the blocks' first
# and last scores, constant within blocks; outside a curve, the probability at its nearest end.
# On the backend that predict_backend() picks for device.
curves_at <- function(object, code, s, type, device) {
  invalid <- function(problem) stop_arg("object", paste("is not a valid gpuiso calibrator:", problem))
  columns <- function(d) {
    # by .subset2: a data frame's `[` costs tens of microseconds, most of a small prediction
    cols <- if (is.data.frame(d)) {
      list(lower = .subset2(d, "lower"), upper = .subset2(d, "upper"), prob = .subset2(d, "prob"))
    }
    if (!is.numeric(cols$lower) || !is.numeric(cols$upper) || !is.numeric(cols$prob)) {
      invalid("its curves are not data frames of blocks")
    }
    lapply(cols, as.double)
  }
  pooled <- columns(object$pooled)
  if (length(pooled$lower) == 0L) invalid("its pooled curve has no blocks")
  curves <- first <- NULL
  if (!is.null(code)) {
    curves <- columns(object$curves)
    first <- object$first
    if (!is.numeric(first) || length(first) != length(object$groups) + 1L) {
      invalid("its first rows do not match its groups")
    }
    first <- as.double(first)
  }
  s <- if (is.double(s)) s else as.double(s)
  run_on(predict_backend(object, device, length(s)), device, "pav", function(engine) {
    .Call(C_predict_calibrator, pooled, curves, first, code, s, type == "linear",
          engine == engine_code("gpu", "pav"))
  })$value
}

# The backend of predictions at n scores: "auto" is the CPU for a calibrator fitted on the CPU, else
# what "auto" gives the calibration of n scores; "gpu" a device or an error saying why not.
predict_backend <- function(object, device, n) {
  device <- check_choice(device, c("auto", "cpu", "gpu"), "device")
  if (device == "auto" && !identical(object$backend, "gpu")) return("cpu")
  resolve_device(device, n, "calibrate")
}

#' Calibrated probabilities
#'
#' Evaluates the curves of a calibrator at new scores: the curve of each score's group, or the
#' pooled curve of all training scores. Scores outside a curve's range get the probability at its
#' nearest end.
#'
#' @param object A `"gpuiso_calibrator"` from [calibrate_isotonic()].
#' @param score Numeric vector of scores; `NA` gives `NA`.
#' @param group Group ids the length of `score`, compared with the training groups by value (a
#'   factor by its labels); `NULL` (the default) uses the pooled curve for every score. Must be
#'   `NULL` for a calibrator fitted without groups.
#' @param type `"step"`: the probability of the block the score falls in (between two blocks,
#'   the lower one's); `"linear"`: linear interpolation between the blocks' first and last scores
#'   (scores of weight zero included), a continuous curve that is constant within blocks.
#' @param strict What to do with a group not seen in training: `FALSE` gives it the pooled curve
#'   with a warning that names it, `TRUE` is an error.
#' @param device Where the probabilities are computed: `"auto"` (the default) on the GPU for a
#'   calibrator fitted there (`object$backend == "gpu"`) while a device is usable and there are
#'   at least as many scores as [calibrate_isotonic()] takes to the GPU (1e7, or
#'   `options(gpuiso.gpu_min_n)`), else on the CPU, falling back to the CPU with a message when
#'   the GPU fails; `"cpu"`; or `"gpu"`, an error when the package has no CUDA or no device is
#'   found. The GPU gives the same doubles as the
#'   CPU, bit for bit: it runs the same code, a binary search over the blocks of each score's
#'   curve, a thread per score, with the blocks on the device and the scores sent in slices.
#' @param ... Nothing: an argument that is not one of the above is an error.
#' @return A numeric vector of probabilities in `[0, 1]`, the length of `score`.
#' @examples
#' cal <- calibrate_isotonic(c(0.1, 0.2, 0.3, 0.4, 0.5, 0.6), c(0, 1, 0, 0, 1, 1),
#'                           group = c("a", "a", "a", "b", "b", "b"))
#' predict(cal, c(0, 0.25, 1))
#' predict(cal, c(0, 0.25, 1), group = c("a", "a", "b"), type = "linear")
#' predict(cal, 0.5, group = "c") # unseen: the pooled curve, with a warning
#' @export
predict.gpuiso_calibrator <- function(object, score, group = NULL, type = c("step", "linear"),
                                      strict = FALSE, device = c("auto", "cpu", "gpu"), ...) {
  check_no_dots(...)
  # arguments left at their defaults need no check (as in isoreg_gpu), once evaluated
  list(type, strict, device)
  type <- if (missing(type)) type[1L] else check_choice(type, c("step", "linear"), "type")
  if (!missing(strict)) strict <- check_flag(strict, "strict")
  device <- if (missing(device)) {
    device[1L]
  } else {
    check_choice(device, c("auto", "cpu", "gpu"), "device")
  }
  if (missing(score)) stop_arg("score", "is missing")
  if (!is.numeric(score) || length(dim(score)) > 1L) {
    stop_arg("score", sprintf("must be a numeric vector, not %s", describe(score)))
  }
  if (is.null(group)) return(curves_at(object, NULL, score, type, device))
  if (is.null(object$groups)) {
    stop_arg("group", "must be NULL: the calibrator was fitted without groups")
  }
  if (!is.atomic(group) || length(dim(group)) > 1L || length(group) != length(score)) {
    stop_arg("group", sprintf("must be a vector of group ids the length of `score` (%.0f)", length(score)))
  }
  if (anyNA(group)) stop_arg("group", sprintf("must not contain NA (element %.0f)", which(is.na(group))[1L]))
  # a factor by its levels: one match per level, not per element
  code <- if (is.factor(group)) {
    match(levels(group), object$groups)[as.integer(group)]
  } else {
    match_ids(group, object$groups)
  }
  if (anyNA(code)) { # one pass, where is.na() would also allocate a vector the length of score
    unseen <- is.na(code)
    problem <- sprintf("has group(s) not seen in training: %s", quoted_list(unique(group[unseen])))
    if (strict) stop_arg("group", problem)
    warning(sprintf("`group` %s; they get the pooled curve", problem), call. = FALSE)
    code[unseen] <- 0L
  }
  curves_at(object, code, score, type, device)
}

#' @export
print.gpuiso_calibrator <- function(x, ...) {
  cat(sprintf("Isotonic calibrator (%s%s) of %.0f scores", x$backend,
              if (isFALSE(x$increasing)) ", falling with the score" else "", x$n))
  if (is.null(x$groups)) cat("\n") else cat(sprintf(", %d groups and a pooled curve\n", length(x$groups)))
  p <- x$pooled
  cat(sprintf("pooled curve: %d blocks, scores [%s, %s], probabilities [%s, %s]\n", nrow(p),
              format(p$lower[1L], digits = 4L), format(p$upper[nrow(p)], digits = 4L),
              format(p$prob[1L], digits = 4L), format(p$prob[nrow(p)], digits = 4L)))
  if (!is.null(x$groups)) {
    b <- stats::quantile(diff(x$first), c(0, 0.5, 1), names = FALSE)
    cat(sprintf("blocks per group: min %.0f, median %.0f, max %.0f\n", b[1], b[2], b[3]))
  }
  invisible(x)
}

#' Summary of a calibrator
#'
#' One row per curve: the pooled curve first (group `NA`), then each group's.
#'
#' @param object A `"gpuiso_calibrator"` from [calibrate_isotonic()].
#' @param ... Unused.
#' @return A data frame of class `"summary.gpuiso_calibrator"` with columns `group`, `n` (scores),
#'   `weight` (their summed weight), `rate` (the weighted mean label, which is also the weighted
#'   mean of the curve), `blocks`, and `min_prob`, `max_prob` (the ends of the curve).
#' @examples
#' cal <- calibrate_isotonic(c(0.1, 0.2, 0.3, 0.4, 0.5, 0.6), c(0, 1, 0, 0, 1, 1),
#'                           group = c("a", "a", "a", "b", "b", "b"))
#' summary(cal)
#' @export
summary.gpuiso_calibrator <- function(object, ...) {
  curve <- c(rep(0L, nrow(object$pooled)), rep(seq_along(object$groups), diff(object$first)))
  blocks <- rbind(object$pooled, object$curves[names(object$pooled)])
  weight <- as.vector(rowsum(blocks$weight, curve))
  size <- tabulate(curve + 1L)
  last <- cumsum(size)
  structure(data.frame(
    # NA for the pooled curve, in the class of the group ids (a Date stays a Date)
    group = if (is.null(object$groups)) NA else c(object$groups[NA_integer_], object$groups),
    n = c(object$n, object$n_group), weight = weight,
    rate = as.vector(rowsum(blocks$prob * blocks$weight, curve)) / weight, blocks = size,
    min_prob = pmin(blocks$prob[last - size + 1L], blocks$prob[last]),
    max_prob = pmax(blocks$prob[last - size + 1L], blocks$prob[last]),
    stringsAsFactors = FALSE
  ), class = c("summary.gpuiso_calibrator", "data.frame"))
}

#' @export
print.summary.gpuiso_calibrator <- function(x, ...) {
  cat("Curves of an isotonic calibrator (group NA: all scores pooled)\n")
  print(as.data.frame(x), digits = 4L, row.names = FALSE, ...)
  invisible(x)
}

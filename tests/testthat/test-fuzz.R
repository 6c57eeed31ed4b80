# Seeded fuzzing of the exported functions: a few hundred calls with one or two arguments replaced
# by malformed values (wrong types, lengths, NA, values at the edges of double precision,
# classed objects, edited internals of gpuiso's own objects). The calls run in child R processes,
# in batches, so that a crash or a hang shows as such instead of ending the test run. Each call
# must give an R error that names an argument (in backticks), or a finite result that an
# independent plain-R reference (helper-reference.R, helper-idr.R) confirms.
#
# With GPUISO_FUZZ_LOG set, the counts by outcome are appended to that file.

num <- function(v) { # what a numeric argument is taken as, for the references
  if (is.null(v)) return(NULL)
  stopifnot(is.numeric(v), !is.object(v), length(dim(v)) <= 1L)
  as.double(as.vector(v))
}

col1 <- function(v) if (is.data.frame(v) || is.matrix(v)) v[, 1] else v # a one-column table

# Weights for the references, relative to the largest (whose sums of products then keep their
# digits: the references are plain sums).
wts <- function(v) if (is.null(v)) NULL else num(v) / max(num(v))

fuzz_setup <- function() {
  fit <- isoreg_gpu(c(3, 1, 2, 5, 4), c(1, 3, 2, 4, 3.5))
  y <- c(3, 5, 3, 8, 4, 9, 6)
  x <- c(1, 2, 3, 4, 5, 6, 7)
  idrfit <- idr(y, x)
  newx <- c(0, 2.5, 4, 9)
  pred <- predict(idrfit, newx)
  ref_cdf <- ref_idr(y, x)
  list(fit = fit, y = y, x = x, idrfit = idrfit, newx = newx, pred = pred,
       pred_cdf = ref_idr_predict(ref_cdf, sort(unique(x)), newx), ref_cdf = ref_cdf,
       thr = sort(unique(y)), cal = calibrate_isotonic(c(0.1, 0.4, 0.2, 0.8, 0.6), c(0, 1, 0, 1, 1)),
       ens = data.frame(m1 = c(1, 4, 2), m2 = c(2, 5, 2), m3 = c(3, 9, 2)))
}

# Values tried in place of any argument, and in place of arguments of a kind.
generic_pool <- function() {
  list(NULL, NA, NA_real_, NaN, Inf, -Inf, "a", c("a", "b"), list(), list(1), new.env(), sum,
       Sys.Date(), as.POSIXct("2024-01-01", tz = "UTC"), as.difftime(1, units = "secs"),
       getClass("numeric"), quote(x), factor("a"), 1i, raw(1), numeric(0),
       character(0), logical(0), matrix(1:10, 5), array(1:8, c(2, 2, 2)), data.frame(a = 1:5),
       -1, 0, 1e308, -1e308, 1e-320, 2^31, TRUE, c(TRUE, NA))
}

vector_pool <- function(v) {
  n <- length(v)
  at <- function(value) { v[((n + 1) %/% 2)] <- value; v }
  list(as.integer(round(v)), array(v), at(NA), at(NaN), at(Inf), at(-Inf), at(-1), at(0), c(v, 1),
       v[-1], rev(v), v * 1e308, v * 1e-320, as.character(v), as.list(v), matrix(v), factor(v),
       Sys.Date() + v, v + 0i, v > median(v), rep(v[1], n), v / 1e300)
}

flag_pool <- list(TRUE, FALSE, NA, "yes", c(TRUE, FALSE), 1, list(TRUE))
scalar_pool <- list(NA, NaN, Inf, -Inf, "1", c(1, 2), numeric(0), 0, -1, 0.5, 2, 1e308, 1e-320,
                    TRUE, 1e9, 2.5)
choice_pool <- list("tpu", NA, c("cpu", "gpu"), 1, "", "c", "cpu", "none", "linear", "na", "mass")

# Edited gpuiso objects.
edit <- function(obj, f) {
  cls <- class(obj)
  o <- f(unclass(obj))
  class(o) <- cls
  o
}
pred_edits <- function(p) {
  list(edit(p, function(q) { q$runs$offset[2] <- 1e6; q }),
       edit(p, function(q) { q$runs$start[2] <- -5L; q }),
       edit(p, function(q) { q$runs$value[1] <- NaN; q }),
       edit(p, function(q) { q$pos[1] <- 1e6L; q }),
       edit(p, function(q) { q$lambda[1] <- -3; q }),
       edit(p, function(q) { q$thresholds <- q$thresholds[-1]; q }),
       edit(p, function(q) { q$runs <- NULL; q }),
       edit(p, function(q) { q$runs$npos <- 1e15; q }),
       structure(list(), class = "gpuiso_idr"))
}
fit_edits <- function(f) {
  list(edit(f, function(q) { q$runs$offset <- rev(q$runs$offset); q }),
       edit(f, function(q) { q$X <- data.frame(x = 1:100); q }),
       edit(f, function(q) { q$runs$start <- as.double(q$runs$start); q }),
       edit(f, function(q) { q$thresholds <- NULL; q }))
}

# The targets: the base arguments of a call that works, the pools of each argument, and a check
# of a returned value against the references (TRUE when confirmed).
fuzz_targets <- function(s) {
  clip <- function(v, a) pmin(pmax(v, if (is.null(a$y_min)) -Inf else num(a$y_min)),
                              if (is.null(a$y_max)) Inf else num(a$y_max))
  inc <- function(a) if (is.null(a$increasing)) TRUE else a$increasing
  same <- function(got, want) isTRUE(all.equal(as.vector(got), as.vector(want), tolerance = 1e-9))
  fin <- function(v) all(is.finite(v))
  cdf_at <- function(F, thr, t) { # step CDFs (rows of F) at t
    k <- findInterval(t, thr)
    vapply(k, function(j) if (j == 0L) rep(0, nrow(F)) else F[, j], numeric(nrow(F)))
  }
  ens_F <- function(m, thr) t(apply(m, 1, function(r) stats::ecdf(r)(thr)))
  ens_ref <- function(pr) { # an ensemble's step CDFs on its members' values
    m <- as.matrix(pr)
    thr <- sort(unique(as.vector(m)))
    list(F = matrix(ens_F(m, thr), nrow(m)), thr = thr)
  }
  pred_ref <- function(a) if (is.data.frame(a$predictions)) ens_ref(a$predictions) else
    list(F = s$pred_cdf, thr = s$thr)
  # lower quantiles: the smallest threshold whose CDF reaches the level (of an ensemble, the
  # smallest member with k / n at or above it)
  ref_quantiles <- function(a) {
    al <- num(a$quantiles)
    if (is.data.frame(a$predictions)) {
      m <- as.matrix(a$predictions)
      return(t(apply(m, 1, function(r) {
        srt <- sort(r)
        vapply(al, function(x) srt[which(seq_along(srt) / length(srt) >= x * (1 - 1e-12))[1]], 0)
      })))
    }
    r <- pred_ref(a)
    vapply(al, function(x) apply(r$F, 1, function(f) r$thr[which(f >= x * (1 - 1e-12))[1]]),
           numeric(nrow(r$F)))
  }
  list(
    isoreg_gpu = list(
      args = list(x = c(3, 1, 2, 5, 4), y = c(1, 3, 2, 4, 3.5), w = c(1, 2, 1, 1, 0.5)),
      pools = list(x = "vector", y = "vector", w = "vector", increasing = "flag", y_min = "scalar",
                   y_max = "scalar", device = "choice", method = "choice", precision = "choice"),
      check = function(v, a) {
        # a Date x is fitted on its days, a logical y as 0 and 1
        x <- if (inherits(a$x, "Date")) as.double(unclass(a$x)) else num(a$x)
        y <- if (is.logical(a$y) && is.null(dim(a$y))) as.double(a$y) else num(a$y)
        want <- clip(ref_isoreg(x, y, wts(a$w), inc(a)), a)
        fin(v$fitted) && same(v$fitted, want)
      }),
    isoreg_batch = list(
      args = list(y = rbind(c(3, 1, 2, 5), c(4, 4, 1, 0), c(1, 2, 3, 4)), w = c(1, 2, 1, 3)),
      pools = list(y = "any", w = "vector", increasing = "flag", group = "vector",
                   block_starts = "flag", y_min = "scalar", y_max = "scalar", method = "choice"),
      check = function(v, a) {
        fitted <- if (isTRUE(a$block_starts)) v$fitted else v
        y <- a$y
        if (is.matrix(y)) {
          w <- if (is.null(a$w)) NULL else if (is.matrix(a$w)) a$w / max(a$w) else
            matrix(wts(a$w), nrow(y), ncol(y), byrow = TRUE)
          want <- t(vapply(seq_len(nrow(y)), function(i) {
            ref_pav(num(y[i, ]), if (is.null(w)) NULL else num(w[i, ]), inc(a))
          }, numeric(ncol(y))))
        } else {
          g <- if (is.null(a$group)) rep(1, length(y)) else a$group
          want <- num(y)
          for (k in unique(g)) {
            i <- which(g == k)
            want[i] <- ref_pav(num(y)[i], if (is.null(a$w)) NULL else wts(a$w)[i], inc(a))
          }
        }
        fin(fitted) && same(fitted, clip(want, a))
      }),
    predict = list(
      args = list(object = s$fit, newdata = c(0, 1.5, 3, 7)),
      pools = list(newdata = "vector", type = "choice", outside = "choice"),
      check = function(v, a) {
        type <- if (is.null(a$type)) "step" else c("step", "linear")[pmatch(a$type, c("step", "linear"))]
        outside <- if (is.null(a$outside)) "clip" else c("clip", "na", "error")[pmatch(a$outside, c("clip", "na", "error"))]
        f <- a$object
        nd <- num(a$newdata)
        want <- stats::approx(f$knots, f$level, nd, method = if (type == "step") "constant" else "linear",
                              rule = 2, f = 0)$y
        if (outside == "na") want[nd < min(f$knots) | nd > max(f$knots)] <- NA
        same(v, want) && fin(v[!is.na(want)])
      }),
    calibrate_isotonic = list(
      args = list(score = c(0.1, 0.4, 0.2, 0.8, 0.6), label = c(0, 1, 0, 1, 1)),
      pools = list(score = "vector", label = "vector", weights = "vector", group = "vector",
                   device = "choice"),
      check = function(v, a) {
        sc <- num(a$score)
        want <- ref_isoreg(sc, as.double(a$label), wts(a$weights))
        p <- predict(v, sc)
        fin(p) && same(p, want)
      }),
    brier_score = list(
      args = list(prob = c(0.1, 0.4, 0.6, 0.9), label = c(0, 1, 0, 1)),
      pools = list(prob = "vector", label = "vector", weights = "vector"),
      check = function(v, a) {
        p <- num(a$prob)
        w <- if (is.null(a$weights)) rep(1, length(p)) else wts(a$weights)
        fin(v) && same(v, sum(w * (p - as.double(a$label))^2) / sum(w))
      }),
    log_loss = list(
      args = list(prob = c(0.1, 0.4, 0.6, 0.9), label = c(0, 1, 0, 1)),
      pools = list(prob = "vector", label = "vector", weights = "vector", eps = "scalar"),
      check = function(v, a) {
        p <- num(a$prob)
        w <- if (is.null(a$weights)) rep(1, length(p)) else wts(a$weights)
        eps <- if (is.null(a$eps)) 1e-15 else num(a$eps)
        l <- as.double(a$label)
        q <- pmax(ifelse(l == 1, p, 1 - p), eps)
        fin(v) && same(v, -sum((w * log(q))[w > 0]) / sum(w))
      }),
    calibration_error = list(
      args = list(prob = c(0.1, 0.4, 0.6, 0.9), label = c(0, 1, 0, 1), bins = 2),
      pools = list(prob = "vector", label = "vector", weights = "vector", bins = "scalar",
                   binning = "choice"),
      check = function(v, a) {
        if (identical(a$binning, "mass")) return(fin(v) && v >= 0 && v <= 1)
        p <- num(a$prob)
        w <- if (is.null(a$weights)) rep(1, length(p)) else wts(a$weights)
        bins <- num(a$bins)
        b <- pmin(floor(p * bins), bins - 1)
        e <- sum(vapply(unique(b), function(k) {
          i <- b == k
          abs(sum(w[i] * p[i]) - sum(w[i] * as.double(a$label)[i]))
        }, 0)) / sum(w)
        fin(v) && same(v, e)
      }),
    idr = list(
      args = list(y = s$y, X = s$x),
      pools = list(y = "vector", X = "vector", weights = "vector", dense = "flag", device = "choice"),
      check = function(v, a) {
        y <- num(a$y)
        want <- ref_idr(y, num(col1(a$X)), if (is.null(a$weights)) rep(1, length(y)) else wts(a$weights))
        m <- as.matrix(v)
        fin(m) && same(m, want)
      }),
    predict_idr = list(
      fun = "predict", args = list(object = s$idrfit, data = s$newx),
      pools = list(object = "fit_edits", data = "vector", interpolation = "choice"),
      check = function(v, a) {
        nd <- if (is.null(a$data)) s$x else num(col1(a$data)) # NULL: in-sample
        F <- ref_idr_predict(s$ref_cdf, sort(unique(s$x)), nd)
        if (!is.null(a$interpolation) && !identical(a$interpolation, "linear")) { # midpoint
          F <- t(vapply(nd, function(u) {
            xs <- sort(unique(s$x))
            i <- findInterval(u, xs)
            if (i == 0) s$ref_cdf[1, ] else if (i == length(xs) || u == xs[i]) s$ref_cdf[i, ] else
              (s$ref_cdf[i, ] + s$ref_cdf[i + 1, ]) / 2
          }, numeric(ncol(s$ref_cdf))))
        }
        got <- cdf(v, s$thr)
        fin(got) && same(got, F)
      }),
    cdf = list(
      args = list(predictions = s$pred, thresholds = c(2, 3, 4.5, 10)),
      pools = list(predictions = "pred_edits", thresholds = "vector"),
      check = function(v, a) {
        r <- pred_ref(a)
        fin(v) && same(v, cdf_at(r$F, r$thr, num(a$thresholds)))
      }),
    qpred = list(
      args = list(predictions = s$pred, quantiles = c(0.1, 0.5, 0.9)),
      pools = list(predictions = "pred_edits", quantiles = "vector"),
      check = function(v, a) {
        fin(v) && same(v, ref_quantiles(a))
      }),
    crps = list(
      args = list(predictions = s$pred, y = c(3, 4, 5, 6)),
      pools = list(predictions = "pred_edits", y = "vector"),
      check = function(v, a) {
        r <- pred_ref(a)
        y <- rep_len(num(a$y), nrow(r$F))
        want <- vapply(seq_len(nrow(r$F)), function(i) ref_crps(r$F[i, ], r$thr, y[i]), 0)
        fin(v) && same(v, want)
      }),
    pit = list(
      args = list(predictions = s$pred, y = c(3, 4, 5, 6), randomize = FALSE),
      pools = list(predictions = "pred_edits", y = "vector", randomize = "flag"),
      check = function(v, a) {
        r <- pred_ref(a)
        y <- num(a$y)
        upper <- vapply(seq_along(y), function(i) cdf_at(r$F[i, , drop = FALSE], r$thr, y[i]), 0)
        if (!isFALSE(a$randomize)) return(fin(v) && all(v <= upper + 1e-12 & v >= 0))
        fin(v) && same(v, upper)
      }),
    qscore = list(
      args = list(predictions = s$pred, quantiles = c(0.25, 0.75), y = c(3, 4, 5, 6)),
      pools = list(predictions = "pred_edits", quantiles = "vector", y = "vector"),
      check = function(v, a) {
        al <- num(a$quantiles)
        q <- ref_quantiles(a)
        y <- rep_len(num(a$y), nrow(q))
        want <- 2 * (sweep(matrix(q > y, nrow(q)), 2, al)) * (q - y)
        fin(v) && same(v, want)
      }),
    bscore = list(
      args = list(predictions = s$pred, thresholds = c(3, 5), y = c(3, 4, 5, 6)),
      pools = list(predictions = "pred_edits", thresholds = "vector", y = "vector"),
      check = function(v, a) {
        r <- pred_ref(a)
        t <- num(a$thresholds)
        y <- rep_len(num(a$y), nrow(r$F))
        fin(v) && same(v, (cdf_at(r$F, r$thr, t) - outer(y, t, "<="))^2)
      }),
    as.matrix = list(
      args = list(x = s$idrfit),
      pools = list(x = "fit_edits"),
      check = function(v, a) fin(v) && same(v, s$ref_cdf)),
    idrbag = list(
      args = list(y = s$y, X = s$x, newdata = c(2, 5), b = 3, p = 0.5, progress = FALSE),
      pools = list(y = "vector", X = "vector", newdata = "vector", b = "scalar", p = "scalar",
                   replace = "flag", grid = "vector", weights = "vector"),
      check = function(v, a) {
        # the subsamples of the seed the child set, averaged on the grid by the reference
        set.seed(1)
        y <- num(a$y)
        x <- num(col1(a$X))
        nd <- num(col1(a$newdata))
        w <- if (is.null(a$weights)) rep(1, length(y)) else wts(a$weights)
        grid <- if (is.null(a$grid)) y else num(a$grid)
        grid <- sort(unique(c(grid, if (max(grid) < max(y)) max(y))))
        if (length(nd) == 0L) return(identical(dim(cdf(v, grid)), c(0L, length(grid))))
        size <- ceiling(num(a$p) * length(y))
        total <- 0
        for (k in seq_len(num(a$b))) {
          i <- sample.int(length(y), size, replace = isTRUE(a$replace))
          F <- matrix(ref_idr_predict(ref_idr(y[i], x[i], w[i]), sort(unique(x[i][w[i] > 0])), nd),
                      length(nd)) # (one threshold: a vector)
          total <- total + cdf_at(F, sort(unique(y[i][w[i] > 0])), grid)
        }
        got <- cdf(v, grid)
        fin(got) && same(got, total / num(a$b))
      }),
    gpuiso_threads = list(
      args = list(threads = 1),
      pools = list(threads = "scalar"),
      check = function(v, a) identical(v, gpuiso_threads())), # the setting before the call
    isoreg_blocks = list(
      args = list(object = s$fit),
      pools = list(object = "any"),
      check = function(v, a) same(v$level, unique(s$fit$level)))
  )
}

# n calls, each the base call of a target with one or two arguments replaced.
fuzz_calls <- function(n, s, targets) {
  gp <- generic_pool()
  lapply(seq_len(n), function(i) {
    name <- sample(names(targets), 1L)
    tg <- targets[[name]]
    a <- tg$args
    for (arg in sample(names(tg$pools), min(sample(1:2, 1L), length(tg$pools)))) {
      kind <- tg$pools[[arg]]
      special <- switch(kind,
        vector = vector_pool(if (is.null(a[[arg]])) c(1, 0, 2, 0.5) else a[[arg]]),
        flag = flag_pool, scalar = scalar_pool, choice = choice_pool,
        pred_edits = c(pred_edits(s$pred), list(s$ens)), fit_edits = fit_edits(s$idrfit),
        any = list())
      # the argument's own kind twice as often; an object that a generic of another package
      # dispatches on (predict, as.matrix) only as gpuiso's objects edited
      pool <- if (kind == "fit_edits") special else c(special, special, gp)
      value <- pool[[sample.int(length(pool), 1L)]]
      if (is.null(value)) a[arg] <- list(NULL) else a[[arg]] <- value
    }
    list(target = name, fun = if (is.null(tg$fun)) name else tg$fun, args = a)
  })
}

# Runs the calls in one child process: each its outcome, the error message or the value.
run_fuzz_batch <- function(calls, timeout) {
  callr::r(function(calls) {
    suppressPackageStartupMessages(library(gpuiso))
    threads <- gpuiso_threads()
    lapply(calls, function(cl) {
      set.seed(1)
      f <- if (is.function(cl$fun)) cl$fun else get(cl$fun, envir = asNamespace("gpuiso"))
      out <- tryCatch(list(kind = "value", value = suppressWarnings(do.call(f, cl$args, quote = TRUE))),
                      error = function(e) list(kind = "error", message = conditionMessage(e)))
      gpuiso_threads(threads)
      out
    })
  }, args = list(calls), timeout = timeout)
}

# Runs every call, in batches; a batch whose child crashes or hangs is run again call by call to
# tell which call did it. Returns one outcome per call: "error", "value", "crash" or "hang".
run_fuzz <- function(calls, batch = 60, timeout = 90) {
  out <- vector("list", length(calls))
  for (from in seq(1, length(calls), by = batch)) {
    idx <- from:min(from + batch - 1L, length(calls))
    res <- tryCatch(run_fuzz_batch(calls[idx], timeout), error = function(e) e)
    if (!inherits(res, "error")) {
      out[idx] <- res
      next
    }
    for (i in idx) {
      one <- tryCatch(run_fuzz_batch(calls[i], timeout)[[1]], error = function(e) e)
      out[[i]] <- if (!inherits(one, "error")) one else
        list(kind = if (inherits(one, "callr_timeout_error")) "hang" else "crash",
             message = conditionMessage(one))
    }
  }
  out
}

# The argument names a call's error may name: its function's and, for generics, its methods'.
arg_names <- function(fun) {
  f <- get(fun, envir = asNamespace("gpuiso"))
  methods <- if (fun == "predict") c("predict.gpuiso_fit", "predict.gpuiso_idrfit") else
    if (fun == "as.matrix") "as.matrix.gpuiso_idrfit" else
    intersect(paste0(fun, c(".gpuiso_idr", ".data.frame")), ls(asNamespace("gpuiso")))
  unique(c(names(formals(f)), unlist(lapply(methods, function(m) names(formals(get(m, envir = asNamespace("gpuiso"))))))))
}

test_that("malformed calls give errors naming an argument or confirmed results; none crashes or hangs", {
  skip_if_not_installed("callr")
  set.seed(20240611)
  s <- fuzz_setup()
  targets <- fuzz_targets(s)
  calls <- fuzz_calls(500, s, targets)
  outcomes <- run_fuzz(calls)
  kind <- character(length(calls))
  for (i in seq_along(calls)) {
    cl <- calls[[i]]
    o <- outcomes[[i]]
    what <- sprintf("call %d: %s(%s)", i, cl$target, paste(names(cl$args), collapse = ", "))
    if (o$kind == "error") {
      named <- regmatches(o$message, gregexpr("`[A-Za-z_.][A-Za-z0-9_.]*`", o$message))[[1]]
      ok <- any(gsub("`", "", named) %in% arg_names(cl$fun))
      kind[i] <- if (ok) "named error" else "unnamed error"
      expect(ok, sprintf("%s: the error does not name an argument: %s", what, o$message))
    } else if (o$kind == "value") {
      confirmed <- isTRUE(tryCatch(targets[[cl$target]]$check(o$value, cl$args),
                                   error = function(e) FALSE))
      kind[i] <- if (confirmed) "confirmed result" else "unconfirmed result"
      expect(confirmed, sprintf("%s: a result that the reference does not confirm", what))
    } else {
      kind[i] <- o$kind
      expect(FALSE, sprintf("%s: %s (%s)", what, o$kind, o$message))
    }
  }
  counts <- table(factor(kind, c("named error", "confirmed result", "unnamed error",
                                 "unconfirmed result", "crash", "hang")))
  log <- Sys.getenv("GPUISO_FUZZ_LOG")
  if (nzchar(log)) {
    cat(sprintf("%d calls: %s\n", length(calls),
                paste(sprintf("%d %s", counts, names(counts)), collapse = ", ")),
        file = log, append = TRUE)
  }
  expect_equal(sum(counts[c("named error", "confirmed result")]), length(calls))
})

test_that("the fuzz harness tells a crash and a hang from errors and values", {
  skip_if_not_installed("callr")
  segfault <- eval(quote(function() system(paste("kill -SEGV", Sys.getpid()))), baseenv())
  calls <- list(list(fun = "sqrt", args = list(4)), list(fun = segfault, args = list()),
                list(fun = "log", args = list("a")), list(fun = "Sys.sleep", args = list(60)))
  kinds <- vapply(run_fuzz(calls, timeout = 5), `[[`, "", "kind")
  expect_identical(kinds, c("value", "crash", "error", "hang"))
})

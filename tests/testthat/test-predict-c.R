# predict() for fits and calibrators runs in C over the blocks' ends. The references are the
# earlier R implementations (findInterval over all knots; one findInterval over rank keys for
# the groups), written here in plain R: the C values must be the same bit for bit, on one thread
# and on two.

ref_fraction <- function(x, x0, x1) {
  f <- (x - x0) / (x1 - x0)
  wide <- is.infinite(x1 - x0)
  if (any(wide)) f[wide] <- (x[wide] / 2 - x0[wide] / 2) / (x1[wide] / 2 - x0[wide] / 2)
  f
}

ref_predict_fit <- function(object, newdata, type, outside) {
  knots <- object$knots
  level <- object$level
  nk <- length(knots)
  at <- findInterval(newdata, knots)
  out <- level[pmax(at, 1L)]
  if (type == "linear") {
    inside <- !is.na(at) & at >= 1L & at < nk
    j <- at[inside]
    f <- ref_fraction(newdata[inside], knots[j], knots[j + 1L])
    out[inside] <- level[j] + f * (level[j + 1L] - level[j])
  }
  beyond <- !is.na(newdata) & (newdata < knots[1L] | newdata > knots[nk])
  if (outside == "na") out[beyond] <- NA_real_
  out
}

ref_locate <- function(pg, pv, qg, qv) {
  r <- rank(c(pv, qv), ties.method = "min")
  m <- length(r) + 1
  j <- findInterval(qg * m + r[-seq_along(pv)], pg * m + r[seq_along(pv)])
  hit <- j > 0L
  hit[hit] <- pg[j[hit]] == qg[hit]
  ifelse(hit, j, 0L)
}

ref_curves_at <- function(object, code, s, type) {
  pooled <- object$pooled
  block_group <- c(rep(0L, nrow(pooled)), rep(seq_along(object$groups), diff(object$first)))
  used <- block_group %in% code
  group <- block_group[used]
  lower <- c(pooled$lower, object$curves$lower)[used]
  upper <- c(pooled$upper, object$curves$upper)[used]
  prob <- c(pooled$prob, object$curves$prob)[used]
  out <- rep(NA_real_, length(s))
  ok <- !is.na(s)
  code <- code[ok]
  s <- s[ok]
  first <- match(code, group)
  if (type == "step") {
    j <- ref_locate(group, lower, code, s)
    out[ok] <- prob[ifelse(j > 0L, j, first)]
    return(out)
  }
  pg <- rep(group, each = 2L)
  px <- as.vector(rbind(lower, upper))
  py <- rep(prob, each = 2L)
  keep <- c(TRUE, pg[-1L] != pg[-length(pg)] | px[-1L] != px[-length(px)])
  pg <- pg[keep]
  px <- px[keep]
  py <- py[keep]
  j <- ref_locate(pg, px, code, s)
  last <- length(pg) - match(code, rev(pg)) + 1L
  inside <- j > 0L & j < last
  v <- py[ifelse(j > 0L, j, match(code, pg))]
  a <- j[inside]
  frac <- ref_fraction(s[inside], px[a], px[a + 1L])
  v[inside] <- py[a] + frac * (py[a + 1L] - py[a])
  out[ok] <- v
  out
}

# Bitwise equality, NA and NaN told apart, signed zeros too.
expect_same_bits <- function(got, want) {
  expect_identical(is.na(got), is.na(want))
  expect_identical(writeBin(got[!is.na(got)], raw()), writeBin(want[!is.na(want)], raw()))
}

on_threads <- function(threads, expr) {
  old <- gpuiso_threads(threads)
  on.exit(gpuiso_threads(old))
  expr
}

test_that("predict of fits equals the knot-by-knot R reference bit for bit, on 1 and 2 threads", {
  set.seed(14)
  cases <- list(
    list(x = runif(3e4), y = NULL, w = NULL, inc = TRUE),
    list(x = round(runif(2e3), 2), y = NULL, w = runif(2e3), inc = TRUE), # ties in x
    list(x = NULL, y = cumsum(rnorm(500)), w = NULL, inc = FALSE),
    list(x = c(-1e308, 0, 1e308), y = c(3, 1, 2), w = NULL, inc = TRUE), # widths overflow
    list(x = c(2, 5), y = c(1, 1), w = NULL, inc = TRUE),                # one block
    list(x = 7, y = 3, w = NULL, inc = TRUE)                             # one knot
  )
  for (k in seq_along(cases)) {
    cs <- cases[[k]]
    y <- if (is.null(cs$y)) 2 * cs$x + rnorm(length(cs$x)) else cs$y
    fit <- if (is.null(cs$x)) isoreg_gpu(y, increasing = cs$inc) else isoreg_gpu(cs$x, y, cs$w, increasing = cs$inc)
    r <- range(fit$knots)
    spread <- if (k == 4) runif(5e4, -1, 1) * 1e308 else
      runif(5e4, r[1] - 0.1 * diff(r) - 1, r[2] + 0.1 * diff(r) + 1)
    newx <- c(spread, fit$knots, NA, NaN, Inf, -Inf, r, -0, 0)
    for (type in c("step", "linear")) for (outside in c("clip", "na")) {
      want <- ref_predict_fit(fit, newx, type, outside)
      for (threads in 1:2) {
        got <- on_threads(threads, predict(fit, newx, type = type, outside = outside))
        expect_same_bits(got, want)
      }
      # a few values at a time are searched for among the knots, not the blocks: the same bits
      few <- c(sample(length(newx), 30), length(newx) - 0:9)
      expect_same_bits(predict(fit, newx[few], type = type, outside = outside), want[few])
      for (i in few[1:5]) {
        expect_same_bits(predict(fit, newx[i], type = type, outside = outside), want[i])
      }
    }
  }
})

test_that("edited fits give the same bits for a few values (knots searched) and many (blocks)", {
  fit <- isoreg_gpu(as.double(1:400), as.double(1:400))
  zeros <- fit
  zeros$level <- c(rep(-1, 10), -0, 0, 0, -0, rep(1, 386)) # -0 beside 0: two blocks, not one
  falling <- fit
  falling$level <- c(rep(1, 10), -0, 0, rep(-1, 388))
  minus_inf <- fit # a block from -Inf: the fraction from there is NaN
  minus_inf$knots[1] <- -Inf
  minus_inf$level[1:3] <- 5
  v <- c(-Inf, -1e300, 0.5, 1.5, 2, 2.5, 10.5, 11, 11.5, 12, 12.5, 13.5, 14, 399.5, 400, Inf,
         NA, NaN)
  for (f in list(zeros, falling, minus_inf)) {
    for (type in c("step", "linear")) for (outside in c("clip", "na")) {
      want <- ref_predict_fit(f, v, type, outside)
      expect_same_bits(predict(f, v, type = type, outside = outside), want)
      expect_same_bits(predict(f, rep(v, 50), type = type, outside = outside)[seq_along(v)], want)
    }
  }
})

test_that("integer new x, and outside = 'error' counts what lies outside", {
  fit <- isoreg_gpu(c(1, 2, 4), c(1, 3, 2))
  expect_identical(predict(fit, 0:5, type = "linear"), ref_predict_fit(fit, as.double(0:5), "linear", "clip"))
  expect_error(predict(fit, c(0, 1, 5, NA), outside = "error"),
               "`newdata` has 2 value\\(s\\) outside the fitted range \\[1, 4\\]")
  expect_identical(predict(fit, c(1, 4, NA), outside = "error"), c(1, 2.5, NA))
})

test_that("an edited fit whose knots lost their order is an error naming object", {
  fit <- isoreg_gpu(c(1, 2, 4), c(1, 3, 2))
  bad <- fit
  bad$knots <- rev(bad$knots)
  expect_error(predict(bad, 2), "`object` is not a valid gpuiso fit: its knots are not sorted")
  bad$knots <- c(1, NA, 4)
  expect_error(predict(bad, 2), "`object` is not a valid gpuiso fit")
  bad$knots <- 1:2
  expect_error(predict(bad, 2), "`object` is not a valid gpuiso fit: its knots and levels do not match")
  # so with knots enough that a few values are searched for among them, not among blocks
  fit <- isoreg_gpu(runif(1000), rnorm(1000))
  for (edit in list(rev, function(k) replace(k, 500, NaN), function(k) replace(k, 1, NA))) {
    bad <- fit
    bad$knots <- edit(bad$knots)
    expect_error(predict(bad, 0.5), "`object` is not a valid gpuiso fit: its knots are not sorted")
    expect_error(predict(bad, runif(1000)),
                 "`object` is not a valid gpuiso fit: its knots are not sorted")
  }
})

test_that("predict of calibrators equals the R reference bit for bit, with groups, on 1 and 2 threads", {
  set.seed(15)
  n <- 2e4
  g <- sample(c("a", "b", "c", "d"), n, replace = TRUE, prob = c(0.6, 0.3, 0.099, 0.001))
  s <- round(runif(n), 3)
  l <- as.double(runif(n) < s * ifelse(g == "b", 0.5, 0.9))
  cal <- calibrate_isotonic(s, l, group = g)
  single <- calibrate_isotonic(c(0.2, 0.2, 0.5), c(0, 1, 1), group = c("x", "x", "y")) # one-score blocks
  q <- c(runif(3e4, -0.1, 1.1), cal$pooled$lower, cal$pooled$upper, cal$curves$lower,
         cal$curves$upper, NA, Inf, -Inf)
  qg <- sample(c("a", "b", "c", "d"), length(q), replace = TRUE)
  code <- match(qg, cal$groups)
  for (type in c("step", "linear")) {
    for (threads in 1:2) {
      on_threads(threads, {
        expect_same_bits(predict(cal, q, type = type), ref_curves_at(cal, rep(0L, length(q)), q, type))
        expect_same_bits(predict(cal, q, qg, type = type), ref_curves_at(cal, code, q, type))
        expect_same_bits(predict(cal, q, factor(qg), type = type), ref_curves_at(cal, code, q, type))
      })
    }
    sq <- c(0, 0.2, 0.3, 0.5, 0.7)
    sg <- c("x", "x", "y", "x", "y")
    expect_same_bits(predict(single, sq, sg, type = type),
                     ref_curves_at(single, match(sg, single$groups), sq, type))
    # unseen groups get the pooled curve
    expect_warning(got <- predict(cal, q[1:100], rep(c("a", "zz"), 50), type = type), "\"zz\"")
    expect_same_bits(got, ref_curves_at(cal, rep(c(1L, 0L), 50), q[1:100], type))
  }
})

test_that("an edited calibrator is an error naming object, not a wrong value", {
  cal <- calibrate_isotonic(c(0.1, 0.2, 0.3, 0.4, 0.5, 0.6), c(0, 1, 0, 0, 1, 1),
                            group = c("a", "a", "a", "b", "b", "b"))
  bad <- cal
  bad$first <- bad$first[-1L]
  expect_error(predict(bad, 0.5, "a"), "`object` is not a valid gpuiso calibrator")
  bad <- cal
  bad$first[2] <- 99
  expect_error(predict(bad, 0.5, "a"), "`object` is not a valid gpuiso calibrator: its first rows")
  bad <- cal
  bad$curves$lower <- rev(bad$curves$lower)
  expect_error(predict(bad, 0.5, "a"), "blocks of a curve are not in increasing order")
  bad <- cal
  bad$pooled <- bad$pooled[0, ]
  expect_error(predict(bad, 0.5), "`object` is not a valid gpuiso calibrator")
  bad <- cal
  bad$pooled$prob <- as.character(bad$pooled$prob)
  expect_error(predict(bad, 0.5), "`object` is not a valid gpuiso calibrator")
})

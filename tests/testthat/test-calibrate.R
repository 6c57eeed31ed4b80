# calibrate_isotonic() and predict(): against a plain-R reference per group, properties, errors.

# The curve of one group by the reference: scores sorted, ties pooled by weighted mean (weights
# summed), ref_pav on the knots; returned as blocks (first and last score, level, weight).
ref_curve <- function(score, label, w) {
  k <- ref_knots(score, label, w)
  lev <- k$level
  start <- c(TRUE, diff(lev) != 0)
  block <- cumsum(start)
  data.frame(lower = k$knots[start], upper = as.vector(tapply(k$knots, block, max)),
             prob = lev[start], weight = as.vector(tapply(k$weight, block, sum)))
}

expect_curve_equal <- function(got, want) {
  rownames(got) <- rownames(want) <- NULL
  expect_equal(got, want, tolerance = 1e-12)
}

test_that("curves per group and the pooled curve match the reference", {
  set.seed(11)
  for (ties in c(FALSE, TRUE)) for (weighted in c(FALSE, TRUE)) {
    d <- sim_traffic(3000, sprintf("g%02d", 1:40), ties, weighted)
    cal <- calibrate_isotonic(d$score, d$label, weights = d$w, group = d$group)
    expect_s3_class(cal, "gpuiso_calibrator")
    expect_identical(cal$groups, sort(unique(d$group)))
    w <- if (is.null(d$w)) rep(1, length(d$score)) else d$w
    for (k in seq_along(cal$groups)) {
      i <- d$group == cal$groups[k]
      got <- cal$curves[cal$curves$group == cal$groups[k], -1L]
      expect_curve_equal(got, ref_curve(d$score[i], d$label[i], w[i]))
      expect_equal(cal$n_group[k], sum(i))
    }
    expect_curve_equal(cal$pooled, ref_curve(d$score, d$label, w))
  }
})

test_that("curves agree with isoreg_batch on the scores sorted within each group", {
  set.seed(12)
  d <- sim_traffic(5000, 1:25) # distinct scores: no ties to pool
  cal <- calibrate_isotonic(d$score, d$label, group = d$group)
  o <- order(d$group, d$score)
  fit <- isoreg_batch(d$label[o], group = d$group[o])
  got <- predict(cal, d$score[o], group = d$group[o])
  expect_equal(got, fit, tolerance = 1e-12)
})

test_that("large inputs take the multi-threaded paths and give the same curves", {
  set.seed(13)
  d <- sim_traffic(2e5, 1:300, ties = TRUE, weighted = TRUE)
  old <- gpuiso_threads(1)
  on.exit(gpuiso_threads(old))
  one <- calibrate_isotonic(d$score, d$label, d$w, d$group)
  gpuiso_threads(2)
  two <- calibrate_isotonic(d$score, d$label, d$w, d$group)
  expect_equal(two$curves, one$curves, tolerance = 1e-12)
  expect_equal(two$pooled, one$pooled, tolerance = 1e-12)
  k <- 7L
  i <- d$group == k
  expect_curve_equal(one$curves[one$curves$group == k, -1L], ref_curve(d$score[i], d$label[i], d$w[i]))
})

test_that("curves are monotone, within [0, 1], and keep each group's click rate", {
  set.seed(14)
  d <- sim_traffic(4000, letters, ties = TRUE, weighted = TRUE)
  cal <- calibrate_isotonic(d$score, d$label, d$w, d$group)
  for (k in seq_along(cal$groups)) {
    cv <- cal$curves[cal$curves$group == cal$groups[k], ]
    expect_true(all(diff(cv$prob) > 0))
    expect_true(all(cv$lower <= cv$upper) && all(cv$upper[-nrow(cv)] < cv$lower[-1L]))
    expect_true(all(cv$prob >= 0 & cv$prob <= 1))
    i <- d$group == cal$groups[k]
    expect_equal(sum(cv$prob * cv$weight) / sum(cv$weight), sum(d$w[i] * d$label[i]) / sum(d$w[i]))
    expect_equal(sum(cv$weight), sum(d$w[i]))
  }
  s <- summary(cal)
  expect_equal(s$rate[-1L], as.vector(tapply(d$w * d$label, d$group, sum) / tapply(d$w, d$group, sum)))
  expect_equal(s$rate[1L], sum(d$w * d$label) / sum(d$w))
})

test_that("the curves do not depend on the order of the rows", {
  set.seed(15)
  d <- sim_traffic(3000, 1:30, ties = TRUE, weighted = TRUE)
  cal <- calibrate_isotonic(d$score, d$label, d$w, d$group)
  p <- sample.int(3000)
  cal2 <- calibrate_isotonic(d$score[p], d$label[p], d$w[p], d$group[p])
  expect_equal(cal2$curves, cal$curves, tolerance = 1e-12)
  expect_equal(cal2$pooled, cal$pooled, tolerance = 1e-12)
})

test_that("tied scores are pooled: one knot, and the curve of the pooled data", {
  # ties in score within a group: the curve is that of the weighted mean at each distinct score
  cal <- calibrate_isotonic(c(1, 1, 2, 2, 3, 3), c(1, 0, 1, 1, 0, 1))
  expect_equal(cal$pooled$prob, c(0.5, 0.75)) # knots 0.5, 1, 0.5: the last two pool
  cal <- calibrate_isotonic(c(2, 1, 1, 3), c(0, 1, 0, 1), weights = c(1, 1, 3, 1))
  expect_equal(cal$pooled$prob, c(1 / 5, 1)) # knots 1 / 4 (weight 4) and 0 pool
  expect_equal(cal$pooled$weight, c(5, 1))
  expect_equal(cal$pooled$lower, c(1, 3))
  expect_equal(cal$pooled$upper, c(2, 3))
  # -0 and 0 are one score; labels as logical
  cal <- calibrate_isotonic(c(-0, 0, 1), c(TRUE, FALSE, TRUE))
  expect_equal(cal$pooled$prob, c(0.5, 1))
  # the same score in two groups is two knots, one per group
  cal <- calibrate_isotonic(c(1, 1, 2, 2), c(1, 0, 0, 1), group = c("a", "b", "a", "b"))
  expect_equal(cal$curves$prob, c(0.5, 0, 1))
})

test_that("integer and logical labels give the calibrator of their doubles, bit for bit", {
  set.seed(11)
  for (n in c(1, 7, 5000)) {
    s <- round(runif(n), 2)
    label <- rbinom(n, 1, s)
    w <- runif(n)
    g <- sample(c("a", "b", "c"), n, TRUE)
    for (direction in list(TRUE, FALSE, "auto")) {
      ref <- calibrate_isotonic(s, as.double(label), w, group = g, increasing = direction)
      for (alt in list(label, label == 1L)) {
        cal <- calibrate_isotonic(s, alt, w, group = g, increasing = direction)
        cal$call <- ref$call
        expect_identical(cal, ref)
      }
    }
  }
  # labels held in a 1-d array, as table() and some readers give them
  expect_identical(calibrate_isotonic(1:4, array(c(0L, 1L, 0L, 1L)))$pooled,
                   calibrate_isotonic(1:4, c(0, 1, 0, 1))$pooled)
})

test_that("factor groups keep their levels; integer and numeric ids are sorted", {
  f <- factor(c("x", "y", "x", "y"), levels = c("y", "x"))
  cal <- calibrate_isotonic(c(0.1, 0.2, 0.3, 0.4), c(0, 1, 1, 1), group = f)
  expect_identical(cal$groups, c("y", "x"))
  expect_equal(cal$n_group, c(2, 2))
  cal <- calibrate_isotonic(1:6 / 10, c(0, 1, 0, 1, 1, 0), group = c(50L, 7L, 50L, 7L, 9L, 9L))
  expect_identical(cal$groups, c(7L, 9L, 50L))
  expect_equal(cal$n_group, c(2, 2, 2))
  expect_equal(predict(cal, c(0.5, 0.6), group = c(9, 9)), c(0.5, 0.5))
  cal <- calibrate_isotonic(1:4 / 10, c(0, 1, 0, 1), group = c(2.5, -1, 2.5, -1))
  expect_identical(cal$groups, c(-1, 2.5))
})

test_that("predict: step, linear, clipping, NA, and the pooled curve", {
  # knots 1, 2, 3 (a block of two) and 5: levels 0, 0.5, 0.5, 1
  cal <- calibrate_isotonic(c(1, 2, 3, 5, 3, 2), c(0, 1, 0, 1, 1, 0))
  expect_equal(cal$pooled$lower, c(1, 2, 5))
  expect_equal(cal$pooled$upper, c(1, 3, 5))
  s <- c(-10, 1, 1.5, 2, 2.5, 3, 4, 5, 99, NA)
  expect_equal(predict(cal, s), c(0, 0, 0, 0.5, 0.5, 0.5, 0.5, 1, 1, NA))
  expect_equal(predict(cal, s, type = "linear"), c(0, 0, 0.25, 0.5, 0.5, 0.5, 0.75, 1, 1, NA))
  # one block: a constant
  one <- calibrate_isotonic(c(3, 1, 2), c(0, 1, 1))
  expect_equal(predict(one, c(0, 2, 9), type = "linear"), rep(2 / 3, 3))
})

test_that("predict by group, with unseen groups warned about or refused", {
  cal <- calibrate_isotonic(c(1, 2, 3, 1, 2, 3), c(0, 0, 1, 0, 1, 1), group = c("a", "a", "a", "b", "b", "b"))
  expect_equal(predict(cal, c(2, 2, 3), group = c("a", "b", "a")), c(0, 1, 1))
  pooled <- predict(cal, 2)
  expect_warning(got <- predict(cal, c(2, 2), group = c("a", "zz")), "\"zz\"")
  expect_equal(got, c(0, pooled))
  expect_error(predict(cal, c(2, 2), group = c("a", "zz"), strict = TRUE), "group.*\"zz\"")
  expect_equal(predict(cal, c(2, 3), group = factor(c("b", "a"))), c(1, 1))
  expect_error(predict(cal, 1, group = NA), "`group`")
  expect_error(predict(cal, 1:2, group = "a"), "`group`")
  expect_error(predict(cal, "1"), "`score`")
  nogroups <- calibrate_isotonic(1:4, c(0, 1, 0, 1))
  expect_error(predict(nogroups, 1, group = "a"), "`group` must be NULL")
})

test_that("bad input: clear errors naming the argument", {
  s <- c(0.1, 0.5, 0.9, 0.3)
  y <- c(0, 1, 1, 0)
  expect_error(predict(calibrate_isotonic(s, y), 0.5, grp = "a"),
               "predict\\(\\): unknown argument `grp`; it takes `object`, `score`, `group`, `type`, `strict`, `device`$")
  expect_error(calibrate_isotonic(s, c(0, 1, 2, 0)), "`label` must be 0 or 1, but has 2 at element 3")
  expect_error(calibrate_isotonic(s, c(0, NA, 1, 0)), "`label` must be 0 or 1, but has NA at element 2")
  expect_error(calibrate_isotonic(s, c(TRUE, NA, TRUE, FALSE)),
               "`label` must be 0 or 1, but has NA at element 2")
  expect_error(calibrate_isotonic(s, c(0L, 1L, 2L, 0L)), "must be 0 or 1, but has 2 at element 3")
  expect_error(calibrate_isotonic(s, c(0L, -1L, 1L, 0L)), "must be 0 or 1, but has -1 at element 2")
  expect_error(calibrate_isotonic(s, c(0L, 1L, NA, 0L)), "must be 0 or 1, but has NA at element 3")
  expect_error(calibrate_isotonic(s, matrix(c(0L, 1L, 1L, 0L), 2)),
               "`label` must be a vector, not a matrix")
  expect_error(calibrate_isotonic(s, c(TRUE, FALSE)),
               "`label` must have the same length as `score`")
  expect_error(calibrate_isotonic(s, c(0, 0.5, 1, 0)), "`label`")
  expect_error(calibrate_isotonic(s, c("0", "1", "1", "0")), "`label` must be a logical")
  expect_error(calibrate_isotonic(s, y[-1]), "`label` must have the same length as `score`")
  expect_error(calibrate_isotonic(c(0.1, NA, 0.9, 0.3), y), "`score` must be finite, but has NA at element 2")
  expect_error(calibrate_isotonic(c(0.1, Inf, 0.9, 0.3), y), "`score`.*Inf")
  expect_error(calibrate_isotonic(numeric(0), numeric(0)), "`score` must have at least one element")
  expect_error(calibrate_isotonic(matrix(s, 2), y), "`score`")
  expect_error(calibrate_isotonic(s, y, weights = c(1, -1, 1, 1)), "`weights` must be finite and non-negative, but has -1 at element 2")
  expect_error(calibrate_isotonic(c(3, 2, 1), c(0, 1, 0), weights = c(1, NA, -2)), "but has NA at element 2")
  expect_error(calibrate_isotonic(s, y, weights = c(1, NA, 1, 1)), "`weights` must be finite")
  expect_error(calibrate_isotonic(s, y, weights = 1:3), "`weights` must have the same length as `score`")
  expect_error(calibrate_isotonic(s, y, weights = c(0, 0, 1, 1), group = c("a", "a", "b", "b")),
               "`weights` must have at least one positive weight in group \"a\"")
  expect_error(calibrate_isotonic(s, y, group = c("a", NA, "b", "b")), "`group` must not contain NA")
  expect_error(calibrate_isotonic(s, y, group = c("a", "b")), "`group` must have the same length")
  expect_error(calibrate_isotonic(s, y, group = list(1, 2, 3, 4)), "`group`")
  expect_error(calibrate_isotonic(s, y, group = factor(c("a", "a", "b", "b"), levels = c("a", "b", "c"))),
               "`group` has level\\(s\\) without any score: \"c\"")
})

test_that("inputs are not modified in place", {
  s <- c(0.3, 0.1, 0.2, 0.1)
  y <- c(TRUE, FALSE, TRUE, FALSE)
  w <- c(1, 2, 3, 4)
  g <- c(2L, 1L, 2L, 1L)
  copies <- lapply(list(s, y, w, g), deep_copy)
  calibrate_isotonic(s, y, w, g)
  expect_identical(list(s, y, w, g), copies)
})

test_that("print and summary describe the curves", {
  cal <- calibrate_isotonic(c(1, 2, 3, 1, 2, 3), c(0, 0, 1, 0, 1, 1), group = c("a", "a", "a", "b", "b", "b"))
  expect_output(print(cal), "6 scores, 2 groups")
  s <- summary(cal)
  expect_equal(s$group, c(NA, "a", "b"))
  expect_equal(s$blocks, c(nrow(cal$pooled), 2, 2))
  expect_output(print(s), "pooled")
})

test_that("scores of weight zero join the block before them (the first block when they lead)", {
  set.seed(19)
  d <- sim_traffic(2000, c("a", "b", "c"), ties = TRUE, weighted = TRUE)
  d$w[order(d$score)[c(1:5, 700:720, 1996:2000)]] <- 0
  cal <- calibrate_isotonic(d$score, d$label, weights = d$w, group = d$group)
  expect_curve_equal(cal$pooled, ref_curve(d$score, d$label, d$w))
  for (k in cal$groups) {
    i <- d$group == k
    expect_curve_equal(cal$curves[cal$curves$group == k, -1L], ref_curve(d$score[i], d$label[i], d$w[i]))
  }
  expect_equal(cal$pooled$lower[1], min(d$score))
  expect_equal(cal$pooled$upper[nrow(cal$pooled)], max(d$score))
})

test_that("sums that overflow and group ids at the ends of the integer range", {
  expect_error(calibrate_isotonic(c(1, 2, 3), c(1, 1, 0), weights = c(1e308, 1e308, 1e308)),
               "^`weights` are too large: their sum reaches 2\\^1023, too near the largest double")
  # just below the limit: the probabilities of the weights divided by a constant
  big <- calibrate_isotonic(c(1, 2, 3, 4), c(1, 0, 0, 1), weights = c(3, 1, 2, 1) * 2^1020)
  unit <- calibrate_isotonic(c(1, 2, 3, 4), c(1, 0, 0, 1), weights = c(3, 1, 2, 1))
  expect_identical(big$pooled$prob, unit$pooled$prob)
  expect_identical(big$pooled$weight, unit$pooled$weight * 2^1020)
  cal <- calibrate_isotonic(1:2 + 0, c(0, 1), group = c(-2000000000L, 2000000000L))
  expect_identical(cal$groups, c(-2000000000L, 2000000000L))
  cal <- calibrate_isotonic(1:3 + 0, c(0, 1, 1), group = c(-2147483647L, -2147483646L, -2147483647L))
  expect_identical(cal$groups, c(-2147483647L, -2147483646L))
  expect_equal(cal$curves$prob, c(0, 1, 1)) # scores 1, 3 (labels 0, 1) and score 2 (label 1)
  # predictions by integer ids (a table over their range where it is short) as by their names
  expect_identical(predict(cal, c(3, 2, 1), group = c(-2147483647L, -2147483646L, -2147483647L)),
                   c(1, 1, 0))
  set.seed(3)
  s <- runif(3000)
  g <- sample(c(-3L, 0L, 5L, 9L), 3000, TRUE)
  cal <- calibrate_isotonic(s, rbinom(3000, 1, s), group = g)
  for (new in list(sample(c(-3L, 0L, 5L, 9L), 50, TRUE), c(9L, -3L), c(7L, 5L, 100L), -4L,
                   c(5L, .Machine$integer.max), c(-.Machine$integer.max, 0L))) {
    v <- runif(length(new))
    unseen <- !new %in% c(-3L, 0L, 5L, 9L)
    ref <- ifelse(unseen, predict(cal, v), predict(cal, v, group = replace(new, unseen, 0L)))
    if (any(unseen)) {
      expect_warning(got <- predict(cal, v, group = new), "not seen in training")
    } else {
      got <- predict(cal, v, group = new)
    }
    expect_identical(got, ref)
    expect_identical(got, suppressWarnings(predict(cal, v, group = as.double(new))))
  }
  expect_identical(predict(cal, numeric(0), group = integer(0)), numeric(0))
  # integer ids of a class (data.table's IDate, say) matched by value, as match() does
  s <- c(0.1, 0.4, 0.7, 0.2, 0.5, 0.8, 0.3, 0.6, 0.9)
  cal <- calibrate_isotonic(s, c(0, 1, 1, 0, 0, 1, 1, 0, 1),
                            group = structure(18000 + rep(c(0, 2, 5), 3), class = "Date"))
  v <- c(0.2, 0.5, 0.9, 0.1)
  want <- predict(cal, v, group = structure(c(18000, 18002, 18000, 18005), class = "Date"))
  days <- structure(c(18000L, 18002L, 18000L, 18005L), class = "Date")
  expect_identical(predict(cal, v, group = days), want)
  # and calibrators trained on them: their groups as by value
  int_days <- calibrate_isotonic(s, c(0, 1, 1, 0, 0, 1, 1, 0, 1),
                                 group = structure(18000L + rep(c(0L, 2L, 5L), 3), class = "Date"))
  expect_identical(as.double(int_days$groups), as.double(cal$groups))
  expect_identical(int_days$curves$prob, cal$curves$prob)
})

test_that("plots and metrics check their arguments", {
  cal <- calibrate_isotonic(c(0.1, 0.4, 0.7), c(0, 1, 1), group = c("a", "b", "b"))
  pdf(NULL)
  on.exit(dev.off())
  expect_error(plot(cal, max_groups = NA), "`max_groups` must be a single non-negative number")
  expect_invisible(plot(cal)) # group "a" has one score: drawn as a point
  expect_error(reliability_diagram(list(), c(0, 1)), "`prob` must hold at least one set")
  expect_error(calibration_error(c(0.2, 0.8), c(0, 1), bins = Inf), "`bins` must be a single positive")
  expect_error(calibration_error(c(0.2, 0.8), c(0, 1), bins = 2^31), "`bins` must be at most 1e6")
  expect_error(calibration_error(c(0.2, 0.8), c(0, 1), bins = 1e6 + 1), "at most 1e6, not 1000001$")
  expect_error(calibration_error(c(0.5, 1 + 2^-52), c(0, 1)), "1.0000000000000002 at element 2")
  expect_equal(log_loss(c(0, 1, 0.5), c(1, 0, 1), weights = c(0, 0, 1), eps = 0), log(2))
  expect_equal(log_loss(c(0, 0.5), c(1, 1), eps = 1e-17), (-log(1e-17) + log(2)) / 2)
})

test_that("predict matches step functions and interpolation of the reference curves", {
  set.seed(23)
  d <- sim_traffic(6000, 1:60, ties = TRUE, weighted = TRUE)
  cal <- calibrate_isotonic(d$score, d$label, weights = d$w, group = d$group)
  q_group <- sample(1:60, 3000, TRUE)
  q_score <- c(sample(c(cal$curves$lower, cal$curves$upper), 1500, TRUE), runif(1400, -0.1, 1.1),
               rep(c(-5, 5), 50))
  ref <- function(g, s, type) {
    i <- d$group == g
    curve <- ref_curve(d$score[i], d$label[i], d$w[i])
    if (type == "step") return(stats::stepfun(curve$lower[-1], curve$prob)(s))
    x <- as.vector(rbind(curve$lower, curve$upper))
    keep <- c(TRUE, diff(x) > 0)
    stats::approx(x[keep], rep(curve$prob, each = 2L)[keep], xout = s, rule = 2, ties = "ordered")$y
  }
  for (type in c("step", "linear")) {
    want <- numeric(length(q_score))
    for (g in unique(q_group)) {
      i <- q_group == g
      want[i] <- ref(g, q_score[i], type)
    }
    expect_equal(predict(cal, q_score, group = q_group, type = type), want, tolerance = 1e-12,
                 info = type)
  }
})

test_that("summary keeps the class of the group ids", {
  days <- as.Date("2026-01-01") + c(0, 0, 1, 1)
  s <- summary(calibrate_isotonic(c(0.1, 0.6, 0.2, 0.7), c(0, 1, 1, 1), group = days))
  expect_s3_class(s$group, "Date")
  expect_equal(s$group, as.Date(c(NA, "2026-01-01", "2026-01-02")))
  expect_true(is.na(summary(calibrate_isotonic(c(0.1, 0.6), c(0, 1)))$group))
})

test_that("string group ids are matched as R matches them, ASCII or not", {
  set.seed(31)
  first_codes <- gpuiso:::first_codes
  for (n in c(0, 1, 40, 5000)) {
    g <- paste0("seg", sample(max(1, n %/% 4), n, TRUE))
    expect_identical(first_codes(g), list(first = unique(g), codes = match(g, unique(g))))
  }
  # one value in two encodings: two strings in R's cache, one value for unique() and match()
  e1 <- "caf\u00e9"
  e2 <- iconv(e1, "UTF-8", "latin1")
  expect_identical(Encoding(e2), "latin1")
  g <- c("a", e1, "b", e2, "a")
  expect_identical(first_codes(g), list(first = unique(g), codes = match(g, unique(g))))
  expect_identical(first_codes(g)$codes, c(1L, 2L, 3L, 2L, 1L))
  # calibrators and batches by string ids fit as by the same groups as a factor: ASCII ids (coded
  # in C), then with one that is not (coded by R)
  n <- 3000
  score <- runif(n)
  label <- rbinom(n, 1, score)
  for (names in list(c("north", "south", "east", "west"), c("north", "south", "east", e1))) {
    g <- sample(names, n, TRUE)
    by_string <- calibrate_isotonic(score, label, group = g)
    by_factor <- calibrate_isotonic(score, label, group = factor(g))
    by_string$call <- by_factor$call <- NULL
    expect_identical(by_string, by_factor)
    new <- c("south", names[4], "north", "up")
    expect_warning(p <- predict(by_string, c(0.2, 0.5, 0.7, 0.9), group = new), "\"up\"")
    expect_identical(p, c(predict(by_factor, c(0.2, 0.5, 0.7), group = factor(new[1:3], names)),
                          predict(by_factor, 0.9)))
    expect_identical(isoreg_batch(score, group = g), isoreg_batch(score, group = match(g, unique(g))))
  }
  expect_identical(predict(by_string, 0.5, group = e2), predict(by_string, 0.5, group = e1))
})

test_that("numeric group ids are ranked as sort(unique()) and match() rank them", {
  set.seed(32)
  n <- 6000
  score <- runif(n)
  label <- rbinom(n, 1, score)
  check_group <- gpuiso:::check_group
  for (ids in list(c(-2.5, 0, 1e300, 7), c(-Inf, 3, Inf, 0.5))) { # finite (C), not (R)
    g <- sample(ids, n, TRUE)
    g[sample(n, 10)] <- -0 # one group with 0
    levels <- sort(unique(g))
    expect_identical(is.null(.Call(gpuiso:::C_distinct_codes, g)), any(is.infinite(ids)))
    got <- check_group(g, n)
    expect_true(all(got$levels == levels) && length(got$levels) == length(levels))
    expect_identical(got$codes, match(g, levels))
    expect_identical(got$counts, tabulate(match(g, levels), length(levels)))
    by_number <- calibrate_isotonic(score, label, group = g)
    by_factor <- calibrate_isotonic(score, label, group = factor(g))
    expect_identical(by_number$curves$prob, by_factor$curves$prob)
    expect_identical(by_number$first, by_factor$first)
    expect_identical(predict(by_number, score[1:50], group = g[1:50]),
                     predict(by_factor, score[1:50], group = factor(g[1:50], levels(factor(g)))))
  }
  # a 1-d array of ids keeps its levels as R ranks them
  g <- array(rep(c(2.5, 1.5), 50))
  expect_identical(check_group(g, 100)$levels, sort(unique(g)))
})

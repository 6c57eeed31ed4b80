# Argument checks shared by the user-facing functions. Each error names the argument.

stop_arg <- function(name, problem) {
  stop(sprintf("`%s` %s", name, problem), call. = FALSE)
}

# A numeric vector (not a matrix or array; a 1-d array is taken as its vector) of at least one
# element, as double; with n, of the length of the argument called ref.
check_vector <- function(v, name, n = NULL, ref = "y") {
  # the common case first, in primitives: a call of check_length() costs a small fit 5%
  if (is.double(v) && !is.object(v) && is.null(dim(v)) && length(v) > 0L &&
      (is.null(n) || length(v) == n)) {
    return(v)
  }
  if (!is.numeric(v)) {
    stop_arg(name, sprintf("must be a numeric vector, not %s", describe(v)))
  }
  v <- check_length(v, name, n, ref)
  if (!is.double(v)) v <- as.double(v)
  v
}

# v as a plain vector of at least one element, and of n when n is given.
check_length <- function(v, name, n = NULL, ref = "y") {
  if (!is.null(dim(v))) {
    if (length(dim(v)) > 1L) {
      stop_arg(name, sprintf("must be a vector, not %s", array_shape(v)))
    }
    v <- as.vector(v)
  }
  if (length(v) == 0L) stop_arg(name, "must have at least one element")
  if (!is.null(n) && length(v) != n) {
    stop_arg(name, sprintf("must have the same length as `%s` (%.0f), not %.0f", ref, n, length(v)))
  }
  v
}

# The smallest and largest of a vector without NA, as range() gives them, without range()'s copy
# of the whole vector (c(..., recursive = TRUE)): 0.13 s of 1e7 group ids against 0.01.
span_of <- function(v) c(min(v), max(v))

# Small integer ids (the common case), which a table of their range serves rather than hashing
# every element: the span of plain integer ids without NA shorter than their number, else NULL
# (also for classed ids, such as integer dates, whose arithmetic and seq() are other methods).
id_span <- function(group) {
  if (!is.integer(group) || is.object(group) || length(group) == 0L) return(NULL)
  span <- span_of(group)
  if (diff(as.double(span)) < length(group)) span
}

# Each id's place in its span, 1 for the smallest (no overflow: the span is shorter than n).
id_index <- function(group, span) if (span[1] == 1L) group else group - span[1] + 1L

# unique(group) and match(group, unique(group)) as list(first, codes); for plain strings in one
# pass in C over their addresses (R's two hashings took 0.9 s of 1e7 strings).
first_codes <- function(group) {
  if (is.character(group) && !is.object(group)) {
    ids <- .Call(C_string_codes, group)
    if (!is.null(ids)) return(list(first = ids[[1]], codes = ids[[2]]))
  }
  first <- unique(group)
  list(first = first, codes = match(group, first))
}

# match(group, levels) from first_codes(group): one match per distinct id.
codes_in <- function(ids, levels) match(ids$first, levels)[ids$codes]

# match(group, levels) for group ids without NA (0.21 s for 1e7 small ids against 0.33).
match_ids <- function(group, levels) {
  if (is.character(group)) return(codes_in(first_codes(group), levels))
  span <- id_span(group)
  if (is.null(span)) return(match(group, levels))
  match(seq.int(span[1], span[2]), levels)[id_index(group, span)]
}

# "a matrix" or "a 3-d array", for errors.
array_shape <- function(v) if (is.matrix(v)) "a matrix" else sprintf("a %d-d array", length(dim(v)))

check_flag <- function(v, name) {
  if (!is.logical(v) || length(v) != 1L || is.na(v)) stop_arg(name, "must be TRUE or FALSE")
  v
}

check_bound <- function(v, name) {
  if (!is.numeric(v) || length(v) != 1L || is.na(v)) stop_arg(name, "must be a single number")
  as.double(v)
}

check_bounds <- function(y_min, y_max) {
  y_min <- check_bound(y_min, "y_min")
  y_max <- check_bound(y_max, "y_max")
  # clipping to them would make every fitted value infinite
  if (y_min == Inf) stop_arg("y_min", "must be a finite number or -Inf (no lower bound), not Inf")
  if (y_max == -Inf) stop_arg("y_max", "must be a finite number or Inf (no upper bound), not -Inf")
  if (y_min > y_max) stop_arg("y_min", sprintf("(%g) must not exceed `y_max` (%g)", y_min, y_max))
  c(y_min, y_max)
}

# The first element of a numeric vector that is not finite (nonnegative: or is negative), 0 for
# none: one pass in C for doubles, instead of which(!is.finite(v)) and its two vectors.
first_bad <- function(v, nonnegative = FALSE) {
  if (is.double(v)) return(.Call(C_first_bad, v, nonnegative))
  bad <- which(!is.finite(v) | (nonnegative & v < 0))
  if (length(bad)) bad[1L] else 0
}

# Weights: finite, non-negative, at least one positive; the first bad one named in input order.
check_weights <- function(weights, n, ref = "y") {
  w <- check_vector(weights, "weights", n, ref)
  i <- first_bad(w, nonnegative = TRUE)
  if (i > 0) {
    stop_arg("weights", sprintf("must be finite and non-negative, but has %s at element %d",
                                format(w[i], digits = 17L), i))
  }
  if (!any(w > 0)) stop_arg("weights", "must have at least one positive weight")
  w
}

# What v is, for "must be ..., not <what>": "a character vector", "a list", "an object of class
# \"Date\"", "an environment".
describe <- function(v) {
  if (is.null(v)) return("NULL")
  if (is.factor(v)) return("a factor")
  if (is.data.frame(v)) return("a data frame")
  if (isS4(v)) return(sprintf("an S4 object of class %s", quoted_list(class(v))))
  if (is.object(v)) return(sprintf("an object of class %s", quoted_list(class(v))))
  if (is.function(v)) return("a function")
  if (is.list(v)) return("a list")
  if (is.atomic(v)) {
    shape <- if (is.matrix(v)) "matrix" else if (is.array(v)) "array" else "vector"
    return(with_article(sprintf("%s %s", typeof(v), shape)))
  }
  with_article(typeof(v))
}

with_article <- function(s) paste(if (grepl("^[aeiou]", s)) "an" else "a", s)

# One of the strings `choices`, as match.arg() takes it (the whole default vector means its first
# element, a unique prefix means its choice), but an error that names the argument otherwise.
check_choice <- function(value, choices, name) {
  if (identical(value, choices)) return(choices[1L])
  one <- is.character(value) && length(value) == 1L && !is.na(value)
  if (one) {
    i <- pmatch(value, choices)
    if (!is.na(i)) return(choices[i])
  }
  if (!is.null(value) && is.atomic(value) && length(value) == 0L) {
    stop_arg(name, sprintf("must be a single string, one of %s, not an empty %s vector",
                           quoted_list(choices), typeof(value)))
  }
  given <- if (one) {
    sprintf("\"%s\"", value)
  } else if (is.atomic(value) && length(value) == 1L && is.na(value)) {
    "NA"
  } else if (is.atomic(value) && length(value) > 1L) {
    sprintf("%d values", length(value))
  } else {
    describe(value)
  }
  stop_arg(name, sprintf("must be one of %s, not %s", quoted_list(choices), given))
}

# The exponent e for which w * 2^e has its largest element in [1, 2): the weights of a fit or a
# score can be scaled by it without changing the result (exactly, for a power of two), and
# their sums then neither overflow nor lose digits to underflow.
weight_exponent <- function(w) -floor(log2(max(w)))

# v * 2^e, exact while the result is a normal double: in two factors, each a finite double even
# where 2^e is not (e up to 1074, for subnormal weights).
times_pow2 <- function(v, e) {
  half <- e %/% 2
  v * 2^half * 2^(e - half)
}

scale_weights <- function(w) times_pow2(w, weight_exponent(w))

# The fraction of the way from x0 to x1 (x0 < x1) at which x lies; where x1 - x0 overflows
# (ends of opposite signs near the largest double), from halves, which are exact that far from
# the subnormals. (The values interpolated, fitted levels or probabilities, cannot overflow:
# a fit's weighted sum of |y| is finite.)
interp_fraction <- function(x, x0, x1) {
  f <- (x - x0) / (x1 - x0)
  wide <- is.infinite(x1 - x0)
  if (any(wide)) f[wide] <- (x[wide] / 2 - x0[wide] / 2) / (x1[wide] / 2 - x0[wide] / 2)
  f
}

# The backend that runs work of n elements: "gpu" when requested (an error naming the reason
# when the package has no CUDA, the runtime sees no device or the GPU was lost), "cpu" when
# requested, and for "auto" the GPU where gpu_auto() says the size calls for it and a usable
# device is present.
resolve_device <- function(device, n, work = "fit") {
  device <- check_choice(device, c("auto", "cpu", "gpu"), "device")
  if (device == "cpu") return("cpu")
  if (device == "gpu") {
    why <- gpu_unavailable()
    if (!is.null(why)) {
      stop(sprintf("`device = \"gpu\"`: %s; use device = \"cpu\" or \"auto\" (see gpuiso_backend())", why),
           call. = FALSE)
    }
    return("gpu")
  }
  auto_backend(n, work)
}

# The sizes from which "auto" takes the GPU, chosen from timings on an H200 beside 16 cores,
# transfers included (tools/gpu-check; tools/bench/RESULTS.md, 2026-12-04): one fit
# (isoreg_gpu) from 1e5 elements and batches from 1e6, the crossovers of one row and of rows of
# 100; calibration (and its predictions) and the vjp at 1e7, the one size timed, where the GPU was
# 5 to 7 times faster; soft ranks and sorts from 4e5, between 256 rows of 1e3 (the CPU faster) and
# 4 rows of 1e5 (the GPU). IDR stays on the CPU (idr.R): its GPU path was slower.
gpu_auto_min_n <- c(fit = 1e5, batch = 1e6, soft = 4e5, calibrate = 1e7, vjp = 1e7)

# The backend of device = "auto" for work of n elements.
auto_backend <- function(n, work) if (gpu_auto(n, work) && is.null(gpu_unavailable())) "gpu" else "cpu"

# Whether device = "auto" would take the GPU for work of n elements: from the measured size of
# that work, or from options(gpuiso.gpu_min_n) for all work where it is set.
gpu_auto <- function(n, work) {
  min_n <- getOption("gpuiso.gpu_min_n")
  if (is.null(min_n)) return(n >= gpu_auto_min_n[[work]])
  if (!is.numeric(min_n) || length(min_n) != 1L || is.na(min_n) || min_n < 0) {
    stop("option `gpuiso.gpu_min_n` must be NULL or a single non-negative number of elements",
         call. = FALSE)
  }
  n >= min_n
}

# NULL when a CUDA device can be used, else why not. A lost GPU is told without a call to the
# CUDA runtime, whose every call would fail again.
gpu_unavailable <- function() {
  lost <- gpu_lost()
  if (!is.null(lost)) {
    return(sprintf("the GPU failed earlier in this R session and is not used again until R is restarted: %s",
                   lost))
  }
  info <- .Call(C_backend_info)
  if (!info[[1]]) return("gpuiso was built without CUDA")
  if (info[[2]] == 0L) {
    return(paste0("no usable CUDA device", if (!is.na(info[[7]])) sprintf(" (%s)", info[[7]]) else ""))
  }
  NULL
}

# NULL while the GPU is usable; once a sticky CUDA error (an illegal address, a failed launch, see
# src/core/cuda_lost.c) has made it unusable for the rest of the process, that error's text.
gpu_lost <- function() .Call(C_cuda_lost)

check_precision <- function(precision) check_choice(precision, c("double", "single"), "precision")

# The engine code of the C glue (gpuiso_engine): PAV, the CPU hull engine, or the CUDA solver.
engine_code <- function(backend, method) {
  if (backend == "gpu") 2L else if (method == "hull") 1L else 0L
}

# Runs fit(engine code) on the backend; returns list(value, backend that ran). A GPU that "auto"
# chose and that fails with a CUDA error, whose memory cannot hold the fit (as its plan foresees
# it, or as the CUDA runtime reports it), or whose hull solver cannot hold the weights' range,
# hands the fit to the CPU, with a message (the
# error of a GPU lost in the fit, which was usable when "auto" chose it, says so itself); a GPU
# asked for by name reports the error.
run_on <- function(backend, device, method, fit) {
  if (backend == "gpu" && check_choice(device, c("auto", "cpu", "gpu"), "device") == "auto") {
    return(tryCatch(list(value = fit(engine_code("gpu", method)), backend = "gpu"), error = function(e) {
      why <- conditionMessage(e)
      lost <- !is.null(gpu_lost())
      full <- startsWith(why, "gpuiso: out of memory")
      # weights beyond the hull solver's range: PAV fits them (method "auto" is PAV)
      span <- grepl("spans too wide a range for the hull solver", why, fixed = TRUE)
      if (!lost && !full && !span && !startsWith(why, "CUDA error")) stop(e)
      message("gpuiso: ", if (lost) why else if (full) "the GPU's memory cannot hold the fit"
              else if (span) "the weights span too wide a range for the GPU's hull solver"
              else sprintf("the GPU failed (%s)", why), "; fitting on the CPU")
      list(value = fit(engine_code("cpu", method)), backend = "cpu")
    }))
  }
  list(value = fit(engine_code(backend, method)), backend = backend)
}

# The CPU engine of a fit. "auto" is PAV: measured on this project's machines (tools/bench,
# RESULTS.md) the hull engine takes four to ten times as long as PAV on one thread and gains no
# more from threads than PAV's own chunked rows do, so it wins at no row length or thread count
# there. It is the GPU's algorithm, run on the CPU to test it and for comparison.
resolve_method <- function(method) {
  method <- check_choice(method, c("auto", "pav", "hull"), "method")
  if (method == "auto") default_method else method
}

default_method <- "pav"

# Labels of a binary outcome: logical, or numeric 0 and 1 (double or integer), of the length n
# of the argument called ref. The 0/1 rule is checked in C, in one pass over what may be a long
# vector.
check_label <- function(label, n, ref = "score") {
  if (!is.logical(label) && !is.numeric(label)) {
    stop_arg("label", sprintf("must be a logical vector or numeric 0s and 1s, not %s", describe(label)))
  }
  # logical and integer labels stay as they are, read so by the C code: as.double() would copy
  # them, a quarter of the time of a calibration of 1e7 scores
  label <- if (is.logical(label) || is.integer(label)) {
    check_length(label, "label", n, ref)
  } else {
    check_vector(label, "label", n, ref)
  }
  .Call(C_check_labels, label)
  label
}

# Group ids: a factor (every level used) or an atomic vector, without NA. codes are 1..K in the
# order of levels, which are the factor's levels or the sorted distinct values; counts the number
# of elements of each.
check_group <- function(group, n, ref = "score") {
  if (!is.atomic(group) || length(dim(group)) > 1L) {
    stop_arg("group", sprintf("must be a factor or a vector of group ids, not %s", describe(group)))
  }
  if (length(group) != n) {
    stop_arg("group", sprintf("must have the same length as `%s` (%.0f), not %.0f", ref, n, length(group)))
  }
  if (anyNA(group)) stop_arg("group", sprintf("must not contain NA (element %.0f)", which(is.na(group))[1L]))
  if (is.factor(group)) {
    levels <- levels(group)
    codes <- as.integer(group)
    counts <- tabulate(codes, length(levels))
    if (any(counts == 0L)) {
      stop_arg("group", sprintf("has level(s) without any score: %s; drop them with droplevels()",
                                quoted_list(levels[counts == 0L])))
    }
  } else if (!is.null(span <- id_span(group))) {
    shifted <- id_index(group, span)
    counts <- tabulate(shifted, span[2] - span[1] + 1L)
    levels <- which(counts > 0L) - 1L + span[1]
    codes <- if (all(counts > 0L)) shifted else cumsum(counts > 0L)[shifted]
    counts <- counts[counts > 0L]
  } else {
    ranked <- ranked_ids(group)
    levels <- ranked$levels
    codes <- ranked$codes
    counts <- tabulate(codes, length(levels))
  }
  list(codes = codes, levels = levels, counts = counts)
}

# sort(unique(group)) and match(group, that) of group ids without NA, as list(levels, codes):
# strings through first_codes(), finite doubles by one sort in C (R hashes them twice: 0.95 s of
# 1e7 ids against 0.2), others by R.
ranked_ids <- function(group) {
  if (is.character(group)) {
    ids <- first_codes(group)
    levels <- sort(ids$first)
    return(list(levels = levels, codes = codes_in(ids, levels)))
  }
  if (is.double(group) && !is.object(group) && is.null(dim(group)) &&
      length(group) <= .Machine$integer.max &&
      !is.null(ids <- .Call(C_distinct_codes, group))) {
    return(list(levels = ids[[1]], codes = ids[[2]] + 1L))
  }
  levels <- sort(unique(group))
  list(levels = levels, codes = match(group, levels))
}

# "\"a\", \"b\", \"c\" and 4 more"
quoted_list <- function(v, most = 5L) {
  shown <- paste0("\"", utils::head(v, most), "\"", collapse = ", ")
  if (length(v) > most) sprintf("%s and %d more", shown, length(v) - most) else shown
}

# The `increasing` argument of the fits: TRUE, FALSE or "auto" (a unique prefix of it).
check_direction <- function(v, name = "increasing") {
  if (is.logical(v) && length(v) == 1L && !is.na(v)) return(v)
  if (is.character(v) && length(v) == 1L && !is.na(v) && nzchar(v) && startsWith("auto", v)) return("auto")
  stop_arg(name, "must be TRUE, FALSE or \"auto\"")
}

# For increasing = "auto": per problem (codes 1..k of `problem`), whether the Spearman rank
# correlation of x and y is >= 0 (scikit-learn's rule), over the elements of positive weight.
# Only its sign matters, which is the sign of the covariance of the ranks, summed exactly in C
# (src/core/rank_direction.c, one sort of x and one of y), so a correlation of exactly 0, and an
# undefined one (x or y constant: both directions then give the same fit), is >= 0.
rank_direction <- function(x, y, w = NULL, problem = rep.int(1L, length(y)), k = 1L) {
  force(problem) # its default is the length of y before the elements of weight zero go
  # NA are errors of the fit, reported by the C code that follows
  if (anyNA(x) || anyNA(y) || anyNA(w) || length(y) == 0L) return(rep(TRUE, k))
  real <- function(v) if (is.null(v) || is.double(v)) v else as.double(v)
  .Call(C_rank_direction, real(x), real(y), real(w), as.integer(problem), as.integer(k))
}

# A covariate x that is not a plain number: a Date (days), a date-time (POSIXct or POSIXlt:
# seconds), a difftime (in its units) or an ordered factor (its level codes). list(value, type):
# the doubles the fit uses, and what x_restore() and x_new() need to map values back and new
# data in (type is NULL for numeric x, whose value check_vector() then checks).
x_numeric <- function(x, name = "x") {
  if (!is.object(x)) return(list(value = x, type = NULL)) # each inherits() below costs a call
  if (inherits(x, "Date")) return(list(value = as.double(unclass(x)), type = list(kind = "Date")))
  if (inherits(x, "POSIXt")) {
    x <- as.POSIXct(x)
    return(list(value = as.double(unclass(x)), type = list(kind = "POSIXct", tz = attr(x, "tzone"))))
  }
  if (inherits(x, "difftime")) {
    return(list(value = as.double(unclass(x)), type = list(kind = "difftime", units = units(x))))
  }
  if (is.ordered(x)) {
    return(list(value = as.double(as.integer(x)), type = list(kind = "ordered", levels = levels(x))))
  }
  if (is.factor(x)) {
    stop_arg(name, "is a factor without an order: make it an ordered factor (factor(..., ordered = TRUE)) or numeric")
  }
  list(value = x, type = NULL)
}

# Values v on the numeric scale of a covariate, back in its type.
x_restore <- function(v, type) {
  if (is.null(type)) return(v)
  switch(type$kind,
    Date = structure(v, class = "Date"),
    POSIXct = structure(v, class = c("POSIXct", "POSIXt"), tzone = type$tz),
    difftime = structure(v, units = type$units, class = "difftime"),
    ordered = factor(type$levels[v], levels = type$levels, ordered = TRUE))
}

# New values of a covariate of the given type (the argument called name), on its numeric scale:
# of the same type (a difftime in any units; an ordered factor with the same levels, or the
# levels as strings).
x_new <- function(v, type, name = "newdata") {
  if (is.null(type)) return(v)
  what <- switch(type$kind, Date = "a Date", POSIXct = "a date-time (POSIXct)", difftime = "a difftime",
                 ordered = sprintf("an ordered factor with the levels of the fitted x (%s)", quoted_list(type$levels)))
  wrong <- function() stop_arg(name, sprintf("must be %s, as the fitted x, not %s", what, describe(v)))
  switch(type$kind,
    Date = if (inherits(v, "Date")) as.double(unclass(v)) else wrong(),
    POSIXct = if (inherits(v, "POSIXt")) as.double(unclass(as.POSIXct(v))) else wrong(),
    difftime = if (inherits(v, "difftime")) as.double(v, units = type$units) else wrong(),
    ordered = {
      if (is.factor(v) && !identical(levels(v), type$levels)) wrong()
      if (!is.factor(v) && !is.character(v)) wrong()
      code <- match(as.character(v), type$levels)
      unknown <- !is.na(v) & is.na(code)
      if (any(unknown)) {
        stop_arg(name, sprintf("has value(s) that are not levels of the fitted x: %s",
                               quoted_list(unique(as.character(v)[unknown]))))
      }
      as.double(code)
    })
}

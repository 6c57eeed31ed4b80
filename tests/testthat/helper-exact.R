# An exact reference for the precision tests: weighted PAV over Rmpfr numbers whose precision
# holds every product w * y and every block sum exactly, so that pooling decisions are exact and
# each level is the exact block mean rounded once to a double. Plain R; nothing here calls gpuiso.

# Bits that hold every sum of the products w * y (and of w) exactly: from the largest magnitude
# a sum can reach down to the last bit of the smallest product.
exact_bits <- function(y, w) {
  terms <- abs(c(w * y, w))
  terms <- terms[terms > 0]
  if (length(terms) == 0) return(128L)
  top <- floor(log2(max(terms) * length(y))) + 2
  low <- floor(log2(min(terms))) - 110 # a product of two doubles has at most 106 bits
  as.integer(top - low + 16)
}

# Non-decreasing (increasing = TRUE) or non-increasing fit of y with positive weights w, exactly.
# Blocks are pooled while the mean below is not under the mean on top, decided by the cross
# products S_a W_b and S_b W_a at twice the sums' precision, where they too are exact.
ref_pav_exact <- function(y, w = NULL, increasing = TRUE) {
  n <- length(y)
  if (is.null(w)) w <- rep(1, n)
  stopifnot(all(w > 0), all(is.finite(y)), all(is.finite(w)))
  bits <- 2L * exact_bits(y, w)
  yy <- Rmpfr::mpfr(if (increasing) y else -y, bits)
  ww <- Rmpfr::mpfr(w, bits)
  prod <- yy * ww
  S <- W <- vector("list", n)
  size <- integer(n)
  k <- 0L
  for (i in seq_len(n)) {
    k <- k + 1L
    S[[k]] <- prod[i]
    W[[k]] <- ww[i]
    size[k] <- 1L
    while (k > 1L && S[[k - 1L]] * W[[k]] >= S[[k]] * W[[k - 1L]]) {
      S[[k - 1L]] <- S[[k - 1L]] + S[[k]]
      W[[k - 1L]] <- W[[k - 1L]] + W[[k]]
      size[k - 1L] <- size[k - 1L] + size[k]
      k <- k - 1L
    }
  }
  level <- vapply(seq_len(k), function(b) Rmpfr::asNumeric(S[[b]] / W[[b]]), 0)
  f <- rep(level, size[seq_len(k)])
  if (increasing) f else -f
}

# Rows for the precision tests: the four data families, the cancellation family of the paper's
# section 7.6, and values or weights spread log-uniformly over 10^-span .. 10^span.
precision_families <- c("noise", "increasing", "sawtooth", "cliff", "cancellation",
                        "extreme_weights", "wide_values", "wide_weights", "wide_both")

# One row of family f: list(y, w), w NULL when unweighted; span is the decades of the wide
# families either side of 1.
gen_precision <- function(f, n, span = 30) {
  wide <- function(k) 10^stats::runif(k, -span, span)
  signed <- function(k) sample(c(-1, 1), k, replace = TRUE) * wide(k)
  switch(f,
    noise = , increasing = , sawtooth = , cliff = list(y = gen_y(f, n), w = NULL),
    cancellation = {
      # per 64 elements: 32 of +B, one of -32 B, 31 small nearly collinear values
      B <- 10^stats::runif(1, 3, 12)
      r <- (seq_len(n) - 1) %% 64
      list(y = ifelse(r < 32, B, ifelse(r == 32, -32 * B, 1e-3 * r + 1e-9 * stats::runif(n))),
           w = NULL)
    },
    extreme_weights = list(y = gen_y("noise", n), w = exp(stats::runif(n, -8, 8))),
    wide_values = list(y = signed(n), w = NULL),
    wide_weights = list(y = gen_y("noise", n), w = wide(n)),
    wide_both = list(y = signed(n), w = wide(n)),
    stop("unknown precision family ", f))
}

# The largest deviation of fit z from the exact fit, relative to 1 + |exact| (paper, 7.6).
deviation <- function(z, exact) max(abs(z - exact) / (1 + abs(exact)))

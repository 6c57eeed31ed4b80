# Simulated click traffic for the calibration tests: n scores in groups of unequal sizes (group k
# about 1/k of the traffic), click rate rising with the score; ties: scores rounded to 1/100.
sim_traffic <- function(n, groups, ties = FALSE, weighted = FALSE) {
  g <- sample(groups, n, replace = TRUE, prob = seq_along(groups)^-1)
  s <- if (ties) round(stats::runif(n), 2) else stats::runif(n)
  list(score = s, label = as.double(stats::runif(n) < 0.1 + 0.5 * s^2), group = g,
       w = if (weighted) stats::runif(n, 0.1, 3) else NULL)
}

# Soft rank, forward and backward, on the CPU: soft_rank(gradient = TRUE) and soft_rank_vjp()
# with the forward pass's sort order, on every row of a matrix at once, against the same formula
# in plain R row by row (order, a non-increasing isoreg_gpu fit that records its blocks, block
# means by ave, the inverse permutation), which also sorts once for both passes; and, for
# comparison, soft_rank_vjp() without the order (it sorts again). Shapes of the paper's section
# 7.9: 256 x 1e3 and 4 x 1e5, standard normal values, epsilon = 1 and 1 / n.
# Run: Rscript tools/bench/soft_rank.R
suppressMessages(library(gpuiso))
source(file.path("tools", "bench", "common.R"))
reps <- as.integer(Sys.getenv("GPUISO_BENCH_REPS", "7"))
bench_header(sprintf("soft rank, forward + backward, medians of %d", reps))

# Soft ranks of x and the gradient of sum(g * soft ranks), one row.
plain_r <- function(x, g, epsilon) {
  n <- length(x)
  theta <- x / epsilon
  o <- order(theta, decreasing = TRUE)
  s <- theta[o]
  fit <- isoreg_gpu(s - n:1, increasing = FALSE, gradient = TRUE)
  rank <- grad <- numeric(n)
  rank[o] <- s - fitted(fit)
  gs <- g[o]
  grad[o] <- (gs - stats::ave(gs, cumsum(fit$grad$start))) / epsilon
  list(rank = rank, grad = grad)
}

set.seed(1)
rows <- NULL
for (shape in list(c(256, 1e3), c(4, 1e5))) {
  X <- matrix(stats::rnorm(prod(shape)), shape[1])
  G <- matrix(stats::rnorm(prod(shape)), shape[1])
  for (epsilon in c(1, 1 / shape[2])) {
    ours <- quote({
      r <- soft_rank(X, epsilon, gradient = TRUE)
      list(r, soft_rank_vjp(X, G, epsilon, order = attr(r, "order")))
    })
    again <- quote(list(soft_rank(X, epsilon), soft_rank_vjp(X, G, epsilon)))
    ref <- quote(lapply(seq_len(nrow(X)), function(r) plain_r(X[r, ], G[r, ], epsilon)))
    a <- eval(ours)
    b <- eval(ref)
    stopifnot(identical(a[[2]], eval(again)[[2]]))
    dev <- max(abs(a[[1]] - t(sapply(b, `[[`, "rank"))), abs(a[[2]] - t(sapply(b, `[[`, "grad"))))
    t <- time_turns(list(gpuiso = ours, plain_r = ref, again = again), reps)
    rows <- rbind(rows, data.frame(shape = sprintf("%d x %g", shape[1], shape[2]),
                                   epsilon = if (epsilon == 1) "1" else "1/n",
                                   gpuiso_ms = 1e3 * t[["gpuiso"]], plain_r_ms = 1e3 * t[["plain_r"]],
                                   ratio = t[["plain_r"]] / t[["gpuiso"]],
                                   sorting_again_ms = 1e3 * t[["again"]], max_abs_diff = dev))
  }
}
print(rows, row.names = FALSE, digits = 3)

# Evaluates expr with gpuiso's thread count set to threads, restoring it after (lazy evaluation:
# expr runs inside).
on_threads <- function(threads, expr) {
  old <- gpuiso_threads(threads)
  on.exit(gpuiso_threads(old))
  expr
}

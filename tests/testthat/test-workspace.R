# The device memory that a GPU fit asks for, as the CUDA engine plans it (gpu_workspace_bytes is
# computed on the host, so these run without a device).
bytes_per_element <- function(rows, len, ...) gpuiso:::gpu_workspace_bytes(rows, len, ...) / (rows * len)

test_that("the fast path's rows of up to 4096 take at most 48 bytes an element, weighted float64", {
  shapes <- list(c(1e7, 16), c(1e6, 16), c(1e5, 100), c(1e4, 1e3), c(1e3, 4096), c(1, 4096))
  for (s in shapes) {
    expect_lte(bytes_per_element(s[1], s[2]), 48, label = paste(s, collapse = " x "))
    # at least the data: y, w and the fit in doubles, a byte of block flags
    expect_gte(bytes_per_element(s[1], s[2]), 25, label = paste(s, collapse = " x "))
  }
})

test_that("the plan grows with the rows and shrinks with float32 and without weights", {
  one <- gpuiso:::gpu_workspace_bytes(1e4, 700)
  expect_equal(gpuiso:::gpu_workspace_bytes(2e4, 700), 2 * one, tolerance = 1e-6)
  expect_lt(gpuiso:::gpu_workspace_bytes(1e4, 700, weighted = FALSE), one)
  expect_lt(gpuiso:::gpu_workspace_bytes(1e4, 700, precision = "single"), one)
  # rows over 4096 run the simple path, whose vertex slots cost more per element
  expect_gt(bytes_per_element(10, 1e5), bytes_per_element(10, 4096))
})

test_that("gpu_workspace_bytes names a bad argument", {
  expect_error(gpuiso:::gpu_workspace_bytes(0, 10), "`rows` must be a positive whole number")
  expect_error(gpuiso:::gpu_workspace_bytes(10, 2.5), "`row_length` must be a positive whole number")
  expect_error(gpuiso:::gpu_workspace_bytes(10, "a"), "`row_length`")
  expect_error(gpuiso:::gpu_workspace_bytes(10, 10, precision = "half"), "`precision`")
  expect_error(gpuiso:::gpu_workspace_bytes(10, 10, weighted = NA), "`weighted` must be TRUE or FALSE")
})

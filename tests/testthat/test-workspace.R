# The device memory that a GPU fit asks for, as the CUDA engine plans it (gpu_workspace_bytes is
# computed on the host, so these run without a device).
bytes_per_element <- function(rows, len, ...) gpuiso:::gpu_workspace_bytes(rows, len, ...) / (rows * len)

test_that("every shape from 1e7 rows of 16 to one row of 1e9 takes at most 48 bytes an element, weighted float64", {
  # rows just over the lane kernels' 4096 (a last chunk of few elements), and just over chunks
  shapes <- list(c(1e7, 16), c(1e6, 16), c(1e5, 100), c(1e4, 1e3), c(1e3, 4096), c(1, 4096),
                 c(1e3, 4097), c(1e3, 5121), c(1e3, 6145), c(1e3, 7188), c(1e3, 8193),
                 c(1e3, 1e4), c(1e2, 1e5), c(1e2, 1e5 + 1), c(1, 1e7), c(1, 1e8), c(1, 1e9))
  for (s in shapes) {
    label <- paste(s, collapse = " x ")
    expect_lte(bytes_per_element(s[1], s[2]), 48, label = label)
    # at least the data: y, w and the fit in doubles, a byte of block flags
    expect_gte(bytes_per_element(s[1], s[2]), 25, label = label)
    # unweighted float32: y and the fit in floats, the flags, and vertex slots of 12 bytes
    expect_lte(bytes_per_element(s[1], s[2], precision = "single", weighted = FALSE), 24, label = label)
  }
})

test_that("the plan grows with the rows and shrinks with float32 and without weights", {
  one <- gpuiso:::gpu_workspace_bytes(1e4, 700)
  # the rows' bytes in proportion to the rows, beside a fit's fixed parts (a few tens of KB)
  two <- gpuiso:::gpu_workspace_bytes(2e4, 700)
  expect_equal(gpuiso:::gpu_workspace_bytes(3e4, 700) - two, two - one, tolerance = 1e-9)
  fixed <- 2 * one - two
  expect_gt(fixed, 0)
  expect_lt(fixed, 1e5)
  expect_lt(gpuiso:::gpu_workspace_bytes(1e4, 700, weighted = FALSE), one)
  expect_lt(gpuiso:::gpu_workspace_bytes(1e4, 700, precision = "single"), one)
  # rows over 4096 are cut into chunks, whose vertex slots cost more per element than the lanes
  expect_gt(bytes_per_element(10, 1e5), bytes_per_element(10, 4096))
})

test_that("gpu_workspace_bytes names a bad argument", {
  expect_error(gpuiso:::gpu_workspace_bytes(0, 10), "`rows` must be a positive whole number")
  expect_error(gpuiso:::gpu_workspace_bytes(10, 2.5), "`row_length` must be a positive whole number")
  expect_error(gpuiso:::gpu_workspace_bytes(10, "a"), "`row_length`")
  expect_error(gpuiso:::gpu_workspace_bytes(10, 10, precision = "half"), "`precision`")
  expect_error(gpuiso:::gpu_workspace_bytes(10, 10, weighted = NA), "`weighted` must be TRUE or FALSE")
})

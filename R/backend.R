#' The compute backends gpuiso can use
#'
#' Reports whether the package was built with CUDA, which devices the CUDA runtime sees, and
#' whether the GPU is still usable in this R session. The runtime is linked statically, so this
#' works on machines without an NVIDIA driver: it then reports no devices and the runtime's error
#' text.
#'
#' **A GPU lost for the session.** Some CUDA errors leave the runtime unable to use the GPU
#' again in the process that met them, such as an illegal or misaligned memory access, an illegal
#' instruction, a failed or timed-out kernel launch, a device-side assert or an uncorrectable ECC
#' error (the "sticky" errors of the CUDA documentation). The fit that meets one stops with an
#' error that says so (with `device = "auto"`, a message, and the CPU redoes the fit), and gpuiso
#' then does not use the GPU for the rest of the R session: `device = "auto"` runs on the CPU, and
#' `device = "gpu"` is an error at once, without calling the CUDA runtime; `unusable` and
#' `reason` report it. Restart R to use the GPU again. Other CUDA errors, out of memory among
#' them, leave the GPU usable; with `device = "auto"` the CPU redoes a fit that met one, or that
#' the GPU's free memory cannot hold.
#'
#' **Forked processes.** CUDA does not survive `fork()`: in a process forked from an R session
#' that has already used the GPU (or called this function), such as the workers of
#' `parallel::mclapply()` or of future's multicore plan, every CUDA call would fail, or with some
#' drivers never return. gpuiso makes none there: the device count is 0, `error` says why,
#' `device = "auto"` runs on the CPU and `device = "gpu"` is an error. Workers started afresh
#' (`parallel::makeCluster()`, future's multisession plan) can use the GPU.
#'
#' @return An object of class `"gpuiso_backend"`, a list with `cuda_built` (logical),
#'   `device_count` (integer), `devices` (data frame: `name`, `compute_capability`, `memory_gb`),
#'   `error` (the runtime's error text, `NA` when it reported none; without CUDA, "gpuiso was
#'   built without CUDA"), `unusable` (`TRUE` once a
#'   sticky CUDA error has made the GPU unusable for the rest of the session) and `reason` (the
#'   text of that error, `NA` while the GPU is usable).
#' @examples
#' gpuiso_backend()
#' @export
gpuiso_backend <- function() {
  info <- .Call(C_backend_info)
  devices <- data.frame(name = info[[3]], compute_capability = sprintf("%d.%d", info[[4]], info[[5]]),
                        memory_gb = info[[6]] / 2^30, stringsAsFactors = FALSE)
  lost <- gpu_lost()
  structure(list(cuda_built = info[[1]], device_count = info[[2]], devices = devices,
                 error = info[[7]], unusable = !is.null(lost),
                 reason = if (is.null(lost)) NA_character_ else lost),
            class = "gpuiso_backend")
}

#' @export
print.gpuiso_backend <- function(x, ...) {
  cat("gpuiso backends\n")
  cat(sprintf("  CPU: %d of %d thread(s)\n", gpuiso_threads(), .Call(C_threads, NULL)[2]))
  cat(sprintf("  CUDA: %s\n", if (x$cuda_built) "built" else "not built"))
  if (x$cuda_built) {
    cat(sprintf("  devices: %d\n", x$device_count))
    for (i in seq_len(nrow(x$devices))) {
      d <- x$devices[i, ]
      cat(sprintf("    [%d] %s, compute capability %s, %.1f GiB\n", i - 1L, d$name,
                  d$compute_capability, d$memory_gb))
    }
  }
  if (!is.na(x$error)) cat(sprintf("  note: %s\n", x$error))
  if (x$unusable) {
    cat(sprintf("  GPU unusable for the rest of this R session (restart R to use it again): %s\n",
                x$reason))
  }
  invisible(x)
}

# For tests only (a lost GPU without a GPU): reports a failed CUDA call of runtime code `code`
# with text `message` as the CUDA engine does, hence an R error, and a lost GPU when the code is
# sticky; test_cuda_lost_reset() forgets that.
test_cuda_failure <- function(code, message) {
  invisible(.Call(C_test_cuda_failure, as.integer(code), as.character(message)))
}
test_cuda_lost_reset <- function() invisible(.Call(C_test_cuda_lost_reset))

#' Number of CPU threads
#'
#' Gets or sets the number of threads the CPU engine uses: for the rows or groups of a batch, for
#' the chunks of a long single row, and for sorting `x`. The default is the number of processors,
#' or `OMP_NUM_THREADS` or `OMP_THREAD_LIMIT` when they are set and smaller. A request may exceed
#' `OMP_NUM_THREADS` (which sets only the default) but is capped to the maximum: the number of
#' processors, or `OMP_THREAD_LIMIT` when it is set and smaller. A process forked from the R
#' session that loaded gpuiso ([parallel::mclapply()], or the multicore plan of the future
#' package) runs on one thread, whatever it asks: OpenMP's threads do not survive a fork, and its
#' first parallel work would wait for them forever. Its parallelism is the fork's. (A process that
#' loads gpuiso only after the fork is not known as forked: load the package before forking.)
#' Small problems run on one thread whatever the setting.
#'
#' A single row is cut into one chunk per thread when it has 2^18 elements or more. The option
#' `gpuiso.chunks` (a positive integer) sets the number of chunks instead, for any length; it exists
#' for tests and tuning, and does not change the fit beyond rounding. Likewise
#' `gpuiso.hull_chunk` and `gpuiso.hull_walk_cap` set the hull engine's points per chunk (1024)
#' and the steps a merge walks before it searches (64; where the CUDA solver walks a merge's two
#' ends at once, the steps of each end), and `gpuiso.gpu_kernel` (`"simple"` or `"rowpav"`)
#' replaces the CUDA solver's fast path by its plainest kernels or by the row-PAV control of the
#' benchmarks.
#'
#' @param threads `NULL` to read the setting, or a positive whole number to set it.
#' @return With `threads = NULL`, the current number of threads; otherwise the previous number,
#'   invisibly.
#' @examples
#' old <- gpuiso_threads(1)
#' gpuiso_threads()
#' gpuiso_threads(old)
#' @export
gpuiso_threads <- function(threads = NULL) {
  if (is.null(threads)) return(.Call(C_threads, NULL)[1])
  if (!is.numeric(threads) || length(threads) != 1L || is.na(threads) || threads < 1 ||
      threads != round(threads)) {
    stop_arg("threads", "must be a single positive whole number")
  }
  invisible(.Call(C_threads, as.integer(min(threads, .Machine$integer.max)))[1])
}

# Device bytes that a GPU fit of `rows` rows of `row_length` elements would ask for (data, fit,
# block flags and the solver's scratch, as the CUDA engine plans them, and the fixed parts of its
# plan and arrays, about 25 KB), with or without a device:
# for the memory budget of the design (at most 48 bytes per element, weighted float64) and for
# sizing work. Batches over the memory free run in slices of rows, and a row over it in
# segments joined on the host. Internal.
gpu_workspace_bytes <- function(rows, row_length, precision = c("double", "single"), weighted = TRUE) {
  whole <- function(v, name) {
    if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 1 || v != floor(v) || !is.finite(v)) {
      stop_arg(name, sprintf("must be a positive whole number, not %s", describe(v)))
    }
    as.double(v)
  }
  rows <- whole(rows, "rows")
  row_length <- whole(row_length, "row_length")
  precision <- check_choice(precision, c("double", "single"), "precision")
  weighted <- check_flag(weighted, "weighted")
  .Call(C_gpu_workspace_bytes, rows, row_length, precision == "single", weighted)
}

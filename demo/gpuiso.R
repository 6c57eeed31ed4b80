## A tour of gpuiso: exact weighted least-squares isotonic regression.
## Run with demo("gpuiso", package = "gpuiso").
library(gpuiso)

## Which backends are available on this machine?
gpuiso_backend()
cat("CPU threads in use:", gpuiso_threads(), "\n")

## --- One fit: stopping distance is non-decreasing in speed (cars has tied speeds) -------------
fit <- isoreg_gpu(cars$speed, cars$dist)
fit
summary(fit)
## One row per block of the fitted step function
isoreg_blocks(fit)

## Agrees with stats::isoreg on these data
ref <- stats::isoreg(cars$speed, cars$dist)
all.equal(fitted(fit), ref$yf[order(ref$ord)])

## Predictions at new speeds: step function or linear interpolation between knots
new_speed <- c(3, 7.5, 12, 18.2, 30)
predict(fit, new_speed)
predict(fit, new_speed, type = "linear")
predict(fit, new_speed, outside = "na")

## --- Weights and direction: ozone against temperature, weighted by wind -----------------------
aq <- airquality[stats::complete.cases(airquality[, c("Ozone", "Temp", "Wind")]), ]
fit_oz <- isoreg_gpu(aq$Temp, aq$Ozone, w = aq$Wind)
head(data.frame(Temp = aq$Temp, Ozone = aq$Ozone, fitted = fitted(fit_oz)))

## A non-increasing fit: ozone tends to fall with wind speed
fit_wind <- isoreg_gpu(aq$Wind, aq$Ozone, increasing = FALSE)
isoreg_blocks(fit_wind)

## Clip the fitted values to a range
range(fitted(isoreg_gpu(aq$Temp, aq$Ozone, y_min = 10, y_max = 100)))

## --- Batches: one problem per row of a matrix -------------------------------------------------
set.seed(1)
Y <- t(replicate(5, cumsum(rnorm(20)) + rnorm(20, sd = 2)))
rownames(Y) <- paste0("series", 1:5)
fitted_rows <- isoreg_batch(Y)
round(fitted_rows[, 1:8], 3)
all(apply(fitted_rows, 1, function(r) all(diff(r) >= -1e-12)))

## Groups of unequal length in one long vector: ozone by month, in day order
by_month <- isoreg_batch(aq$Ozone, group = aq$Month)
head(data.frame(Month = aq$Month, Day = aq$Day, Ozone = aq$Ozone, fitted = by_month), 10)

## Block starts, e.g. for a gradient or to count the steps of each fit
bs <- isoreg_batch(Y, block_starts = TRUE)
rowSums(bs$block_start)

## --- The plot: on screen in an interactive session; otherwise into a PDF file in the working
## directory (as R's own Rplots.pdf; a file under tempdir() would be deleted when R exits)
if (interactive()) {
  plot(fit, main = "cars: isotonic fit of dist on speed")
} else {
  pdf_file <- file.path(getwd(), "gpuiso-demo.pdf")
  grDevices::pdf(pdf_file, width = 7, height = 5)
  plot(fit, main = "cars: isotonic fit of dist on speed")
  invisible(grDevices::dev.off())
  cat("The plot of the fit is in", pdf_file, "\n")
}

# gpuiso beside isodistrreg: both packages have idr(), predict(), cdf() and friends, and
# isodistrreg's objects have the classes "idrfit" and "idr". gpuiso's objects have classes of
# their own, and no method gpuiso registers may touch an object that gpuiso did not make.

# Objects shaped like isodistrreg's (built by hand: isodistrreg need not be installed). A fit is
# a list; a prediction is a list of data frames with columns points, lower, cdf, upper.
iso_prediction <- function() {
  structure(list(
    data.frame(points = c(1, 2, 4), lower = c(0.2, 0.5, 1), cdf = c(0.35, 0.75, 1), upper = c(0.5, 1, 1)),
    data.frame(points = c(2, 4), lower = c(0, 1), cdf = c(0.25, 1), upper = c(0.5, 1))
  ), class = "idr", incomparables = integer(0))
}
iso_fit <- function() {
  structure(list(X = data.frame(x = c(1, 3)), y = list(c(1, 2), c(4, 2)),
                 cdf = rbind(c(0.5, 1, 1), c(0, 0.5, 1)), weights = c(2, 2), thresholds = c(1, 2, 4),
                 groups = c(x = 1), orders = c(comp = 1), indices = list(1:2, 3:4)),
            class = "idrfit")
}

# What each expression gives for isodistrreg-shaped objects `pred` and `fit`: values, printed
# output, or the error message.
foreign_expressions <- quote(list(
  length_pred = length(pred), length_fit = length(fit), names_fit = names(fit),
  element = pred[[2]], subset = pred[2], drop_first = pred[-1], head = utils::head(pred, 1),
  as_list = as.list(pred), lapply = lapply(pred, nrow), unlist = unlist(pred),
  dollar = fit$thresholds, element_fit = fit[["cdf"]], subset_fit = fit[c("X", "weights")],
  as_matrix = as.matrix(fit), print_pred = utils::capture.output(print(pred)),
  print_fit = utils::capture.output(print(fit)), str = utils::capture.output(utils::str(pred)),
  summary_fit = utils::capture.output(summary(fit)), combine = c(pred, pred),
  as_data_frame = tryCatch(as.data.frame(pred), error = function(e) "an error"),
  plot_fit = local({
    grDevices::pdf(NULL)
    on.exit(grDevices::dev.off())
    tryCatch(plot(fit), error = conditionMessage)
  }),
  predict = tryCatch(stats::predict(fit), error = conditionMessage),
  plot = local({
    grDevices::pdf(NULL)
    on.exit(grDevices::dev.off())
    tryCatch(plot(pred), error = conditionMessage)
  })
))

test_that("isodistrreg-shaped objects behave as base R's defaults with gpuiso loaded", {
  expect_true(isNamespaceLoaded("gpuiso"))
  pred <- iso_prediction()
  fit <- iso_fit()
  here <- eval(foreign_expressions)
  # the same expressions in an R process that has never loaded gpuiso
  files <- c(objects = tempfile(fileext = ".rds"), out = tempfile(fileext = ".rds"),
             script = tempfile(fileext = ".R"))
  on.exit(unlink(files), add = TRUE)
  saveRDS(list(pred = pred, fit = fit, expr = foreign_expressions), files[["objects"]])
  writeLines(c(sprintf("a <- readRDS(%s)", deparse(files[["objects"]])),
               "r <- eval(a$expr, list(pred = a$pred, fit = a$fit))",
               sprintf("saveRDS(list(loaded = loadedNamespaces(), r = r), %s)", deparse(files[["out"]]))),
             files[["script"]])
  status <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", shQuote(files[["script"]])),
                    stdout = FALSE, stderr = FALSE)
  expect_identical(status, 0L)
  base_r <- readRDS(files[["out"]])
  expect_false("gpuiso" %in% base_r$loaded)
  expect_identical(names(here), names(base_r$r))
  for (e in names(here)) expect_identical(here[[e]], base_r$r[[e]], label = e)
  # and the values themselves, written out
  expect_identical(here$length_pred, 2L)
  expect_identical(here$element, unclass(pred)[[2]])
  expect_identical(here$as_list, pred)
  expect_match(here$predict, "no applicable method for 'predict'")
})

test_that("no method gpuiso registers is on a class it does not own", {
  ns <- asNamespace("gpuiso")
  registered <- getNamespaceInfo("gpuiso", "S3methods")
  expect_gt(nrow(registered), 20L)
  own_generics <- Filter(function(f) is.function(ns[[f]]) && "UseMethod" %in% all.names(body(ns[[f]])),
                         getNamespaceExports("gpuiso"))
  expect_setequal(own_generics, c("cdf", "qpred", "crps", "pit"))
  own_class <- grepl("^(summary\\.)?gpuiso_", registered[, 2])
  # methods of other packages' generics (print, length, [, predict, ...): gpuiso's classes only
  foreign <- !registered[, 1] %in% own_generics
  expect_true(any(foreign))
  method <- paste(registered[, 1], registered[, 2], sep = ".")
  expect_identical(method[foreign & !own_class], character(0))
  # gpuiso's own generics: its classes, ensembles in a data frame, and the default (an error)
  expect_identical(method[!foreign & !own_class & !registered[, 2] %in% c("data.frame", "default")],
                   character(0))
  for (generic in unique(registered[foreign, 1])) {
    for (cls in c("idr", "idrfit")) {
      expect_null(utils::getS3method(generic, cls, optional = TRUE), label = paste0(generic, ".", cls))
    }
  }
})

test_that("gpuiso's fits and predictions have gpuiso's classes only", {
  fit <- idr(c(1, 3, 2, 4), data.frame(x = 1:4))
  expect_identical(class(fit), "gpuiso_idrfit")
  expect_identical(class(predict(fit)), "gpuiso_idr")
  expect_identical(class(predict(fit, data.frame(x = 2.5))), "gpuiso_idr")
  expect_identical(class(idrbag(c(1, 3, 2, 4), 1:4, 2.5, b = 2, p = 0.5, progress = FALSE)), "gpuiso_idr")
})

test_that("gpuiso's generics refuse predictions they did not make, with a clear error", {
  pred <- iso_prediction()
  msg <- paste0("`predictions` must be gpuiso's predictions \\(class \"gpuiso_idr\".*not an object of ",
                "class \"idr\"; isodistrreg's predictions go to isodistrreg's functions")
  expect_error(cdf(pred, 2), msg)
  expect_error(qpred(pred, 0.5), msg)
  expect_error(crps(pred, c(1, 2)), msg)
  expect_error(pit(pred, c(1, 2)), msg)
  expect_error(bscore(pred, 2, c(1, 2)), msg)
  expect_error(qscore(pred, 0.5, c(1, 2)), msg)
  expect_error(cdf(list(1), 2), "`predictions` must be gpuiso's predictions .* not an object of class \"list\"$")
  expect_error(crps(matrix(1:4, 2), 1), "not an object of class \"matrix\", \"array\"$")
})

# Stand-ins for what loading isodistrreg registers: a method for each generic gpuiso registers a
# method on, for isodistrreg's classes, that fails loudly. Removed again by the caller.
register_isodistrreg_stand_ins <- function() {
  generics <- unique(getNamespaceInfo("gpuiso", "S3methods")[, 1])
  own <- function(g) exists(g, envir = asNamespace("gpuiso"), inherits = FALSE)
  generics <- generics[!vapply(generics, own, TRUE)]
  added <- list()
  for (g in generics) for (cls in c("idr", "idrfit")) {
    f <- get(g, mode = "function")
    table <- (if (typeof(f) == "closure") environment(f) else .BaseNamespaceEnv)[[".__S3MethodsTable__."]]
    name <- paste(g, cls, sep = ".")
    if (exists(name, envir = table, inherits = FALSE)) next
    registerS3method(g, cls, function(...) stop("a method for isodistrreg's class ran"))
    added[[length(added) + 1L]] <- list(name = name, table = table)
  }
  added
}

test_that("methods registered for isodistrreg's classes leave gpuiso's objects alone", {
  set.seed(51)
  y <- round(rnorm(40), 1)
  x <- sample(1:8, 40, TRUE)
  use_all <- function() {
    fit <- idr(y, data.frame(x = x))
    pred <- predict(fit, data.frame(x = c(2.5, 7)))
    pdf(NULL)
    on.exit(dev.off())
    list(fit = utils::capture.output(print(fit)), matrix = as.matrix(fit),
         pred = utils::capture.output(print(pred)), length = length(pred), element = pred[[2]],
         subset = cdf(pred[2], c(0, 1)), as_list = as.list(pred), plot = plot(pred),
         insample = crps(predict(fit), y), quantiles = qpred(pred, c(0.1, 0.5)))
  }
  before <- use_all()
  added <- register_isodistrreg_stand_ins()
  on.exit(for (a in added) rm(list = a$name, envir = a$table), add = TRUE)
  expect_gte(length(added), 10L)
  expect_error(print(iso_fit()), "a method for isodistrreg's class ran")
  expect_identical(use_all(), before)
})

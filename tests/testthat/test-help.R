# Every help page renders to plain text without Markdown or LaTeX marks left over (roxygen's
# Markdown must be on, and each \eqn{} needs a plain-text form).

help_pages <- function() {
  path <- find.package("gpuiso")
  if (dir.exists(file.path(path, "man"))) {
    tools::Rd_db(dir = path) # a source tree (load_all)
  } else {
    tools::Rd_db("gpuiso", lib.loc = dirname(path))
  }
}

render_text <- function(rd) {
  out <- tempfile(fileext = ".txt")
  on.exit(unlink(out))
  tools::Rd2txt(rd, out = out, options = list(underline_titles = FALSE))
  text <- paste(readLines(out, encoding = "UTF-8", warn = FALSE), collapse = "\n")
  sub("\nExamples:\n.*$", "", text) # examples are R code, where these marks can be legitimate
}

# The marks found in rendered text, by kind; character(0) when there are none.
leftover_marks <- function(text) {
  patterns <- c(
    backticks = "`[^`\n]+`",
    bold = "\\*\\*",
    link = paste0(
      "\\[[A-Za-z.][A-Za-z0-9._]*(::[A-Za-z.][A-Za-z0-9._]*)?\\(\\)\\]", # [fn()], [pkg::fn()]
      "|\\[[A-Za-z.][A-Za-z0-9._]*::[A-Za-z.][A-Za-z0-9._]*\\]",          # [pkg::topic]
      "|\\]\\[[A-Za-z.][^]\n]*\\]",                                       # [text][topic]
      "|\\]\\([^) \n]+\\)"                                                # [text](url)
    ),
    latex = "\\\\[A-Za-z]{2,}|\\\\[{}]"
  )
  found <- vapply(patterns, function(p) {
    m <- regmatches(text, gregexpr(p, text))[[1]]
    paste(unique(m), collapse = " ")
  }, "")
  found[nzchar(found)]
}

parse_rd_text <- function(text) {
  con <- textConnection(text)
  on.exit(close(con))
  tools::parse_Rd(con)
}

test_that("the check finds raw Markdown and LaTeX in a rendered page", {
  raw <- parse_rd_text(c(
    "\\name{raw}\\alias{raw}\\title{Raw}",
    "\\description{A `\"gpuiso_fit\"` from [isoreg_gpu()], as [stats::isoreg()] or",
    "[stats::stepfun]. **Weights.** See [the vignette](https://example.org) and",
    "[this][isoreg_gpu]; the CDF \\eqn{F(t \\mid x)} in \\eqn{[\\min, q_1]}.}"
  ))
  marks <- leftover_marks(render_text(raw))
  expect_setequal(names(marks), c("backticks", "bold", "link", "latex"))
  expect_match(marks[["link"]], "[isoreg_gpu()]", fixed = TRUE)
  expect_match(marks[["link"]], "[stats::isoreg()]", fixed = TRUE)
  expect_match(marks[["link"]], "[stats::stepfun]", fixed = TRUE)
  expect_match(marks[["link"]], "](https://example.org)", fixed = TRUE)
  expect_match(marks[["link"]], "][isoreg_gpu]", fixed = TRUE)
  expect_match(marks[["latex"]], "\\mid", fixed = TRUE)

  clean <- parse_rd_text(c(
    "\\name{clean}\\alias{clean}\\title{Clean}",
    "\\description{A \\code{\"gpuiso_fit\"} from \\code{\\link[=isoreg_gpu]{isoreg_gpu()}},",
    "\\emph{weights} in [0, 1], \\code{x[i]}, \\eqn{F(t \\mid x)}{F(t | x)}.}"
  ))
  expect_length(leftover_marks(render_text(clean)), 0)
})

test_that("every help page renders without Markdown or LaTeX marks", {
  db <- help_pages()
  exports <- getNamespaceExports("gpuiso")
  aliases <- unlist(lapply(db, function(rd) {
    tags <- vapply(rd, attr, "", "Rd_tag")
    vapply(rd[tags == "\\alias"], function(a) paste(unlist(a), collapse = ""), "")
  }))
  expect_true(all(exports %in% aliases),
              label = paste("help pages for", paste(setdiff(exports, aliases), collapse = ", ")))
  for (page in names(db)) {
    marks <- leftover_marks(render_text(db[[page]]))
    expect_true(length(marks) == 0,
                label = sprintf("%s without leftover marks (found %s)", page,
                                paste(names(marks), marks, sep = ": ", collapse = "; ")))
  }
})

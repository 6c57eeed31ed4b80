# Developer entry points for gpuiso (not part of the R package; excluded by .Rbuildignore).
#
#   make deps      install the Debian packages needed to build, check, demo and benchmark (only
#                  missing ones; python3-sklearn, which tools/bench/calibrate.R uses when present,
#                  is not in the list)
#   make document  regenerate man/ and NAMESPACE with roxygen2 (results are committed)
#   make build     R CMD build .            -> gpuiso_<version>.tar.gz
#   make install   R CMD INSTALL the tarball (LIB=<dir> to install into a private library)
#   make demo      deps + install + run demo("gpuiso")
#   make check     deps + build + R CMD check --no-manual; fails on any ERROR or WARNING
#   make ctest     build and run the standalone C tests of src/core (tools/ctest)
#   make sanitize  the package (CPU only) and the C tests of the core built with AddressSanitizer
#                  and UndefinedBehaviorSanitizer, running the testthat suite and the C tests;
#                  fails on any sanitizer report (tools/sanitize/run)
#   make clean     remove build products
#
# GPUISO_CUDA (0 = CPU only, 1 = require CUDA, unset = auto) and GPUISO_CUDA_ARCH are read by
# ./configure from the environment, e.g. `GPUISO_CUDA=0 make check`.

R ?= R
RSCRIPT ?= Rscript
PKG := gpuiso
VERSION := $(shell sed -n 's/^Version:[[:space:]]*//p' DESCRIPTION)
TARBALL := $(PKG)_$(VERSION).tar.gz
LIB ?=
CHECK_ARGS ?= --no-manual
BUILD_ARGS ?=

DEB_PACKAGES := r-base-core r-base-dev r-cran-testthat r-cran-roxygen2 r-cran-knitr \
	r-cran-rmarkdown r-cran-iso r-cran-rmpfr r-cran-bench r-cran-future r-cran-future.apply devscripts pandoc qpdf

# Run as root, or through sudo when it is available.
SUDO := $(shell if [ "$$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then echo sudo; fi)

# GPUISO_* settings reach ./configure unchanged: make passes its environment, and variables given
# on its command line (make check GPUISO_CUDA=0), to the commands it runs.

.PHONY: all deps document build install demo check ctest sanitize clean

all: build

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  if ! dpkg-query -W -f='$${Status}\n' "$$p" 2>/dev/null | grep -q '^install ok installed$$'; then \
	    missing="$$missing $$p"; \
	  fi; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	else \
	  echo "deps: all present"; \
	fi

# roxygen2 reads the code of the package installed into a temporary library (its own loading of
# the sources needs pkgbuild, which make deps does not install): CPU-only, as only its R code
# matters, built clean and cleaned after, so that none of its objects stays in src/.
document:
	@lib=$$(mktemp -d); \
	if ! GPUISO_CUDA=0 $(R) CMD INSTALL --preclean --clean --no-test-load --library="$$lib" . >"$$lib.log" 2>&1; then \
	  tail -n 20 "$$lib.log"; rm -rf "$$lib" "$$lib.log"; exit 1; \
	fi; \
	R_LIBS="$$lib$${R_LIBS:+:$$R_LIBS}" $(RSCRIPT) -e 'roxygen2::roxygenise(load_code = roxygen2::load_installed)'; \
	rc=$$?; rm -rf "$$lib" "$$lib.log"; exit $$rc

# Always rebuilt: the tarball depends on every source file.
build:
	rm -f $(PKG)_*.tar.gz
	$(R) CMD build $(BUILD_ARGS) .

# The library is installed without the debug information of the C code (R's CFLAGS carry -g):
# 0.5 MB less, so that the installed package stays under R CMD check's 5 MB note. R strips it when
# _R_SHLIB_STRIP_ is true, with R_STRIP_SHARED_LIB; its default, --strip-unneeded, would also
# remove the symbols that check's look at the compiled code reads.
STRIP_ENV := _R_SHLIB_STRIP_=true R_STRIP_SHARED_LIB="strip --strip-debug"
install: build
	$(if $(LIB),mkdir -p $(LIB))
	$(STRIP_ENV) $(R) CMD INSTALL $(if $(LIB),--library=$(LIB)) $(TARBALL)

demo: deps install
	$(if $(LIB),R_LIBS="$(LIB)$${R_LIBS:+:$$R_LIBS}") $(RSCRIPT) -e 'demo("gpuiso", package = "gpuiso", ask = FALSE)'

# R CMD check exits non-zero on ERROR; WARNINGs are caught from 00check.log.
check: deps build
	rm -rf $(PKG).Rcheck
	NOT_CRAN=true _R_CHECK_FORCE_SUGGESTS_=false $(STRIP_ENV) $(R) CMD check $(CHECK_ARGS) $(TARBALL)
	@if grep -q '^Status:.*WARNING' $(PKG).Rcheck/00check.log || \
	    grep -q '\.\.\. WARNING$$' $(PKG).Rcheck/00check.log; then \
	  echo "make check: R CMD check reported WARNING(s):"; \
	  grep -n -A8 'WARNING$$' $(PKG).Rcheck/00check.log; \
	  exit 1; \
	fi
	@echo "make check: no ERROR or WARNING"

# The core is plain C: its tests need only a C compiler with OpenMP. GPUISO_DEBUG turns on the
# invariant checks of the hull engine. Every tools/ctest/test_*.c is a C test program. Every
# tools/ctest/test_*.cpp runs CUDA code (src/cuda: the solver, IDR, calibration) on the SIMT
# executor of tools/simt, against the CPU engines: compiled with g++'s ThreadSanitizer
# instrumentation (-fsanitize=thread) but linked without its runtime, the executor's hooks see
# every memory access of the kernels. tools/simt/selftest.cpp runs deliberately broken kernels
# and their corrected twins, and prints "simt-selftest: K of K defects caught". Each test program
# prints "ctest: N passed, N failed"; all run, as many at once as the machine has cores, an
# executor test once a schedule seed (tools/ctest/run). GPUISO_SIMT_SEED=S runs the executor's
# tests under the one schedule seed S (default: seeds 1, 2 and 3).
CTEST_DIR := tools/ctest/build
CTEST_CFLAGS := -O2 -fopenmp -ffp-contract=off -Wall -DGPUISO_DEBUG -Isrc/core
SIMT_CXXFLAGS := -std=c++17 -g $(CTEST_CFLAGS) -Isrc/cuda -Itools/simt -Itools/harness -Itools/ctest
SIMT_INSTRUMENT := -fsanitize=thread --param=tsan-instrument-func-entry-exit=0 -fstack-clash-protection
ctest:
	CTEST_CFLAGS='$(CTEST_CFLAGS)' SIMT_CXXFLAGS='$(SIMT_CXXFLAGS)' SIMT_INSTRUMENT='$(SIMT_INSTRUMENT)' \
	  bash tools/ctest/run $(CTEST_DIR)

sanitize:
	bash tools/sanitize/run

clean:
	./cleanup
	rm -rf $(PKG).Rcheck $(PKG)_*.tar.gz tools/ctest/build gpuiso-demo.pdf
	rm -f vignettes/*.html vignettes/*.R

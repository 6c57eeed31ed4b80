/* .Call entry points for the backend report, the lost-GPU state and the thread setting. */
#include "r_glue.h"

#define MAX_DEVICES 64

/* list(cuda_built, device_count, name, major, minor, memory_bytes, error) */
SEXP C_backend_info(void) {
  gpuiso_device_info info[MAX_DEVICES];
  gpuiso_error err = {GPUISO_OK, -1, -1, ""};
  int count = 0;
  gpuiso_status s = gpuiso_cuda_probe(info, MAX_DEVICES, &count, &err);
  int shown = count < MAX_DEVICES ? count : MAX_DEVICES;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 7));
  SET_VECTOR_ELT(out, 0, Rf_ScalarLogical(gpuiso_cuda_built()));
  SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(count));
  SEXP name = PROTECT(Rf_allocVector(STRSXP, shown));
  SEXP major = PROTECT(Rf_allocVector(INTSXP, shown));
  SEXP minor = PROTECT(Rf_allocVector(INTSXP, shown));
  SEXP mem = PROTECT(Rf_allocVector(REALSXP, shown));
  for (int i = 0; i < shown; i++) {
    SET_STRING_ELT(name, i, Rf_mkChar(info[i].name));
    INTEGER(major)[i] = info[i].major;
    INTEGER(minor)[i] = info[i].minor;
    REAL(mem)[i] = info[i].memory_bytes;
  }
  SET_VECTOR_ELT(out, 2, name);
  SET_VECTOR_ELT(out, 3, major);
  SET_VECTOR_ELT(out, 4, minor);
  SET_VECTOR_ELT(out, 5, mem);
  SET_VECTOR_ELT(out, 6, s == GPUISO_OK ? Rf_ScalarString(NA_STRING) : Rf_mkString(err.message));
  UNPROTECT(5);
  return out;
}

/* NULL while the GPU is usable, else the runtime's text of the sticky error that lost it. */
SEXP C_cuda_lost(void) {
  const char *lost = gpuiso_cuda_lost();
  return lost ? Rf_mkString(lost) : R_NilValue;
}

/* For tests only, so that a lost GPU can be tested without one: reports a failed CUDA call with
 * runtime code `code` and text `message` as the CUDA engine does (classified, recorded when
 * sticky), as the R error of a fit. */
SEXP C_test_cuda_failure(SEXP code, SEXP message) {
  gpuiso_error err = {GPUISO_OK, -1, -1, ""};
  r_error_context ctx = {"vector", 0, R_NilValue, R_NilValue, R_NilValue, {NULL, NULL, NULL}, R_NilValue};
  gpuiso_cuda_failure(Rf_asInteger(code), Rf_translateChar(STRING_ELT(message, 0)), &err);
  r_stop_on_error(&err, &ctx);
  return R_NilValue;
}

/* For tests only: forgets the lost state that C_test_cuda_failure recorded. */
SEXP C_test_cuda_lost_reset(void) {
  gpuiso_cuda_lost_reset();
  return R_NilValue;
}

/* Device bytes of a fit of rows x len on the fast path (single: float32; weighted: with w). */
SEXP C_gpu_workspace_bytes(SEXP rows, SEXP len, SEXP single, SEXP weighted) {
  SEXP up = PROTECT(Rf_ScalarLogical(1)), lo = PROTECT(Rf_ScalarReal(R_NegInf));
  SEXP hi = PROTECT(Rf_ScalarReal(R_PosInf)), engine = PROTECT(Rf_ScalarInteger(GPUISO_GPU));
  gpuiso_opts opt = r_fit_opts(up, lo, hi, engine, single);
  UNPROTECT(4);
  return Rf_ScalarReal(gpuiso_gpu_workspace_bytes((int64_t)Rf_asReal(rows), (int64_t)Rf_asReal(len),
                                                  opt.gpu_precision, Rf_asLogical(weighted) == 1, &opt));
}

/* threads: NULL to read; otherwise sets. Returns c(current or previous, maximum). */
SEXP C_threads(SEXP threads) {
  int now = Rf_isNull(threads) ? gpuiso_get_threads() : gpuiso_set_threads(Rf_asInteger(threads));
  SEXP out = PROTECT(Rf_allocVector(INTSXP, 2));
  INTEGER(out)[0] = now;
  INTEGER(out)[1] = gpuiso_max_threads();
  UNPROTECT(1);
  return out;
}

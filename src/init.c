/* Routine registration. */
#include <R_ext/Rdynload.h>

#include "r_glue.h"

SEXP C_isoreg_fit(SEXP x, SEXP y, SEXP w, SEXP increasing, SEXP lo, SEXP hi, SEXP engine,
                  SEXP single);
SEXP C_batch_matrix(SEXP y, SEXP w, SEXP increasing, SEXP lo, SEXP hi, SEXP engine, SEXP single,
                    SEXP want_start);
SEXP C_batch_groups(SEXP y, SEXP w, SEXP group, SEXP ngroups, SEXP increasing, SEXP lo, SEXP hi,
                    SEXP engine, SEXP single, SEXP want_start);
SEXP C_backend_info(void);
SEXP C_threads(SEXP threads);

static const R_CallMethodDef call_methods[] = {
  {"C_isoreg_fit", (DL_FUNC)&C_isoreg_fit, 8},
  {"C_batch_matrix", (DL_FUNC)&C_batch_matrix, 8},
  {"C_batch_groups", (DL_FUNC)&C_batch_groups, 10},
  {"C_backend_info", (DL_FUNC)&C_backend_info, 0},
  {"C_threads", (DL_FUNC)&C_threads, 1},
  {NULL, NULL, 0}
};

void R_init_gpuiso(DllInfo *dll) {
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
}

/* Routine registration. */
#include <R_ext/Rdynload.h>

#include "r_glue.h"

SEXP C_isoreg_fit(SEXP x, SEXP y, SEXP w, SEXP increasing, SEXP lo, SEXP hi, SEXP hull);
SEXP C_batch_matrix(SEXP y, SEXP w, SEXP increasing, SEXP lo, SEXP hi, SEXP hull,
                    SEXP want_start);
SEXP C_batch_groups(SEXP y, SEXP w, SEXP group, SEXP ngroups, SEXP increasing, SEXP lo, SEXP hi,
                    SEXP hull, SEXP want_start);
SEXP C_calibrate(SEXP score, SEXP label, SEXP weights, SEXP group, SEXP group_names);
SEXP C_check_labels(SEXP label);
SEXP C_backend_info(void);
SEXP C_threads(SEXP threads);

static const R_CallMethodDef call_methods[] = {
  {"C_isoreg_fit", (DL_FUNC)&C_isoreg_fit, 7},
  {"C_batch_matrix", (DL_FUNC)&C_batch_matrix, 7},
  {"C_batch_groups", (DL_FUNC)&C_batch_groups, 9},
  {"C_calibrate", (DL_FUNC)&C_calibrate, 5},
  {"C_check_labels", (DL_FUNC)&C_check_labels, 1},
  {"C_backend_info", (DL_FUNC)&C_backend_info, 0},
  {"C_threads", (DL_FUNC)&C_threads, 1},
  {NULL, NULL, 0}
};

void R_init_gpuiso(DllInfo *dll) {
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
}

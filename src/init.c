/* Routine registration. */
#include <R_ext/Rdynload.h>

#include "r_glue.h"

SEXP C_isoreg_fit(SEXP x, SEXP y, SEXP w, SEXP increasing, SEXP lo, SEXP hi, SEXP engine,
                  SEXP single, SEXP grad, SEXP names);
SEXP C_batch_matrix(SEXP y, SEXP w, SEXP x, SEXP increasing, SEXP lo, SEXP hi, SEXP engine,
                    SEXP single, SEXP want_start, SEXP grad);
SEXP C_batch_groups(SEXP y, SEXP w, SEXP group, SEXP ngroups, SEXP labels, SEXP increasing,
                    SEXP lo, SEXP hi, SEXP engine, SEXP single, SEXP want_start, SEXP grad);
SEXP C_batch_xy(SEXP y, SEXP w, SEXP x, SEXP group, SEXP ngroups, SEXP labels, SEXP increasing,
                SEXP lo, SEXP hi, SEXP engine, SEXP single, SEXP want_start);
SEXP C_vjp(SEXP offsets, SEXP y, SEXP w, SEXP fit, SEXP start, SEXP g, SEXP lo, SEXP hi,
           SEXP engine);
SEXP C_soft(SEXP kind, SEXP x, SEXP g, SEXP epsilon, SEXP decreasing, SEXP engine, SEXP order);
SEXP C_is_permutation(SEXP order);
SEXP C_distinct_codes(SEXP v);
SEXP C_string_codes(SEXP v);
SEXP C_idr_fit(SEXP pos, SEXP thr, SEXP w, SEXP npos, SEXP nthr, SEXP gpu);
SEXP C_cdf_dense(SEXP cdf);
SEXP C_poset_reduce(SEXP x);
SEXP C_poset_antitonic(SEXP poset, SEXP sum, SEXP weight);
SEXP C_idr_poset_fit(SEXP poset, SEXP pos, SEXP thr, SEXP w, SEXP nthr, SEXP slot, SEXP report);
SEXP C_idr_poset_predict(SEXP runs, SEXP x, SEXP slot, SEXP xnew, SEXP clim, SEXP arg);
SEXP C_check_predictions(SEXP pred, SEXP arg);
SEXP C_cdf_eval(SEXP pred, SEXP at, SEXP paired, SEXP left_open, SEXP arg);
SEXP C_cdf_quantile(SEXP pred, SEXP level, SEXP arg);
SEXP C_cdf_crps(SEXP pred, SEXP y, SEXP arg, SEXP report);
SEXP C_calibrate(SEXP score, SEXP label, SEXP weights, SEXP group, SEXP group_names, SEXP increasing,
                 SEXP gpu);
SEXP C_check_labels(SEXP label);
SEXP C_predict_fit(SEXP knots, SEXP level, SEXP newdata, SEXP linear, SEXP outside_na);
SEXP C_predict_calibrator(SEXP pooled, SEXP curves, SEXP first, SEXP code, SEXP score,
                          SEXP linear, SEXP gpu);
SEXP C_backend_info(void);
SEXP C_gpu_workspace_bytes(SEXP rows, SEXP len, SEXP single, SEXP weighted);
SEXP C_cuda_lost(void);
SEXP C_test_cuda_failure(SEXP code, SEXP message);
SEXP C_test_cuda_lost_reset(void);
SEXP C_threads(SEXP threads);
SEXP C_rank_direction(SEXP x, SEXP y, SEXP w, SEXP problem, SEXP k);
SEXP C_first_bad(SEXP v, SEXP nonnegative);

static const R_CallMethodDef call_methods[] = {
  {"C_isoreg_fit", (DL_FUNC)&C_isoreg_fit, 10},
  {"C_batch_matrix", (DL_FUNC)&C_batch_matrix, 10},
  {"C_batch_groups", (DL_FUNC)&C_batch_groups, 12},
  {"C_batch_xy", (DL_FUNC)&C_batch_xy, 12},
  {"C_vjp", (DL_FUNC)&C_vjp, 9},
  {"C_soft", (DL_FUNC)&C_soft, 7},
  {"C_is_permutation", (DL_FUNC)&C_is_permutation, 1},
  {"C_distinct_codes", (DL_FUNC)&C_distinct_codes, 1},
  {"C_string_codes", (DL_FUNC)&C_string_codes, 1},
  {"C_idr_fit", (DL_FUNC)&C_idr_fit, 6},
  {"C_cdf_dense", (DL_FUNC)&C_cdf_dense, 1},
  {"C_poset_reduce", (DL_FUNC)&C_poset_reduce, 1},
  {"C_poset_antitonic", (DL_FUNC)&C_poset_antitonic, 3},
  {"C_idr_poset_fit", (DL_FUNC)&C_idr_poset_fit, 7},
  {"C_idr_poset_predict", (DL_FUNC)&C_idr_poset_predict, 6},
  {"C_check_predictions", (DL_FUNC)&C_check_predictions, 2},
  {"C_cdf_eval", (DL_FUNC)&C_cdf_eval, 5},
  {"C_cdf_quantile", (DL_FUNC)&C_cdf_quantile, 3},
  {"C_cdf_crps", (DL_FUNC)&C_cdf_crps, 4},
  {"C_calibrate", (DL_FUNC)&C_calibrate, 7},
  {"C_check_labels", (DL_FUNC)&C_check_labels, 1},
  {"C_predict_fit", (DL_FUNC)&C_predict_fit, 5},
  {"C_predict_calibrator", (DL_FUNC)&C_predict_calibrator, 7},
  {"C_backend_info", (DL_FUNC)&C_backend_info, 0},
  {"C_gpu_workspace_bytes", (DL_FUNC)&C_gpu_workspace_bytes, 4},
  {"C_cuda_lost", (DL_FUNC)&C_cuda_lost, 0},
  {"C_test_cuda_failure", (DL_FUNC)&C_test_cuda_failure, 2},
  {"C_test_cuda_lost_reset", (DL_FUNC)&C_test_cuda_lost_reset, 0},
  {"C_threads", (DL_FUNC)&C_threads, 1},
  {"C_rank_direction", (DL_FUNC)&C_rank_direction, 5},
  {"C_first_bad", (DL_FUNC)&C_first_bad, 2},
  {NULL, NULL, 0}
};

void R_init_gpuiso(DllInfo *dll) {
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
  gpuiso_threads_init();
}

void R_unload_gpuiso(DllInfo *dll) {
  (void)dll;
  gpuiso_cuda_release();
}

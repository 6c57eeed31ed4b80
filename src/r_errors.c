/* Status codes of the core as R errors, and the interrupt poll. */
#include <stdio.h>
#include <string.h>

#include <R_ext/Utils.h>

#include "r_glue.h"

extern void Rf_onintr(void);

static void check_interrupt(void *unused) {
  (void)unused;
  R_CheckUserInterrupt();
}

/* Non-zero when the user asked to stop; R_ToplevelExec keeps the jump inside. */
static int poll_r(void *unused) {
  (void)unused;
  return R_ToplevelExec(check_interrupt, NULL) == FALSE;
}

static const gpuiso_interrupt r_interrupt = {poll_r, NULL};

gpuiso_opts r_plain_opts(void) {
  gpuiso_opts opt;
  memset(&opt, 0, sizeof opt);
  opt.increasing = 1;
  opt.lo = R_NegInf;
  opt.hi = R_PosInf;
  opt.interrupt = &r_interrupt;
  /* read before any allocation, so that its error leaks nothing */
  SEXP memory = Rf_GetOption1(Rf_install("gpuiso.gpu_memory"));
  if (!Rf_isNull(memory)) {
    double bytes = Rf_isNumeric(memory) && XLENGTH(memory) == 1 ? Rf_asReal(memory) : R_NaN;
    if (!(bytes > 0) || !R_FINITE(bytes))
      Rf_error("option `gpuiso.gpu_memory` must be NULL or a single positive number of bytes");
    opt.gpu_memory = bytes;
  }
  return opt;
}

/* The CUDA solver's kernels: the fast path, or as the unexported option gpuiso.gpu_kernel
 * ("simple", "rowpav") asks, for the ablations and the tests. */
static gpuiso_gpu_kernel r_gpu_kernel(void) {
  SEXP kernel = Rf_GetOption1(Rf_install("gpuiso.gpu_kernel"));
  if (!Rf_isString(kernel) || XLENGTH(kernel) != 1 || STRING_ELT(kernel, 0) == NA_STRING) return GPUISO_GPU_FAST;
  const char *k = CHAR(STRING_ELT(kernel, 0));
  return !strcmp(k, "simple") ? GPUISO_GPU_SIMPLE : !strcmp(k, "rowpav") ? GPUISO_GPU_ROW_PAV : GPUISO_GPU_FAST;
}

gpuiso_opts r_fit_opts(SEXP increasing, SEXP lo, SEXP hi, SEXP engine, SEXP single) {
  gpuiso_opts opt = r_plain_opts();
  opt.increasing = Rf_asLogical(increasing) == 1;
  opt.lo = Rf_asReal(lo);
  opt.hi = Rf_asReal(hi);
  opt.engine = (gpuiso_engine)Rf_asInteger(engine);
  opt.gpu_kernel = r_gpu_kernel();
  opt.gpu_precision = Rf_asLogical(single) == 1 ? GPUISO_SINGLE : GPUISO_DOUBLE;
  opt.gpu_plain_sums = Rf_asInteger(single) == 2; /* single: 2 for float32 with exact = FALSE */
  /* Chunks of a single row: an unexported option, so that tests reach the merge of chunks on
   * short rows. */
  SEXP chunks = Rf_GetOption1(Rf_install("gpuiso.chunks"));
  opt.chunks = Rf_isNull(chunks) ? 0 : Rf_asInteger(chunks);
  /* The hull engine's chunk size and walk cap, unexported options for the same reason. */
  SEXP hull_chunk = Rf_GetOption1(Rf_install("gpuiso.hull_chunk"));
  SEXP hull_cap = Rf_GetOption1(Rf_install("gpuiso.hull_walk_cap"));
  opt.hull_chunk = Rf_isNull(hull_chunk) ? 0 : Rf_asInteger(hull_chunk);
  opt.hull_walk_cap = Rf_isNull(hull_cap) ? 0 : Rf_asInteger(hull_cap);
  return opt;
}

void r_invalid(const char *arg, const char *what, const char *problem) {
  Rf_errorcall(R_NilValue,
               "`%s` is not a valid %s: %s (it may have been edited, built by hand or saved by "
               "another version of gpuiso)",
               arg, what, problem);
}

const double *r_optional_real(SEXP v) {
  return Rf_isNull(v) ? NULL : REAL(v);
}

static const char *value_text(SEXP v, int64_t i) {
  if (TYPEOF(v) != REALSXP) return "NA"; /* integer or logical labels: NA is their only misfit */
  double d = REAL(v)[i];
  if (ISNA(d)) return "NA";
  if (ISNAN(d)) return "NaN";
  return d > 0 ? "Inf" : "-Inf";
}

/* "group 3", or the group's name ("group \"FR\"") when the context has names. */
static void group_text(char *buf, size_t len, int64_t row, const r_error_context *ctx) {
  if (!ctx->group_names || Rf_isNull(ctx->group_names)) snprintf(buf, len, "group %lld", (long long)row + 1);
  else snprintf(buf, len, "group \"%.60s\"", Rf_translateChar(STRING_ELT(ctx->group_names, row)));
}

/* "element 5", "row 2, column 7" or "element 5 (group 3)", 1-based. */
static void where_text(char *buf, size_t len, const gpuiso_error *err, const r_error_context *ctx) {
  long long i = (long long)err->index, row = (long long)err->row;
  char group[80];
  if (err->row >= 0 && ctx->layout[0] == 'g') group_text(group, sizeof group, err->row, ctx);
  if (err->index < 0 && err->row < 0) {
    buf[0] = '\0';
  } else if (err->index < 0) {
    if (ctx->layout[0] == 'm') snprintf(buf, len, " in row %lld", row + 1);
    else snprintf(buf, len, " in %s", group);
  } else if (ctx->layout[0] == 'm') {
    snprintf(buf, len, " at row %lld, column %lld", i % ctx->nrow + 1, i / ctx->nrow + 1);
  } else if (ctx->layout[0] == 'g' && err->row >= 0) {
    snprintf(buf, len, " at element %lld (%s)", i + 1, group);
  } else {
    snprintf(buf, len, " at element %lld", i + 1);
  }
}

static const char *arg_name(const r_error_context *ctx, int which) {
  static const char *plain[3] = {"x", "y", "w"};
  return ctx->names[which] ? ctx->names[which] : plain[which];
}

void r_stop_on_error(const gpuiso_error *err, const r_error_context *ctx) {
  char where[128];
  const char *x = arg_name(ctx, 0), *y = arg_name(ctx, 1), *w = arg_name(ctx, 2);
  if (err->status == GPUISO_OK) return;
  where_text(where, sizeof where, err, ctx);
  switch (err->status) {
  case GPUISO_E_INTERRUPT:
    Rf_onintr();
    Rf_errorcall(R_NilValue, "interrupted");
  case GPUISO_E_NOMEM:
    if (err->message[0]) Rf_errorcall(R_NilValue, "gpuiso: out of memory: %s", err->message);
    Rf_errorcall(R_NilValue, "gpuiso: out of memory");
  case GPUISO_E_Y_NONFINITE:
    Rf_errorcall(R_NilValue, "`%s` must be finite, but has %s%s", y, value_text(ctx->y, err->index), where);
  case GPUISO_E_X_NONFINITE:
    Rf_errorcall(R_NilValue, "`%s` must be finite, but has %s%s", x, value_text(ctx->x, err->index), where);
  case GPUISO_E_W_NONFINITE:
    Rf_errorcall(R_NilValue, "`%s` must be finite, but has %s%s", w, value_text(ctx->w, err->index), where);
  case GPUISO_E_W_NEGATIVE:
  {
    char value[32];
    snprintf(value, sizeof value, "%g", REAL(ctx->w)[err->index]);
    Rf_errorcall(R_NilValue, "`%s` must be non-negative, but has %s%s", w,
                 isfinite(REAL(ctx->w)[err->index]) ? value : "-Inf", where);
  }
  case GPUISO_E_W_ALLZERO:
    Rf_errorcall(R_NilValue, "`%s` must have at least one positive weight%s", w, where);
  case GPUISO_E_OVERFLOW:
    Rf_errorcall(R_NilValue, "`%s` and `%s` are too large: the weighted sums overflow double precision%s; "
             "rescale %s or %s",
             y, w, where, y, w);
  case GPUISO_E_CUDA:
    Rf_errorcall(R_NilValue, "CUDA error: %s", err->message);
  case GPUISO_E_CUDA_LOST:
    Rf_errorcall(R_NilValue, "the GPU failed: %s; after this CUDA error the GPU cannot be used again "
                 "in this process, so gpuiso does not use it for the rest of the R session "
                 "(device = \"auto\" runs on the CPU); restart R to use the GPU again", err->message);
  case GPUISO_E_NO_CUDA:
    Rf_errorcall(R_NilValue, "gpuiso was built without CUDA");
  case GPUISO_E_W_SPAN:
    Rf_errorcall(R_NilValue, "`%s` spans too wide a range for the hull solver: its largest weight is more "
                 "than 2^1022 (about 4e307) times its smallest positive one%s; fit it by PAV on the CPU "
                 "(method = \"pav\", device = \"cpu\")", w, where);
  case GPUISO_E_W_UNPLANNED:
    Rf_errorcall(R_NilValue, "`%s` was given, but the GPU plan was made for unweighted rows", w);
  default:
    Rf_errorcall(R_NilValue, "gpuiso: internal error %d", (int)err->status);
  }
}

/* Group ids given as strings: their distinct values and each element's index among them, by the
 * strings' addresses. R keeps one copy of each string of a given encoding (its cache of
 * CHARSXPs), so an ASCII value has one address; strings of other encodings may hold one value at
 * two addresses (latin1 and UTF-8, say), and are left to R's match(). */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "r_glue.h"

static int is_ascii(SEXP s) {
  for (const unsigned char *p = (const unsigned char *)CHAR(s); *p; p++)
    if (*p >= 0x80) return 0;
  return 1;
}

static size_t slot_of(SEXP s, size_t mask) {
  return (size_t)(((uint64_t)(uintptr_t)s * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & mask;
}

/* A table of the distinct strings' addresses (open addressing, at most half full), with each
 * one's 1-based code, and the strings in order of first appearance. */
typedef struct {
  SEXP *key, *first;
  int *code;
  size_t mask, count, room;
} string_table;

static void table_alloc(string_table *t, size_t slots) {
  t->key = (SEXP *)R_alloc(slots, sizeof(SEXP));
  t->code = (int *)R_alloc(slots, sizeof(int));
  memset(t->key, 0, slots * sizeof(SEXP));
  t->mask = slots - 1;
}

static void table_put(string_table *t, SEXP s, int code) {
  size_t i = slot_of(s, t->mask);
  while (t->key[i] != NULL) i = (i + 1) & t->mask;
  t->key[i] = s;
  t->code[i] = code;
}

/* Doubles the slots (and the room for first strings) and places the strings again. */
static void table_grow(string_table *t) {
  table_alloc(t, 2 * (t->mask + 1));
  for (size_t k = 0; k < t->count; k++) table_put(t, t->first[k], (int)k + 1);
  SEXP *first = (SEXP *)R_alloc(2 * t->room, sizeof(SEXP));
  memcpy(first, t->first, t->count * sizeof(SEXP));
  t->first = first;
  t->room *= 2;
}

/* list(the distinct strings in order of first appearance, each element's 1-based index among
 * them): unique(v) and match(v, unique(v)) of a character vector v; NULL where a distinct string
 * is not ASCII (R then matches by value). */
SEXP C_string_codes(SEXP v) {
  R_xlen_t n = XLENGTH(v);
  if (TYPEOF(v) != STRSXP || n > INT_MAX)
    Rf_errorcall(R_NilValue, "gpuiso: internal error: codes of a character vector expected");
  const SEXP *s = STRING_PTR_RO(v);
  SEXP code = PROTECT(r_alloc_result(INTSXP, n));
  int *c = INTEGER(code);
  string_table t;
  t.count = 0;
  t.room = 32;
  t.first = (SEXP *)R_alloc(t.room, sizeof(SEXP));
  table_alloc(&t, 2 * t.room);
  for (R_xlen_t i = 0; i < n; i++) {
    size_t k = slot_of(s[i], t.mask);
    while (t.key[k] != NULL && t.key[k] != s[i]) k = (k + 1) & t.mask;
    if (t.key[k] != NULL) {
      c[i] = t.code[k];
      continue;
    }
    if (!is_ascii(s[i])) {
      UNPROTECT(1);
      return R_NilValue;
    }
    t.first[t.count++] = s[i];
    c[i] = (int)t.count;
    if (t.count == t.room) {
      table_grow(&t);
    } else {
      t.key[k] = s[i];
      t.code[k] = c[i];
    }
  }
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SEXP first = Rf_allocVector(STRSXP, (R_xlen_t)t.count);
  SET_VECTOR_ELT(out, 0, first);
  for (size_t k = 0; k < t.count; k++) SET_STRING_ELT(first, (R_xlen_t)k, t.first[k]);
  SET_VECTOR_ELT(out, 1, code);
  UNPROTECT(2);
  return out;
}

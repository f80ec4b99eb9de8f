/*
 * kanon_mask: a release predicate evaluated in C inside PostgreSQL.
 *
 *   kanon_mask.released(code bytea, VARIADIC "any") RETURNS boolean
 *
 * `code` is one compiled release predicate (policy/predicate_code.h writes
 * it): a reduced decision diagram over tests "argument i = value" with TRUE
 * and FALSE leaves. The variadic arguments are the row's values of the
 * attributes the predicate tests, in the order the code numbers them. The
 * result is what the SQL form `CASE WHEN a = 'v'::type THEN ... END` gives
 * for the same row: a NULL argument takes the "not equal" branch, and a value
 * is converted to the argument's type by the type's input function, as the
 * literal cast of the SQL form is (its bytes are the server encoding's, as
 * the SQL form's E'\xHH' escapes give them, and checked the same way). Only types whose `=` in
 * pg_catalog is plain equality of the stored value are accepted (text and varchar under a
 * deterministic collation, compared byte for byte as texteq does; int2, int4, int8, bool, date,
 * oid); any other type or a nondeterministic collation is an error, never a guess. The code is
 * decoded once per call site (it must be a constant) and kept in the function's memory context.
 *
 * Layout of `code` (little-endian):
 *   "KMP1"  u8 nargs  u32 root  u32 ntests
 *   ntests x { u8 arg, u32 if_equal, u32 if_not, u32 length, length bytes
 *              of the value's text }
 * Node ids: 0 FALSE, 1 TRUE, id >= 2 the test id - 2.
 */
// PostgreSQL wants its own header first.
// clang-format off
#include "postgres.h"
// clang-format on

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(kanon_mask_released);

#define KM_MAX_ARGS 64

typedef enum {
  KM_BYTES, /* varlena text: equal lengths and bytes */
  KM_DATUM  /* pass-by-value: equal Datums */
} km_kind;

typedef struct {
  uint8 arg;
  uint32 if_equal;
  uint32 if_not;
  Datum value;      /* KM_DATUM */
  const char* data; /* KM_BYTES */
  int len;
} km_test;

typedef struct {
  int nargs;
  uint32 root;
  uint32 ntests;
  km_kind kind[KM_MAX_ARGS];
  km_test* tests;
} km_code;

static uint32 read_u32(const unsigned char* p) {
  return (uint32)p[0] | (uint32)p[1] << 8 | (uint32)p[2] << 16 | (uint32)p[3] << 24;
}

static void bad_code(const char* why) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                  errmsg("kanon_mask.released: malformed predicate code: %s", why)));
}

static km_kind kind_of(Oid type, Oid collation) {
  switch (type) {
    case TEXTOID:
    case VARCHAROID:
      if (!OidIsValid(collation))
        ereport(ERROR, (errcode(ERRCODE_INDETERMINATE_COLLATION),
                        errmsg("kanon_mask.released: a text argument has no collation")));
      if (!get_collation_isdeterministic(collation))
        ereport(ERROR,
                (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                 errmsg("kanon_mask.released: collation %u is nondeterministic", collation)));
      return KM_BYTES;
    case INT2OID:
    case INT4OID:
    case INT8OID:
    case BOOLOID:
    case DATEOID:
    case OIDOID:
      return KM_DATUM;
    default:
      ereport(ERROR,
              (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
               errmsg("kanon_mask.released: type %s is not supported", format_type_be(type))));
  }
  return KM_DATUM; /* not reached */
}

/* The value as the SQL literal 'value'::type yields it. */
static void convert_value(km_test* t, Oid type, const unsigned char* bytes, uint32 len) {
  char* raw = palloc(len + 1);
  Oid input;
  Oid ioparam;
  memcpy(raw, bytes, len);
  raw[len] = '\0';
  if (strlen(raw) != len) bad_code("a value holds a NUL byte");
  /* As the scanner checks a literal's bytes, E'\\xHH' escapes included. */
  pg_verifymbstr(raw, (int)len, false);
  getTypeInputInfo(type, &input, &ioparam);
  t->value = OidInputFunctionCall(input, raw, ioparam, -1);
  if (type == TEXTOID || type == VARCHAROID) {
    text* v = DatumGetTextPP(t->value);
    t->data = VARDATA_ANY(v);
    t->len = (int)VARSIZE_ANY_EXHDR(v);
  }
}

static km_code* decode(FunctionCallInfo fcinfo) {
  MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
  bytea* raw = PG_GETARG_BYTEA_PP(0);
  const unsigned char* p = (const unsigned char*)VARDATA_ANY(raw);
  const unsigned char* end = p + VARSIZE_ANY_EXHDR(raw);
  km_code* code = palloc0(sizeof(km_code));
  Node* expr = fcinfo->flinfo->fn_expr;
  List* args = (expr && IsA(expr, FuncExpr)) ? ((FuncExpr*)expr)->args : NIL;
  uint32 i;

  if (expr && IsA(expr, FuncExpr) && ((FuncExpr*)expr)->funcvariadic)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("kanon_mask.released: call it with the values, not VARIADIC array")));
  if (end - p < 13 || memcmp(p, "KMP1", 4) != 0) bad_code("no KMP1 header");
  code->nargs = p[4];
  code->root = read_u32(p + 5);
  code->ntests = read_u32(p + 9);
  p += 13;
  if (code->nargs != PG_NARGS() - 1 || code->nargs > KM_MAX_ARGS || list_length(args) != PG_NARGS())
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("kanon_mask.released: the code tests %d values, the call passes %d",
                           code->nargs, PG_NARGS() - 1)));
  for (i = 0; i < (uint32)code->nargs; ++i) {
    Oid type = get_fn_expr_argtype(fcinfo->flinfo, (int)i + 1);
    code->kind[i] = kind_of(type, exprCollation(list_nth(args, (int)i + 1)));
  }
  if (code->ntests > (uint32)(end - p) / 13) bad_code("more tests than bytes");
  code->tests = palloc0(sizeof(km_test) * (code->ntests ? code->ntests : 1));
  for (i = 0; i < code->ntests; ++i) {
    km_test* t = &code->tests[i];
    uint32 len;
    if (end - p < 13) bad_code("a test is cut short");
    t->arg = p[0];
    t->if_equal = read_u32(p + 1);
    t->if_not = read_u32(p + 5);
    len = read_u32(p + 9);
    p += 13;
    if (t->arg >= code->nargs) bad_code("a test names a missing value");
    /* Ids point forward only, so every walk ends. */
    if ((t->if_equal >= 2 && t->if_equal <= i + 2) || (t->if_not >= 2 && t->if_not <= i + 2) ||
        t->if_equal >= code->ntests + 2 || t->if_not >= code->ntests + 2)
      bad_code("a branch points backward or past the end");
    if (len > (uint32)(end - p)) bad_code("a value is cut short");
    convert_value(t, get_fn_expr_argtype(fcinfo->flinfo, t->arg + 1), p, len);
    p += len;
  }
  if (p != end) bad_code("bytes after the last test");
  if (code->root >= code->ntests + 2) bad_code("the root is past the end");
  MemoryContextSwitchTo(old);
  return code;
}

Datum kanon_mask_released(PG_FUNCTION_ARGS) {
  km_code* code = (km_code*)fcinfo->flinfo->fn_extra;
  const char* data[KM_MAX_ARGS];
  int len[KM_MAX_ARGS];
  bool loaded[KM_MAX_ARGS];
  uint32 id;

  if (PG_ARGISNULL(0))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                    errmsg("kanon_mask.released: the predicate code is NULL")));
  if (code == NULL) {
    if (!get_fn_expr_arg_stable(fcinfo->flinfo, 0))
      ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                      errmsg("kanon_mask.released: the predicate code must be a constant")));
    code = decode(fcinfo);
    fcinfo->flinfo->fn_extra = code;
  }
  memset(loaded, 0, sizeof(bool) * (size_t)code->nargs);
  id = code->root;
  while (id >= 2) {
    const km_test* t = &code->tests[id - 2];
    const int a = t->arg;
    bool equal = false;
    if (!PG_ARGISNULL(a + 1)) {
      if (code->kind[a] == KM_DATUM) {
        equal = PG_GETARG_DATUM(a + 1) == t->value;
      } else {
        if (!loaded[a]) {
          text* v = PG_GETARG_TEXT_PP(a + 1);
          data[a] = VARDATA_ANY(v);
          len[a] = (int)VARSIZE_ANY_EXHDR(v);
          loaded[a] = true;
        }
        equal = len[a] == t->len && memcmp(data[a], t->data, (size_t)t->len) == 0;
      }
    }
    id = equal ? t->if_equal : t->if_not;
  }
  PG_RETURN_BOOL(id == 1);
}

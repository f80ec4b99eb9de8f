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
 * oid, compared as the values their DatumGet* macros give); any other type or a nondeterministic
 * collation is an error, never a guess. The code is decoded once per call site (it must be a
 * constant); the backend keeps the last codes it decoded, and call sites read a kept code in
 * place, so a statement run again neither decodes nor copies (km_lookup). A run of tests
 * on one integer argument, each "not equal" branch leading to the next, is decoded into a table
 * indexed by the value (build_switches): one lookup instead of a test per value.
 *
 * Layout of `code`, what kanon writes (v = unsigned LEB128, at most 32 bits):
 *   "KMP2"  u8 nargs  v root  v nvalues
 *   nvalues x { u8 arg, v length, length bytes of the value's text }
 *   v ntests
 *   ntests x { v value, v if_equal, v if_not }
 * Each distinct (argument, value) is written once; a test compares its
 * value's argument with it. Node ids: 0 FALSE, 1 TRUE, id >= 2 the test
 * id - 2 (root). A branch of test i: 0 FALSE, 1 TRUE, d >= 2 the test
 * i + d - 1 (so every branch points forward).
 * The first layout is still read (little-endian):
 *   "KMP1"  u8 nargs  u32 root  u32 ntests
 *   ntests x { u8 arg, u32 if_equal, u32 if_not, u32 length, length bytes
 *              of the value's text }, branches as node ids.
 */
// PostgreSQL wants its own header first.
// clang-format off
#include "postgres.h"
// clang-format on

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_locale.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(kanon_mask_released);

#define KM_MAX_ARGS 64
/* Decoded codes kept by the backend between statements (see km_lookup). */
#define KM_CACHE_ENTRIES 32
#define KM_CACHE_MAX_BYTES (128 * 1024)

/* A run of at least KM_SWITCH_MIN tests on one integer argument becomes a
 * table (km_switch) when its values span at most 8 entries per test plus 64;
 * a code's tables hold at most KM_SWITCH_MAX_TARGETS entries in all. */
#define KM_SWITCH_MIN 4
#define KM_SWITCH_MAX_TARGETS (64 * 1024)

typedef enum {
  KM_BYTES, /* varlena text: equal lengths and bytes */
  /* Pass-by-value, compared as the value the type's DatumGet* gives (a Datum
   * read from a tuple and one made by the type's input function need not be
   * the same word: a 4-byte column is read sign-extended, an oid is made
   * zero-extended). */
  KM_INT16,
  KM_INT32, /* int4, date */
  KM_INT64,
  KM_OID,
  KM_BOOL
} km_kind;

typedef struct {
  union {
    uint64 value; /* pass-by-value: km_datum_key of the value */
    struct {
      uint32 off; /* KM_BYTES: the value's bytes are the block's, from off */
      int32 len;
    } text;
  } v;
  uint32 if_equal;
  uint32 if_not;
  uint32 sw; /* 0, or 1 + the km_switch that stands for the run from here */
  uint8 arg;
} km_test;

/* A run of tests on one integer argument, each "equal" branch taken by the
 * first test of its value, as a table: the node for key k is
 * targets[first + k - min] when k - min < range (unsigned), else if_none
 * (the run's "not equal" end, also for NULL). */
typedef struct {
  uint64 min;
  uint64 range;
  uint32 if_none;
  uint32 first;
} km_switch;

/* A decoded code: one block (this header, the tests, the switches, their
 * targets, the text values' bytes), so that it copies with memcpy; only
 * offsets inside. */
typedef struct {
  Size size;
  int nargs;
  uint32 root;
  uint32 ntests;
  uint32 nswitches;
  uint32 ntargets;
  km_kind kind[KM_MAX_ARGS];
} km_code;

#define KM_TESTS(c) ((km_test*)((char*)(c) + MAXALIGN(sizeof(km_code))))
#define KM_SWITCHES(c) ((km_switch*)(KM_TESTS(c) + (c)->ntests))
#define KM_TARGETS(c) ((uint32*)(KM_SWITCHES(c) + (c)->nswitches))
#define KM_BYTES_OF(c) ((const char*)(KM_TARGETS(c) + (c)->ntargets))

typedef struct {
  uint32 hash;
  Size len;
  unsigned char* code; /* the code's bytes, as the call passed them */
  int nargs;
  Oid types[KM_MAX_ARGS];
  km_code* decoded;
  int pins; /* call sites reading `decoded` now (km_pin) */
} km_cached;

static km_cached km_cache[KM_CACHE_ENTRIES];
static int km_cache_used;
static int km_cache_next;
static MemoryContext km_cache_context;

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
      /* The built-in collations are deterministic: no catalog read (a new
       * backend's first look into pg_collation). */
      if (collation != DEFAULT_COLLATION_OID && collation != C_COLLATION_OID &&
          collation != POSIX_COLLATION_OID && !get_collation_isdeterministic(collation))
        ereport(ERROR,
                (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                 errmsg("kanon_mask.released: collation %u is nondeterministic", collation)));
      return KM_BYTES;
    case INT2OID:
      return KM_INT16;
    case INT4OID:
    case DATEOID:
      return KM_INT32;
    case INT8OID:
      return KM_INT64;
    case OIDOID:
      return KM_OID;
    case BOOLOID:
      return KM_BOOL;
    default:
      ereport(ERROR,
              (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
               errmsg("kanon_mask.released: type %s is not supported", format_type_be(type))));
  }
  return KM_INT64; /* not reached */
}

/* A pass-by-value argument's value as its type reads it, widened the same
 * way whatever made the Datum. */
static inline uint64 km_datum_key(km_kind kind, Datum d) {
  switch (kind) {
    case KM_INT16:
      return (uint64)(int64)DatumGetInt16(d);
    case KM_INT32:
      return (uint64)(int64)DatumGetInt32(d);
    case KM_OID:
      return (uint64)DatumGetObjectId(d);
    case KM_BOOL:
      return (uint64)DatumGetBool(d);
    default:
      return (uint64)DatumGetInt64(d);
  }
}

/* The value as the SQL literal 'value'::type yields it. */
static Datum convert_value(Oid type, const unsigned char* bytes, uint32 len) {
  char* raw = palloc(len + 1);
  Oid input;
  Oid ioparam;
  memcpy(raw, bytes, len);
  raw[len] = '\0';
  if (strlen(raw) != len) bad_code("a value holds a NUL byte");
  /* As the scanner checks a literal's bytes, E'\\xHH' escapes included. */
  pg_verifymbstr(raw, (int)len, false);
  getTypeInputInfo(type, &input, &ioparam);
  return OidInputFunctionCall(input, raw, ioparam, -1);
}

/* What every call site checks, each time a statement runs: the call's form,
 * the code's header and the arguments' types and collations (`types`,
 * `kinds`). Returns the number of values the code tests. */
static int check_call(FunctionCallInfo fcinfo, const unsigned char* p, Size len, Oid* types,
                      km_kind* kinds) {
  Node* expr = fcinfo->flinfo->fn_expr;
  List* args = (expr && IsA(expr, FuncExpr)) ? ((FuncExpr*)expr)->args : NIL;
  int nargs;
  int i;

  if (expr && IsA(expr, FuncExpr) && ((FuncExpr*)expr)->funcvariadic)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("kanon_mask.released: call it with the values, not VARIADIC array")));
  if (!(len >= 13 && memcmp(p, "KMP1", 4) == 0) && !(len >= 8 && memcmp(p, "KMP2", 4) == 0))
    bad_code("no KMP1 or KMP2 header");
  nargs = p[4];
  if (nargs != PG_NARGS() - 1 || nargs > KM_MAX_ARGS || list_length(args) != PG_NARGS())
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("kanon_mask.released: the code tests %d values, the call passes %d",
                           nargs, PG_NARGS() - 1)));
  for (i = 0; i < nargs; ++i) {
    types[i] = get_fn_expr_argtype(fcinfo->flinfo, i + 1);
    kinds[i] = kind_of(types[i], exprCollation(list_nth(args, i + 1)));
  }
  return nargs;
}

/* Whether node `id` starts a run of tests on argument `arg`. */
static bool km_same_arg(const km_test* tests, uint32 id, int arg) {
  return id >= 2 && tests[id - 2].arg == arg;
}

/*
 * The tables that stand for runs of KM_SWITCH_MIN or more tests on one
 * integer argument (km_switch), built where a walk can enter a run: the root,
 * an "equal" branch, a "not equal" branch from a test on another argument.
 * Sets tests[i].sw; `*switches` and `*targets` are palloc'd.
 */
static void build_switches(km_test* tests, uint32 ntests, uint32 root, const km_kind* kinds,
                           km_switch** switches, uint32* nswitches, uint32** targets,
                           uint32* ntargets) {
  bool* entry = palloc0(sizeof(bool) * (ntests + 2));
  uint64* keys = palloc(sizeof(uint64) * (ntests ? ntests : 1));
  uint32* to = palloc(sizeof(uint32) * (ntests ? ntests : 1));
  uint32 capacity = 0;
  uint64 walked = 0;
  uint32 i;

  *switches = palloc(sizeof(km_switch) * (ntests ? ntests : 1));
  *nswitches = 0;
  *targets = NULL;
  *ntargets = 0;
  entry[root] = true;
  for (i = 0; i < ntests; ++i) {
    entry[tests[i].if_equal] = true;
    if (!km_same_arg(tests, tests[i].if_not, tests[i].arg)) entry[tests[i].if_not] = true;
  }
  for (i = 0; i < ntests; ++i) {
    const int arg = tests[i].arg;
    uint32 n = 0;
    uint32 id = i + 2;
    uint64 min;
    uint64 max;
    uint64 range;
    km_switch* sw;
    uint32 j;
    if (!entry[i + 2] || kinds[arg] == KM_BYTES) continue;
    /* Runs entered at many points are walked once per entry: a bound on
     * the work, past which the remaining runs stay tests. */
    if (walked > 16 * (uint64)ntests + 65536) break;
    for (; km_same_arg(tests, id, arg); id = tests[id - 2].if_not) {
      keys[n] = tests[id - 2].v.value;
      to[n++] = tests[id - 2].if_equal;
    }
    walked += n;
    if (n < KM_SWITCH_MIN) continue;
    min = max = keys[0];
    for (j = 1; j < n; ++j) {
      if ((int64)keys[j] < (int64)min) min = keys[j];
      if ((int64)keys[j] > (int64)max) max = keys[j];
    }
    range = max - min + 1;
    if (range == 0 || range > 8 * (uint64)n + 64 ||
        range > KM_SWITCH_MAX_TARGETS - (uint64)*ntargets)
      continue;
    if (*ntargets + range > capacity) {
      capacity = Max(capacity * 2, (uint32)(*ntargets + range));
      *targets = *targets ? repalloc(*targets, sizeof(uint32) * capacity)
                          : palloc(sizeof(uint32) * capacity);
    }
    sw = &(*switches)[*nswitches];
    sw->min = min;
    sw->range = range;
    sw->if_none = id;
    sw->first = *ntargets;
    for (j = 0; j < range; ++j) (*targets)[*ntargets + j] = id;
    /* Backwards, so that the first test of a value sets its branch. */
    for (j = n; j-- > 0;) (*targets)[*ntargets + (keys[j] - min)] = to[j];
    *ntargets += (uint32)range;
    tests[i].sw = ++*nswitches;
  }
}

/* A decoded code's block in `context`: `tests` (their arguments and
 * branches) with test i comparing value `test_value[i]`, each of the
 * `nvalues` values converted already (`values`, for the argument
 * `value_arg`); a text value's bytes go into the block once. */
static km_code* pack(int nargs, const km_kind* kinds, uint32 root, uint32 ntests, km_test* tests,
                     const uint32* test_value, uint32 nvalues, const uint8* value_arg,
                     const Datum* values, MemoryContext context) {
  uint32* off = palloc0(sizeof(uint32) * (nvalues ? nvalues : 1));
  int* len = palloc0(sizeof(int) * (nvalues ? nvalues : 1));
  Size bytes = 0;
  Size size;
  km_code* code;
  km_switch* switches;
  uint32 nswitches;
  uint32* targets;
  uint32 ntargets;
  char* out;
  uint32 i;

  for (i = 0; i < nvalues; ++i) {
    if (kinds[value_arg[i]] != KM_BYTES) continue;
    off[i] = (uint32)bytes;
    len[i] = (int)VARSIZE_ANY_EXHDR(DatumGetTextPP(values[i]));
    bytes += (Size)len[i];
  }
  for (i = 0; i < ntests; ++i) {
    km_test* t = &tests[i];
    const uint32 v = test_value[i];
    t->sw = 0;
    if (kinds[t->arg] == KM_BYTES) {
      t->v.text.off = off[v];
      t->v.text.len = len[v];
    } else {
      t->v.value = km_datum_key(kinds[t->arg], values[v]);
    }
  }
  build_switches(tests, ntests, root, kinds, &switches, &nswitches, &targets, &ntargets);
  size = MAXALIGN(sizeof(km_code)) + sizeof(km_test) * ntests + sizeof(km_switch) * nswitches +
         sizeof(uint32) * ntargets + (bytes ? bytes : 1);
  code = MemoryContextAllocZero(context, size);
  code->size = size;
  code->nargs = nargs;
  code->root = root;
  code->ntests = ntests;
  code->nswitches = nswitches;
  code->ntargets = ntargets;
  memcpy(code->kind, kinds, sizeof(km_kind) * (size_t)nargs);
  memcpy(KM_TESTS(code), tests, sizeof(km_test) * ntests);
  if (nswitches) memcpy(KM_SWITCHES(code), switches, sizeof(km_switch) * nswitches);
  if (ntargets) memcpy(KM_TARGETS(code), targets, sizeof(uint32) * ntargets);
  out = (char*)KM_BYTES_OF(code);
  for (i = 0; i < nvalues; ++i)
    if (kinds[value_arg[i]] == KM_BYTES)
      memcpy(out + off[i], VARDATA_ANY(DatumGetTextPP(values[i])), (size_t)len[i]);
  return code;
}

/* A KMP1 code: a value per test. */
static km_code* decode1(const unsigned char* p, Size len, int nargs, const Oid* types,
                        const km_kind* kinds, MemoryContext context) {
  const unsigned char* end = p + len;
  uint32 root = read_u32(p + 5);
  uint32 ntests = read_u32(p + 9);
  km_test* tests;
  uint32* test_value;
  uint8* value_arg;
  Datum* values;
  uint32 i;

  p += 13;
  if (ntests > (uint32)(end - p) / 13) bad_code("more tests than bytes");
  tests = palloc0(sizeof(km_test) * (ntests ? ntests : 1));
  test_value = palloc0(sizeof(uint32) * (ntests ? ntests : 1));
  value_arg = palloc0(ntests ? ntests : 1);
  values = palloc0(sizeof(Datum) * (ntests ? ntests : 1));
  for (i = 0; i < ntests; ++i) {
    km_test* t = &tests[i];
    uint32 vlen;
    if (end - p < 13) bad_code("a test is cut short");
    t->arg = p[0];
    t->if_equal = read_u32(p + 1);
    t->if_not = read_u32(p + 5);
    vlen = read_u32(p + 9);
    p += 13;
    if (t->arg >= nargs) bad_code("a test names a missing value");
    /* Ids point forward only, so every walk ends. */
    if ((t->if_equal >= 2 && t->if_equal <= i + 2) || (t->if_not >= 2 && t->if_not <= i + 2) ||
        t->if_equal >= ntests + 2 || t->if_not >= ntests + 2)
      bad_code("a branch points backward or past the end");
    if (vlen > (uint32)(end - p)) bad_code("a value is cut short");
    test_value[i] = i;
    value_arg[i] = t->arg;
    values[i] = convert_value(types[t->arg], p, vlen);
    p += vlen;
  }
  if (p != end) bad_code("bytes after the last test");
  if (root >= ntests + 2) bad_code("the root is past the end");
  return pack(nargs, kinds, root, ntests, tests, test_value, ntests, value_arg, values, context);
}

/* An unsigned LEB128 number at *p (at most 32 bits), *p moved past it. */
static uint32 read_varint(const unsigned char** p, const unsigned char* end) {
  uint32 v = 0;
  int shift = 0;
  for (;;) {
    unsigned char b;
    if (*p >= end) bad_code("a number is cut short");
    b = *(*p)++;
    if (shift == 28 && (b & 0xf0)) bad_code("a number is too large");
    v |= (uint32)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
    shift += 7;
  }
}

/* A KMP2 code: each distinct value once (converted once), varints. */
static km_code* decode2(const unsigned char* p, Size len, int nargs, const Oid* types,
                        const km_kind* kinds, MemoryContext context) {
  const unsigned char* end = p + len;
  uint32 root;
  uint32 nvalues;
  uint32 ntests;
  uint32 i;
  Datum* values;
  uint8* value_arg;
  km_test* tests;
  uint32* test_value;

  p += 5;
  root = read_varint(&p, end);
  nvalues = read_varint(&p, end);
  if (nvalues > (uint32)(end - p) / 2) bad_code("more values than bytes");
  values = palloc0(sizeof(Datum) * (nvalues ? nvalues : 1));
  value_arg = palloc0(nvalues ? nvalues : 1);
  for (i = 0; i < nvalues; ++i) {
    uint32 vlen;
    if (p >= end) bad_code("a value is cut short");
    value_arg[i] = *p++;
    if (value_arg[i] >= nargs) bad_code("a value names a missing argument");
    vlen = read_varint(&p, end);
    if (vlen > (uint32)(end - p)) bad_code("a value is cut short");
    values[i] = convert_value(types[value_arg[i]], p, vlen);
    p += vlen;
  }
  ntests = read_varint(&p, end);
  if (ntests > (uint32)(end - p) / 3) bad_code("more tests than bytes");
  tests = palloc0(sizeof(km_test) * (ntests ? ntests : 1));
  test_value = palloc0(sizeof(uint32) * (ntests ? ntests : 1));
  for (i = 0; i < ntests; ++i) {
    km_test* t = &tests[i];
    const uint32 v = read_varint(&p, end);
    const uint32 eq = read_varint(&p, end);
    const uint32 ne = read_varint(&p, end);
    if (v >= nvalues) bad_code("a test names a missing value");
    /* A branch d >= 2 goes d - 1 tests on: forward, so every walk ends. */
    if ((eq >= 2 && eq > ntests - i) || (ne >= 2 && ne > ntests - i))
      bad_code("a branch points past the end");
    test_value[i] = v;
    t->arg = value_arg[v];
    t->if_equal = eq < 2 ? eq : i + 1 + eq;
    t->if_not = ne < 2 ? ne : i + 1 + ne;
  }
  if (p != end) bad_code("bytes after the last test");
  if (root >= ntests + 2) bad_code("the root is past the end");
  return pack(nargs, kinds, root, ntests, tests, test_value, nvalues, value_arg, values, context);
}

/* The decoded block in `context`; what decoding needs on the way (the
 * tests, the converted values) in a context of its own, freed before
 * returning, so that the next code's decode reuses its memory. */
static km_code* decode(const unsigned char* p, Size len, int nargs, const Oid* types,
                       const km_kind* kinds, MemoryContext context) {
  MemoryContext scratch =
      AllocSetContextCreate(CurrentMemoryContext, "kanon_mask decode", ALLOCSET_DEFAULT_SIZES);
  MemoryContext caller = MemoryContextSwitchTo(scratch);
  km_code* code = p[3] == '2' ? decode2(p, len, nargs, types, kinds, context)
                              : decode1(p, len, nargs, types, kinds, context);
  MemoryContextSwitchTo(caller);
  MemoryContextDelete(scratch);
  return code;
}

/* A call site's hold on a kept code: released when the call site's memory
 * context is reset or deleted (the statement's end, an error included). */
static void km_unpin(void* arg) {
  --((km_cached*)arg)->pins;
}

static void km_pin(km_cached* e, MemoryContext call_site) {
  MemoryContextCallback* cb = MemoryContextAlloc(call_site, sizeof(MemoryContextCallback));
  cb->func = km_unpin;
  cb->arg = e;
  MemoryContextRegisterResetCallback(call_site, cb);
  ++e->pins;
}

/*
 * The decoded code for this call. A backend keeps the last KM_CACHE_ENTRIES
 * codes it decoded (up to KM_CACHE_MAX_BYTES each), keyed by the code's bytes
 * and the arguments' types; a call site reads a kept code in place and pins
 * it until its memory context (`call_site`) goes, and only an entry no call
 * site pins is evicted. Where every entry is pinned, or the code is not kept,
 * the call site decodes its own copy into `call_site`. In place, not copied:
 * a new backend's first statement pays for every fresh page it touches (on a
 * small VM ~17 us a page, more than decoding). Only codes whose values
 * convert the same whatever the session's settings are kept (not date, whose
 * input follows DateStyle); the call's form and the collations are checked
 * every time (check_call).
 */
static const km_code* km_lookup(const unsigned char* p, Size len, int nargs, const Oid* types,
                                const km_kind* kinds, MemoryContext call_site) {
  bool keep = len <= KM_CACHE_MAX_BYTES;
  uint32 hash = hash_bytes(p, (int)len);
  km_code* code;
  km_cached* e = NULL;
  int i;

  for (i = 0; i < nargs; ++i) {
    if (types[i] == DATEOID) keep = false;
    hash = hash_combine(hash, hash_bytes_uint32(types[i]));
  }
  if (!keep) return decode(p, len, nargs, types, kinds, call_site);
  for (i = 0; i < km_cache_used; ++i) {
    e = &km_cache[i];
    if (e->hash == hash && e->len == len && e->nargs == nargs &&
        memcmp(e->types, types, sizeof(Oid) * (size_t)nargs) == 0 && memcmp(e->code, p, len) == 0) {
      km_pin(e, call_site);
      return e->decoded;
    }
  }
  e = NULL;
  if (km_cache_used < KM_CACHE_ENTRIES) {
    e = &km_cache[km_cache_used];
  } else {
    for (i = 0; i < KM_CACHE_ENTRIES && e == NULL; ++i) {
      const int slot = (km_cache_next + i) % KM_CACHE_ENTRIES;
      if (km_cache[slot].pins == 0) {
        e = &km_cache[slot];
        km_cache_next = (slot + 1) % KM_CACHE_ENTRIES;
      }
    }
  }
  if (e == NULL) return decode(p, len, nargs, types, kinds, call_site);
  if (km_cache_context == NULL)
    km_cache_context =
        AllocSetContextCreate(TopMemoryContext, "kanon_mask codes", ALLOCSET_DEFAULT_SIZES);
  code = decode(p, len, nargs, types, kinds, km_cache_context);
  if (e == &km_cache[km_cache_used]) {
    ++km_cache_used;
  } else {
    pfree(e->code);
    pfree(e->decoded);
  }
  e->hash = hash;
  e->len = len;
  e->nargs = nargs;
  memcpy(e->types, types, sizeof(Oid) * (size_t)nargs);
  e->code = MemoryContextAlloc(km_cache_context, len ? len : 1);
  memcpy(e->code, p, len);
  e->decoded = code;
  e->pins = 0;
  km_pin(e, call_site);
  return code;
}

Datum kanon_mask_released(PG_FUNCTION_ARGS) {
  const km_code* code = (const km_code*)fcinfo->flinfo->fn_extra;
  const km_test* tests;
  const km_switch* switches;
  const uint32* targets;
  const char* bytes;
  const char* data[KM_MAX_ARGS];
  int len[KM_MAX_ARGS];
  bool loaded[KM_MAX_ARGS];
  uint32 id;

  if (PG_ARGISNULL(0))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                    errmsg("kanon_mask.released: the predicate code is NULL")));
  if (code == NULL) {
    bytea* raw;
    Oid types[KM_MAX_ARGS];
    km_kind kinds[KM_MAX_ARGS];
    int nargs;
    if (!get_fn_expr_arg_stable(fcinfo->flinfo, 0))
      ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                      errmsg("kanon_mask.released: the predicate code must be a constant")));
    raw = PG_GETARG_BYTEA_PP(0);
    nargs = check_call(fcinfo, (const unsigned char*)VARDATA_ANY(raw), VARSIZE_ANY_EXHDR(raw),
                       types, kinds);
    code = km_lookup((const unsigned char*)VARDATA_ANY(raw), VARSIZE_ANY_EXHDR(raw), nargs, types,
                     kinds, fcinfo->flinfo->fn_mcxt);
    fcinfo->flinfo->fn_extra = (void*)code;
  }
  tests = KM_TESTS(code);
  switches = KM_SWITCHES(code);
  targets = KM_TARGETS(code);
  bytes = KM_BYTES_OF(code);
  memset(loaded, 0, sizeof(bool) * (size_t)code->nargs);
  id = code->root;
  while (id >= 2) {
    const km_test* t = &tests[id - 2];
    const int a = t->arg;
    bool equal = false;
    if (t->sw) {
      const km_switch* sw = &switches[t->sw - 1];
      const uint64 k = PG_ARGISNULL(a + 1)
                           ? PG_UINT64_MAX
                           : km_datum_key(code->kind[a], PG_GETARG_DATUM(a + 1)) - sw->min;
      id = k < sw->range ? targets[sw->first + k] : sw->if_none;
      continue;
    }
    if (!PG_ARGISNULL(a + 1)) {
      if (code->kind[a] != KM_BYTES) {
        equal = km_datum_key(code->kind[a], PG_GETARG_DATUM(a + 1)) == t->v.value;
      } else {
        if (!loaded[a]) {
          text* v = PG_GETARG_TEXT_PP(a + 1);
          data[a] = VARDATA_ANY(v);
          len[a] = (int)VARSIZE_ANY_EXHDR(v);
          loaded[a] = true;
        }
        equal = len[a] == t->v.text.len &&
                memcmp(data[a], bytes + t->v.text.off, (size_t)t->v.text.len) == 0;
      }
    }
    id = equal ? t->if_equal : t->if_not;
  }
  PG_RETURN_BOOL(id == 1);
}

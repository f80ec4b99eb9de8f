// A ReleasePredicate compiled for kanon_mask.released, the C function in
// maskfn/ that evaluates it inside PostgreSQL (maskfn/kanon_mask.c documents
// the byte layout): the masks then cost one function call per column instead
// of a CASE expression the executor interprets test by test. The layout is
// KMP2: each distinct (argument, value) once, numbers as varints.
//
// The code is a constant `E'\\x...'::pg_catalog.bytea` (ASCII, the same under
// any standard_conforming_strings); the call passes only the attributes the
// predicate tests, so a query that reads one masked column reads no other.
// The function accepts only types whose pg_catalog `=` is equality of the
// stored bytes (function_evaluable); anything else keeps the SQL forms.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/predicate_sql.h"
#include "policy/release_predicate.h"

namespace kanon::policy {

// The function kanon's masks call, schema-qualified.
inline constexpr std::string_view kMaskFunction = "\"kanon_mask\".\"released\"";

struct PredicateCode {
  std::string bytes;
  // The tree's attribute index of each argument after the code, in order.
  std::vector<int> arguments;
};

// Tests in an order where every branch points to a later test; only the
// tests reachable from the root.
PredicateCode predicate_code(const ReleasePredicate& predicate);

// Whether kanon_mask.released can evaluate tests on this column exactly as
// the SQL form does: pg_catalog's `=` (no equality of its own) on text,
// varchar, int2, int4, int8, bool, date or oid. The collation is checked by
// the function itself (nondeterministic: an error, never a guess).
bool function_evaluable(const SqlColumn& column);

// "kanon_mask"."released"(E'\\x...'::pg_catalog.bytea, "a", "b"), or
// "true"/"false" for a constant predicate (as predicate_sql gives them);
// nullopt when an attribute it tests is not function_evaluable or it tests
// more than 64 (the function's limit): then the SQL forms must serve.
// REQUIRES: attributes[i] describes the predicate's attribute i.
std::optional<std::string> function_predicate_sql(const ReleasePredicate& predicate,
                                                  const std::vector<SqlColumn>& attributes);

}  // namespace kanon::policy

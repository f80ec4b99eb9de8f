// What a masked read filters rows by first: a SELECT's restriction on a
// quasi-identifier (`WHERE age = 39`, ColumnRestriction) keeps only rows
// of the table whose masked value satisfies it (others contribute no row to
// the result, in a join too), and a masked value is the raw one or NULL,
// which satisfies no comparison. So the derived table kanon splices in may
// keep just those rows itself, deciding each on the raw value first and
// evaluating the release predicate only where the raw value satisfies the
// restriction:
//
//   WHERE CASE WHEN "age" OPERATOR(pg_catalog.=) 39 THEN <age's release test>
//              ELSE false END
//
// One expression, true exactly when the masked value satisfies the
// restriction: it depends on masked values only, whatever PostgreSQL
// evaluates before or after it (a function of the user's in another
// conjunct sees the rows it would see without it), and PostgreSQL estimates
// it with its default selectivity, not from raw statistics. The user's own
// conjunct stays and still reads the masked column. Only for
// columns compared as built-in integers or text (ColumnMask::release_test),
// and for LIKE / NOT LIKE of a text column with a constant pattern (textlike's
// errors depend on the pattern alone, and it holds no backslash),
// with pg_catalog's leakproof, strict comparison operators, and only while
// the catalog holds no user-defined operator the user's unqualified one
// could be: of that name and the comparison's exact types (PostgreSQL takes
// an exact match first), or of that name at all where pg_catalog has none of
// exact types (character varying).
//
// A parameter (`age = $1`, as drivers send restrictions) is compared as
// the user's conjunct compares it only where the Parse gives it one type for
// both: it is used nowhere else in the statement (ColumnRestriction), and
// its declared type is unspecified (PostgreSQL then types it from the
// column, in the filter as it would in the user's conjunct alone) or one
// pg_catalog compares with the column by a leakproof operator (smallint,
// integer, bigint for integer columns; text, character varying for text).
// SQL's PREPARE declares its parameters' types in its own list
// (ColumnRestriction::Comparison::declared).
// docs/rewriter.md, "Restrictions".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/catalog_facts.h"
#include "policy/table_masks.h"
#include "rewriter/sql_parser.h"

namespace kanon::rewriter {

// " WHERE ..." for the derived table that reads `masks` in place of a
// reference with `restrictions`; "" when none applies or `facts` is null.
// `parameter_types`: those an extended-protocol Parse declares
// (PlanContext::parameter_types); null outside a Parse: then only a
// PREPARE's parameters (Comparison::prepared, typed by its own list) are
// decided first.
std::string restriction_filter(const std::vector<ColumnRestriction>& restrictions,
                               const policy::TableMasks& masks, const catalog::CatalogFacts* facts,
                               const std::vector<uint32_t>* parameter_types = nullptr);

}  // namespace kanon::rewriter

// Finds every name in SQL text that PostgreSQL would resolve through the
// session's search_path: operators written without OPERATOR(schema.op)
// (and the constructs that look `=` up implicitly: IN, BETWEEN, IS [NOT]
// DISTINCT FROM, NULLIF, LIKE, CASE x WHEN, = ANY (subquery)), function
// calls, casts and relations without a schema. Used on the SQL kanon
// generates (masks, derived tables) by the qualification tests.
#pragma once

#include <string>
#include <vector>

namespace kanon::testing {

// One line per unqualified name ("operator = ", "cast to text", ...); empty
// when everything is qualified. A text libpg_query cannot parse gives one
// finding saying so.
std::vector<std::string> unqualified_names(const std::string& sql);

}  // namespace kanon::testing

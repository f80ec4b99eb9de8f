// An array value as a mask compares it, read alike in every session.
//
// The tree holds an array-typed quasi-identifier's values as array_out wrote
// them on kanon's build session ('{a,NULL}', '{{1,2},{3,NULL}}'). Written
// back as a literal, an unquoted NULL element is a NULL only while the
// reading session has array_nulls on; a restricted session may turn it off,
// and the literal then holds the string "NULL": the test would match arrays
// holding that string (rows routed, and released, as the tree's rows) and
// miss the tree's own. An array with NULL elements is therefore written as
// ARRAY[...] of typed elements, which array_nulls does not read.
#pragma once

#include <string>
#include <string_view>

namespace kanon::policy {

// `column op value` for an array-typed column (`array_type` ends in []),
// `text` in array_out's form: against the typed literal when the value holds
// no unquoted NULL element; otherwise against ARRAY[...] of typed elements
// ('a'::pg_catalog.text, NULL::pg_catalog.text), nested for more
// dimensions. A value ARRAY[...] cannot write (explicit bounds
// "[0:1]={...}", an empty sub-array) is tested as `column op literal AND NOT
// column op <the literal with its NULL elements quoted>`, which no row
// satisfies when array_nulls is off (both read the same) and the tree's rows
// satisfy when it is on. Text that is not array_out's form and mentions
// NULL gives `false`: never a match kanon cannot vouch for.
std::string array_equals(std::string_view column, std::string_view op, std::string_view text,
                         std::string_view array_type);

}  // namespace kanon::policy

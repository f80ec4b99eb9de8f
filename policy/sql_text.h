// Quoting for SQL text that kanon generates: identifiers and typed literals
// in printable ASCII only, which mean the same under any
// standard_conforming_strings setting and in every client encoding
// PostgreSQL accepts (all of them keep ASCII as ASCII).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kanon::policy {

// "name" with embedded quotes doubled; a name with non-ASCII characters
// (valid UTF-8, as the catalog gives them) as U&"..." with those escaped.
std::string quote_identifier(std::string_view name);
// 'text' with quotes doubled; E'...' when the text has a backslash, a
// control character or a byte above ASCII: backslashes doubled, the others
// as \xHH escapes of the same bytes.
std::string quote_literal(std::string_view text);
// quote_literal(text)::type
std::string typed_literal(std::string_view text, std::string_view type);
// An array literal of `values`, typed as type[]: '{"a","b"}'::text[].
std::string typed_array_literal(const std::vector<std::string>& values, std::string_view type);
// "schema"."table"
std::string qualified_name(std::string_view schema, std::string_view table);
// For the name input functions (::regclass, to_regclass, to_regrole) given a
// bound parameter, never for SQL text: "name" with quotes doubled and every
// other character as it is. They do not read U&"..." (quote_identifier).
std::string name_value(std::string_view name);
// name_value(schema).name_value(table)
std::string qualified_name_value(std::string_view schema, std::string_view table);

}  // namespace kanon::policy

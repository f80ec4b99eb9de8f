// Quoting for SQL text that kanon generates: identifiers and typed literals
// that mean the same under any standard_conforming_strings setting.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kanon::policy {

// "name" with embedded quotes doubled.
std::string quote_identifier(std::string_view name);
// 'text' with quotes doubled; E'...' with backslashes doubled when the text
// has a backslash, so the value is the same whatever standard_conforming_strings says.
std::string quote_literal(std::string_view text);
// quote_literal(text)::type
std::string typed_literal(std::string_view text, std::string_view type);
// An array literal of `values`, typed as type[]: '{"a","b"}'::text[].
std::string typed_array_literal(const std::vector<std::string>& values, std::string_view type);
// "schema"."table"
std::string qualified_name(std::string_view schema, std::string_view table);

}  // namespace kanon::policy

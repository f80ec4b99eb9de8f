// JSON output: documents are built as nlohmann::json values (Debian's
// nlohmann-json3-dev) and written by json_text(), so quoting, commas and
// numbers are always valid JSON: a number that is not finite is written
// null, bytes that are not UTF-8 become U+FFFD.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kanon::base {

// Members keep the order they were added in.
using Json = nlohmann::ordered_json;

// `value` as JSON text ending in a newline. Objects and arrays nested less
// than `expand` deep get one member per line, indented two spaces per level;
// deeper ones stay on one line, written {"a": 1, "b": [2, 3]}.
std::string json_text(const Json& value, int expand = 1);

// `v` for a report: rounded to `decimals` places when decimals >= 0, and a
// whole number written without a fraction (45, not 45.0). Not finite: null.
Json json_number(double v, int decimals = -1);

}  // namespace kanon::base

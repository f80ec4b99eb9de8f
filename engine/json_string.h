// JSON string literals for the reports kanon writes (engine and policy).
#pragma once

#include <string>
#include <string_view>

namespace kanon::engine {

// `s` as a quoted JSON string: quotes, backslashes and control characters
// escaped; other bytes (UTF-8 included) copied.
std::string json_string(std::string_view s);

}  // namespace kanon::engine

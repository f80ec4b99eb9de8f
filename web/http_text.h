// Small pieces of HTTP text the web console reads: percent-decoding, query
// strings and form bodies (application/x-www-form-urlencoded), and cookies;
// and one it writes, Content-Disposition. Malformed input never throws: a
// bad escape is kept as it is.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kanon::web {

// %XX and '+' (as a space, when `plus_is_space`).
std::string percent_decode(std::string_view text, bool plus_is_space = true);
// "a=1&b=x%20y" -> {a: 1, b: "x y"}; the first of repeated names wins.
std::map<std::string, std::string> parse_form(std::string_view text);
// The value of cookie `name` in a Cookie header ("a=1; b=2").
std::optional<std::string> cookie_value(std::string_view header, std::string_view name);
// The path of a request target, without "?query".
std::string_view target_path(std::string_view target);
std::string_view target_query(std::string_view target);
// The Content-Disposition of a download named `file_name`:
// attachment; filename="name", where every double quote, backslash,
// semicolon, control and non-ASCII byte of the name is '_', so the name can
// neither end the quoted string nor add parameters. A name with non-ASCII
// bytes gets filename*=UTF-8''name as well: RFC 5987 percent-encoding,
// with the same bytes but the non-ASCII ones as '_'.
std::string attachment_disposition(std::string_view file_name);

}  // namespace kanon::web

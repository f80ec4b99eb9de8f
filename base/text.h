// Small text helpers shared by every module: UTF-8 encoding, hexadecimal
// digits and ASCII case. Bytes >= 0x80 are never changed by the case helpers
// (PostgreSQL folds identifiers the same way for UTF-8).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kanon::base {

// Appends `code_point` (REQUIRES: <= 0x10FFFF) as UTF-8.
void append_utf8(std::string& out, uint32_t code_point);

// The longest prefix of `text` of at most `max_bytes` bytes that does not
// end inside a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view text, size_t max_bytes);

// 0-15 for '0'-'9', 'a'-'f', 'A'-'F'; -1 for anything else.
inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

inline bool is_hex_digit(char c) {
  return hex_value(c) >= 0;
}

// The lower-case hexadecimal digit of `nibble` (REQUIRES: < 16).
inline char hex_digit(unsigned nibble) {
  return "0123456789abcdef"[nibble & 0xf];
}

// The items with `separator` between them: {"a", "b"} -> "a, b".
// Parses "10m", "30s", "1h", "500ms", "2d" or a plain number of seconds.
// nullopt on anything else.
std::optional<std::chrono::milliseconds> parse_duration(const std::string& text);

std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

// Two lower-case hexadecimal digits: 0x2f -> "2f".
std::string hex_byte(uint8_t byte);

// `text` on one line, every byte a terminal could act on escaped: control
// characters (below 0x20, 0x7F) as \n, \r, \t, else \xHH; a byte that is
// not part of well-formed UTF-8 as \xHH; C1 controls (U+0080-U+009F) and
// the bidirectional marks and overrides as \uHHHH; a backslash as \\. Text
// a client or a table's rows chose then stays on one line, cannot reach a
// terminal as a control sequence or reorder the line, and reads back
// unambiguously (a typed "\n" shows as \\n).
std::string one_line(std::string_view text);

// ASCII letters folded; other bytes unchanged.
std::string lower(std::string_view text);
std::string upper(std::string_view text);

}  // namespace kanon::base

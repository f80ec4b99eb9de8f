// Field codecs shared by several messages, and the sentences decoders use to
// say what is wrong.
//
// A WireError message always starts with the protocol name of the message,
// then says what is wrong, e.g.
//   "Bind: parameter 2 length runs past the end of the message".
// Parameter, column and argument numbers in sentences count from 1, as $1,
// $2... do in SQL.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/wire/byte_reader.h"
#include "proxy/wire/byte_writer.h"
#include "proxy/wire/wire_result.h"

namespace kanon::wire {

// A parameter, column or function value as the protocol carries it: Int32
// length, then that many bytes; length -1 means SQL NULL (nullopt).
using Value = std::optional<std::vector<uint8_t>>;

// Format codes of parameters, columns and COPY data.
inline constexpr int16_t kFormatText = 0;
inline constexpr int16_t kFormatBinary = 1;

namespace detail {
inline void append_part(std::string& s, std::string_view v) {
  s += v;
}
inline void append_part(std::string& s, const char* v) {
  s += v;
}
inline void append_part(std::string& s, const std::string& v) {
  s += v;
}
inline void append_part(std::string& s, char c) {
  s += c;
}
template <std::integral T>
void append_part(std::string& s, T v) {
  s += std::to_string(v);
}
}  // namespace detail

// "<message>: <parts...>"; integers are written in decimal, chars as is.
template <class... Parts>
WireError wire_error(std::string_view message, const Parts&... parts) {
  std::string s(message);
  s += ": ";
  (detail::append_part(s, parts), ...);
  return WireError{std::move(s)};
}

// The error for a body that has bytes left after its last field.
WireError trailing_bytes(std::string_view message, size_t count);

// A byte for use in a sentence: 'Q' when printable, else 0x05.
std::string printable_char(uint8_t c);

// Reads one Value. `noun` and `number` name it for errors ("parameter", 2
// gives "parameter 2"); number 0 leaves the number out.
std::optional<WireError> read_value(ByteReader& r, Value& out, std::string_view message,
                                    std::string_view noun, size_t number = 0);
void write_value(ByteWriter& w, const Value& v);

// An Int16 count, then that many Values (Bind parameters, DataRow columns).
std::optional<WireError> read_values(ByteReader& r, std::vector<Value>& out,
                                     std::string_view message, std::string_view noun);
// REQUIRES: values.size() <= 65535.
void write_values(ByteWriter& w, const std::vector<Value>& values);

// An Int16 count, then that many Int32 type OIDs.
std::optional<WireError> read_oids(ByteReader& r, std::vector<uint32_t>& out,
                                   std::string_view message);
// REQUIRES: oids.size() <= 65535.
void write_oids(ByteWriter& w, const std::vector<uint32_t>& oids);

// Reads an Int16 count followed by that many Int16 format codes, each 0 or 1.
// `what` names the list for errors ("parameter format code").
std::optional<WireError> read_format_codes(ByteReader& r, std::vector<int16_t>& out,
                                           std::string_view message, std::string_view what);
// REQUIRES: codes.size() <= 65535.
void write_format_codes(ByteWriter& w, const std::vector<int16_t>& codes);

// Checks that `formats` (0, 1 or one per value) fits `value_count` values,
// the rule Bind and FunctionCall share.
std::optional<WireError> check_format_count(size_t formats, size_t value_count,
                                            std::string_view message, std::string_view values);

// Template for messages with an empty body (Sync, NoData, ...).
template <class T>
Result<T> decode_empty(Bytes body, std::string_view message) {
  if (!body.empty()) return trailing_bytes(message, body.size());
  return T{};
}
inline void encode_empty(char type, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(type);
  w.end_message();
}

}  // namespace kanon::wire

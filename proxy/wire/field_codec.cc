#include "proxy/wire/field_codec.h"

#include "base/text.h"

namespace kanon::wire {

WireError trailing_bytes(std::string_view message, size_t count) {
  if (count == 1) return wire_error(message, "1 unexpected byte after the end of the message");
  return wire_error(message, count, " unexpected bytes after the end of the message");
}

std::string printable_char(uint8_t c) {
  if (c >= 0x20 && c < 0x7f) return std::string{'\'', static_cast<char>(c), '\''};
  return "0x" + base::hex_byte(c);
}

std::optional<WireError> read_value(ByteReader& r, Value& out, std::string_view message,
                                    std::string_view noun, size_t number) {
  // Built only on the error path: values are decoded in bulk.
  const auto what = [&] {
    std::string s(noun);
    if (number > 0) {
      s.push_back(' ');
      s.append(std::to_string(number));
    }
    return s;
  };
  int32_t length;
  if (!r.read_i32(length)) return wire_error(message, "message ends before the length of ", what());
  if (length == -1) {
    out.reset();
    return std::nullopt;
  }
  if (length < 0) return wire_error(message, what(), " has invalid length ", length);
  Bytes bytes;
  if (!r.read_bytes(static_cast<size_t>(length), bytes))
    return wire_error(message, what(), " length runs past the end of the message");
  out.emplace(bytes.begin(), bytes.end());
  return std::nullopt;
}

void write_value(ByteWriter& w, const Value& v) {
  if (!v) {
    w.write_i32(-1);
    return;
  }
  w.write_u32(static_cast<uint32_t>(v->size()));
  w.write_bytes(*v);
}

std::optional<WireError> read_values(ByteReader& r, std::vector<Value>& out,
                                     std::string_view message, std::string_view noun) {
  uint16_t count;
  if (!r.read_u16(count)) return wire_error(message, "message ends before the ", noun, " count");
  // Each value takes at least its 4-byte length: a count the body cannot
  // hold is rejected before anything is allocated for it.
  if (r.remaining() / 4 < count)
    return wire_error(message, count, " ", noun, "s do not fit in the rest of the message");
  out.clear();
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    Value& v = out.emplace_back();
    if (auto e = read_value(r, v, message, noun, i + 1)) return e;
  }
  return std::nullopt;
}

void write_values(ByteWriter& w, const std::vector<Value>& values) {
  w.write_u16(static_cast<uint16_t>(values.size()));
  for (const Value& v : values) write_value(w, v);
}

std::optional<WireError> read_oids(ByteReader& r, std::vector<uint32_t>& out,
                                   std::string_view message) {
  uint16_t count;
  if (!r.read_u16(count))
    return wire_error(message, "message ends before the parameter type count");
  if (r.remaining() / 4 < count)
    return wire_error(message, "the ", count, " parameter types run past the end of the message");
  out.clear();
  out.reserve(count);
  for (uint16_t i = 0; i < count; ++i) {
    uint32_t oid = 0;
    (void)r.read_u32(oid);  // cannot fail: checked above
    out.push_back(oid);
  }
  return std::nullopt;
}

void write_oids(ByteWriter& w, const std::vector<uint32_t>& oids) {
  w.write_u16(static_cast<uint16_t>(oids.size()));
  for (uint32_t oid : oids) w.write_u32(oid);
}

std::optional<WireError> read_format_codes(ByteReader& r, std::vector<int16_t>& out,
                                           std::string_view message, std::string_view what) {
  // PostgreSQL reads Int16 counts as unsigned (pq_getmsgint), so do we.
  uint16_t count;
  if (!r.read_u16(count)) return wire_error(message, "message ends before the ", what, " count");
  if (r.remaining() / 2 < count)
    return wire_error(message, "the ", count, " ", what, "s run past the end of the message");
  out.clear();
  out.reserve(count);
  for (uint16_t i = 0; i < count; ++i) {
    int16_t code = 0;
    (void)r.read_i16(code);  // cannot fail: checked above
    if (code != kFormatText && code != kFormatBinary)
      return wire_error(message, what, " ", i + 1, " is ", code,
                        "; only 0 (text) and 1 (binary) exist");
    out.push_back(code);
  }
  return std::nullopt;
}

void write_format_codes(ByteWriter& w, const std::vector<int16_t>& codes) {
  w.write_u16(static_cast<uint16_t>(codes.size()));
  for (int16_t c : codes) w.write_i16(c);
}

std::optional<WireError> check_format_count(size_t formats, size_t value_count,
                                            std::string_view message, std::string_view values) {
  if (formats <= 1 || formats == value_count) return std::nullopt;
  return wire_error(message, formats, " format codes given for ", value_count, " ", values,
                    "; expected 0, 1 or one per value");
}

}  // namespace kanon::wire

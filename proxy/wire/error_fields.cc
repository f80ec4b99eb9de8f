#include "proxy/wire/error_fields.h"

#include "proxy/wire/byte_reader.h"
#include "proxy/wire/byte_writer.h"
#include "proxy/wire/field_codec.h"

namespace kanon::wire {
namespace {

using Fields = std::vector<std::pair<char, std::string>>;

std::string_view find_field(const Fields& fields, char code) {
  for (const auto& [c, value] : fields)
    if (c == code) return value;
  return {};
}

std::optional<WireError> read_fields(Bytes body, Fields& fields, std::string_view message) {
  ByteReader r(body);
  for (;;) {
    char code;
    if (!r.read_char(code))
      return wire_error(message, "field list is not terminated by a zero byte");
    if (code == 0) break;
    std::string value;
    if (!r.read_cstring(value))
      return wire_error(message, "value of field ", printable_char(static_cast<uint8_t>(code)),
                        " is not NUL-terminated");
    fields.emplace_back(code, std::move(value));
  }
  if (!r.at_end()) return trailing_bytes(message, r.remaining());
  return std::nullopt;
}

void write_fields(char type, const Fields& fields, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(type);
  for (const auto& [code, value] : fields) {
    w.write_char(code);
    w.write_cstring(value);
  }
  w.write_u8(0);
  w.end_message();
}

void write_short_fields(char type, std::string_view severity, std::string_view sqlstate,
                        std::string_view message, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(type);
  w.write_char(error_field::kSeverity);
  w.write_cstring(severity);
  w.write_char(error_field::kSeverityNonLocalized);
  w.write_cstring(severity);
  w.write_char(error_field::kSqlState);
  w.write_cstring(sqlstate);
  w.write_char(error_field::kMessage);
  w.write_cstring(message);
  w.write_u8(0);
  w.end_message();
}

}  // namespace

std::string_view ErrorResponse::field(char code) const {
  return find_field(fields, code);
}
std::string_view NoticeResponse::field(char code) const {
  return find_field(fields, code);
}

Result<ErrorResponse> decode_error_response(Bytes body) {
  ErrorResponse m;
  if (auto e = read_fields(body, m.fields, "ErrorResponse")) return *e;
  return m;
}

Result<NoticeResponse> decode_notice_response(Bytes body) {
  NoticeResponse m;
  if (auto e = read_fields(body, m.fields, "NoticeResponse")) return *e;
  return m;
}

void encode(const ErrorResponse& m, Buffer& out) {
  write_fields(ErrorResponse::kType, m.fields, out);
}
void encode(const NoticeResponse& m, Buffer& out) {
  write_fields(NoticeResponse::kType, m.fields, out);
}

void encode_error(Buffer& out, std::string_view severity, std::string_view sqlstate,
                  std::string_view message) {
  write_short_fields(ErrorResponse::kType, severity, sqlstate, message, out);
}

void encode_notice(Buffer& out, std::string_view severity, std::string_view sqlstate,
                   std::string_view message) {
  write_short_fields(NoticeResponse::kType, severity, sqlstate, message, out);
}

}  // namespace kanon::wire

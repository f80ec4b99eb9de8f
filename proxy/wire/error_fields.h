// ErrorResponse and NoticeResponse: a list of (field code, value) pairs
// ended by a zero byte. The field codes are named below as PostgreSQL's
// protocol documentation names them.
//
// Decoding checks the structure only (every value NUL-terminated, the list
// terminated, nothing after it); which fields are present is the sender's
// business, and unknown codes are kept, as the protocol asks.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/wire/framing.h"
#include "proxy/wire/message_types.h"
#include "proxy/wire/wire_result.h"

namespace kanon::wire {

namespace error_field {
inline constexpr char kSeverity = 'S';  // localized
inline constexpr char kSeverityNonLocalized = 'V';
inline constexpr char kSqlState = 'C';
inline constexpr char kMessage = 'M';
inline constexpr char kDetail = 'D';
inline constexpr char kHint = 'H';
inline constexpr char kPosition = 'P';
inline constexpr char kInternalPosition = 'p';
inline constexpr char kInternalQuery = 'q';
inline constexpr char kWhere = 'W';
inline constexpr char kSchemaName = 's';
inline constexpr char kTableName = 't';
inline constexpr char kColumnName = 'c';
inline constexpr char kDataTypeName = 'd';
inline constexpr char kConstraintName = 'n';
inline constexpr char kFile = 'F';
inline constexpr char kLine = 'L';
inline constexpr char kRoutine = 'R';
}  // namespace error_field

// REQUIRES for encode: field codes are not 0.
struct ErrorResponse {
  static constexpr char kType = backend::kErrorResponse;
  std::vector<std::pair<char, std::string>> fields;
  // The value of the first field with `code`; "" if absent.
  std::string_view field(char code) const;
  bool operator==(const ErrorResponse&) const = default;
};

struct NoticeResponse {
  static constexpr char kType = backend::kNoticeResponse;
  std::vector<std::pair<char, std::string>> fields;
  std::string_view field(char code) const;
  bool operator==(const NoticeResponse&) const = default;
};

Result<ErrorResponse> decode_error_response(Bytes body);
Result<NoticeResponse> decode_notice_response(Bytes body);
void encode(const ErrorResponse& m, Buffer& out);
void encode(const NoticeResponse& m, Buffer& out);

// Appends a complete ErrorResponse frame with S and V (both `severity`,
// e.g. "ERROR" or "FATAL"), C (the SQLSTATE, e.g. "42501") and M.
void encode_error(Buffer& out, std::string_view severity, std::string_view sqlstate,
                  std::string_view message);

// The same as a NoticeResponse (severity e.g. "WARNING" or "NOTICE").
void encode_notice(Buffer& out, std::string_view severity, std::string_view sqlstate,
                   std::string_view message);

}  // namespace kanon::wire

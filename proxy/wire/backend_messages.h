// Typed messages the backend (server) sends, protocol 3.0.
//
// decode_xxx() takes a frame body as frame_typed() returns it (after the type
// byte and length) and checks that the body is consumed exactly; encode()
// appends the whole frame, type byte and length included. Decoded messages
// own their bytes, so they outlive the input buffer.
//
// Authentication lives in authentication.h, ErrorResponse and
// NoticeResponse in error_fields.h, the COPY responses in copy_messages.h;
// this header includes them because BackendMessage holds them all.
//
// REQUIRES for encode: list sizes fit the protocol's Int16 counts (<= 65535)
// and strings contain no NUL (a NUL would end the field; see ByteWriter).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "proxy/wire/authentication.h"
#include "proxy/wire/copy_messages.h"
#include "proxy/wire/error_fields.h"
#include "proxy/wire/field_codec.h"
#include "proxy/wire/framing.h"
#include "proxy/wire/message_types.h"
#include "proxy/wire/wire_result.h"

namespace kanon::wire {

struct ParameterStatus {
  static constexpr char kType = backend::kParameterStatus;
  std::string name;
  std::string value;
  bool operator==(const ParameterStatus&) const = default;
};

// The key a client quotes in a CancelRequest: exactly 8 bytes in 3.0.
struct BackendKeyData {
  static constexpr char kType = backend::kBackendKeyData;
  uint32_t process_id = 0;
  uint32_t secret_key = 0;
  bool operator==(const BackendKeyData&) const = default;
};

struct ReadyForQuery {
  static constexpr char kType = backend::kReadyForQuery;
  char status = kTxIdle;  // kTxIdle, kTxInBlock or kTxFailed; checked on decode
  bool operator==(const ReadyForQuery&) const = default;
};

// One column of a RowDescription.
struct FieldDescription {
  std::string name;
  uint32_t table_oid = 0;     // 0 if the column is not a table column
  int16_t column_attnum = 0;  // 0 if the column is not a table column
  uint32_t type_oid = 0;
  int16_t type_size = 0;  // pg_type.typlen; negative for variable width
  int32_t type_modifier = -1;
  int16_t format = kFormatText;  // 0 or 1; checked on decode
  bool operator==(const FieldDescription&) const = default;
};

struct RowDescription {
  static constexpr char kType = backend::kRowDescription;
  std::vector<FieldDescription> fields;
  bool operator==(const RowDescription&) const = default;
};

struct DataRow {
  static constexpr char kType = backend::kDataRow;
  std::vector<Value> columns;
  bool operator==(const DataRow&) const = default;
};

struct CommandComplete {
  static constexpr char kType = backend::kCommandComplete;
  std::string tag;  // e.g. "SELECT 5", "INSERT 0 1"
  bool operator==(const CommandComplete&) const = default;
};

struct EmptyQueryResponse {
  static constexpr char kType = backend::kEmptyQueryResponse;
  bool operator==(const EmptyQueryResponse&) const = default;
};

struct ParseComplete {
  static constexpr char kType = backend::kParseComplete;
  bool operator==(const ParseComplete&) const = default;
};

struct BindComplete {
  static constexpr char kType = backend::kBindComplete;
  bool operator==(const BindComplete&) const = default;
};

struct CloseComplete {
  static constexpr char kType = backend::kCloseComplete;
  bool operator==(const CloseComplete&) const = default;
};

struct ParameterDescription {
  static constexpr char kType = backend::kParameterDescription;
  std::vector<uint32_t> type_oids;
  bool operator==(const ParameterDescription&) const = default;
};

struct NoData {
  static constexpr char kType = backend::kNoData;
  bool operator==(const NoData&) const = default;
};

struct PortalSuspended {
  static constexpr char kType = backend::kPortalSuspended;
  bool operator==(const PortalSuspended&) const = default;
};

struct NotificationResponse {
  static constexpr char kType = backend::kNotificationResponse;
  uint32_t process_id = 0;  // of the notifying backend
  std::string channel;
  std::string payload;
  bool operator==(const NotificationResponse&) const = default;
};

struct FunctionCallResponse {
  static constexpr char kType = backend::kFunctionCallResponse;
  Value result;  // nullopt: NULL
  bool operator==(const FunctionCallResponse&) const = default;
};

struct NegotiateProtocolVersion {
  static constexpr char kType = backend::kNegotiateProtocolVersion;
  uint32_t newest_minor_version = 0;
  std::vector<std::string> unrecognized_options;
  bool operator==(const NegotiateProtocolVersion&) const = default;
};

Result<ParameterStatus> decode_parameter_status(Bytes body);
Result<BackendKeyData> decode_backend_key_data(Bytes body);
Result<ReadyForQuery> decode_ready_for_query(Bytes body);
Result<RowDescription> decode_row_description(Bytes body);
Result<DataRow> decode_data_row(Bytes body);
Result<CommandComplete> decode_command_complete(Bytes body);
Result<EmptyQueryResponse> decode_empty_query_response(Bytes body);
Result<ParseComplete> decode_parse_complete(Bytes body);
Result<BindComplete> decode_bind_complete(Bytes body);
Result<CloseComplete> decode_close_complete(Bytes body);
Result<ParameterDescription> decode_parameter_description(Bytes body);
Result<NoData> decode_no_data(Bytes body);
Result<PortalSuspended> decode_portal_suspended(Bytes body);
Result<NotificationResponse> decode_notification_response(Bytes body);
Result<FunctionCallResponse> decode_function_call_response(Bytes body);
Result<NegotiateProtocolVersion> decode_negotiate_protocol_version(Bytes body);

void encode(const ParameterStatus& m, Buffer& out);
void encode(const BackendKeyData& m, Buffer& out);
void encode(const ReadyForQuery& m, Buffer& out);
void encode(const RowDescription& m, Buffer& out);
void encode(const DataRow& m, Buffer& out);
void encode(const CommandComplete& m, Buffer& out);
void encode(const EmptyQueryResponse& m, Buffer& out);
void encode(const ParseComplete& m, Buffer& out);
void encode(const BindComplete& m, Buffer& out);
void encode(const CloseComplete& m, Buffer& out);
void encode(const ParameterDescription& m, Buffer& out);
void encode(const NoData& m, Buffer& out);
void encode(const PortalSuspended& m, Buffer& out);
void encode(const NotificationResponse& m, Buffer& out);
void encode(const FunctionCallResponse& m, Buffer& out);
void encode(const NegotiateProtocolVersion& m, Buffer& out);

// Any typed backend message, chosen by the type byte.
using BackendMessage =
    std::variant<Authentication, ParameterStatus, BackendKeyData, ReadyForQuery, RowDescription,
                 DataRow, CommandComplete, EmptyQueryResponse, ErrorResponse, NoticeResponse,
                 ParseComplete, BindComplete, CloseComplete, ParameterDescription, NoData,
                 PortalSuspended, CopyInResponse, CopyOutResponse, CopyBothResponse, CopyData,
                 CopyDone, NotificationResponse, FunctionCallResponse, NegotiateProtocolVersion>;

// Fails for a type byte no backend message has.
Result<BackendMessage> decode_backend_message(char type, Bytes body);
void encode(const BackendMessage& m, Buffer& out);

}  // namespace kanon::wire

#include "proxy/wire/backend_messages.h"

#include "proxy/wire/byte_reader.h"
#include "proxy/wire/byte_writer.h"

namespace kanon::wire {
namespace {

// Name, five fixed fields and the format code: the least a field takes.
constexpr size_t kMinFieldDescriptionSize = 1 + 4 + 2 + 4 + 2 + 4 + 2;

std::optional<WireError> read_field_description(ByteReader& r, FieldDescription& f, size_t number) {
  constexpr std::string_view kName = "RowDescription";
  if (!r.read_cstring(f.name))
    return wire_error(kName, "name of field ", number, " is not NUL-terminated");
  if (!r.read_u32(f.table_oid) || !r.read_i16(f.column_attnum) || !r.read_u32(f.type_oid) ||
      !r.read_i16(f.type_size) || !r.read_i32(f.type_modifier) || !r.read_i16(f.format))
    return wire_error(kName, "field ", number, " runs past the end of the message");
  if (f.format != kFormatText && f.format != kFormatBinary)
    return wire_error(kName, "field ", number, " has format code ", f.format,
                      "; only 0 (text) and 1 (binary) exist");
  return std::nullopt;
}

}  // namespace

Result<ParameterStatus> decode_parameter_status(Bytes body) {
  ByteReader r(body);
  ParameterStatus m;
  if (!r.read_cstring(m.name))
    return WireError{"ParameterStatus: parameter name is not NUL-terminated"};
  if (!r.read_cstring(m.value))
    return WireError{"ParameterStatus: parameter value is not NUL-terminated"};
  if (!r.at_end()) return trailing_bytes("ParameterStatus", r.remaining());
  return m;
}

Result<BackendKeyData> decode_backend_key_data(Bytes body) {
  ByteReader r(body);
  BackendKeyData m;
  if (!r.read_u32(m.process_id) || !r.read_u32(m.secret_key))
    return WireError{"BackendKeyData: message ends before the process ID and secret key"};
  if (!r.at_end()) return trailing_bytes("BackendKeyData", r.remaining());
  return m;
}

Result<ReadyForQuery> decode_ready_for_query(Bytes body) {
  ByteReader r(body);
  ReadyForQuery m;
  if (!r.read_char(m.status))
    return WireError{"ReadyForQuery: message ends before the transaction status"};
  if (m.status != kTxIdle && m.status != kTxInBlock && m.status != kTxFailed)
    return wire_error("ReadyForQuery", "transaction status is ",
                      printable_char(static_cast<uint8_t>(m.status)), "; expected 'I', 'T' or 'E'");
  if (!r.at_end()) return trailing_bytes("ReadyForQuery", r.remaining());
  return m;
}

Result<RowDescription> decode_row_description(Bytes body) {
  ByteReader r(body);
  RowDescription m;
  uint16_t count;
  if (!r.read_u16(count)) return WireError{"RowDescription: message ends before the field count"};
  if (r.remaining() / kMinFieldDescriptionSize < count)
    return wire_error("RowDescription", count, " fields do not fit in the rest of the message");
  m.fields.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (auto e = read_field_description(r, m.fields.emplace_back(), i + 1)) return *e;
  }
  if (!r.at_end()) return trailing_bytes("RowDescription", r.remaining());
  return m;
}

Result<DataRow> decode_data_row(Bytes body) {
  ByteReader r(body);
  DataRow m;
  if (auto e = read_values(r, m.columns, "DataRow", "column")) return *e;
  if (!r.at_end()) return trailing_bytes("DataRow", r.remaining());
  return m;
}

Result<CommandComplete> decode_command_complete(Bytes body) {
  ByteReader r(body);
  CommandComplete m;
  if (!r.read_cstring(m.tag))
    return WireError{"CommandComplete: command tag is not NUL-terminated"};
  if (!r.at_end()) return trailing_bytes("CommandComplete", r.remaining());
  return m;
}

Result<EmptyQueryResponse> decode_empty_query_response(Bytes body) {
  return decode_empty<EmptyQueryResponse>(body, "EmptyQueryResponse");
}
Result<ParseComplete> decode_parse_complete(Bytes body) {
  return decode_empty<ParseComplete>(body, "ParseComplete");
}
Result<BindComplete> decode_bind_complete(Bytes body) {
  return decode_empty<BindComplete>(body, "BindComplete");
}
Result<CloseComplete> decode_close_complete(Bytes body) {
  return decode_empty<CloseComplete>(body, "CloseComplete");
}

Result<ParameterDescription> decode_parameter_description(Bytes body) {
  ByteReader r(body);
  ParameterDescription m;
  if (auto e = read_oids(r, m.type_oids, "ParameterDescription")) return *e;
  if (!r.at_end()) return trailing_bytes("ParameterDescription", r.remaining());
  return m;
}

Result<NoData> decode_no_data(Bytes body) {
  return decode_empty<NoData>(body, "NoData");
}
Result<PortalSuspended> decode_portal_suspended(Bytes body) {
  return decode_empty<PortalSuspended>(body, "PortalSuspended");
}

Result<NotificationResponse> decode_notification_response(Bytes body) {
  constexpr std::string_view kName = "NotificationResponse";
  ByteReader r(body);
  NotificationResponse m;
  if (!r.read_u32(m.process_id)) return wire_error(kName, "message ends before the process ID");
  if (!r.read_cstring(m.channel)) return wire_error(kName, "channel name is not NUL-terminated");
  if (!r.read_cstring(m.payload)) return wire_error(kName, "payload is not NUL-terminated");
  if (!r.at_end()) return trailing_bytes(kName, r.remaining());
  return m;
}

Result<FunctionCallResponse> decode_function_call_response(Bytes body) {
  ByteReader r(body);
  FunctionCallResponse m;
  if (auto e = read_value(r, m.result, "FunctionCallResponse", "result")) return *e;
  if (!r.at_end()) return trailing_bytes("FunctionCallResponse", r.remaining());
  return m;
}

Result<NegotiateProtocolVersion> decode_negotiate_protocol_version(Bytes body) {
  constexpr std::string_view kName = "NegotiateProtocolVersion";
  ByteReader r(body);
  NegotiateProtocolVersion m;
  if (!r.read_u32(m.newest_minor_version))
    return wire_error(kName, "message ends before the newest minor version");
  int32_t count;
  if (!r.read_i32(count)) return wire_error(kName, "message ends before the option count");
  if (count < 0) return wire_error(kName, "option count is negative (", count, ")");
  // Each name takes at least its NUL.
  if (r.remaining() < static_cast<size_t>(count))
    return wire_error(kName, count, " option names do not fit in the rest of the message");
  m.unrecognized_options.reserve(static_cast<size_t>(count));
  for (int32_t i = 0; i < count; ++i) {
    if (!r.read_cstring(m.unrecognized_options.emplace_back()))
      return wire_error(kName, "option name ", i + 1, " is not NUL-terminated");
  }
  if (!r.at_end()) return trailing_bytes(kName, r.remaining());
  return m;
}

void encode(const ParameterStatus& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(ParameterStatus::kType);
  w.write_cstring(m.name);
  w.write_cstring(m.value);
  w.end_message();
}

void encode(const BackendKeyData& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(BackendKeyData::kType);
  w.write_u32(m.process_id);
  w.write_u32(m.secret_key);
  w.end_message();
}

void encode(const ReadyForQuery& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(ReadyForQuery::kType);
  w.write_char(m.status);
  w.end_message();
}

void encode(const RowDescription& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(RowDescription::kType);
  w.write_u16(static_cast<uint16_t>(m.fields.size()));
  for (const FieldDescription& f : m.fields) {
    w.write_cstring(f.name);
    w.write_u32(f.table_oid);
    w.write_i16(f.column_attnum);
    w.write_u32(f.type_oid);
    w.write_i16(f.type_size);
    w.write_i32(f.type_modifier);
    w.write_i16(f.format);
  }
  w.end_message();
}

void encode(const DataRow& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(DataRow::kType);
  write_values(w, m.columns);
  w.end_message();
}

void encode(const CommandComplete& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(CommandComplete::kType);
  w.write_cstring(m.tag);
  w.end_message();
}

void encode(const EmptyQueryResponse&, Buffer& out) {
  encode_empty(EmptyQueryResponse::kType, out);
}
void encode(const ParseComplete&, Buffer& out) {
  encode_empty(ParseComplete::kType, out);
}
void encode(const BindComplete&, Buffer& out) {
  encode_empty(BindComplete::kType, out);
}
void encode(const CloseComplete&, Buffer& out) {
  encode_empty(CloseComplete::kType, out);
}

void encode(const ParameterDescription& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(ParameterDescription::kType);
  write_oids(w, m.type_oids);
  w.end_message();
}

void encode(const NoData&, Buffer& out) {
  encode_empty(NoData::kType, out);
}
void encode(const PortalSuspended&, Buffer& out) {
  encode_empty(PortalSuspended::kType, out);
}

void encode(const NotificationResponse& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(NotificationResponse::kType);
  w.write_u32(m.process_id);
  w.write_cstring(m.channel);
  w.write_cstring(m.payload);
  w.end_message();
}

void encode(const FunctionCallResponse& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(FunctionCallResponse::kType);
  write_value(w, m.result);
  w.end_message();
}

void encode(const NegotiateProtocolVersion& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(NegotiateProtocolVersion::kType);
  w.write_u32(m.newest_minor_version);
  w.write_u32(static_cast<uint32_t>(m.unrecognized_options.size()));
  for (const std::string& option : m.unrecognized_options) w.write_cstring(option);
  w.end_message();
}

namespace {

template <class T>
Result<BackendMessage> widen(Result<T> r) {
  if (!r.ok()) return r.error();
  return BackendMessage{std::move(r).value()};
}

}  // namespace

Result<BackendMessage> decode_backend_message(char type, Bytes body) {
  switch (type) {
    case backend::kAuthentication:
      return widen(decode_authentication(body));
    case backend::kParameterStatus:
      return widen(decode_parameter_status(body));
    case backend::kBackendKeyData:
      return widen(decode_backend_key_data(body));
    case backend::kReadyForQuery:
      return widen(decode_ready_for_query(body));
    case backend::kRowDescription:
      return widen(decode_row_description(body));
    case backend::kDataRow:
      return widen(decode_data_row(body));
    case backend::kCommandComplete:
      return widen(decode_command_complete(body));
    case backend::kEmptyQueryResponse:
      return widen(decode_empty_query_response(body));
    case backend::kErrorResponse:
      return widen(decode_error_response(body));
    case backend::kNoticeResponse:
      return widen(decode_notice_response(body));
    case backend::kParseComplete:
      return widen(decode_parse_complete(body));
    case backend::kBindComplete:
      return widen(decode_bind_complete(body));
    case backend::kCloseComplete:
      return widen(decode_close_complete(body));
    case backend::kParameterDescription:
      return widen(decode_parameter_description(body));
    case backend::kNoData:
      return widen(decode_no_data(body));
    case backend::kPortalSuspended:
      return widen(decode_portal_suspended(body));
    case backend::kCopyInResponse:
      return widen(decode_copy_in_response(body));
    case backend::kCopyOutResponse:
      return widen(decode_copy_out_response(body));
    case backend::kCopyBothResponse:
      return widen(decode_copy_both_response(body));
    case backend::kCopyData:
      return widen(decode_copy_data(body));
    case backend::kCopyDone:
      return widen(decode_copy_done(body));
    case backend::kNotificationResponse:
      return widen(decode_notification_response(body));
    case backend::kFunctionCallResponse:
      return widen(decode_function_call_response(body));
    case backend::kNegotiateProtocolVersion:
      return widen(decode_negotiate_protocol_version(body));
    default:
      return WireError{"unknown backend message type " +
                       printable_char(static_cast<uint8_t>(type))};
  }
}

void encode(const BackendMessage& m, Buffer& out) {
  std::visit([&out](const auto& message) { encode(message, out); }, m);
}

}  // namespace kanon::wire

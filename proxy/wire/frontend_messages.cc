#include "proxy/wire/frontend_messages.h"

#include "proxy/wire/byte_reader.h"
#include "proxy/wire/byte_writer.h"

namespace kanon::wire {
namespace {

// Describe and Close: a target byte and a name.
template <class T>
Result<T> decode_target(Bytes body, std::string_view message) {
  ByteReader r(body);
  T m;
  if (!r.read_char(m.target)) return wire_error(message, "message is empty");
  if (m.target != kTargetStatement && m.target != kTargetPortal)
    return wire_error(message, "target is ", printable_char(static_cast<uint8_t>(m.target)),
                      "; expected 'S' (statement) or 'P' (portal)");
  if (!r.read_cstring(m.name)) return wire_error(message, "name is not NUL-terminated");
  if (!r.at_end()) return trailing_bytes(message, r.remaining());
  return m;
}

template <class T>
void encode_target(const T& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(T::kType);
  w.write_char(m.target);
  w.write_cstring(m.name);
  w.end_message();
}

}  // namespace

int16_t Bind::param_format(size_t i) const {
  if (param_formats.empty()) return kFormatText;
  if (param_formats.size() == 1) return param_formats[0];
  return i < param_formats.size() ? param_formats[i] : kFormatText;
}

Result<Query> decode_query(Bytes body) {
  ByteReader r(body);
  Query m;
  if (!r.read_cstring(m.sql)) return WireError{"Query: query string is not NUL-terminated"};
  if (!r.at_end()) return trailing_bytes("Query", r.remaining());
  return m;
}

Result<Parse> decode_parse(Bytes body) {
  ByteReader r(body);
  Parse m;
  if (!r.read_cstring(m.statement)) return WireError{"Parse: statement name is not NUL-terminated"};
  if (!r.read_cstring(m.query)) return WireError{"Parse: query string is not NUL-terminated"};
  if (auto e = read_oids(r, m.param_types, "Parse")) return *e;
  if (!r.at_end()) return trailing_bytes("Parse", r.remaining());
  return m;
}

Result<Bind> decode_bind(Bytes body) {
  ByteReader r(body);
  Bind m;
  if (!r.read_cstring(m.portal)) return WireError{"Bind: portal name is not NUL-terminated"};
  if (!r.read_cstring(m.statement)) return WireError{"Bind: statement name is not NUL-terminated"};
  if (auto e = read_format_codes(r, m.param_formats, "Bind", "parameter format code")) return *e;
  if (auto e = read_values(r, m.params, "Bind", "parameter")) return *e;
  if (auto e = read_format_codes(r, m.result_formats, "Bind", "result format code")) return *e;
  if (!r.at_end()) return trailing_bytes("Bind", r.remaining());
  if (auto e = check_format_count(m.param_formats.size(), m.params.size(), "Bind", "parameters"))
    return *e;
  return m;
}

Result<Describe> decode_describe(Bytes body) {
  return decode_target<Describe>(body, "Describe");
}

Result<Execute> decode_execute(Bytes body) {
  ByteReader r(body);
  Execute m;
  if (!r.read_cstring(m.portal)) return WireError{"Execute: portal name is not NUL-terminated"};
  if (!r.read_i32(m.max_rows))
    return WireError{"Execute: message ends before the maximum row count"};
  if (!r.at_end()) return trailing_bytes("Execute", r.remaining());
  return m;
}

Result<Sync> decode_sync(Bytes body) {
  return decode_empty<Sync>(body, "Sync");
}
Result<Flush> decode_flush(Bytes body) {
  return decode_empty<Flush>(body, "Flush");
}
Result<Close> decode_close(Bytes body) {
  return decode_target<Close>(body, "Close");
}

Result<FunctionCall> decode_function_call(Bytes body) {
  constexpr std::string_view kName = "FunctionCall";
  ByteReader r(body);
  FunctionCall m;
  if (!r.read_u32(m.function_oid)) return wire_error(kName, "message ends before the function OID");
  if (auto e = read_format_codes(r, m.arg_formats, kName, "argument format code")) return *e;
  if (auto e = read_values(r, m.args, kName, "argument")) return *e;
  if (!r.read_i16(m.result_format))
    return wire_error(kName, "message ends before the result format code");
  if (m.result_format != kFormatText && m.result_format != kFormatBinary)
    return wire_error(kName, "result format code is ", m.result_format,
                      "; only 0 (text) and 1 (binary) exist");
  if (!r.at_end()) return trailing_bytes(kName, r.remaining());
  if (auto e = check_format_count(m.arg_formats.size(), m.args.size(), kName, "arguments"))
    return *e;
  return m;
}

Result<Terminate> decode_terminate(Bytes body) {
  return decode_empty<Terminate>(body, "Terminate");
}

Result<PasswordMessage> decode_password_message(Bytes body) {
  return PasswordMessage{{body.begin(), body.end()}};
}

Result<SaslInitialResponse> decode_sasl_initial_response(Bytes body) {
  constexpr std::string_view kName = "SASLInitialResponse";
  ByteReader r(body);
  SaslInitialResponse m;
  if (!r.read_cstring(m.mechanism))
    return wire_error(kName, "mechanism name is not NUL-terminated");
  Value data;
  if (auto e = read_value(r, data, kName, "initial response")) return *e;
  if (!r.at_end()) return trailing_bytes(kName, r.remaining());
  m.data = std::move(data);
  return m;
}

Result<std::string> decode_password(Bytes body) {
  ByteReader r(body);
  std::string password;
  if (!r.read_cstring(password))
    return WireError{"PasswordMessage: password is not NUL-terminated"};
  if (!r.at_end()) return trailing_bytes("PasswordMessage", r.remaining());
  return password;
}

void encode(const Query& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(Query::kType);
  w.write_cstring(m.sql);
  w.end_message();
}

void encode(const Parse& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(Parse::kType);
  w.write_cstring(m.statement);
  w.write_cstring(m.query);
  write_oids(w, m.param_types);
  w.end_message();
}

void encode(const Bind& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(Bind::kType);
  w.write_cstring(m.portal);
  w.write_cstring(m.statement);
  write_format_codes(w, m.param_formats);
  write_values(w, m.params);
  write_format_codes(w, m.result_formats);
  w.end_message();
}

void encode(const Describe& m, Buffer& out) {
  encode_target(m, out);
}

void encode(const Execute& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(Execute::kType);
  w.write_cstring(m.portal);
  w.write_i32(m.max_rows);
  w.end_message();
}

void encode(const Sync&, Buffer& out) {
  encode_empty(Sync::kType, out);
}
void encode(const Flush&, Buffer& out) {
  encode_empty(Flush::kType, out);
}
void encode(const Close& m, Buffer& out) {
  encode_target(m, out);
}

void encode(const FunctionCall& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(FunctionCall::kType);
  w.write_u32(m.function_oid);
  write_format_codes(w, m.arg_formats);
  write_values(w, m.args);
  w.write_i16(m.result_format);
  w.end_message();
}

void encode(const Terminate&, Buffer& out) {
  encode_empty(Terminate::kType, out);
}

void encode(const PasswordMessage& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(PasswordMessage::kType);
  w.write_bytes(m.payload);
  w.end_message();
}

void encode(const SaslInitialResponse& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(SaslInitialResponse::kType);
  w.write_cstring(m.mechanism);
  write_value(w, m.data);
  w.end_message();
}

void encode_password(std::string_view password, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(frontend::kPasswordMessage);
  w.write_cstring(password);
  w.end_message();
}

namespace {

template <class T>
Result<FrontendMessage> widen(Result<T> r) {
  if (!r.ok()) return r.error();
  return FrontendMessage{std::move(r).value()};
}

}  // namespace

Result<FrontendMessage> decode_frontend_message(char type, Bytes body) {
  switch (type) {
    case frontend::kQuery:
      return widen(decode_query(body));
    case frontend::kParse:
      return widen(decode_parse(body));
    case frontend::kBind:
      return widen(decode_bind(body));
    case frontend::kDescribe:
      return widen(decode_describe(body));
    case frontend::kExecute:
      return widen(decode_execute(body));
    case frontend::kSync:
      return widen(decode_sync(body));
    case frontend::kFlush:
      return widen(decode_flush(body));
    case frontend::kClose:
      return widen(decode_close(body));
    case frontend::kCopyData:
      return widen(decode_copy_data(body));
    case frontend::kCopyDone:
      return widen(decode_copy_done(body));
    case frontend::kCopyFail:
      return widen(decode_copy_fail(body));
    case frontend::kFunctionCall:
      return widen(decode_function_call(body));
    case frontend::kTerminate:
      return widen(decode_terminate(body));
    case frontend::kPasswordMessage:
      return widen(decode_password_message(body));
    default:
      return WireError{"unknown frontend message type " +
                       printable_char(static_cast<uint8_t>(type))};
  }
}

void encode(const FrontendMessage& m, Buffer& out) {
  std::visit([&out](const auto& message) { encode(message, out); }, m);
}

}  // namespace kanon::wire

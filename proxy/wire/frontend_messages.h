// Typed messages the frontend (client) sends, protocol 3.0.
//
// decode_xxx() takes a frame body as frame_typed() returns it (after the type
// byte and length) and checks that the body is consumed exactly; encode()
// appends the whole frame, type byte and length included. Decoded messages
// own their bytes, so they outlive the input buffer.
//
// REQUIRES for encode: list sizes fit the protocol's Int16 counts (<= 65535)
// and strings contain no NUL (a NUL would end the field; see ByteWriter).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "proxy/wire/copy_messages.h"
#include "proxy/wire/field_codec.h"
#include "proxy/wire/framing.h"
#include "proxy/wire/message_types.h"
#include "proxy/wire/wire_result.h"

namespace kanon::wire {

// Describe and Close name either a prepared statement or a portal.
inline constexpr char kTargetStatement = 'S';
inline constexpr char kTargetPortal = 'P';

struct Query {
  static constexpr char kType = frontend::kQuery;
  std::string sql;
  bool operator==(const Query&) const = default;
};

struct Parse {
  static constexpr char kType = frontend::kParse;
  std::string statement;  // "" is the unnamed statement
  std::string query;
  std::vector<uint32_t> param_types;  // type OIDs; 0 leaves a type unspecified
  bool operator==(const Parse&) const = default;
};

struct Bind {
  static constexpr char kType = frontend::kBind;
  std::string portal;     // "" is the unnamed portal
  std::string statement;  // "" is the unnamed statement
  // Empty (all text), one code for all parameters, or one per parameter;
  // decoding checks this and that every code is 0 or 1.
  std::vector<int16_t> param_formats;
  std::vector<Value> params;
  // Same rules, for the result columns.
  std::vector<int16_t> result_formats;
  bool operator==(const Bind&) const = default;

  // The format of parameter `i` (0-based) under the rule above.
  int16_t param_format(size_t i) const;
};

struct Describe {
  static constexpr char kType = frontend::kDescribe;
  char target = kTargetStatement;  // kTargetStatement or kTargetPortal
  std::string name;
  bool operator==(const Describe&) const = default;
};

struct Execute {
  static constexpr char kType = frontend::kExecute;
  std::string portal;
  int32_t max_rows = 0;  // 0 (or negative, as PostgreSQL reads it): no limit
  bool operator==(const Execute&) const = default;
};

struct Sync {
  static constexpr char kType = frontend::kSync;
  bool operator==(const Sync&) const = default;
};

struct Flush {
  static constexpr char kType = frontend::kFlush;
  bool operator==(const Flush&) const = default;
};

struct Close {
  static constexpr char kType = frontend::kClose;
  char target = kTargetStatement;  // kTargetStatement or kTargetPortal
  std::string name;
  bool operator==(const Close&) const = default;
};

struct FunctionCall {
  static constexpr char kType = frontend::kFunctionCall;
  uint32_t function_oid = 0;
  std::vector<int16_t> arg_formats;  // same rules as Bind::param_formats
  std::vector<Value> args;
  int16_t result_format = kFormatText;
  bool operator==(const FunctionCall&) const = default;
};

struct Terminate {
  static constexpr char kType = frontend::kTerminate;
  bool operator==(const Terminate&) const = default;
};

// Every 'p' message: PasswordMessage, SASLInitialResponse, SASLResponse and
// GSSResponse look alike on the wire; only the authentication exchange in
// progress says which one it is. This keeps the raw payload; the functions
// below read it as the message the exchange expects. A SASLResponse or
// GSSResponse payload is the data itself.
struct PasswordMessage {
  static constexpr char kType = frontend::kPasswordMessage;
  std::vector<uint8_t> payload;
  bool operator==(const PasswordMessage&) const = default;
};

struct SaslInitialResponse {
  static constexpr char kType = frontend::kPasswordMessage;
  std::string mechanism;
  std::optional<std::vector<uint8_t>> data;  // nullopt: no initial response
  bool operator==(const SaslInitialResponse&) const = default;
};

Result<Query> decode_query(Bytes body);
Result<Parse> decode_parse(Bytes body);
Result<Bind> decode_bind(Bytes body);
Result<Describe> decode_describe(Bytes body);
Result<Execute> decode_execute(Bytes body);
Result<Sync> decode_sync(Bytes body);
Result<Flush> decode_flush(Bytes body);
Result<Close> decode_close(Bytes body);
Result<FunctionCall> decode_function_call(Bytes body);
Result<Terminate> decode_terminate(Bytes body);
Result<PasswordMessage> decode_password_message(Bytes body);
// A 'p' body read as SASLInitialResponse.
Result<SaslInitialResponse> decode_sasl_initial_response(Bytes body);
// A 'p' body read as a cleartext or MD5 password: one NUL-terminated string.
Result<std::string> decode_password(Bytes body);

void encode(const Query& m, Buffer& out);
void encode(const Parse& m, Buffer& out);
void encode(const Bind& m, Buffer& out);
void encode(const Describe& m, Buffer& out);
void encode(const Execute& m, Buffer& out);
void encode(const Sync& m, Buffer& out);
void encode(const Flush& m, Buffer& out);
void encode(const Close& m, Buffer& out);
void encode(const FunctionCall& m, Buffer& out);
void encode(const Terminate& m, Buffer& out);
void encode(const PasswordMessage& m, Buffer& out);
void encode(const SaslInitialResponse& m, Buffer& out);
// A 'p' message carrying a cleartext or MD5 password.
void encode_password(std::string_view password, Buffer& out);

// Any typed frontend message, chosen by the type byte. A 'p' message decodes
// as PasswordMessage (see above).
using FrontendMessage =
    std::variant<Query, Parse, Bind, Describe, Execute, Sync, Flush, Close, CopyData, CopyDone,
                 CopyFail, FunctionCall, Terminate, PasswordMessage>;

// Fails for a type byte no frontend message has.
Result<FrontendMessage> decode_frontend_message(char type, Bytes body);
void encode(const FrontendMessage& m, Buffer& out);

}  // namespace kanon::wire

#include "proxy/wire/authentication.h"

#include <algorithm>

#include "proxy/wire/byte_reader.h"
#include "proxy/wire/byte_writer.h"
#include "proxy/wire/field_codec.h"

namespace kanon::wire {
namespace {

constexpr std::string_view kName = "Authentication";

bool is_known(uint32_t code) {
  switch (static_cast<AuthCode>(code)) {
    case AuthCode::kOk:
    case AuthCode::kKerberosV5:
    case AuthCode::kCleartextPassword:
    case AuthCode::kMd5Password:
    case AuthCode::kScmCredential:
    case AuthCode::kGss:
    case AuthCode::kGssContinue:
    case AuthCode::kSspi:
    case AuthCode::kSasl:
    case AuthCode::kSaslContinue:
    case AuthCode::kSaslFinal:
      return true;
  }
  return false;
}

std::optional<WireError> read_mechanisms(ByteReader& r, std::vector<std::string>& out) {
  for (;;) {
    std::string name;
    if (!r.read_cstring(name))
      return wire_error(kName, "SASL mechanism list does not end with an empty name");
    if (name.empty()) break;
    out.push_back(std::move(name));
  }
  if (out.empty()) return wire_error(kName, "SASL request lists no mechanisms");
  return std::nullopt;
}

}  // namespace

Result<Authentication> decode_authentication(Bytes body) {
  ByteReader r(body);
  uint32_t code;
  if (!r.read_u32(code)) return wire_error(kName, "message ends before the request code");
  if (!is_known(code)) return wire_error(kName, "unknown request code ", code);
  Authentication m;
  m.code = static_cast<AuthCode>(code);
  switch (m.code) {
    case AuthCode::kMd5Password: {
      Bytes salt;
      if (!r.read_bytes(m.salt.size(), salt))
        return wire_error(kName, "MD5 request ends before its 4-byte salt");
      std::copy(salt.begin(), salt.end(), m.salt.begin());
      break;
    }
    case AuthCode::kSasl:
      if (auto e = read_mechanisms(r, m.mechanisms)) return *e;
      break;
    case AuthCode::kSaslContinue:
    case AuthCode::kSaslFinal:
    case AuthCode::kGssContinue: {
      const Bytes data = r.read_rest();
      m.data.assign(data.begin(), data.end());
      break;
    }
    default:
      break;
  }
  if (!r.at_end()) return trailing_bytes(kName, r.remaining());
  return m;
}

void encode(const Authentication& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(Authentication::kType);
  w.write_u32(static_cast<uint32_t>(m.code));
  switch (m.code) {
    case AuthCode::kMd5Password:
      w.write_bytes(m.salt);
      break;
    case AuthCode::kSasl:
      for (const std::string& name : m.mechanisms) w.write_cstring(name);
      w.write_u8(0);
      break;
    case AuthCode::kSaslContinue:
    case AuthCode::kSaslFinal:
    case AuthCode::kGssContinue:
      w.write_bytes(m.data);
      break;
    default:
      break;
  }
  w.end_message();
}

}  // namespace kanon::wire

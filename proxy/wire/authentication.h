// Authentication ('R'): the backend's requests during authentication and
// the final AuthenticationOk.
//
// One struct for the whole family; `code` says which member is meaningful.
// decode_authentication() checks the body against the code: Ok, Cleartext,
// KerberosV5, SCMCredential, GSS and SSPI carry nothing more, MD5 exactly a
// 4-byte salt, SASL a non-empty list of mechanism names ended by an empty
// one, SASLContinue / SASLFinal / GSSContinue their data (the rest of the
// body). An unknown code is an error.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "proxy/wire/framing.h"
#include "proxy/wire/message_types.h"
#include "proxy/wire/wire_result.h"

namespace kanon::wire {

struct Authentication {
  static constexpr char kType = backend::kAuthentication;
  AuthCode code = AuthCode::kOk;
  std::array<uint8_t, 4> salt{};        // kMd5Password
  std::vector<std::string> mechanisms;  // kSasl; REQUIRES for encode: names non-empty
  std::vector<uint8_t> data;            // kSaslContinue, kSaslFinal, kGssContinue
  bool operator==(const Authentication&) const = default;

  static Authentication ok() { return {}; }
  static Authentication cleartext_password() { return {AuthCode::kCleartextPassword}; }
  static Authentication md5_password(std::array<uint8_t, 4> salt) {
    return {AuthCode::kMd5Password, salt};
  }
  static Authentication sasl(std::vector<std::string> mechanisms) {
    return {AuthCode::kSasl, {}, std::move(mechanisms)};
  }
  static Authentication sasl_continue(std::vector<uint8_t> data) {
    return {AuthCode::kSaslContinue, {}, {}, std::move(data)};
  }
  static Authentication sasl_final(std::vector<uint8_t> data) {
    return {AuthCode::kSaslFinal, {}, {}, std::move(data)};
  }
};

Result<Authentication> decode_authentication(Bytes body);
// Writes only the members `code` uses.
void encode(const Authentication& m, Buffer& out);

}  // namespace kanon::wire

#include "proxy/wire/authentication.h"

#include <doctest/doctest.h>

#include "tests/wire/wire_test_support.h"

using namespace kanon::wire;
using namespace kanon::wire::testing;
using namespace std::literals;

namespace {

std::string auth_error(std::string_view body) {
  const auto r = decode_authentication(Bytes(raw(body)));
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

}  // namespace

TEST_CASE("Authentication round trip for every request") {
  const Authentication all[] = {
      Authentication::ok(),
      Authentication::cleartext_password(),
      Authentication::md5_password({1, 2, 3, 4}),
      Authentication::sasl({"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"}),
      Authentication::sasl_continue({'r', '=', 'x'}),
      Authentication::sasl_final({'v', '=', 'y'}),
      Authentication::sasl_final({}),
      Authentication{AuthCode::kKerberosV5},
      Authentication{AuthCode::kScmCredential},
      Authentication{AuthCode::kGss},
      Authentication{AuthCode::kGssContinue, {}, {}, {9, 8, 7}},
      Authentication{AuthCode::kSspi},
  };
  for (const Authentication& m : all) {
    CAPTURE(static_cast<uint32_t>(m.code));
    round_trip(m, decode_authentication);
    round_trip_backend_dispatch(m);
    // The raw data of SASLContinue / SASLFinal / GSSContinue may be any
    // length, so only the cut into the request code is an error there.
    const bool open_ended = m.code == AuthCode::kSaslContinue || m.code == AuthCode::kSaslFinal ||
                            m.code == AuthCode::kGssContinue;
    if (open_ended) {
      const Buffer frame = encoded(m);
      for (size_t n = 0; n < 4; ++n) {
        const Buffer cut(frame.begin() + 5, frame.begin() + 5 + static_cast<ptrdiff_t>(n));
        CHECK_FALSE(decode_authentication(cut).ok());
      }
    } else {
      check_rejects_damage(m, decode_authentication, "Authentication");
    }
  }
}

TEST_CASE("Authentication bytes match the protocol documentation") {
  CHECK(encoded(Authentication::ok()) == raw("R\0\0\0\x08\0\0\0\0"sv));
  CHECK(encoded(Authentication::md5_password({0xaa, 0xbb, 0xcc, 0xdd})) ==
        raw("R\0\0\0\x0c\0\0\0\x05\xaa\xbb\xcc\xdd"sv));
  CHECK(encoded(Authentication::sasl({"SCRAM-SHA-256"})) ==
        raw("R\0\0\0\x17\0\0\0\x0aSCRAM-SHA-256\0\0"sv));
}

TEST_CASE("Authentication rejects bodies that do not fit the request code") {
  CHECK(auth_error("\0\0\0\x04"sv) == "Authentication: unknown request code 4");
  CHECK(auth_error("\0\0"sv) == "Authentication: message ends before the request code");
  CHECK(auth_error("\0\0\0\0\0"sv) ==
        "Authentication: 1 unexpected byte after the end of the message");
  CHECK(auth_error("\0\0\0\x05\x01\x02\x03"sv) ==
        "Authentication: MD5 request ends before its 4-byte salt");
  CHECK(auth_error("\0\0\0\x0a\0"sv) == "Authentication: SASL request lists no mechanisms");
  CHECK(auth_error("\0\0\0\x0aSCRAM-SHA-256\0"sv) ==
        "Authentication: SASL mechanism list does not end with an empty name");
}

#include "proxy/backend_tls_negotiator.h"

#include <doctest/doctest.h>

#include <variant>

#include "proxy/wire/startup_messages.h"

using namespace kanon;
using proxy::BackendTlsNegotiator;
using settings::SslMode;
using Step = BackendTlsNegotiator::Step;
using namespace std::literals;

namespace {

wire::Buffer bytes(std::string_view s) {
  return wire::Buffer(s.begin(), s.end());
}

}  // namespace

TEST_CASE("the request is an SSLRequest") {
  BackendTlsNegotiator n(SslMode::kPrefer);
  const wire::Frame f = wire::frame_startup(n.request(), 1 << 20);
  REQUIRE(f.status == wire::FrameStatus::kFrame);
  CHECK(f.size == n.request().size());
  const auto packet = wire::decode_startup_packet(f.body);
  REQUIRE(packet.ok());
  CHECK(std::holds_alternative<wire::SslRequest>(packet.value()));
}

TEST_CASE("'S' starts the TLS handshake, with verification as sslmode says") {
  struct Case {
    SslMode mode;
    bool verify_peer;
    bool verify_host;
  };
  for (const Case c :
       {Case{SslMode::kPrefer, false, false}, Case{SslMode::kRequire, false, false},
        Case{SslMode::kVerifyCa, true, false}, Case{SslMode::kVerifyFull, true, true}}) {
    CAPTURE(settings::to_string(c.mode));
    BackendTlsNegotiator n(c.mode);
    CHECK(n.on_bytes(bytes("S")) == Step::kStartTls);
    CHECK(n.verify_peer() == c.verify_peer);
    CHECK(n.verify_host() == c.verify_host);
    CHECK(n.failure().empty());
  }
}

TEST_CASE("'N' means plain under prefer and is an error when TLS is required") {
  BackendTlsNegotiator prefer(SslMode::kPrefer);
  CHECK(prefer.on_bytes(bytes("N")) == Step::kPlain);
  for (const SslMode mode : {SslMode::kRequire, SslMode::kVerifyCa, SslMode::kVerifyFull}) {
    BackendTlsNegotiator n(mode);
    CHECK(n.on_bytes(bytes("N")) == Step::kFail);
    CHECK(n.failure() == std::string("the server does not support TLS, but backend.sslmode is ") +
                             settings::to_string(mode));
  }
}

TEST_CASE("nothing yet: wait for the answer") {
  BackendTlsNegotiator n(SslMode::kRequire);
  CHECK(n.on_bytes({}) == Step::kNeedMore);
  CHECK(n.on_bytes(bytes("S")) == Step::kStartTls);
}

TEST_CASE("an answer other than S or N is an error") {
  for (const char* answer : {"E", "\0", "s", "n"}) {
    BackendTlsNegotiator n(SslMode::kPrefer);
    CHECK(n.on_bytes(bytes(std::string_view(answer, 1))) == Step::kFail);
    CHECK(n.failure() == "the server answered the SSLRequest with something else than S or N");
  }
  // An old server's ErrorResponse to an SSLRequest.
  BackendTlsNegotiator n(SslMode::kPrefer);
  CHECK(n.on_bytes(bytes("E\0\0\0\x08xyz"sv)) == Step::kFail);
}

TEST_CASE("bytes after the answer are an error, under every mode") {
  for (const SslMode mode : {SslMode::kPrefer, SslMode::kRequire, SslMode::kVerifyFull}) {
    for (const char* answer : {"S", "N"}) {
      CAPTURE(answer);
      BackendTlsNegotiator n(mode);
      // An attacker's bytes injected after 'S' would be read before TLS.
      CHECK(n.on_bytes(bytes(std::string(answer) + "R\0\0\0\x08"s)) == Step::kFail);
      CHECK(n.failure() == "the server sent data after its answer to the SSLRequest");
    }
  }
}

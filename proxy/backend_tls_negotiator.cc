#include "proxy/backend_tls_negotiator.h"

#include <fmt/format.h>

#include <cassert>

#include "proxy/wire/startup_messages.h"

namespace kanon::proxy {

namespace {

constexpr uint8_t kRefuseEncryption = 'N';
constexpr uint8_t kAcceptEncryption = 'S';

}  // namespace

BackendTlsNegotiator::BackendTlsNegotiator(settings::SslMode mode) : mode_(mode) {
  assert(mode != settings::SslMode::kDisable);
  wire::encode(wire::SslRequest{}, request_);
}

bool BackendTlsNegotiator::verify_peer() const {
  return mode_ == settings::SslMode::kVerifyCa || mode_ == settings::SslMode::kVerifyFull;
}

BackendTlsNegotiator::Step BackendTlsNegotiator::on_bytes(wire::Bytes received) {
  if (received.empty()) return Step::kNeedMore;
  const uint8_t answer = received[0];
  if (answer != kAcceptEncryption && answer != kRefuseEncryption)
    return fail("the server answered the SSLRequest with something else than S or N");
  if (received.size() > 1) return fail("the server sent data after its answer to the SSLRequest");
  if (answer == kAcceptEncryption) return Step::kStartTls;
  if (mode_ == settings::SslMode::kPrefer) return Step::kPlain;
  return fail(fmt::format("the server does not support TLS, but backend.sslmode is {}",
                          settings::to_string(mode_)));
}

BackendTlsNegotiator::Step BackendTlsNegotiator::fail(std::string failure) {
  failure_ = std::move(failure);
  return Step::kFail;
}

}  // namespace kanon::proxy

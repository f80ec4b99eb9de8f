// BackendTlsNegotiator: the client side of the SSLRequest exchange with the
// backend, with libpq's sslmode meanings, as a state machine over bytes. The
// session sends request(), feeds what the backend answers to on_bytes() and
// does what it returns: the TLS client handshake, nothing (plain), or give
// up with failure().
//
// The backend must answer with exactly one byte and then wait for us; a
// byte other than 'S' or 'N', or anything after the answer, is a failure
// (CVE-2021-23222: bytes before the TLS handshake would be read as if they
// came over TLS). 'N' is accepted only under sslmode=prefer.
// Not thread-safe; one per backend connection.
#pragma once

#include <string>

#include "proxy/wire/framing.h"
#include "settings/server_config.h"

namespace kanon::proxy {

class BackendTlsNegotiator {
 public:
  enum class Step {
    kNeedMore,  // read more from the backend, call on_bytes() again
    kStartTls,  // consume one byte, then the TLS client handshake
    kPlain,     // consume one byte, go on without TLS
    kFail,      // failure() says why; close the backend connection
  };

  // REQUIRES: mode != kDisable (nothing to negotiate then).
  explicit BackendTlsNegotiator(settings::SslMode mode);

  // The SSLRequest packet to send first.
  const wire::Buffer& request() const { return request_; }
  // `received`: everything read from the backend since the request.
  Step on_bytes(wire::Bytes received);
  const std::string& failure() const { return failure_; }

  // For kStartTls: check the certificate chain (verify-ca, verify-full)
  // and the host name (verify-full).
  bool verify_peer() const;
  bool verify_host() const { return mode_ == settings::SslMode::kVerifyFull; }

 private:
  Step fail(std::string failure);

  settings::SslMode mode_;
  wire::Buffer request_;
  std::string failure_;
};

}  // namespace kanon::proxy

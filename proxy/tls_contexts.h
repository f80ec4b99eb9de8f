// The OpenSSL contexts of the proxy: one as a TLS server toward clients
// (tls: cert, key), one as a TLS client toward the backend (backend.sslmode,
// backend.sslrootcert). Built at start-up and on RELOAD; a bad certificate or
// key throws std::runtime_error naming the file.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "settings/server_config.h"

namespace kanon::proxy {

// nullptr when tls: is not configured.
std::shared_ptr<boost::asio::ssl::context> make_client_tls_context(const settings::ClientTls& tls);

// nullptr for sslmode: disable.
std::shared_ptr<boost::asio::ssl::context> make_backend_tls_context(
    const settings::BackendTls& tls);

}  // namespace kanon::proxy

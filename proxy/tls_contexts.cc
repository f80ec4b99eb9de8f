#include "proxy/tls_contexts.h"

#include <fmt/format.h>

namespace kanon::proxy {

namespace ssl = boost::asio::ssl;

namespace {

void harden(ssl::context& ctx) {
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                  ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                  ssl::context::single_dh_use);
}

template <class F>
void load(const std::string& what, const std::string& file, F f) {
  boost::system::error_code ec;
  f(ec);
  if (ec)
    throw std::runtime_error(
        fmt::format("cannot load the TLS {} {}: {}", what, file, ec.message()));
}

}  // namespace

std::shared_ptr<ssl::context> make_client_tls_context(const settings::ClientTls& tls) {
  if (!tls.enabled()) return nullptr;
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  harden(*ctx);
  load("certificate", tls.cert, [&](auto& ec) { ctx->use_certificate_chain_file(tls.cert, ec); });
  load("private key", tls.key,
       [&](auto& ec) { ctx->use_private_key_file(tls.key, ssl::context::pem, ec); });
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
    throw std::runtime_error(
        fmt::format("the TLS private key {} does not match the certificate {}", tls.key, tls.cert));
  return ctx;
}

std::shared_ptr<ssl::context> make_backend_tls_context(const settings::BackendTls& tls) {
  if (tls.mode == settings::SslMode::kDisable) return nullptr;
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  harden(*ctx);
  if (!tls.rootcert.empty())
    load("root certificate", tls.rootcert,
         [&](auto& ec) { ctx->load_verify_file(tls.rootcert, ec); });
  return ctx;
}

}  // namespace kanon::proxy

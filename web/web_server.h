// WebServer: the web console's listener (web.listen), on the server's first
// I/O context. Each connection is one coroutine reading requests with
// Boost.Beast's parser — headers at most 8 KiB (431), bodies at most 64 KiB
// (413), malformed requests 400, each request within 30 s — and answering
// them with WebApp; keep-alive as the client asks. TLS when web.tls (or
// tls:) is set. Blocking work goes to the blocking pool, so no request ever
// holds up the proxy's sessions. At most 64 connections at once, and 16
// from one client address (ConnectionLimits); more are closed at once. A
// failed accept is tried again every 100 ms (AcceptRetry).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "proxy/accept_retry.h"
#include "proxy/server.h"
#include "web/connection_limits.h"
#include "web/web_app.h"

namespace kanon::web {

class WebServer : public proxy::AttachedService {
 public:
  // Binds now; throws std::runtime_error naming the address or the TLS file.
  WebServer(boost::asio::io_context& io, proxy::ServerContext& context,
            const settings::WebConfig& config);
  void start() override;
  void stop() override;
  boost::asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

 private:
  boost::asio::awaitable<void> accept_loop();

  boost::asio::io_context& io_;
  WebApp app_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  boost::asio::ip::tcp::acceptor acceptor_;
  proxy::AcceptRetry retry_;
  static constexpr size_t kMaxConnections = 64;
  static constexpr size_t kMaxPerAddress = 16;
  std::shared_ptr<ConnectionLimits> limits_ =
      std::make_shared<ConnectionLimits>(kMaxConnections, kMaxPerAddress);
};

}  // namespace kanon::web

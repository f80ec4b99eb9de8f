// MetricsEndpoint: the Prometheus text endpoint (metrics.listen). Answers
// GET /metrics with Stats::prometheus(), GET /healthz with 200 "ok" while
// the process runs, and GET /readyz with 200 "ready" or 503 and a one-line
// reason (shutting down: in the lame duck or draining; paused, a listed policy not built, the
// catalog not read, the backend not answering an SSLRequest: probed at most once a second);
// anything else gets 404. HTTP/1.0 style: one request per connection, which
// must arrive within 10 s. At most kMaxConnections at once: more are closed
// at once, so that this port cannot be used to hold the process's file
// descriptors. A failed accept is tried again every 100 ms (AcceptRetry).
#pragma once

#include <boost/asio/io_context.hpp>
// clang-format off
#include <utility>  // before awaitable.hpp: Boost 1.74 uses std::exchange without it
#include <boost/asio/awaitable.hpp>
// clang-format on
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "proxy/accept_retry.h"
#include "proxy/server_context.h"
#include "settings/server_config.h"

namespace kanon::proxy {

class MetricsEndpoint {
 public:
  static constexpr int kMaxConnections = 32;

  // Binds now; throws std::runtime_error naming the address on failure.
  MetricsEndpoint(boost::asio::io_context& io, const settings::Endpoint& listen,
                  ServerContext& context);
  void start();
  void stop();
  boost::asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

  // Empty when ready, else why not. Runs on the endpoint's io_context.
  boost::asio::awaitable<std::string> not_ready();

 private:
  boost::asio::awaitable<std::string> probe_backend();

  ServerContext& context_;
  boost::asio::ip::tcp::acceptor acceptor_;
  AcceptRetry retry_;
  // Connections being served; only touched on the endpoint's io_context.
  std::shared_ptr<int> connections_ = std::make_shared<int>(0);
  // The last backend probe: its time and its failure ("" = reachable).
  std::chrono::steady_clock::time_point probed_at_{};
  bool probed_ = false;
  std::string backend_problem_;
};

}  // namespace kanon::proxy

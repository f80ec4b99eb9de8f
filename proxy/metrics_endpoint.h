// MetricsEndpoint: the Prometheus text endpoint (metrics.listen). Answers
// GET /metrics with Stats::prometheus(); anything else gets 404. HTTP/1.0
// style: one request per connection.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "policy/server_config.h"
#include "proxy/server_context.h"

namespace kanon::proxy {

class MetricsEndpoint {
 public:
  // Binds now; throws std::runtime_error naming the address on failure.
  MetricsEndpoint(boost::asio::io_context& io, const policy::Endpoint& listen,
                  ServerContext& context);
  void start();
  void stop();
  boost::asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

 private:
  ServerContext& context_;
  boost::asio::ip::tcp::acceptor acceptor_;
};

}  // namespace kanon::proxy

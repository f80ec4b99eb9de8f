// Server: accepts clients and runs their sessions on a pool of I/O threads,
// one io_context per thread, so a session never needs a lock.
//
// run() blocks until SIGINT/SIGTERM (or stop(), or the console's SHUTDOWN),
// then, for shutdown_lame_duck, is a lame duck: /readyz answers 503 so that
// load balancers stop sending clients, while new connections are still
// accepted and served. Then it drains: it stops accepting, ends each session
// with FATAL 57P01 as soon as it is idle between transactions, ends the rest
// the same way once shutdown_grace has passed, waits for them (at most a few
// seconds more) and returns. A second SIGINT/SIGTERM, in either phase, stops
// accepting and ends every session at once.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "policy/table_policy.h"
#include "proxy/accept_retry.h"
#include "proxy/metrics_endpoint.h"
#include "proxy/server_context.h"
#include "settings/server_config.h"

namespace kanon::proxy {

class Session;

// A service that lives as long as the server's I/O (the web console): started
// by run() once the server accepts, stopped when it stops. It runs on
// Server::io() and may use Server::context().
class AttachedService {
 public:
  virtual ~AttachedService() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
};

class Server {
 public:
  // Binds the listening socket; throws std::runtime_error naming the address
  // when that fails.
  explicit Server(settings::ServerConfig config);
  ~Server();

  // The bound address (useful with port 0).
  boost::asio::ip::tcp::endpoint local_endpoint() const;
  void run();
  // Starts the drain. Thread-safe.
  void stop();

  // For attached services (call before run()).
  boost::asio::io_context& io() { return *contexts_[0]; }
  ServerContext& context() { return context_; }
  void attach(std::unique_ptr<AttachedService> service) { attached_.push_back(std::move(service)); }

 private:
  void accept_next();
  void on_accept(std::shared_ptr<Session> session);
  // On contexts_[0]: the lame duck (or at once the drain), the drain, then
  // (grace over) ending every session now.
  void begin_shutdown();
  void begin_drain();
  void end_sessions_now();
  // Console PAUSE (on the blocking pool); see ServerContext::pause.
  bool pause(const std::function<bool()>& cancelled, size_t* sessions);
  void build_policies();
  // Re-reads the configuration file and the policies; returns a summary.
  std::string reload();

  ServerContext context_;
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
  boost::asio::ip::tcp::acceptor acceptor_;
  AcceptRetry accept_retry_;                                // on contexts_[0]
  std::unique_ptr<MetricsEndpoint> metrics_;                // on contexts_[0]
  std::vector<std::unique_ptr<AttachedService>> attached_;  // on contexts_[0]
  std::mutex sessions_mutex_;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions_;
  bool shutting_down_ = false;
  bool ending_now_ = false;
  std::chrono::steady_clock::time_point drain_deadline_;
  std::chrono::steady_clock::time_point end_deadline_;
};

}  // namespace kanon::proxy

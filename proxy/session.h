// Session: one client connection and its backend connection.
//
// Two coroutines run on the session's strand-free executor (each session
// lives on exactly one io_context thread): the client pump reads the client,
// handles start-up (SSL/GSSENC refusal, CancelRequest, the StartupMessage) and
// relays frames to the backend; the backend pump relays the backend's frames
// to the client through a BackendStream. Only the backend pump writes to the
// client while both run; the client pump writes to the client only before the
// backend pump starts or after it has finished.
#pragma once

// clang-format off
#include <utility>  // before awaitable.hpp: Boost 1.74 uses std::exchange without it
#include <boost/asio/awaitable.hpp>
// clang-format on
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string_view>

#include "proxy/backend_stream.h"
#include "proxy/receive_buffer.h"
#include "proxy/server_context.h"
#include "proxy/wire/startup_messages.h"

namespace kanon::proxy {

class Session : public std::enable_shared_from_this<Session> {
 public:
  using tcp = boost::asio::ip::tcp;

  // An over-capacity session still answers encryption and cancel requests,
  // then refuses the StartupMessage with 53300, as PostgreSQL does.
  Session(tcp::socket client, ServerContext& context, bool over_capacity);
  ~Session();

  // Starts the session's coroutines. Call once.
  void start();
  // Asks the session to end cleanly (shutdown). Thread-safe.
  void stop();

 private:
  boost::asio::awaitable<void> run_client();
  boost::asio::awaitable<void> run_backend();
  // Reads start-up packets until a StartupMessage; false if the connection
  // ended (cancel requests end it).
  boost::asio::awaitable<bool> read_startup(wire::Buffer& startup_bytes, std::string& user);
  boost::asio::awaitable<void> forward_cancel(const wire::CancelRequest& request);
  boost::asio::awaitable<bool> connect_backend();
  boost::asio::awaitable<void> relay_client_to_backend();
  // Ends the session from the client pump: stops the backend pump, sends the
  // client a FATAL error (unless sqlstate is empty) and closes both sides.
  boost::asio::awaitable<void> finish(std::string_view sqlstate, std::string_view message,
                                      bool terminate_backend);
  boost::asio::awaitable<void> send_fatal(std::string_view sqlstate, std::string_view message);
  void close_client();
  void close_backend();

  ServerContext& context_;
  tcp::socket client_;
  tcp::socket backend_;
  ReceiveBuffer from_client_;
  ReceiveBuffer from_backend_;
  BackendStream backend_stream_;
  boost::asio::steady_timer backend_done_;
  bool backend_running_ = false;
  bool client_pump_owns_client_ = false;  // backend pump must not touch the client
  bool stopping_ = false;
  const bool over_capacity_;
  std::string peer_;
};

}  // namespace kanon::proxy

// ConsoleSession: a connection to the virtual admin database, once the
// start-up handshake has routed it there (startup_handshake.h). The login
// is authenticated by the backend (relayed to admin.auth_database, so the
// admin's PostgreSQL password and method apply); then the backend
// connection is closed and kanon answers the console's commands itself
// (admin_console.h), simple query protocol only.
//
// It speaks over the Session's client leg: Session owns the sockets (the
// server stops and drains sessions through it) and hands them over after
// the handshake. The client gets a cancel key of its own whose
// CancelRequest (Ctrl-C in psql) cancels the running command.
// Runs on the session's thread; not thread-safe.
#pragma once

// clang-format off
#include <utility>  // before awaitable.hpp: Boost 1.74 uses std::exchange without it
#include <boost/asio/awaitable.hpp>
// clang-format on
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/backend_stream.h"
#include "proxy/byte_stream.h"
#include "proxy/receive_buffer.h"
#include "proxy/server_context.h"
#include "proxy/wire/startup_messages.h"

namespace kanon::proxy {

class AdminConsole;

class ConsoleSession {
 public:
  // `client` and `from_client` (what the client sent and nobody consumed
  // yet) must outlive the console session.
  ConsoleSession(ServerContext& context, ByteStream& client, ReceiveBuffer& from_client);
  ~ConsoleSession();  // forgets the console's cancel key
  ConsoleSession(const ConsoleSession&) = delete;
  ConsoleSession& operator=(const ConsoleSession&) = delete;

  // Relays the login to admin.auth_database over `backend` (connected, TLS
  // negotiated) until the backend's ReadyForQuery; the client sees the
  // authentication exchange, with the console's cancel key instead of the
  // backend's. False when the login failed (the client has been told).
  // Throws boost::system::system_error when a connection ends.
  boost::asio::awaitable<bool> authenticate(wire::StartupMessage startup, ByteStream& backend);
  // Answers commands until Terminate, until the client leaves or, once
  // `stopping` is true (and the client's reads cancelled), with FATAL 57P01.
  boost::asio::awaitable<void> serve(const bool& stopping);

 private:
  boost::asio::awaitable<wire::Buffer> run_command(AdminConsole& console, std::string sql);
  boost::asio::awaitable<void> send_fatal(std::string_view sqlstate, std::string_view message);

  ServerContext& context_;
  std::shared_ptr<const Runtime> runtime_;
  ByteStream& client_;
  ReceiveBuffer& from_client_;
  ReceiveBuffer from_backend_;
  BackendStream backend_stream_;
  // The client's cancel key and the flag its CancelRequest sets.
  std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
  std::optional<wire::BackendKeyData> key_;
};

}  // namespace kanon::proxy

#include "proxy/session.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <variant>

#include "proxy/log.h"
#include "proxy/wire/backend_messages.h"
#include "proxy/wire/error_fields.h"
#include "proxy/wire/message_types.h"

namespace kanon::proxy {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;

namespace {

constexpr uint8_t kRefuseEncryption = 'N';
// Like PostgreSQL's authentication_timeout: a client that has not sent its
// StartupMessage by then is dropped. Authentication itself is then timed by
// the server.
constexpr auto kStartupTimeout = std::chrono::seconds(60);

std::string describe_peer(const Session::tcp::socket& s) {
  boost::system::error_code ec;
  const auto ep = s.remote_endpoint(ec);
  return ec ? std::string("unknown") : ep.address().to_string() + ":" + std::to_string(ep.port());
}

void set_no_delay(Session::tcp::socket& s) {
  boost::system::error_code ec;
  s.set_option(Session::tcp::no_delay(true), ec);
}

}  // namespace

Session::Session(tcp::socket client, ServerContext& context, bool over_capacity)
    : context_(context),
      client_(std::move(client)),
      backend_(client_.get_executor()),
      backend_stream_(context.cancels),
      backend_done_(client_.get_executor(), asio::steady_timer::time_point::max()),
      over_capacity_(over_capacity),
      peer_(describe_peer(client_)) {
  if (!over_capacity_) ++context_.active_clients;
  set_no_delay(client_);
}

Session::~Session() {
  if (!over_capacity_) --context_.active_clients;
}

void Session::start() {
  asio::co_spawn(
      client_.get_executor(), [self = shared_from_this()] { return self->run_client(); },
      asio::detached);
}

void Session::stop() {
  asio::post(client_.get_executor(), [weak = weak_from_this()] {
    if (auto self = weak.lock()) {
      self->stopping_ = true;
      boost::system::error_code ec;
      self->client_.cancel(ec);
    }
  });
}

awaitable<void> Session::run_client() {
  wire::Buffer startup;
  std::string user;
  asio::steady_timer startup_timer(client_.get_executor(), kStartupTimeout);
  startup_timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (auto self = weak.lock(); self && !ec) {
      log(LogLevel::kInfo, "client {}: no start-up packet within {} s; closing", self->peer_,
          kStartupTimeout.count());
      self->close_client();
    }
  });
  try {
    const bool started = co_await read_startup(startup, user);
    startup_timer.cancel();
    if (!started) co_return close_client();
    if (over_capacity_) {
      co_await send_fatal("53300", "sorry, too many clients already");
      co_return close_client();
    }
    if (!co_await connect_backend()) co_return close_client();
    co_await asio::async_write(backend_, asio::buffer(startup), use_awaitable);
  } catch (const boost::system::system_error& e) {
    log(LogLevel::kDebug, "client {}: start-up ended: {}", peer_, e.code().message());
    close_backend();
    co_return close_client();
  }
  log(LogLevel::kDebug, "client {}: session for user '{}' started", peer_, user);
  backend_running_ = true;
  asio::co_spawn(
      client_.get_executor(), [self = shared_from_this()] { return self->run_backend(); },
      asio::detached);
  co_await relay_client_to_backend();
}

awaitable<bool> Session::read_startup(wire::Buffer& startup_bytes, std::string& user) {
  const uint32_t max = context_.config.limits.max_message_size;
  for (;;) {
    const wire::Frame frame = wire::frame_startup(from_client_.pending(), max);
    if (frame.status == wire::FrameStatus::kNeedMore) {
      if (stopping_) co_return false;
      const size_t n = co_await client_.async_read_some(from_client_.prepare(), use_awaitable);
      from_client_.commit(n);
      continue;
    }
    if (frame.status == wire::FrameStatus::kMalformed) {
      co_await send_fatal("08P01", fmt::format("invalid start-up packet: {}", frame.error));
      co_return false;
    }
    auto packet = wire::decode_startup_packet(frame.body);
    if (!packet.ok()) {
      co_await send_fatal("08P01",
                          fmt::format("invalid start-up packet: {}", packet.error().message));
      co_return false;
    }
    const wire::Bytes raw = from_client_.pending().first(frame.size);
    if (std::holds_alternative<wire::SslRequest>(packet.value()) ||
        std::holds_alternative<wire::GssEncRequest>(packet.value())) {
      from_client_.consume(frame.size);
      if (!from_client_.empty()) {
        // A client must wait for the answer; bytes after the request would
        // be read as plaintext by mistake (CVE-2021-23214's lesson).
        co_await send_fatal("08P01", "received unencrypted data after an encryption request");
        co_return false;
      }
      co_await asio::async_write(client_, asio::buffer(&kRefuseEncryption, 1), use_awaitable);
      continue;
    }
    if (const auto* cancel = std::get_if<wire::CancelRequest>(&packet.value())) {
      co_await forward_cancel(*cancel);
      co_return false;
    }
    const auto& message = std::get<wire::StartupMessage>(packet.value());
    if (const std::string* u = message.find("user")) user = *u;
    startup_bytes.assign(raw.begin(), raw.end());
    from_client_.consume(frame.size);
    co_return true;
  }
}

awaitable<void> Session::forward_cancel(const wire::CancelRequest& request) {
  const auto backend_key =
      context_.cancels.find(wire::BackendKeyData{request.process_id, request.secret_key});
  if (!backend_key) {
    log(LogLevel::kDebug, "client {}: cancel request for an unknown key ignored", peer_);
    co_return;
  }
  try {
    tcp::resolver resolver(client_.get_executor());
    const auto& b = context_.config.backend;
    const auto endpoints =
        co_await resolver.async_resolve(b.host, std::to_string(b.port), use_awaitable);
    tcp::socket socket(client_.get_executor());
    co_await asio::async_connect(socket, endpoints, use_awaitable);
    wire::Buffer out;
    wire::encode(wire::CancelRequest{backend_key->process_id, backend_key->secret_key}, out);
    co_await asio::async_write(socket, asio::buffer(out), use_awaitable);
    log(LogLevel::kInfo, "client {}: forwarded a cancel request", peer_);
  } catch (const boost::system::system_error& e) {
    log(LogLevel::kWarning, "client {}: could not forward a cancel request: {}", peer_,
        e.code().message());
  }
}

awaitable<bool> Session::connect_backend() {
  const auto& b = context_.config.backend;
  boost::system::error_code ec;
  tcp::resolver resolver(client_.get_executor());
  const auto endpoints = co_await resolver.async_resolve(b.host, std::to_string(b.port),
                                                         asio::redirect_error(use_awaitable, ec));
  if (!ec)
    co_await asio::async_connect(backend_, endpoints, asio::redirect_error(use_awaitable, ec));
  if (!ec) {
    set_no_delay(backend_);
    co_return true;
  }
  log(LogLevel::kWarning, "client {}: cannot connect to the backend {}:{}: {}", peer_, b.host,
      b.port, ec.message());
  co_await send_fatal("08006", fmt::format("kanon cannot connect to the PostgreSQL server at "
                                           "{}:{}: {}",
                                           b.host, b.port, ec.message()));
  co_return false;
}

awaitable<void> Session::relay_client_to_backend() {
  const uint32_t max = context_.config.limits.max_message_size;
  for (;;) {
    if (stopping_)
      co_return co_await finish("57P01",
                                "terminating connection because kanon is "
                                "shutting down",
                                true);
    boost::system::error_code ec;
    const size_t n = co_await client_.async_read_some(from_client_.prepare(),
                                                      asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (stopping_) continue;                  // the loop top finishes the session
      co_return co_await finish("", "", true);  // the client went away
    }
    from_client_.commit(n);
    size_t ready = 0;
    bool terminate = false;
    for (;;) {
      const wire::Frame frame = wire::frame_typed(from_client_.pending().subspan(ready), max);
      if (frame.status == wire::FrameStatus::kNeedMore) break;
      if (frame.status == wire::FrameStatus::kMalformed) {
        log(LogLevel::kWarning, "client {}: malformed message: {}", peer_, frame.error);
        co_return co_await finish(
            "08P01", fmt::format("invalid message from the client: {}", frame.error), true);
      }
      ready += frame.size;
      if (frame.type == wire::frontend::kTerminate) {
        terminate = true;
        break;
      }
    }
    if (ready == 0) continue;
    co_await asio::async_write(backend_, asio::buffer(from_client_.pending().data(), ready),
                               asio::redirect_error(use_awaitable, ec));
    // On failure the backend pump sees the loss too and reports it.
    if (ec) co_return;
    from_client_.consume(ready);
    if (terminate) co_return co_await finish("", "", false);
  }
}

awaitable<void> Session::run_backend() {
  auto self = shared_from_this();
  const uint32_t max = context_.config.limits.max_message_size;
  try {
    for (;;) {
      const size_t n = co_await backend_.async_read_some(from_backend_.prepare(), use_awaitable);
      from_backend_.commit(n);
      size_t ready = 0;
      for (;;) {
        const wire::Frame frame = wire::frame_typed(from_backend_.pending().subspan(ready), max);
        if (frame.status == wire::FrameStatus::kNeedMore) break;
        const auto verdict = frame.status == wire::FrameStatus::kMalformed
                                 ? BackendStream::Verdict::kMalformed
                                 : backend_stream_.on_frame(frame);
        if (verdict == BackendStream::Verdict::kMalformed) {
          log(LogLevel::kError, "client {}: malformed message from the backend", peer_);
          throw boost::system::system_error(asio::error::invalid_argument);
        }
        if (verdict == BackendStream::Verdict::kReplace) {
          if (ready > 0)
            co_await asio::async_write(client_, asio::buffer(from_backend_.pending().data(), ready),
                                       use_awaitable);
          from_backend_.consume(ready);
          ready = 0;
          co_await asio::async_write(client_, asio::buffer(backend_stream_.replacement()),
                                     use_awaitable);
          from_backend_.consume(frame.size);
          continue;
        }
        ready += frame.size;
      }
      if (ready == 0) continue;
      co_await asio::async_write(client_, asio::buffer(from_backend_.pending().data(), ready),
                                 use_awaitable);
      from_backend_.consume(ready);
    }
  } catch (const boost::system::system_error& e) {
    log(LogLevel::kDebug, "client {}: backend pump ended: {}", peer_, e.code().message());
  }
  backend_running_ = false;
  backend_done_.cancel();
  if (client_pump_owns_client_) co_return;
  // The backend went away on its own: tell the client unless the server did.
  if (!backend_stream_.ended_with_fatal()) {
    client_pump_owns_client_ = true;
    co_await send_fatal("08006", "kanon lost the connection to the PostgreSQL server");
  }
  close_backend();
  close_client();
}

awaitable<void> Session::finish(std::string_view sqlstate, std::string_view message,
                                bool terminate_backend) {
  client_pump_owns_client_ = true;
  if (terminate_backend && backend_.is_open()) {
    static constexpr uint8_t kTerminate[] = {wire::frontend::kTerminate, 0, 0, 0, 4};
    boost::system::error_code ec;
    co_await asio::async_write(backend_, asio::buffer(kTerminate),
                               asio::redirect_error(use_awaitable, ec));
  }
  close_backend();
  if (backend_running_) {
    boost::system::error_code ec;
    co_await backend_done_.async_wait(asio::redirect_error(use_awaitable, ec));
  }
  if (!sqlstate.empty()) co_await send_fatal(sqlstate, message);
  close_client();
}

awaitable<void> Session::send_fatal(std::string_view sqlstate, std::string_view message) {
  wire::Buffer out;
  wire::encode_error(out, "FATAL", sqlstate, message);
  boost::system::error_code ec;
  co_await asio::async_write(client_, asio::buffer(out), asio::redirect_error(use_awaitable, ec));
}

void Session::close_client() {
  boost::system::error_code ec;
  client_.shutdown(tcp::socket::shutdown_both, ec);
  client_.close(ec);
}

void Session::close_backend() {
  boost::system::error_code ec;
  backend_.close(ec);
}

}  // namespace kanon::proxy

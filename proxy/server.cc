#include "proxy/server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <functional>
#include <thread>

#include "proxy/log.h"
#include "proxy/session.h"
#include "proxy/wire/error_fields.h"

namespace kanon::proxy {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kShutdownGrace = std::chrono::seconds(5);

tcp::endpoint resolve_listen(asio::io_context& io, const policy::Endpoint& listen) {
  tcp::resolver resolver(io);
  boost::system::error_code ec;
  const auto results = resolver.resolve(listen.host, std::to_string(listen.port), ec);
  if (ec || results.empty())
    throw std::runtime_error(fmt::format("cannot resolve listen address {}:{}: {}", listen.host,
                                         listen.port, ec ? ec.message() : "no address"));
  return results.begin()->endpoint();
}

}  // namespace

Server::Server(policy::ServerConfig config)
    : contexts_([&] {
        std::vector<std::unique_ptr<asio::io_context>> v;
        const unsigned n =
            config.threads > 0 ? config.threads : std::max(1u, std::thread::hardware_concurrency());
        for (unsigned i = 0; i < n; ++i) v.push_back(std::make_unique<asio::io_context>(1));
        return v;
      }()),
      acceptor_(*contexts_[0]) {
  context_.config = std::move(config);
  const auto& listen = context_.config.listen;
  const tcp::endpoint endpoint = resolve_listen(*contexts_[0], listen);
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error(
        fmt::format("cannot listen on {}:{}: {}", listen.host, listen.port, ec.message()));
}

Server::~Server() = default;

tcp::endpoint Server::local_endpoint() const {
  return acceptor_.local_endpoint();
}

void Server::run() {
  asio::signal_set signals(*contexts_[0], SIGINT, SIGTERM);
  signals.async_wait([this](const boost::system::error_code& ec, int signo) {
    if (ec) return;
    log(LogLevel::kInfo, "received signal {}, shutting down", signo);
    begin_shutdown();
  });
  using Guard = asio::executor_work_guard<asio::io_context::executor_type>;
  std::vector<Guard> guards;
  for (auto& io : contexts_) guards.emplace_back(io->get_executor());

  const auto ep = local_endpoint();
  log(LogLevel::kInfo, "listening on {}:{} ({} I/O threads), backend {}:{}",
      ep.address().to_string(), ep.port(), contexts_.size(), context_.config.backend.host,
      context_.config.backend.port);
  accept_next();

  std::vector<std::thread> threads;
  for (size_t i = 1; i < contexts_.size(); ++i)
    threads.emplace_back([io = contexts_[i].get()] { io->run(); });

  // Shutdown releases the guards from the first context's thread.
  asio::steady_timer watch(*contexts_[0]);
  std::function<void()> poll_shutdown;
  auto deadline = std::chrono::steady_clock::time_point::max();
  poll_shutdown = [&] {
    watch.expires_after(std::chrono::milliseconds(50));
    watch.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      if (shutting_down_) {
        if (deadline == std::chrono::steady_clock::time_point::max())
          deadline = std::chrono::steady_clock::now() + kShutdownGrace;
        const bool done = context_.active_clients.load() == 0;
        if (done || std::chrono::steady_clock::now() > deadline) {
          if (!done) log(LogLevel::kWarning, "sessions did not end in time; closing anyway");
          signals.cancel();
          guards.clear();
          for (auto& io : contexts_) io->stop();
          return;
        }
      }
      poll_shutdown();
    });
  };
  poll_shutdown();
  contexts_[0]->run();
  for (auto& t : threads) t.join();
  log(LogLevel::kInfo, "stopped");
}

void Server::stop() {
  asio::post(*contexts_[0], [this] { begin_shutdown(); });
}

void Server::accept_next() {
  auto& io = *contexts_[next_context_];
  next_context_ = (next_context_ + 1) % contexts_.size();
  acceptor_.async_accept(io, [this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || shutting_down_) return;
      log(LogLevel::kWarning, "accept failed: {}", ec.message());
    } else {
      const bool over = context_.active_clients.load() >= context_.config.limits.max_clients;
      if (over)
        log(LogLevel::kWarning, "refusing a client: max_clients ({}) reached",
            context_.config.limits.max_clients);
      on_accept(std::make_shared<Session>(std::move(socket), context_, over));
    }
    if (!shutting_down_) accept_next();
  });
}

void Server::on_accept(std::shared_ptr<Session> session) {
  {
    const std::lock_guard lock(sessions_mutex_);
    std::erase_if(sessions_, [](const auto& kv) { return kv.second.expired(); });
    sessions_.emplace(session.get(), session);
  }
  session->start();
}

void Server::begin_shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  boost::system::error_code ec;
  acceptor_.close(ec);
  const std::lock_guard lock(sessions_mutex_);
  for (auto& [ptr, weak] : sessions_)
    if (auto s = weak.lock()) s->stop();
}

}  // namespace kanon::proxy

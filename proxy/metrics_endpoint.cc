#include "proxy/metrics_endpoint.h"

// clang-format off
#include <utility>  // before awaitable.hpp: Boost 1.74 uses std::exchange without it
#include <boost/asio/awaitable.hpp>
// clang-format on
#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "proxy/log.h"

namespace kanon::proxy {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

asio::awaitable<void> serve(tcp::socket socket, ServerContext& context) {
  boost::system::error_code ec;
  asio::streambuf request(16 * 1024);
  asio::steady_timer deadline(socket.get_executor(), std::chrono::seconds(10));
  deadline.async_wait([&socket](const boost::system::error_code& e) {
    if (!e) {
      boost::system::error_code ignored;
      socket.close(ignored);
    }
  });
  co_await asio::async_read_until(socket, request, "\r\n\r\n",
                                  asio::redirect_error(asio::use_awaitable, ec));
  deadline.cancel();
  if (ec) co_return;
  std::string line(asio::buffers_begin(request.data()), asio::buffers_end(request.data()));
  line = line.substr(0, line.find("\r\n"));
  std::string status = "200 OK";
  std::string body;
  if (line.rfind("GET /metrics ", 0) == 0 || line == "GET /metrics") {
    body = context.stats.prometheus(context.rewriter.cache_stats(), context.active_clients.load());
  } else {
    status = "404 Not Found";
    body = "kanon: only GET /metrics is served here\n";
  }
  const std::string response = fmt::format(
      "HTTP/1.1 {}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
      "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
      status, body.size(), body);
  co_await asio::async_write(socket, asio::buffer(response),
                             asio::redirect_error(asio::use_awaitable, ec));
  socket.shutdown(tcp::socket::shutdown_both, ec);
}

}  // namespace

MetricsEndpoint::MetricsEndpoint(asio::io_context& io, const policy::Endpoint& listen,
                                 ServerContext& context)
    : context_(context), acceptor_(io) {
  boost::system::error_code ec;
  tcp::resolver resolver(io);
  const auto results = resolver.resolve(listen.host, std::to_string(listen.port), ec);
  if (!ec && !results.empty()) {
    const auto endpoint = results.begin()->endpoint();
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(64, ec);
  }
  if (ec || results.empty())
    throw std::runtime_error(fmt::format("cannot serve metrics on {}:{}: {}", listen.host,
                                         listen.port, ec ? ec.message() : "no address"));
}

void MetricsEndpoint::start() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec) return;  // closed by stop()
    asio::co_spawn(acceptor_.get_executor(), serve(std::move(socket), context_), asio::detached);
    start();
  });
}

void MetricsEndpoint::stop() {
  boost::system::error_code ec;
  acceptor_.close(ec);
}

}  // namespace kanon::proxy

#include "web/web_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

#include "proxy/listener.h"
#include "proxy/log.h"
#include "proxy/tls_contexts.h"

namespace kanon::web {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using proxy::LogLevel;

namespace {

constexpr size_t kHeaderLimit = 8 * 1024;
constexpr uint64_t kBodyLimit = 64 * 1024;
constexpr auto kRequestTime = std::chrono::seconds(30);

// After a refusal: stop sending, then read and drop what the client still
// sends (at most 1 MiB, 5 s), so that closing does not reset the
// connection before the client has read the answer.
asio::awaitable<void> drain(beast::tcp_stream& tcp) {
  boost::system::error_code ec;
  tcp.socket().shutdown(tcp::socket::shutdown_send, ec);
  tcp.expires_after(std::chrono::seconds(5));
  char scratch[16 * 1024];
  for (size_t total = 0; !ec && total < (size_t{1} << 20);)
    total += co_await tcp.async_read_some(asio::buffer(scratch),
                                          asio::redirect_error(asio::use_awaitable, ec));
}

// Requests on one connection until it closes, fails or times out.
template <class Stream>
asio::awaitable<void> serve(Stream& stream, beast::tcp_stream& tcp, WebApp& app,
                            const std::string& peer, bool tls) {
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(kBodyLimit);
    tcp.expires_after(kRequestTime);
    boost::system::error_code ec;
    co_await http::async_read(stream, buffer, parser,
                              asio::redirect_error(asio::use_awaitable, ec));
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::eof ||
        ec == asio::error::connection_reset || ec == asio::ssl::error::stream_truncated ||
        ec == asio::error::operation_aborted)
      co_return;
    Response response;
    if (ec) {
      // Malformed or too large: answered, then the connection is closed
      // (the rest of the request is not read).
      const bool headers = ec == http::error::header_limit;
      const bool body = ec == http::error::body_limit;
      response = WebApp::refusal(headers ? http::status::request_header_fields_too_large
                                 : body  ? http::status::payload_too_large
                                         : http::status::bad_request,
                                 headers ? "request headers larger than 8 KiB"
                                 : body  ? "request body larger than 64 KiB"
                                         : fmt::format("malformed request: {}", ec.message()),
                                 11);
      proxy::log(LogLevel::kDebug, "web console: {} from {}", response.body(), peer);
    } else {
      const Request request = parser.release();
      try {
        response = co_await app.handle(request, peer, tls);
        response.keep_alive(request.keep_alive());
      } catch (const std::exception& e) {
        proxy::log(LogLevel::kError, "web console: {} {} failed: {}",
                   std::string(request.method_string()), std::string(request.target()), e.what());
        response =
            WebApp::refusal(http::status::internal_server_error,
                            "kanon could not answer this request (see its log)", request.version());
      }
    }
    tcp.expires_after(kRequestTime);
    const bool refused = !!ec;
    co_await http::async_write(stream, response, asio::redirect_error(asio::use_awaitable, ec));
    if (!ec && refused) co_await drain(tcp);
    if (ec || !response.keep_alive()) co_return;
  }
}

// Whose connection it is, for ConnectionLimits: an IPv4 address (mapped
// into IPv6 or not), or an IPv6 address's /64, which one host may fill with
// addresses of its own.
std::string client_key(const asio::ip::address& a) {
  if (a.is_v4()) return a.to_string();
  const auto v6 = a.to_v6();
  if (v6.is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, v6).to_string();
  auto bytes = v6.to_bytes();
  std::fill(bytes.begin() + 8, bytes.end(), 0);
  return asio::ip::address_v6(bytes).to_string() + "/64";
}

// `slot` gives its place back when the coroutine ends, however it ends.
asio::awaitable<void> connection(tcp::socket socket, WebApp& app,
                                 std::shared_ptr<asio::ssl::context> tls,
                                 ConnectionLimits::Slot slot) {
  const ConnectionLimits::Slot held = std::move(slot);
  boost::system::error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  const std::string peer =
      ec ? "unknown" : fmt::format("{}:{}", remote.address().to_string(), remote.port());
  if (!tls) {
    beast::tcp_stream stream(std::move(socket));
    co_await serve(stream, stream, app, peer, false);
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    co_return;
  }
  beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *tls);
  beast::get_lowest_layer(stream).expires_after(kRequestTime);
  co_await stream.async_handshake(asio::ssl::stream_base::server,
                                  asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    proxy::log(LogLevel::kDebug, "web console: TLS handshake with {} failed: {}", peer,
               ec.message());
    co_return;
  }
  co_await serve(stream, beast::get_lowest_layer(stream), app, peer, true);
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(5));
  co_await stream.async_shutdown(asio::redirect_error(asio::use_awaitable, ec));
}

}  // namespace

WebServer::WebServer(asio::io_context& io, proxy::ServerContext& context,
                     const settings::WebConfig& config)
    : io_(io),
      app_(context, config),
      tls_(proxy::make_client_tls_context(config.tls)),
      acceptor_(io),
      retry_(io.get_executor(), "web.listen") {
  proxy::open_listener(acceptor_, config.listen, "web.listen");
}

void WebServer::start() {
  const auto ep = acceptor_.local_endpoint();
  proxy::log(LogLevel::kInfo, "web console on {}://{}:{}/", tls_ ? "https" : "http",
             ep.address().to_string(), ep.port());
  asio::co_spawn(io_, accept_loop(), asio::detached);
}

void WebServer::stop() {
  boost::system::error_code ec;
  acceptor_.close(ec);
  retry_.cancel();
}

asio::awaitable<void> WebServer::accept_loop() {
  for (;;) {
    boost::system::error_code ec;
    tcp::socket socket =
        co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
    if (ec) {
      // Out of descriptors or memory: try again later, not at once.
      co_await retry_.failed(ec).async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (ec || !acceptor_.is_open()) co_return;
      continue;
    }
    retry_.accepted();
    const auto remote = socket.remote_endpoint(ec);
    const std::string client = ec ? "an unknown address" : client_key(remote.address());
    auto slot = ec ? std::nullopt : limits_->admit(client);
    if (!slot) {
      proxy::log(LogLevel::kDebug, "web console: connection from {} refused: {} open, {} from it",
                 client, limits_->size(), limits_->from(client));
      socket.close(ec);
      continue;
    }
    asio::co_spawn(io_, connection(std::move(socket), app_, tls_, std::move(*slot)),
                   asio::detached);
  }
}

}  // namespace kanon::web

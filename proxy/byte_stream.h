// ByteStream: one side of a session (client or backend) as a byte stream
// that is a plain TCP socket until a TLS handshake upgrades it. The session
// reads and writes through it without caring which it is.
#pragma once

// clang-format off
#include <utility>  // before awaitable.hpp: Boost 1.74 uses std::exchange without it
#include <boost/asio/awaitable.hpp>
// clang-format on
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <memory>
#include <string>
#include <vector>

namespace kanon::proxy {

class ByteStream {
 public:
  using tcp = boost::asio::ip::tcp;
  using error_code = boost::system::error_code;

  explicit ByteStream(tcp::socket socket) : socket_(std::move(socket)) {}
  explicit ByteStream(const boost::asio::any_io_executor& ex) : socket_(ex) {}

  tcp::socket& socket() { return socket_; }
  const tcp::socket& socket() const { return socket_; }
  bool tls() const { return ssl_ != nullptr; }
  bool is_open() const { return socket_.is_open(); }

  // Upgrades to TLS as the server (toward clients). Throws on failure.
  boost::asio::awaitable<void> accept_tls(boost::asio::ssl::context& context);
  // Upgrades to TLS as the client (toward the backend); `verify_host` is
  // checked against the certificate when non-empty. Throws on failure.
  boost::asio::awaitable<void> connect_tls(boost::asio::ssl::context& context,
                                           const std::string& verify_host, bool verify_peer);

  // Both throw boost::system::system_error on failure.
  boost::asio::awaitable<size_t> read_some(boost::asio::mutable_buffer buffer);
  boost::asio::awaitable<size_t> write(boost::asio::const_buffer buffer);
  // Several buffers in one write (a gather write on a plain socket).
  boost::asio::awaitable<size_t> write(const std::vector<boost::asio::const_buffer>& buffers);
  boost::asio::awaitable<size_t> write(const std::vector<boost::asio::const_buffer>& buffers,
                                       error_code& ec);
  // Report failure in `ec` instead.
  boost::asio::awaitable<size_t> read_some(boost::asio::mutable_buffer buffer, error_code& ec);
  boost::asio::awaitable<size_t> write(boost::asio::const_buffer buffer, error_code& ec);

  void cancel();
  void close();  // no TLS close_notify: the peer sees the connection end

 private:
  // The relay's writes on a plain socket: nearly always the send buffer
  // takes all of it, so one non-blocking sendmsg writes it and the
  // coroutine goes on without an asynchronous operation (no trip through
  // the reactor and the scheduler); Asio writes whatever is left. Throws
  // unless `ec` is given.
  boost::asio::awaitable<size_t> write_plain(const std::vector<boost::asio::const_buffer>& buffers,
                                             error_code* ec = nullptr);
  // Bytes one non-blocking sendmsg wrote (0 on any error: the caller's
  // asynchronous write meets it again and reports it).
  size_t send_now(const std::vector<boost::asio::const_buffer>& buffers);

  tcp::socket socket_;
  std::unique_ptr<boost::asio::ssl::stream<tcp::socket&>> ssl_;
};

}  // namespace kanon::proxy

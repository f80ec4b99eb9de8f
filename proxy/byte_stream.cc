#include "proxy/byte_stream.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

namespace kanon::proxy {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;

awaitable<void> ByteStream::accept_tls(asio::ssl::context& context) {
  ssl_ = std::make_unique<asio::ssl::stream<tcp::socket&>>(socket_, context);
  co_await ssl_->async_handshake(asio::ssl::stream_base::server, use_awaitable);
}

awaitable<void> ByteStream::connect_tls(asio::ssl::context& context, const std::string& verify_host,
                                        bool verify_peer) {
  ssl_ = std::make_unique<asio::ssl::stream<tcp::socket&>>(socket_, context);
  if (verify_peer) {
    ssl_->set_verify_mode(asio::ssl::verify_peer);
    if (!verify_host.empty())
      ssl_->set_verify_callback(asio::ssl::host_name_verification(verify_host));
  } else {
    ssl_->set_verify_mode(asio::ssl::verify_none);
  }
  // SNI, as libpq sends it for host names.
  if (!verify_host.empty()) SSL_set_tlsext_host_name(ssl_->native_handle(), verify_host.c_str());
  co_await ssl_->async_handshake(asio::ssl::stream_base::client, use_awaitable);
}

// Not coroutines: each returns the operation's own awaitable, so a relayed
// message costs no extra coroutine frame.
awaitable<size_t> ByteStream::read_some(asio::mutable_buffer buffer) {
  return ssl_ ? ssl_->async_read_some(buffer, use_awaitable)
              : socket_.async_read_some(buffer, use_awaitable);
}

awaitable<size_t> ByteStream::write(asio::const_buffer buffer) {
  return ssl_ ? asio::async_write(*ssl_, buffer, use_awaitable)
              : asio::async_write(socket_, buffer, use_awaitable);
}

awaitable<size_t> ByteStream::read_some(asio::mutable_buffer buffer, error_code& ec) {
  return ssl_ ? ssl_->async_read_some(buffer, asio::redirect_error(use_awaitable, ec))
              : socket_.async_read_some(buffer, asio::redirect_error(use_awaitable, ec));
}

awaitable<size_t> ByteStream::write(const std::vector<asio::const_buffer>& buffers) {
  return ssl_ ? asio::async_write(*ssl_, buffers, use_awaitable)
              : asio::async_write(socket_, buffers, use_awaitable);
}

awaitable<size_t> ByteStream::write(const std::vector<asio::const_buffer>& buffers,
                                    error_code& ec) {
  return ssl_ ? asio::async_write(*ssl_, buffers, asio::redirect_error(use_awaitable, ec))
              : asio::async_write(socket_, buffers, asio::redirect_error(use_awaitable, ec));
}

awaitable<size_t> ByteStream::write(asio::const_buffer buffer, error_code& ec) {
  return ssl_ ? asio::async_write(*ssl_, buffer, asio::redirect_error(use_awaitable, ec))
              : asio::async_write(socket_, buffer, asio::redirect_error(use_awaitable, ec));
}

void ByteStream::cancel() {
  error_code ec;
  socket_.cancel(ec);
}

void ByteStream::close() {
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

}  // namespace kanon::proxy

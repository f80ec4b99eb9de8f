#include "proxy/byte_stream.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
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
  if (ssl_) return asio::async_write(*ssl_, buffers, use_awaitable);
  return write_plain(buffers);
}

awaitable<size_t> ByteStream::write(const std::vector<asio::const_buffer>& buffers,
                                    error_code& ec) {
  if (ssl_) return asio::async_write(*ssl_, buffers, asio::redirect_error(use_awaitable, ec));
  return write_plain(buffers, &ec);
}

size_t ByteStream::send_now(const std::vector<asio::const_buffer>& buffers) {
  constexpr int kFlags = MSG_DONTWAIT | MSG_NOSIGNAL;
  if (buffers.size() == 1) {  // most batches: send, cheaper than sendmsg's iovec
    const ssize_t n = ::send(socket_.native_handle(), buffers[0].data(), buffers[0].size(), kFlags);
    return n > 0 ? static_cast<size_t>(n) : 0;
  }
  std::array<iovec, 16> iov;
  if (buffers.size() > iov.size()) return 0;
  for (size_t i = 0; i < buffers.size(); ++i)
    iov[i] = {const_cast<void*>(buffers[i].data()), buffers[i].size()};
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = buffers.size();
  const ssize_t n = ::sendmsg(socket_.native_handle(), &msg, kFlags);
  return n > 0 ? static_cast<size_t>(n) : 0;  // errors: Asio's write below meets them again
}

awaitable<size_t> ByteStream::write_plain(const std::vector<asio::const_buffer>& buffers,
                                          error_code* ec) {
  const size_t total = asio::buffer_size(buffers);
  const size_t sent = send_now(buffers);
  if (sent == total) {
    if (ec) *ec = {};
    co_return total;
  }
  std::vector<asio::const_buffer> rest;  // what the send buffer did not take
  size_t skip = sent;
  for (const auto& b : buffers) {
    if (skip >= b.size()) {
      skip -= b.size();
      continue;
    }
    rest.push_back(b + skip);
    skip = 0;
  }
  if (!ec) co_return sent + co_await asio::async_write(socket_, rest, use_awaitable);
  co_return sent +
      co_await asio::async_write(socket_, rest, asio::redirect_error(use_awaitable, *ec));
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

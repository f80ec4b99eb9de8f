// DrainedReadBuffer: the buffer of a socket read that tells Asio's epoll
// reactor when it emptied the socket, so that the next read waits for the
// reactor's next readiness event instead of trying a recv first.
//
// Asio 1.74 starts every read with a non-blocking recv unless the previous
// one returned 0 bytes. On a request/response protocol that recv finds
// nothing once per direction per round trip: a system call that fails with
// EAGAIN (bench/README.md, "Stop 16"). A read on a TCP socket that returns
// fewer bytes than asked for has emptied the socket's receive queue at that
// moment (tcp_recvmsg returns early only when the queue and the backlog are
// empty), and bytes that arrive later raise a new edge on the reactor's
// edge-triggered registration, which turns speculation back on
// (epoll_reactor::descriptor_state::perform_io) before or while the next read
// waits. So a short read may end speculation as a 0-byte read does, and the
// next read is queued without a recv and without re-arming the descriptor.
//
// Done by specialising Asio's receive operation for this buffer type, checked
// against Boost 1.74's reactor (Debian bookworm's). With any other Boost or
// reactor the type is still a valid one-buffer sequence and reads behave as
// Asio's own (`kDrainedReads` is false).
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/version.hpp>

namespace kanon::proxy {

struct DrainedReadBuffer {
  using value_type = boost::asio::mutable_buffer;
  using const_iterator = const boost::asio::mutable_buffer*;
  boost::asio::mutable_buffer buffer;
  const_iterator begin() const { return &buffer; }
  const_iterator end() const { return &buffer + 1; }
};

}  // namespace kanon::proxy

#if BOOST_VERSION == 107400 && defined(__linux__) && !defined(BOOST_ASIO_DISABLE_EPOLL) && \
    !defined(BOOST_ASIO_HAS_IO_URING)
// clang-format off
#include <boost/asio/socket_base.hpp>  // before the operation, which does not include it
#include <boost/asio/detail/reactive_socket_recv_op.hpp>
// clang-format on

namespace kanon::proxy {
inline constexpr bool kDrainedReads = true;
}

namespace boost::asio::detail {

// Used by reactive_socket_recv_op<DrainedReadBuffer, Handler, IoExecutor>,
// which needs only this constructor from its base.
template <>
class reactive_socket_recv_op_base<kanon::proxy::DrainedReadBuffer> : public reactor_op {
 public:
  reactive_socket_recv_op_base(const boost::system::error_code& success_ec, socket_type socket,
                               socket_ops::state_type state,
                               const kanon::proxy::DrainedReadBuffer& buffers,
                               socket_base::message_flags flags, func_type complete_func)
      : reactor_op(success_ec, &reactive_socket_recv_op_base::do_perform, complete_func),
        socket_(socket),
        state_(state),
        buffer_(buffers.buffer),
        flags_(flags) {}

  static status do_perform(reactor_op* base) {
    auto* o = static_cast<reactive_socket_recv_op_base*>(base);
    const bool stream = (o->state_ & socket_ops::stream_oriented) != 0;
    if (!socket_ops::non_blocking_recv1(o->socket_, o->buffer_.data(), o->buffer_.size(), o->flags_,
                                        stream, o->ec_, o->bytes_transferred_))
      return not_done;  // EAGAIN: wait for readiness
    // Asio's own rule is `bytes_transferred_ == 0` (end of stream or an
    // error); a short read has emptied the socket as well.
    if (stream && o->bytes_transferred_ < o->buffer_.size()) return done_and_exhausted;
    return done;
  }

 private:
  socket_type socket_;
  socket_ops::state_type state_;
  boost::asio::mutable_buffer buffer_;
  socket_base::message_flags flags_;
};

}  // namespace boost::asio::detail
#else
namespace kanon::proxy {
inline constexpr bool kDrainedReads = false;
}
#endif

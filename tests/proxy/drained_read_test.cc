// DrainedReadBuffer on real loopback TCP sockets: a read that empties the
// socket leaves the next read to the reactor (no recv at its start, so bytes
// that came in between stay in the kernel until the reactor reports them,
// and then arrive), a read that fills its buffer keeps Asio's recv at the
// start of the next one, and ByteStream relays through it: short reads,
// pipelined bytes and the end of the stream.
#include "proxy/drained_read.h"

#include <doctest/doctest.h>
#include <poll.h>
#include <sys/socket.h>

// clang-format off
#include <utility>  // before awaitable.hpp: Boost 1.74 uses std::exchange without it
#include <boost/asio/co_spawn.hpp>
// clang-format on
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <string>

#include "proxy/byte_stream.h"

namespace asio = boost::asio;
using asio::ip::tcp;
using kanon::proxy::ByteStream;
using kanon::proxy::DrainedReadBuffer;

namespace {

struct Pair {
  asio::io_context io{1};
  tcp::socket ours{io};  // read through Asio
  tcp::socket peer{io};  // written to synchronously

  Pair() {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    peer.connect(acceptor.local_endpoint());
    acceptor.accept(ours);
    peer.set_option(tcp::no_delay(true));
  }
  void send(const std::string& bytes) { asio::write(peer, asio::buffer(bytes)); }
  // Bytes waiting in `ours`'s receive queue, without taking them (-1: none).
  ssize_t queued() {
    char tmp[512];
    return ::recv(ours.native_handle(), tmp, sizeof tmp, MSG_PEEK | MSG_DONTWAIT);
  }
  // Waits until the kernel has queued at least `n` bytes for `ours`
  // (loopback may hand them over after the writer's call returns).
  void wait_queued(ssize_t n) {
    for (;;) {
      pollfd fd{ours.native_handle(), POLLIN, 0};
      REQUIRE(::poll(&fd, 1, -1) == 1);
      if (queued() >= n) return;
    }
  }
};

}  // namespace

TEST_CASE("DrainedReadBuffer: after a short read the next read starts without a recv") {
  if (!kanon::proxy::kDrainedReads) {
    MESSAGE("this Boost is not the one the specialisation was checked against: reads are Asio's");
    return;
  }
  Pair p;
  char buf[100];
  size_t got = 0;
  boost::system::error_code ec;
  auto read = [&] {
    p.ours.async_read_some(DrainedReadBuffer{asio::buffer(buf)},
                           [&](const boost::system::error_code& e, size_t n) {
                             ec = e;
                             got = n;
                           });
  };

  p.send("0123456789");
  p.wait_queued(10);
  read();  // Asio's recv at the start finds the ten bytes: a short read
  p.io.run();
  p.io.restart();
  CHECK_FALSE(ec);
  CHECK(got == 10);
  CHECK(std::string(buf, got) == "0123456789");

  p.send("abcde");
  p.wait_queued(5);
  read();                  // initiated here, synchronously: the socket was emptied, so no recv
  CHECK(p.queued() == 5);  // Asio's own read would have taken them already
  p.io.run();              // the reactor reports the bytes that came
  p.io.restart();
  CHECK_FALSE(ec);
  CHECK(got == 5);
  CHECK(std::string(buf, got) == "abcde");

  // A read that fills its buffer may have left bytes behind: the next one
  // starts with a recv, as Asio's do.
  p.send(std::string(150, 'x'));
  p.wait_queued(150);
  read();
  p.io.run();
  p.io.restart();
  CHECK(got == 100);
  read();
  CHECK(p.queued() == -1);  // the recv at the start took the other 50
  p.io.run();
  p.io.restart();
  CHECK(got == 50);
}

TEST_CASE("ByteStream: reads through DrainedReadBuffer deliver every byte and the end") {
  Pair p;
  ByteStream stream(std::move(p.ours));
  std::string received;
  std::string error;
  // Bytes the peer sends while the reader waits, after short reads, in
  // pieces larger than the buffer, and then the end of the stream.
  const std::string big(5000, 'b');
  asio::co_spawn(
      p.io,
      [&]() -> asio::awaitable<void> {
        char buf[256];
        boost::system::error_code ec;
        for (;;) {
          const size_t n = co_await stream.read_some(asio::buffer(buf), ec);
          if (ec) {
            error = ec == asio::error::eof ? "eof" : ec.message();
            co_return;
          }
          received.append(buf, n);
          if (received == "hello") p.send("world");  // comes while the next read waits
          if (received == "helloworld") p.send(big);
          if (received.size() == 10 + big.size()) p.peer.shutdown(tcp::socket::shutdown_send);
        }
      },
      asio::detached);
  p.send("hello");
  p.io.run();
  CHECK(error == "eof");
  CHECK(received == "helloworld" + big);
}

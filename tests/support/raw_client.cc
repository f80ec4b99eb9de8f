#include "tests/support/raw_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <utility>

#include "proxy/wire/error_fields.h"
#include "proxy/wire/framing.h"

namespace kanon::testing {

RawClient::RawClient(uint16_t port) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("RawClient: connect failed");
}

RawClient::~RawClient() {
  close(fd_);
}

void RawClient::send(const std::vector<uint8_t>& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the peer may already have closed; tests read the outcome
    sent += static_cast<size_t>(n);
  }
}

void RawClient::send_and_end(const std::vector<uint8_t>& bytes) {
  const int on = 1;
  if (setsockopt(fd_, IPPROTO_TCP, TCP_CORK, &on, sizeof on) != 0)
    throw std::runtime_error("RawClient: TCP_CORK failed");
  send(bytes);
  // With data still corked, the kernel sets FIN on that segment.
  if (shutdown(fd_, SHUT_WR) != 0) throw std::runtime_error("RawClient: shutdown failed");
}

bool RawClient::receive(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
  if (left <= 0 || closed_) return false;
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(left)) <= 0) return true;
  uint8_t buf[8192];
  const ssize_t n = recv(fd_, buf, sizeof buf, 0);
  if (n <= 0) {
    closed_ = true;
  } else {
    buffered_.insert(buffered_.end(), buf, buf + n);
  }
  return true;
}

std::vector<uint8_t> RawClient::read_until_close(int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (receive(deadline)) {
  }
  return std::exchange(buffered_, {});
}

std::vector<uint8_t> RawClient::read_until_message(char type, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  do {
    size_t off = 0;
    for (;;) {
      const auto frame = wire::frame_typed(wire::Bytes(buffered_).subspan(off), 1u << 30);
      if (frame.status != wire::FrameStatus::kFrame) break;
      off += frame.size;
      if (frame.type == type) {
        std::vector<uint8_t> out(buffered_.begin(), buffered_.begin() + off);
        buffered_.erase(buffered_.begin(), buffered_.begin() + off);
        return out;
      }
    }
  } while (receive(deadline));
  return {};
}

std::string first_error_sqlstate(const std::vector<uint8_t>& bytes) {
  size_t off = 0;
  for (;;) {
    const auto frame = wire::frame_typed(wire::Bytes(bytes).subspan(off), 1u << 30);
    if (frame.status != wire::FrameStatus::kFrame) return "";
    off += frame.size;
    if (frame.type != 'E') continue;
    auto error = wire::decode_error_response(frame.body);
    return error.ok() ? std::string(error.value().field('C')) : "";
  }
}

}  // namespace kanon::testing

// RawClient: a plain TCP connection for sending arbitrary bytes to the proxy
// and reading what comes back, for tests of malformed input.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace kanon::testing {

class RawClient {
 public:
  explicit RawClient(uint16_t port);
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void send(const std::vector<uint8_t>& bytes);
  void send(const std::string& bytes) { send(std::vector<uint8_t>(bytes.begin(), bytes.end())); }
  // Sends `bytes` and ends the sending side (shutdown(SHUT_WR)) in one TCP
  // segment: the socket is corked while the bytes are queued, so the FIN is
  // tacked onto them. The peer sees the bytes and the end of the stream with
  // one readiness edge. Reading stays open.
  void send_and_end(const std::vector<uint8_t>& bytes);
  // Reads until the peer closes or `seconds` pass; returns what arrived and
  // sets closed() accordingly.
  std::vector<uint8_t> read_until_close(int seconds);
  // Reads until a message of `type` has fully arrived (typed framing).
  std::vector<uint8_t> read_until_message(char type, int seconds);
  bool closed() const { return closed_; }

 private:
  // Waits for bytes until `deadline`; false once the deadline passed or the
  // peer closed.
  bool receive(std::chrono::steady_clock::time_point deadline);

  int fd_ = -1;
  bool closed_ = false;
  std::vector<uint8_t> buffered_;
};

// The SQLSTATE ('C' field) of the first ErrorResponse in `bytes`, or "".
std::string first_error_sqlstate(const std::vector<uint8_t>& bytes);

}  // namespace kanon::testing

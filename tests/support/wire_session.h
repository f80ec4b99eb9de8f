// WireSession: a byte-level session of one login, for pipelines libpq would
// not send: the start-up message without a password (trust), then whole
// frontend messages encoded by the proxy's own wire code.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "proxy/wire/frontend_messages.h"
#include "proxy/wire/startup_messages.h"
#include "tests/support/raw_client.h"

namespace kanon::testing {

class WireSession {
 public:
  using Parameters = std::vector<std::pair<std::string, std::string>>;
  // Throws when no ReadyForQuery ends the start-up within 10 s.
  explicit WireSession(uint16_t port,
                       Parameters parameters = {{"user", "analyst"}, {"database", "postgres"}});

  template <class... M>
  void send(const M&... messages) {
    wire::Buffer b;
    (wire::encode(messages, b), ...);
    client_.send(b);
  }
  // Bytes as they are (messages wire:: has no encoder for, e.g. CopyData).
  void send_raw(const std::string& bytes) { client_.send(bytes); }
  // The bytes up to and including the next message of `type`; empty when
  // none arrived within `seconds`.
  std::string until(char type, int seconds = 10);

 private:
  RawClient client_;
};

// The messages of `bytes` in order, as their type byte; an ErrorResponse as
// "E:<SQLSTATE>", a ReadyForQuery as "Z:<status>". NoticeResponse and
// ParameterStatus are left out (when they come is no part of what a test
// asserts).
std::vector<std::string> message_summary(const std::string& bytes);

}  // namespace kanon::testing

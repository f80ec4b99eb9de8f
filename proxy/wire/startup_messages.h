// Start-up packets: the untyped messages a client may send before the first
// typed message (StartupMessage, SSLRequest, GSSENCRequest, CancelRequest).
//
// decode_startup_packet() takes the body that frame_startup() returns (after
// the length field) and tells the four apart by their leading Int32 code.
// encode() appends a whole packet, length field included.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "proxy/wire/framing.h"
#include "proxy/wire/message_types.h"
#include "proxy/wire/wire_result.h"

namespace kanon::wire {

struct StartupMessage {
  // Major version in the high 16 bits (always 3 once decoded), minor in the
  // low 16. A minor version the proxy does not speak is not an error here:
  // it is answered with NegotiateProtocolVersion.
  uint32_t protocol_version = kProtocolVersion3;
  // In the order sent. Decoded messages have non-empty, distinct names and a
  // "user" parameter. REQUIRES for encode: names non-empty.
  std::vector<std::pair<std::string, std::string>> parameters;

  // The value of parameter `name`, or nullptr.
  const std::string* find(std::string_view name) const;

  bool operator==(const StartupMessage&) const = default;
};

struct SslRequest {
  bool operator==(const SslRequest&) const = default;
};

struct GssEncRequest {
  bool operator==(const GssEncRequest&) const = default;
};

struct CancelRequest {
  uint32_t process_id = 0;
  uint32_t secret_key = 0;
  bool operator==(const CancelRequest&) const = default;
};

using StartupPacket = std::variant<StartupMessage, SslRequest, GssEncRequest, CancelRequest>;

// Rejects protocol versions other than 3.x, unknown request codes, a
// parameter list that is not terminated by an empty name, duplicate
// parameter names (the proxy and the server must not disagree about which
// one counts) and a missing or empty "user" parameter.
Result<StartupPacket> decode_startup_packet(Bytes body);

void encode(const StartupMessage& m, Buffer& out);
void encode(const SslRequest& m, Buffer& out);
void encode(const GssEncRequest& m, Buffer& out);
void encode(const CancelRequest& m, Buffer& out);
void encode(const StartupPacket& m, Buffer& out);

}  // namespace kanon::wire

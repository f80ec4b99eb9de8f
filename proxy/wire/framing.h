// Framing: splitting a byte stream into protocol messages without copying.
//
// Pure functions over byte spans. The length field is checked against the
// caller's maximum before anything else is read, so a hostile length never
// causes a large allocation or a read past the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace kanon::wire {

using Bytes = std::span<const uint8_t>;
// Encoders append whole frames to a Buffer.
using Buffer = std::vector<uint8_t>;

enum class FrameStatus : uint8_t { kNeedMore, kFrame, kMalformed };

struct Frame {
  FrameStatus status = FrameStatus::kNeedMore;
  // For typed messages the type byte; 0 for start-up packets.
  char type = 0;
  // The message body (after the length field); valid only for kFrame.
  Bytes body;
  // Bytes the whole frame occupies in the input (type + length + body).
  size_t size = 0;
  // For kMalformed: a static sentence saying what is wrong.
  std::string_view error;
};

// A typed message: 1 type byte, int32 length (counting itself), body.
Frame frame_typed(Bytes input, uint32_t max_message_size);

// A typed message's bytes as they came (type, length, body).
// REQUIRES: `frame` from frame_typed, status kFrame, its input still there.
inline Bytes whole(const Frame& frame) {
  return {frame.body.data() - 5, frame.body.size() + 5};
}

// An untyped start-up packet (StartupMessage, SSLRequest, GSSENCRequest,
// CancelRequest): int32 length (counting itself), body.
Frame frame_startup(Bytes input, uint32_t max_message_size);

}  // namespace kanon::wire

#include "proxy/wire/framing.h"

namespace kanon::wire {
namespace {

uint32_t read_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

Frame malformed(std::string_view why) {
  Frame f;
  f.status = FrameStatus::kMalformed;
  f.error = why;
  return f;
}

}  // namespace

Frame frame_typed(Bytes input, uint32_t max_message_size) {
  if (input.size() < 5) return {};
  const uint32_t length = read_u32(input.data() + 1);
  if (length < 4) return malformed("message length is smaller than its own length field");
  if (length > max_message_size) return malformed("message length exceeds the configured maximum");
  const size_t total = size_t{length} + 1;
  if (input.size() < total) return {};
  Frame f;
  f.status = FrameStatus::kFrame;
  f.type = static_cast<char>(input[0]);
  f.body = input.subspan(5, length - 4);
  f.size = total;
  return f;
}

Frame frame_startup(Bytes input, uint32_t max_message_size) {
  if (input.size() < 4) return {};
  const uint32_t length = read_u32(input.data());
  if (length < 8) return malformed("start-up packet is shorter than 8 bytes");
  // Start-up packets are small; PostgreSQL itself caps them at 10000 bytes.
  if (length > max_message_size || length > 10000)
    return malformed("start-up packet length exceeds the maximum");
  if (input.size() < length) return {};
  Frame f;
  f.status = FrameStatus::kFrame;
  f.body = input.subspan(4, length - 4);
  f.size = length;
  return f;
}

}  // namespace kanon::wire

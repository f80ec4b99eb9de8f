#include "tests/support/wire_session.h"

#include <stdexcept>

#include "proxy/wire/backend_messages.h"
#include "proxy/wire/framing.h"

namespace kanon::testing {

WireSession::WireSession(uint16_t port, Parameters parameters) : client_(port) {
  wire::StartupMessage m;
  m.parameters = std::move(parameters);
  wire::Buffer b;
  wire::encode(m, b);
  client_.send(b);
  if (client_.read_until_message('Z', 10).empty())
    throw std::runtime_error("no ReadyForQuery after the start-up");
}

std::string WireSession::until(char type, int seconds) {
  const auto bytes = client_.read_until_message(type, seconds);
  return std::string(bytes.begin(), bytes.end());
}

std::vector<std::string> message_summary(const std::string& bytes) {
  std::vector<std::string> out;
  wire::Bytes rest(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  while (!rest.empty()) {
    const auto f = wire::frame_typed(rest, 1u << 30);
    if (f.status != wire::FrameStatus::kFrame) throw std::runtime_error("a malformed message");
    rest = rest.subspan(f.size);
    if (f.type == 'N' || f.type == 'S') continue;
    std::string s(1, f.type);
    if (f.type == 'E') {
      auto e = wire::decode_error_response(f.body);
      if (!e.ok()) throw std::runtime_error("a malformed ErrorResponse");
      s.push_back(':');
      s.append(e.value().field('C'));
    } else if (f.type == 'Z' && !f.body.empty()) {
      s.push_back(':');
      s.push_back(static_cast<char>(f.body[0]));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace kanon::testing

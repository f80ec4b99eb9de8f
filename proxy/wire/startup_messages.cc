#include "proxy/wire/startup_messages.h"

#include "proxy/wire/byte_reader.h"
#include "proxy/wire/byte_writer.h"
#include "proxy/wire/field_codec.h"

namespace kanon::wire {
namespace {

constexpr uint32_t kRequestMajor = 1234;

Result<StartupPacket> decode_startup_message(uint32_t version, ByteReader& r) {
  constexpr std::string_view kName = "StartupMessage";
  const uint32_t major = version >> 16;
  if (major != 3)
    return wire_error(kName, "protocol version ", major, ".", version & 0xffff,
                      " is not supported; only protocol 3 is");
  StartupMessage m;
  m.protocol_version = version;
  for (;;) {
    std::string name;
    if (!r.read_cstring(name))
      return wire_error(kName, "parameter list does not end with an empty name");
    if (name.empty()) break;
    if (m.find(name) != nullptr)
      return wire_error(kName, "parameter \"", name, "\" is given more than once");
    std::string value;
    if (!r.read_cstring(value))
      return wire_error(kName, "value of parameter \"", name, "\" is not NUL-terminated");
    m.parameters.emplace_back(std::move(name), std::move(value));
  }
  if (!r.at_end()) return trailing_bytes(kName, r.remaining());
  const std::string* user = m.find("user");
  if (user == nullptr) return wire_error(kName, "the required parameter \"user\" is missing");
  if (user->empty()) return wire_error(kName, "the parameter \"user\" is empty");
  return StartupPacket{std::move(m)};
}

void encode_request(uint32_t code, Buffer& out) {
  ByteWriter w(out);
  w.begin_startup();
  w.write_u32(code);
  w.end_message();
}

}  // namespace

const std::string* StartupMessage::find(std::string_view name) const {
  for (const auto& [key, value] : parameters)
    if (key == name) return &value;
  return nullptr;
}

Result<StartupPacket> decode_startup_packet(Bytes body) {
  ByteReader r(body);
  // Filled in place and returned by name: GCC 12 with sanitizers reports a
  // false maybe-uninitialized when a temporary StartupPacket holding an
  // empty struct is moved into the Result.
  StartupPacket packet;
  uint32_t code;
  if (!r.read_u32(code)) return WireError{"start-up packet: too short to hold a request code"};
  switch (code) {
    case kSslRequestCode:
      if (!r.at_end()) return trailing_bytes("SSLRequest", r.remaining());
      packet.emplace<SslRequest>();
      return packet;
    case kGssEncRequestCode:
      if (!r.at_end()) return trailing_bytes("GSSENCRequest", r.remaining());
      packet.emplace<GssEncRequest>();
      return packet;
    case kCancelRequestCode: {
      CancelRequest c;
      if (!r.read_u32(c.process_id) || !r.read_u32(c.secret_key))
        return WireError{"CancelRequest: message ends before the process ID and secret key"};
      if (!r.at_end()) return trailing_bytes("CancelRequest", r.remaining());
      packet.emplace<CancelRequest>(c);
      return packet;
    }
    default:
      break;
  }
  if ((code >> 16) == kRequestMajor)
    return wire_error("start-up packet", "unknown request code ", code >> 16, ".", code & 0xffff);
  return decode_startup_message(code, r);
}

void encode(const StartupMessage& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_startup();
  w.write_u32(m.protocol_version);
  for (const auto& [name, value] : m.parameters) {
    w.write_cstring(name);
    w.write_cstring(value);
  }
  w.write_u8(0);
  w.end_message();
}

void encode(const SslRequest&, Buffer& out) {
  encode_request(kSslRequestCode, out);
}
void encode(const GssEncRequest&, Buffer& out) {
  encode_request(kGssEncRequestCode, out);
}

void encode(const CancelRequest& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_startup();
  w.write_u32(kCancelRequestCode);
  w.write_u32(m.process_id);
  w.write_u32(m.secret_key);
  w.end_message();
}

void encode(const StartupPacket& m, Buffer& out) {
  std::visit([&out](const auto& packet) { encode(packet, out); }, m);
}

}  // namespace kanon::wire

#include "proxy/wire/startup_messages.h"

#include <doctest/doctest.h>

#include "tests/wire/wire_test_support.h"

using namespace kanon::wire;
using namespace kanon::wire::testing;
using namespace std::literals;

namespace {

Result<StartupPacket> decode_frame(const Buffer& frame) {
  const Frame f = frame_startup(frame, kMaxMessage);
  REQUIRE(f.status == FrameStatus::kFrame);
  const Buffer body(f.body.begin(), f.body.end());
  return decode_startup_packet(body);
}

template <class T>
void check_round_trip(const T& m) {
  const Buffer frame = encoded(m);
  check_framing(frame, /*startup=*/true);
  const auto r = decode_frame(frame);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? ""s : r.error().message));
  REQUIRE(std::holds_alternative<T>(r.value()));
  CHECK(std::get<T>(r.value()) == m);
  Buffer again;
  encode(r.value(), again);
  CHECK(again == frame);
}

std::string error_of(const Buffer& body) {
  const auto r = decode_startup_packet(body);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

// A body: the version code then the parameter bytes as given.
Buffer startup_body(std::string_view params) {
  return raw("\0\x03\0\0"s + std::string(params));
}

}  // namespace

TEST_CASE("StartupMessage round trip") {
  StartupMessage m;
  m.parameters = {{"user", "alice"}, {"database", "shop"}, {"application_name", ""}};
  check_round_trip(m);
  CHECK(*m.find("database") == "shop");
  CHECK(m.find("options") == nullptr);
}

TEST_CASE("StartupMessage with a newer minor version decodes; the proxy negotiates it") {
  StartupMessage m;
  m.protocol_version = (3u << 16) | 2;
  m.parameters = {{"user", "u"}, {"_pq_.extension", "on"}};
  check_round_trip(m);
}

TEST_CASE("SSLRequest, GSSENCRequest and CancelRequest round trip") {
  check_round_trip(SslRequest{});
  check_round_trip(GssEncRequest{});
  check_round_trip(CancelRequest{1234, 0xdeadbeef});
}

TEST_CASE("start-up packets have the bytes the protocol documentation gives") {
  CHECK(encoded(SslRequest{}) == raw("\0\0\0\x08\x04\xd2\x16\x2f"sv));
  CHECK(encoded(GssEncRequest{}) == raw("\0\0\0\x08\x04\xd2\x16\x30"sv));
  CHECK(encoded(CancelRequest{0x01020304, 0x0a0b0c0d}) ==
        raw("\0\0\0\x10\x04\xd2\x16\x2e\x01\x02\x03\x04\x0a\x0b\x0c\x0d"sv));
  StartupMessage m;
  m.parameters = {{"user", "bob"}, {"database", "db"}};
  CHECK(encoded(m) == raw("\0\0\0\x1e\0\x03\0\0"
                          "user\0bob\0database\0db\0\0"sv));
}

TEST_CASE("two start-up packets in one buffer frame one after the other") {
  Buffer both = encoded(SslRequest{});
  StartupMessage m;
  m.parameters = {{"user", "u"}};
  encode(m, both);
  const Frame f1 = frame_startup(both, kMaxMessage);
  REQUIRE(f1.status == FrameStatus::kFrame);
  CHECK(f1.size == 8);
  const Frame f2 = frame_startup(Bytes(both).subspan(f1.size), kMaxMessage);
  REQUIRE(f2.status == FrameStatus::kFrame);
  CHECK(f1.size + f2.size == both.size());
  CHECK(decode_startup_packet(f2.body).ok());
}

TEST_CASE("StartupMessage rejects a missing or empty user") {
  CHECK(error_of(startup_body("database\0db\0\0"sv)) ==
        "StartupMessage: the required parameter \"user\" is missing");
  CHECK(error_of(startup_body("\0"sv)) ==
        "StartupMessage: the required parameter \"user\" is missing");
  CHECK(error_of(startup_body("user\0\0\0"sv)) ==
        "StartupMessage: the parameter \"user\" is empty");
}

TEST_CASE("StartupMessage rejects a duplicated parameter") {
  CHECK(error_of(startup_body("user\0a\0user\0b\0\0"sv)) ==
        "StartupMessage: parameter \"user\" is given more than once");
}

TEST_CASE("StartupMessage rejects protocol versions other than 3") {
  CHECK(error_of(raw("\0\x02\0\0user\0a\0\0"sv)) ==
        "StartupMessage: protocol version 2.0 is not supported; only protocol 3 is");
  CHECK(error_of(raw("\0\x04\0\0user\0a\0\0"sv)) ==
        "StartupMessage: protocol version 4.0 is not supported; only protocol 3 is");
}

TEST_CASE("start-up packet with an unknown request code is rejected") {
  CHECK(error_of(raw("\x04\xd2\x16\x31"sv)) == "start-up packet: unknown request code 1234.5681");
  CHECK(error_of(raw("\x04\xd2"sv)) == "start-up packet: too short to hold a request code");
}

TEST_CASE("start-up packets cut short or with trailing bytes are rejected") {
  StartupMessage m;
  m.parameters = {{"user", "alice"}, {"database", "shop"}};
  for (const Buffer& frame : {encoded(m), encoded(CancelRequest{7, 9})}) {
    const Frame f = frame_startup(frame, kMaxMessage);
    REQUIRE(f.status == FrameStatus::kFrame);
    for (size_t n = 0; n < f.body.size(); ++n) {
      const Buffer cut(f.body.begin(), f.body.begin() + static_cast<ptrdiff_t>(n));
      CHECK_MESSAGE(!decode_startup_packet(cut).ok(), "accepted a body cut to ", n);
    }
    Buffer longer(f.body.begin(), f.body.end());
    longer.push_back(0);
    CHECK_FALSE(decode_startup_packet(longer).ok());
  }
  CHECK(error_of(startup_body("user\0a\0"sv)) ==
        "StartupMessage: parameter list does not end with an empty name");
  CHECK(error_of(startup_body("user\0a"sv)) ==
        "StartupMessage: value of parameter \"user\" is not NUL-terminated");
  CHECK(error_of(startup_body("user\0a\0\0x"sv)) ==
        "StartupMessage: 1 unexpected byte after the end of the message");
  CHECK(error_of(raw("\x04\xd2\x16\x2f\0"sv)) ==
        "SSLRequest: 1 unexpected byte after the end of the message");
  CHECK(error_of(raw("\x04\xd2\x16\x30\0\0"sv)) ==
        "GSSENCRequest: 2 unexpected bytes after the end of the message");
  CHECK(error_of(raw("\x04\xd2\x16\x2e\0\0\0\x01"sv)) ==
        "CancelRequest: message ends before the process ID and secret key");
}

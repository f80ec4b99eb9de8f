#include "proxy/backend_stream.h"

#include <doctest/doctest.h>

#include "proxy/wire/backend_messages.h"
#include "proxy/wire/error_fields.h"

using namespace kanon;
using proxy::BackendStream;

namespace {

// Frames the single message in `bytes`.
wire::Frame frame_of(const wire::Buffer& bytes) {
  const wire::Frame f = wire::frame_typed(wire::Bytes(bytes), 1 << 20);
  REQUIRE(f.status == wire::FrameStatus::kFrame);
  REQUIRE(f.size == bytes.size());
  return f;
}

}  // namespace

TEST_CASE("BackendKeyData is replaced by a registered client key") {
  proxy::CancelRegistry registry;
  wire::BackendKeyData client_key;
  {
    BackendStream stream(registry);
    wire::Buffer key;
    wire::encode(wire::BackendKeyData{4242, 0xdeadbeef}, key);
    REQUIRE(stream.on_frame(frame_of(key)) == BackendStream::Verdict::kReplace);
    auto sent = wire::decode_backend_key_data(frame_of(stream.replacement()).body);
    REQUIRE(sent.ok());
    client_key = sent.value();
    CHECK_FALSE((client_key.process_id == 4242 && client_key.secret_key == 0xdeadbeef));
    const auto found = registry.find(client_key);
    REQUIRE(found.has_value());
    CHECK(found->process_id == 4242);
    CHECK(found->secret_key == 0xdeadbeef);
    // A second key from the same backend is a protocol violation.
    CHECK(stream.on_frame(frame_of(key)) == BackendStream::Verdict::kMalformed);
  }
  // The key is forgotten with the session.
  CHECK_FALSE(registry.find(client_key).has_value());
  CHECK(registry.size() == 0);
}

TEST_CASE("ReadyForQuery ends start-up and FATAL errors are remembered") {
  proxy::CancelRegistry registry;
  BackendStream stream(registry);
  CHECK(stream.phase() == BackendStream::Phase::kStartup);
  wire::Buffer ready;
  wire::encode(wire::ReadyForQuery{'I'}, ready);
  CHECK(stream.on_frame(frame_of(ready)) == BackendStream::Verdict::kForward);
  CHECK(stream.phase() == BackendStream::Phase::kReady);

  wire::Buffer error;
  wire::encode_error(error, "ERROR", "42P01", "relation does not exist");
  CHECK(stream.on_frame(frame_of(error)) == BackendStream::Verdict::kForward);
  CHECK_FALSE(stream.ended_with_fatal());
  wire::Buffer fatal;
  wire::encode_error(fatal, "FATAL", "57P01", "terminating connection");
  CHECK(stream.on_frame(frame_of(fatal)) == BackendStream::Verdict::kForward);
  CHECK(stream.ended_with_fatal());
}

TEST_CASE("a malformed ErrorResponse from the backend is reported") {
  proxy::CancelRegistry registry;
  BackendStream stream(registry);
  const wire::Buffer bad{'E', 0, 0, 0, 6, 'S', 'x'};  // field without terminator
  CHECK(stream.on_frame(frame_of(bad)) == BackendStream::Verdict::kMalformed);
}

TEST_CASE("client keys are unique and unguessable across many sessions") {
  proxy::CancelRegistry registry;
  std::vector<wire::BackendKeyData> keys;
  for (uint32_t i = 0; i < 1000; ++i) keys.push_back(registry.add({i, i}));
  CHECK(registry.size() == 1000);
  for (uint32_t i = 0; i < 1000; ++i) {
    const auto found = registry.find(keys[i]);
    REQUIRE(found.has_value());
    CHECK(found->process_id == i);
    CHECK(keys[i].process_id > 0);
    CHECK(keys[i].process_id < 0x80000000u);
  }
  // Keys are not sequential: neighbours differ in their secret.
  int equal_secrets = 0;
  for (size_t i = 1; i < keys.size(); ++i)
    equal_secrets += keys[i].secret_key == keys[i - 1].secret_key;
  CHECK(equal_secrets == 0);
}

TEST_CASE("client_encoding and server_encoding as reported; ReadyForQuery counted") {
  proxy::CancelRegistry registry;
  BackendStream stream(registry);
  const auto feed = [&](const auto& message) {
    wire::Buffer b;
    wire::encode(message, b);
    REQUIRE(stream.on_frame(frame_of(b)) == BackendStream::Verdict::kForward);
  };
  CHECK(stream.client_encoding().empty());
  CHECK(stream.ready_count() == 0);
  feed(wire::ParameterStatus{"server_encoding", "UTF8"});
  feed(wire::ParameterStatus{"client_encoding", "LATIN1"});
  feed(wire::ReadyForQuery{'I'});
  CHECK(stream.server_encoding() == "UTF8");
  CHECK(stream.client_encoding() == "LATIN1");
  CHECK(stream.startup_client_encoding() == "LATIN1");
  CHECK(stream.ready_count() == 1);
  CHECK(stream.last_idle_ready() == 1);
  // SET client_encoding in a transaction block.
  feed(wire::ParameterStatus{"client_encoding", "WIN1252"});
  feed(wire::ReadyForQuery{'T'});
  CHECK(stream.client_encoding() == "WIN1252");
  CHECK(stream.startup_client_encoding() == "LATIN1");  // what RESET returns to
  CHECK(stream.ready_count() == 2);
  CHECK(stream.last_idle_ready() == 1);
  feed(wire::ReadyForQuery{'I'});
  CHECK(stream.ready_count() == 3);
  CHECK(stream.last_idle_ready() == 3);
}

#include "proxy/wire/frontend_messages.h"

#include <doctest/doctest.h>

#include "tests/wire/wire_test_support.h"

using namespace kanon::wire;
using namespace kanon::wire::testing;
using namespace std::literals;

namespace {

Bind sample_bind() {
  Bind m;
  m.portal = "p1";
  m.statement = "s1";
  m.param_formats = {kFormatText, kFormatBinary, kFormatText};
  m.params = {Value{{'4', '2'}}, std::nullopt, Value{std::vector<uint8_t>{}}};
  m.result_formats = {kFormatBinary};
  return m;
}

FunctionCall sample_function_call() {
  FunctionCall m;
  m.function_oid = 1598;
  m.arg_formats = {kFormatBinary};
  m.args = {Value{{0, 0, 0, 7}}, std::nullopt};
  m.result_format = kFormatBinary;
  return m;
}

std::string bind_error(std::string_view body) {
  const auto r = decode_bind(Bytes(raw(body)));
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

}  // namespace

TEST_CASE("Query round trip and bytes") {
  const Query m{"SELECT 1"};
  CHECK(round_trip(m, decode_query) == raw("Q\0\0\0\x0dSELECT 1\0"sv));
  round_trip(Query{""}, decode_query);
  round_trip_frontend_dispatch(m);
  check_rejects_damage(m, decode_query, "Query");
}

TEST_CASE("Parse round trip") {
  const Parse m{"stmt", "SELECT $1::int, $2", {23, 0}};
  round_trip(m, decode_parse);
  round_trip(Parse{}, decode_parse);
  round_trip_frontend_dispatch(m);
  check_rejects_damage(m, decode_parse, "Parse");
}

TEST_CASE("Bind round trip and bytes") {
  const Bind m = sample_bind();
  round_trip(m, decode_bind);
  round_trip(Bind{}, decode_bind);
  round_trip_frontend_dispatch(m);
  check_rejects_damage(m, decode_bind, "Bind");
  Bind b;
  b.statement = "s1";
  b.param_formats = {kFormatBinary};
  b.params = {Value{{0, 0, 0, 42}}, std::nullopt};
  CHECK(round_trip(b, decode_bind) == raw("B\0\0\0\x1c"
                                          "\0s1\0"
                                          "\0\x01\0\x01"
                                          "\0\x02"
                                          "\0\0\0\x04\0\0\0\x2a"
                                          "\xff\xff\xff\xff"
                                          "\0\0"sv));
  CHECK(b.param_format(0) == kFormatBinary);
  CHECK(b.param_format(1) == kFormatBinary);
  CHECK(m.param_format(1) == kFormatBinary);
  CHECK(m.param_format(2) == kFormatText);
  CHECK(Bind{}.param_format(0) == kFormatText);
}

TEST_CASE("Bind errors say which parameter is wrong") {
  CHECK(bind_error("\0\0\0\0\0\x02\0\0\0\x01"
                   "a\0\0\0\x64xyz"sv) ==
        "Bind: parameter 2 length runs past the end of the message");
  CHECK(bind_error("\0\0\0\0\0\x01\xff\xff\xff\xfe\0\0"sv) ==
        "Bind: parameter 1 has invalid length -2");
  CHECK(bind_error("\0\0\0\x01\0\x02\0\0\0\0"sv) ==
        "Bind: parameter format code 1 is 2; only 0 (text) and 1 (binary) exist");
  CHECK(bind_error("\0\0\0\x02\0\0\0\0\0\x01\xff\xff\xff\xff\0\0"sv) ==
        "Bind: 2 format codes given for 1 parameters; expected 0, 1 or one per value");
  CHECK(bind_error("\0\0\0\0\xff\xff\0\0"sv) ==
        "Bind: 65535 parameters do not fit in the rest of the message");
  CHECK(bind_error("\0\0\0\0\0\0\0\0\0"sv) ==
        "Bind: 1 unexpected byte after the end of the message");
}

TEST_CASE("Describe and Close round trip") {
  const Describe d{kTargetPortal, "portal"};
  round_trip(d, decode_describe);
  round_trip(Describe{kTargetStatement, ""}, decode_describe);
  round_trip_frontend_dispatch(d);
  check_rejects_damage(d, decode_describe, "Describe");
  const Close c{kTargetStatement, "s1"};
  round_trip(c, decode_close);
  round_trip_frontend_dispatch(c);
  check_rejects_damage(c, decode_close, "Close");
  const auto bad = decode_close(Bytes(raw("X\0"sv)));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "Close: target is 'X'; expected 'S' (statement) or 'P' (portal)");
}

TEST_CASE("Execute round trip") {
  const Execute m{"p", 100};
  round_trip(m, decode_execute);
  round_trip(Execute{}, decode_execute);
  round_trip_frontend_dispatch(m);
  check_rejects_damage(m, decode_execute, "Execute");
}

TEST_CASE("Sync, Flush and Terminate round trip and reject a body") {
  CHECK(round_trip(Sync{}, decode_sync) == raw("S\0\0\0\x04"sv));
  round_trip(Flush{}, decode_flush);
  round_trip(Terminate{}, decode_terminate);
  round_trip_frontend_dispatch(Sync{});
  round_trip_frontend_dispatch(Flush{});
  round_trip_frontend_dispatch(Terminate{});
  check_rejects_damage(Sync{}, decode_sync, "Sync");
  check_rejects_damage(Flush{}, decode_flush, "Flush");
  check_rejects_damage(Terminate{}, decode_terminate, "Terminate");
}

TEST_CASE("FunctionCall round trip") {
  const FunctionCall m = sample_function_call();
  round_trip(m, decode_function_call);
  round_trip(FunctionCall{}, decode_function_call);
  round_trip_frontend_dispatch(m);
  check_rejects_damage(m, decode_function_call, "FunctionCall");
  const auto bad = decode_function_call(Bytes(raw("\0\0\0\x01\0\0\0\0\0\x05"sv)));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message ==
        "FunctionCall: result format code is 5; only 0 (text) and 1 (binary) exist");
}

TEST_CASE("PasswordMessage keeps any payload") {
  const PasswordMessage m{{'n', ',', ',', 0, 1, 2}};
  round_trip(m, decode_password_message);
  round_trip(PasswordMessage{}, decode_password_message);
  round_trip_frontend_dispatch(m);
}

TEST_CASE("a 'p' body read as a password") {
  Buffer frame;
  encode_password("md5abc", frame);
  CHECK(frame == raw("p\0\0\0\x0bmd5abc\0"sv));
  const Frame f = frame_typed(frame, kMaxMessage);
  REQUIRE(f.status == FrameStatus::kFrame);
  const auto r = decode_password(f.body);
  REQUIRE(r.ok());
  CHECK(r.value() == "md5abc");
  CHECK_FALSE(decode_password(Bytes(raw("abc"sv))).ok());
  CHECK_FALSE(decode_password(Bytes(raw("abc\0d"sv))).ok());
}

TEST_CASE("SASLInitialResponse round trip") {
  const SaslInitialResponse m{"SCRAM-SHA-256", std::vector<uint8_t>{'n', ',', ',', 'n', '='}};
  round_trip(m, decode_sasl_initial_response);
  const SaslInitialResponse none{"SCRAM-SHA-256", std::nullopt};
  round_trip(none, decode_sasl_initial_response);
  CHECK(encoded(none) == raw("p\0\0\0\x16SCRAM-SHA-256\0\xff\xff\xff\xff"sv));
  check_rejects_damage(m, decode_sasl_initial_response, "SASLInitialResponse");
  check_rejects_damage(none, decode_sasl_initial_response, "SASLInitialResponse");
}

TEST_CASE("two frontend messages in one buffer") {
  check_two_in_one_buffer(Parse{"", "SELECT 1", {}}, sample_bind());
  check_two_in_one_buffer(Sync{}, Query{"BEGIN"});
}

TEST_CASE("decode_frontend_message rejects unknown types") {
  const auto r = decode_frontend_message('Z', {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "unknown frontend message type 'Z'");
  CHECK(decode_frontend_message('\x01', {}).error().message ==
        "unknown frontend message type 0x01");
}

#include "proxy/wire/error_fields.h"

#include <doctest/doctest.h>

#include "tests/wire/wire_test_support.h"

using namespace kanon::wire;
using namespace kanon::wire::testing;
using namespace std::literals;

TEST_CASE("ErrorResponse and NoticeResponse round trip") {
  const ErrorResponse e{{{error_field::kSeverity, "ERROR"},
                         {error_field::kSeverityNonLocalized, "ERROR"},
                         {error_field::kSqlState, "42P01"},
                         {error_field::kMessage, "relation \"t\" does not exist"},
                         {error_field::kPosition, "15"},
                         {'Z', "an unknown field is kept"}}};
  round_trip(e, decode_error_response);
  round_trip(ErrorResponse{}, decode_error_response);
  round_trip_backend_dispatch(e);
  check_rejects_damage(e, decode_error_response, "ErrorResponse");
  CHECK(e.field(error_field::kSqlState) == "42P01");
  CHECK(e.field(error_field::kHint).empty());

  const NoticeResponse n{{{error_field::kSeverity, "NOTICE"}, {error_field::kMessage, "hi"}}};
  round_trip(n, decode_notice_response);
  round_trip_backend_dispatch(n);
  check_rejects_damage(n, decode_notice_response, "NoticeResponse");
  CHECK(n.field(error_field::kMessage) == "hi");
}

TEST_CASE("encode_error writes S, V, C and M") {
  Buffer out;
  encode_error(out, "FATAL", "28000", "no access");
  CHECK(out == raw("E\0\0\0\x25"
                   "SFATAL\0VFATAL\0C28000\0Mno access\0\0"sv));
  const Frame f = frame_typed(out, kMaxMessage);
  REQUIRE(f.status == FrameStatus::kFrame);
  const auto r = decode_error_response(f.body);
  REQUIRE(r.ok());
  CHECK(r.value().field('S') == "FATAL");
  CHECK(r.value().field('V') == "FATAL");
  CHECK(r.value().field('C') == "28000");
  CHECK(r.value().field('M') == "no access");

  Buffer notice;
  encode_notice(notice, "WARNING", "01000", "careful");
  const Frame g = frame_typed(notice, kMaxMessage);
  REQUIRE(g.status == FrameStatus::kFrame);
  CHECK(g.type == 'N');
  const auto n = decode_notice_response(g.body);
  REQUIRE(n.ok());
  CHECK(n.value().field('M') == "careful");
}

TEST_CASE("ErrorResponse rejects broken field lists") {
  const auto unterminated = decode_error_response(Bytes(raw("SERROR\0"sv)));
  REQUIRE_FALSE(unterminated.ok());
  CHECK(unterminated.error().message ==
        "ErrorResponse: field list is not terminated by a zero byte");
  const auto open_value = decode_error_response(Bytes(raw("SERR"sv)));
  REQUIRE_FALSE(open_value.ok());
  CHECK(open_value.error().message == "ErrorResponse: value of field 'S' is not NUL-terminated");
}

TEST_CASE("two error messages in one buffer") {
  check_two_in_one_buffer(ErrorResponse{{{'M', "a"}}}, NoticeResponse{{{'M', "b"}}});
}

#include "proxy/wire/copy_messages.h"

#include <doctest/doctest.h>

#include "tests/wire/wire_test_support.h"

using namespace kanon::wire;
using namespace kanon::wire::testing;
using namespace std::literals;

TEST_CASE("CopyData and CopyDone round trip in both directions") {
  const CopyData m{{'1', '\t', 'x', '\n', 0}};
  CHECK(round_trip(m, decode_copy_data) == raw("d\0\0\0\x09"
                                               "1\tx\n\0"sv));
  round_trip(CopyData{}, decode_copy_data);
  round_trip(CopyDone{}, decode_copy_done);
  round_trip_frontend_dispatch(m);
  round_trip_backend_dispatch(m);
  round_trip_frontend_dispatch(CopyDone{});
  round_trip_backend_dispatch(CopyDone{});
  check_rejects_damage(CopyDone{}, decode_copy_done, "CopyDone");
}

TEST_CASE("CopyFail round trip") {
  const CopyFail m{"client gave up"};
  round_trip(m, decode_copy_fail);
  round_trip_frontend_dispatch(m);
  check_rejects_damage(m, decode_copy_fail, "CopyFail");
}

TEST_CASE("Copy{In,Out,Both}Response round trip") {
  const CopyInResponse in{0, {0, 0, 0}};
  const CopyOutResponse out{1, {0, 1}};
  const CopyBothResponse both{0, {}};
  CHECK(round_trip(in, decode_copy_in_response) == raw("G\0\0\0\x0d\0\0\x03\0\0\0\0\0\0"sv));
  round_trip(out, decode_copy_out_response);
  round_trip(both, decode_copy_both_response);
  round_trip_backend_dispatch(in);
  round_trip_backend_dispatch(out);
  round_trip_backend_dispatch(both);
  check_rejects_damage(in, decode_copy_in_response, "CopyInResponse");
  check_rejects_damage(out, decode_copy_out_response, "CopyOutResponse");
  check_rejects_damage(both, decode_copy_both_response, "CopyBothResponse");
}

TEST_CASE("Copy responses reject bad format codes") {
  const auto binary_in_text = decode_copy_out_response(Bytes(raw("\0\0\x02\0\0\0\x01"sv)));
  REQUIRE_FALSE(binary_in_text.ok());
  CHECK(binary_in_text.error().message ==
        "CopyOutResponse: column 2 is binary in a text-format COPY");
  const auto overall = decode_copy_in_response(Bytes(raw("\x02\0\0"sv)));
  REQUIRE_FALSE(overall.ok());
  CHECK(overall.error().message ==
        "CopyInResponse: overall format is 2; only 0 (text) and 1 (binary) exist");
  const auto column = decode_copy_both_response(Bytes(raw("\x01\0\x01\0\x07"sv)));
  REQUIRE_FALSE(column.ok());
  CHECK(column.error().message ==
        "CopyBothResponse: column format code 1 is 7; only 0 (text) and 1 (binary) exist");
}

TEST_CASE("two copy messages in one buffer") {
  check_two_in_one_buffer(CopyData{{'a'}}, CopyDone{});
}

#include "proxy/wire/backend_messages.h"

#include <doctest/doctest.h>

#include "tests/wire/wire_test_support.h"

using namespace kanon::wire;
using namespace kanon::wire::testing;
using namespace std::literals;

namespace {

template <class T, class Decode>
void check_all(const T& m, Decode decode, std::string_view name) {
  round_trip(m, decode);
  round_trip_backend_dispatch(m);
  check_rejects_damage(m, decode, name);
}

template <class T, class Decode>
std::string error_of(Decode decode, std::string_view body) {
  const Result<T> r = decode(Bytes(raw(body)));
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

RowDescription sample_row_description() {
  RowDescription m;
  m.fields = {{"id", 16384, 1, 23, 4, -1, kFormatText},
              {"name", 16384, 2, 25, -1, -1, kFormatBinary},
              {"?column?", 0, 0, 1043, -1, 36, kFormatText}};
  return m;
}

}  // namespace

TEST_CASE("ParameterStatus round trip") {
  check_all(ParameterStatus{"server_version", "16.2"}, decode_parameter_status, "ParameterStatus");
  check_all(ParameterStatus{"", ""}, decode_parameter_status, "ParameterStatus");
}

TEST_CASE("BackendKeyData round trip and bytes") {
  const BackendKeyData m{0x00003039, 0xcafef00d};
  check_all(m, decode_backend_key_data, "BackendKeyData");
  CHECK(encoded(m) == raw("K\0\0\0\x0c\0\0\x30\x39\xca\xfe\xf0\x0d"sv));
}

TEST_CASE("ReadyForQuery round trip, bytes and status check") {
  for (char status : {kTxIdle, kTxInBlock, kTxFailed})
    check_all(ReadyForQuery{status}, decode_ready_for_query, "ReadyForQuery");
  CHECK(encoded(ReadyForQuery{kTxIdle}) == raw("Z\0\0\0\x05I"sv));
  CHECK(error_of<ReadyForQuery>(decode_ready_for_query, "X"sv) ==
        "ReadyForQuery: transaction status is 'X'; expected 'I', 'T' or 'E'");
}

TEST_CASE("RowDescription round trip") {
  check_all(sample_row_description(), decode_row_description, "RowDescription");
  check_all(RowDescription{}, decode_row_description, "RowDescription");
  CHECK(error_of<RowDescription>(decode_row_description,
                                 "\0\x01x\0\0\0\0\0\0\0\0\0\0\0\0\0"
                                 "\0\0\0\0\0\x02"sv) ==
        "RowDescription: field 1 has format code 2; only 0 (text) and 1 (binary) exist");
  CHECK(error_of<RowDescription>(decode_row_description, "\x7f\xff\0"sv) ==
        "RowDescription: 32767 fields do not fit in the rest of the message");
}

TEST_CASE("DataRow round trip and bytes") {
  const DataRow m{{Value{{'4', '2'}}, std::nullopt, Value{std::vector<uint8_t>{}}}};
  check_all(m, decode_data_row, "DataRow");
  check_all(DataRow{}, decode_data_row, "DataRow");
  CHECK(encoded(m) == raw("D\0\0\0\x14\0\x03\0\0\0\x02"
                          "42\xff\xff\xff\xff\0\0\0\0"sv));
  CHECK(error_of<DataRow>(decode_data_row,
                          "\0\x01\0\0\0\x09"
                          "abc"sv) == "DataRow: column 1 length runs past the end of the message");
}

TEST_CASE("CommandComplete round trip and bytes") {
  check_all(CommandComplete{"SELECT 5"}, decode_command_complete, "CommandComplete");
  CHECK(encoded(CommandComplete{"INSERT 0 1"}) == raw("C\0\0\0\x0fINSERT 0 1\0"sv));
}

TEST_CASE("messages without a body round trip and reject one") {
  check_all(EmptyQueryResponse{}, decode_empty_query_response, "EmptyQueryResponse");
  check_all(ParseComplete{}, decode_parse_complete, "ParseComplete");
  check_all(BindComplete{}, decode_bind_complete, "BindComplete");
  check_all(CloseComplete{}, decode_close_complete, "CloseComplete");
  check_all(NoData{}, decode_no_data, "NoData");
  check_all(PortalSuspended{}, decode_portal_suspended, "PortalSuspended");
  CHECK(encoded(ParseComplete{}) == raw("1\0\0\0\x04"sv));
}

TEST_CASE("ParameterDescription round trip") {
  check_all(ParameterDescription{{23, 25, 0}}, decode_parameter_description,
            "ParameterDescription");
  check_all(ParameterDescription{}, decode_parameter_description, "ParameterDescription");
}

TEST_CASE("NotificationResponse round trip") {
  check_all(NotificationResponse{4242, "jobs", "{\"id\":1}"}, decode_notification_response,
            "NotificationResponse");
}

TEST_CASE("FunctionCallResponse round trip") {
  check_all(FunctionCallResponse{Value{{0, 0, 0, 1}}}, decode_function_call_response,
            "FunctionCallResponse");
  check_all(FunctionCallResponse{std::nullopt}, decode_function_call_response,
            "FunctionCallResponse");
}

TEST_CASE("NegotiateProtocolVersion round trip") {
  check_all(NegotiateProtocolVersion{0, {"_pq_.compression", "_pq_.other"}},
            decode_negotiate_protocol_version, "NegotiateProtocolVersion");
  check_all(NegotiateProtocolVersion{2, {}}, decode_negotiate_protocol_version,
            "NegotiateProtocolVersion");
  CHECK(error_of<NegotiateProtocolVersion>(decode_negotiate_protocol_version,
                                           "\0\0\0\0\xff\xff\xff\xff"sv) ==
        "NegotiateProtocolVersion: option count is negative (-1)");
  CHECK(error_of<NegotiateProtocolVersion>(decode_negotiate_protocol_version,
                                           "\0\0\0\0\0\0\0\x05x\0"sv) ==
        "NegotiateProtocolVersion: 5 option names do not fit in the rest of the message");
}

TEST_CASE("two backend messages in one buffer") {
  check_two_in_one_buffer(CommandComplete{"SELECT 1"}, ReadyForQuery{kTxIdle});
  check_two_in_one_buffer(sample_row_description(), DataRow{{std::nullopt}});
}

TEST_CASE("decode_backend_message rejects unknown types") {
  const auto r = decode_backend_message('Q', {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "unknown backend message type 'Q'");
}

#include "proxy/startup_handshake.h"

#include <doctest/doctest.h>

#include <string>

#include "proxy/wire/startup_messages.h"

using namespace kanon;
using proxy::StartupHandshake;
using Step = StartupHandshake::Step;

namespace {

StartupHandshake::Settings settings(bool tls, bool over_capacity = false) {
  StartupHandshake::Settings s;
  s.tls_available = tls;
  s.over_capacity = over_capacity;
  s.max_message_size = 1 << 20;
  s.admin_database = "kanon";
  s.admin_users = {"admin"};
  return s;
}

template <class T>
wire::Buffer packet(const T& m) {
  wire::Buffer out;
  wire::encode(m, out);
  return out;
}

wire::Buffer startup_packet(std::vector<std::pair<std::string, std::string>> parameters) {
  wire::StartupMessage m;
  m.parameters = std::move(parameters);
  return packet(m);
}

wire::Buffer concat(wire::Buffer a, const wire::Buffer& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A packet with the given length field and version code, then `body_bytes`
// bytes 'x'.
wire::Buffer raw_packet(uint32_t length, uint32_t code, size_t body_bytes) {
  wire::Buffer out;
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(length >> shift));
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(code >> shift));
  out.resize(8 + body_bytes, 'x');
  return out;
}

void check_refused(const StartupHandshake::Action& a, std::string_view sqlstate,
                   std::string_view message_part) {
  CHECK(a.step == Step::kRefuse);
  CHECK(a.refusal.sqlstate == sqlstate);
  CHECK_MESSAGE(a.refusal.message.find(message_part) != std::string::npos, a.refusal.message);
}

}  // namespace

TEST_CASE("SSLRequest is answered S and TLS starts when client TLS is configured") {
  StartupHandshake h(settings(/*tls=*/true));
  const wire::Buffer ssl = packet(wire::SslRequest{});
  auto a = h.next(ssl);
  CHECK(a.step == Step::kAnswer);
  CHECK(a.answer == 'S');
  CHECK(a.start_tls);
  CHECK(a.consumed == ssl.size());
  CHECK_FALSE(h.tls());
  h.tls_established();
  CHECK(h.tls());
  // Over TLS, a second SSLRequest is refused with 'N' (no second handshake).
  a = h.next(ssl);
  CHECK(a.step == Step::kAnswer);
  CHECK(a.answer == 'N');
  CHECK_FALSE(a.start_tls);
  const wire::Buffer start = startup_packet({{"user", "alice"}, {"database", "shop"}});
  a = h.next(start);
  CHECK(a.step == Step::kSession);
  CHECK(a.user == "alice");
  CHECK(a.database == "shop");
  CHECK(h.done());
}

TEST_CASE("SSLRequest is answered N without client TLS; the StartupMessage follows in plaintext") {
  StartupHandshake h(settings(/*tls=*/false));
  const wire::Buffer ssl = packet(wire::SslRequest{});
  auto a = h.next(ssl);
  CHECK(a.step == Step::kAnswer);
  CHECK(a.answer == 'N');
  CHECK_FALSE(a.start_tls);
  CHECK(a.consumed == 8);
  CHECK_FALSE(h.done());
  a = h.next(startup_packet({{"user", "alice"}}));
  CHECK(a.step == Step::kSession);
  CHECK_FALSE(h.tls());
}

TEST_CASE("bytes sent after an encryption request, before its answer, are refused") {
  const wire::Buffer start = startup_packet({{"user", "mallory"}});
  for (const bool tls : {true, false}) {
    CAPTURE(tls);
    StartupHandshake h(settings(tls));
    // An injected StartupMessage in the same read as the SSLRequest: with
    // TLS it would be taken for one sent over TLS.
    const auto a = h.next(concat(packet(wire::SslRequest{}), start));
    check_refused(a, "08P01", "received unencrypted data after an encryption request");
    CHECK_FALSE(a.start_tls);
    CHECK(a.answer == 0);  // nothing is answered
    CHECK(h.done());
  }
  StartupHandshake gss(settings(true));
  // Even one stray byte counts.
  check_refused(gss.next(concat(packet(wire::GssEncRequest{}), wire::Buffer{'x'})), "08P01",
                "received unencrypted data after an encryption request");
}

TEST_CASE("GSSENCRequest is answered N, then the StartupMessage starts the session") {
  StartupHandshake h(settings(/*tls=*/true));
  auto a = h.next(packet(wire::GssEncRequest{}));
  CHECK(a.step == Step::kAnswer);
  CHECK(a.answer == 'N');
  CHECK_FALSE(a.start_tls);
  // libpq then tries SSL on the same connection.
  a = h.next(packet(wire::SslRequest{}));
  CHECK(a.answer == 'S');
  CHECK(a.start_tls);
  h.tls_established();
  a = h.next(startup_packet({{"user", "bob"}}));
  CHECK(a.step == Step::kSession);
  CHECK(a.user == "bob");
  CHECK(a.database == "bob");  // no database: the login's name, as PostgreSQL does
}

TEST_CASE("CancelRequest asks for the cancel to be forwarded and ends the handshake") {
  StartupHandshake h(settings(false));
  CHECK(h.next(packet(wire::SslRequest{})).answer == 'N');
  const wire::Buffer cancel = packet(wire::CancelRequest{4242, 0xdeadbeef});
  const auto a = h.next(cancel);
  CHECK(a.step == Step::kCancel);
  CHECK(a.cancel.process_id == 4242);
  CHECK(a.cancel.secret_key == 0xdeadbeef);
  CHECK(a.consumed == cancel.size());
  CHECK(h.done());
}

TEST_CASE("over capacity: encryption and cancel requests are answered, the session gets 53300") {
  StartupHandshake h(settings(/*tls=*/true, /*over_capacity=*/true));
  auto a = h.next(packet(wire::SslRequest{}));
  CHECK(a.step == Step::kAnswer);
  CHECK(a.answer == 'S');
  h.tls_established();
  a = h.next(startup_packet({{"user", "alice"}}));
  check_refused(a, "53300", "sorry, too many clients already");
  // The admin console is no way around it.
  StartupHandshake admin(settings(false, true));
  check_refused(admin.next(startup_packet({{"user", "admin"}, {"database", "kanon"}})), "53300",
                "too many clients");
  StartupHandshake cancel(settings(false, true));
  CHECK(cancel.next(packet(wire::CancelRequest{1, 2})).step == Step::kCancel);
}

TEST_CASE("the admin database goes to the console, for admin users only") {
  StartupHandshake h(settings(false));
  auto a = h.next(startup_packet({{"user", "admin"}, {"database", "kanon"}}));
  CHECK(a.step == Step::kConsole);
  CHECK(a.user == "admin");
  CHECK(a.database == "kanon");
  CHECK(a.startup.find("database") != nullptr);

  StartupHandshake other(settings(false));
  check_refused(other.next(startup_packet({{"user", "alice"}, {"database", "kanon"}})), "28000",
                "kanon: user \"alice\" may not use the admin console (not listed in admin.users)");

  // A login named like the admin database without a database parameter.
  auto s = settings(false);
  s.admin_users = {"kanon"};
  StartupHandshake by_name(s);
  CHECK(by_name.next(startup_packet({{"user", "kanon"}})).step == Step::kConsole);

  StartupHandshake elsewhere(settings(false));
  CHECK(elsewhere.next(startup_packet({{"user", "admin"}, {"database", "shop"}})).step ==
        Step::kSession);
}

TEST_CASE("start-up parameters are passed on in order, with what the client sent after them") {
  StartupHandshake h(settings(false));
  const wire::Buffer start = startup_packet({{"user", "alice"},
                                             {"database", "shop"},
                                             {"options", "-c search_path=x"},
                                             {"application_name", "psql"},
                                             {"replication", "database"}});
  const wire::Buffer query = {'Q', 0, 0, 0, 5, 0};
  const auto a = h.next(concat(start, query));
  REQUIRE(a.step == Step::kSession);
  CHECK(a.consumed == start.size());  // the Query stays pending for the pumps
  CHECK(a.user == "alice");
  CHECK(a.database == "shop");
  REQUIRE(a.startup.parameters.size() == 5);
  CHECK(a.startup.parameters[2] ==
        std::pair<std::string, std::string>{"options", "-c search_path=x"});
  CHECK(*a.startup.find("application_name") == "psql");
  CHECK(*a.startup.find("replication") == "database");
  CHECK(a.startup.protocol_version == wire::kProtocolVersion3);
}

TEST_CASE("protocol versions other than 3.x and unknown request codes are refused") {
  StartupHandshake v2(settings(false));
  // Protocol 2.0 with a user parameter.
  wire::StartupMessage old;
  old.protocol_version = 2u << 16;
  old.parameters = {{"user", "alice"}};
  check_refused(v2.next(packet(old)), "08P01",
                "invalid start-up packet: StartupMessage: protocol version 2.0 is not supported");
  StartupHandshake unknown(settings(false));
  check_refused(unknown.next(raw_packet(8, (1234u << 16) | 5681, 0)), "08P01",
                "unknown request code 1234.5681");
  // A newer minor version is the backend's to negotiate.
  StartupHandshake minor(settings(false));
  wire::StartupMessage newer;
  newer.protocol_version = (3u << 16) | 2;
  newer.parameters = {{"user", "alice"}};
  const auto a = minor.next(packet(newer));
  CHECK(a.step == Step::kSession);
  CHECK(a.startup.protocol_version == newer.protocol_version);
}

TEST_CASE("a truncated start-up packet waits for more; malformed and oversized ones are refused") {
  const wire::Buffer start = startup_packet({{"user", "alice"}, {"database", "shop"}});
  StartupHandshake h(settings(false));
  for (size_t cut = 0; cut < start.size(); ++cut) {
    const wire::Buffer prefix(start.begin(), start.begin() + static_cast<ptrdiff_t>(cut));
    const auto a = h.next(prefix);
    CHECK(a.step == Step::kNeedMore);
    CHECK(a.consumed == 0);
  }
  CHECK_FALSE(h.done());
  CHECK(h.next(start).step == Step::kSession);

  StartupHandshake short_one(settings(false));
  check_refused(short_one.next(raw_packet(7, wire::kProtocolVersion3, 0)), "08P01",
                "invalid start-up packet: start-up packet is shorter than 8 bytes");
  // Refused from the length field alone, before the bytes arrive.
  StartupHandshake huge(settings(false));
  check_refused(huge.next(raw_packet(20000, wire::kProtocolVersion3, 0)), "08P01",
                "start-up packet length exceeds the maximum");
  auto small = settings(false);
  small.max_message_size = 64;
  StartupHandshake capped(small);
  check_refused(capped.next(raw_packet(65, wire::kProtocolVersion3, 0)), "08P01",
                "start-up packet length exceeds the maximum");
  // A parameter list without its terminator, and no user at all.
  StartupHandshake unterminated(settings(false));
  check_refused(unterminated.next(raw_packet(9, wire::kProtocolVersion3, 1)), "08P01",
                "parameter list does not end with an empty name");
  StartupHandshake nobody(settings(false));
  check_refused(nobody.next(startup_packet({{"database", "shop"}})), "08P01",
                "the required parameter \"user\" is missing");
  StartupHandshake cancel(settings(false));
  check_refused(cancel.next(raw_packet(12, wire::kCancelRequestCode, 4)), "08P01",
                "CancelRequest: message ends before the process ID and secret key");
}

TEST_CASE("restricted logins: replication connections are refused with 42501") {
  for (const char* value : {"database", "true", "on", "false"}) {
    CAPTURE(value);
    wire::StartupMessage m;
    m.parameters = {{"user", "analyst"}, {"replication", value}};
    const auto admission = proxy::admit_restricted(m, "shop", true, {});
    REQUIRE(admission.refusal.has_value());
    CHECK(admission.refusal->sqlstate == "42501");
    CHECK(admission.refusal->message ==
          "restricted sessions may not open replication connections: replication "
          "(kanon rule replication-connection)");
    CHECK(admission.rule == "replication-connection");
  }
}

TEST_CASE("restricted logins: only protected databases and listed ones are served") {
  wire::StartupMessage m;
  m.parameters = {{"user", "analyst"}};
  auto admission = proxy::admit_restricted(m, "shop", true, {"scratch"});
  CHECK_FALSE(admission.refusal.has_value());
  CHECK(admission.protected_database);

  admission = proxy::admit_restricted(m, "scratch", false, {"scratch"});
  CHECK_FALSE(admission.refusal.has_value());
  CHECK_FALSE(admission.protected_database);

  // Listed and named by policies: protected.
  admission = proxy::admit_restricted(m, "scratch", true, {"scratch"});
  CHECK_FALSE(admission.refusal.has_value());
  CHECK(admission.protected_database);

  admission = proxy::admit_restricted(m, "payroll", false, {"scratch"});
  REQUIRE(admission.refusal.has_value());
  CHECK(admission.refusal->sqlstate == "42501");
  CHECK(admission.refusal->message ==
        "restricted sessions may only use a database that policies name or one listed under "
        "databases:: payroll (kanon rule database-not-protected)");
  CHECK(admission.rule == "database-not-protected");
  CHECK(admission.object == "payroll");
}

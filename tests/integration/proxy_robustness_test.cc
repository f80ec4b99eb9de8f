// Bad input loses nothing: a client that sends garbage gets 08P01 and is
// closed, every other client keeps working; many clients at once are served.
#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <atomic>
#include <barrier>
#include <thread>

#include "proxy/wire/startup_messages.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/raw_client.h"

using namespace kanon::testing;
namespace wire = kanon::wire;

namespace {

SandboxedProxy& fixture() {
  return shared_proxy("limits: {max_message_size: 1048576}\n");
}

std::string query_one(PGconn* conn, const std::string& sql) {
  PGresult* res = PQexec(conn, sql.c_str());
  std::string out = PQresultStatus(res) == PGRES_TUPLES_OK ? PQgetvalue(res, 0, 0) : "<error>";
  PQclear(res);
  return out;
}

std::vector<uint8_t> startup_bytes(const std::string& user) {
  wire::StartupMessage m;
  m.protocol_version = wire::kProtocolVersion3;
  m.parameters = {{"user", user}, {"database", "postgres"}};
  wire::Buffer out;
  wire::encode(m, out);
  return out;
}

// Opens a raw session as a trust user and waits for ReadyForQuery.
void log_in(RawClient& raw, const std::string& user) {
  raw.send(startup_bytes(user));
  REQUIRE_FALSE(raw.read_until_message('Z', 10).empty());
}

}  // namespace

TEST_CASE("garbage on a raw socket gets 08P01 and a close; a parallel session keeps working") {
  auto& f = fixture();
  PGconn* bystander = PQconnectdb(f.proxy.conninfo("analyst").c_str());
  REQUIRE(PQstatus(bystander) == CONNECTION_OK);

  SUBCASE("an HTTP request instead of a start-up packet") {
    RawClient raw(f.proxy.port());
    raw.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    const auto reply = raw.read_until_close(10);
    CHECK(raw.closed());
    CHECK(first_error_sqlstate(reply) == "08P01");
  }
  SUBCASE("a start-up packet with protocol version 9.9") {
    RawClient raw(f.proxy.port());
    raw.send(std::vector<uint8_t>{0, 0, 0, 8, 0, 9, 0, 9});
    const auto reply = raw.read_until_close(10);
    CHECK(raw.closed());
    CHECK(first_error_sqlstate(reply) == "08P01");
  }
  SUBCASE("a message length below 4 after log-in") {
    RawClient raw(f.proxy.port());
    log_in(raw, "analyst");
    raw.send(std::vector<uint8_t>{'Q', 0, 0, 0, 2});
    const auto reply = raw.read_until_close(10);
    CHECK(raw.closed());
    CHECK(first_error_sqlstate(reply) == "08P01");
  }
  SUBCASE("a message longer than limits.max_message_size") {
    RawClient raw(f.proxy.port());
    log_in(raw, "analyst");
    raw.send(std::vector<uint8_t>{'Q', 0x00, 0x20, 0x00, 0x00});  // 2 MiB > 1 MiB
    const auto reply = raw.read_until_close(10);
    CHECK(raw.closed());
    CHECK(first_error_sqlstate(reply) == "08P01");
  }
  SUBCASE("plaintext sent right behind an SSLRequest") {
    RawClient raw(f.proxy.port());
    std::vector<uint8_t> bytes{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f};
    const auto startup = startup_bytes("analyst");
    bytes.insert(bytes.end(), startup.begin(), startup.end());
    raw.send(bytes);
    const auto reply = raw.read_until_close(10);
    CHECK(raw.closed());
    CHECK(first_error_sqlstate(reply) == "08P01");
  }
  SUBCASE("a client that vanishes mid-message") {
    {
      RawClient raw(f.proxy.port());
      log_in(raw, "analyst");
      raw.send(std::vector<uint8_t>{'Q', 0, 0, 0, 100, 'S', 'E', 'L'});
    }
  }
  CHECK(query_one(bystander, "SELECT count(*) FROM people") == "11");
  PQfinish(bystander);
  // The proxy itself is still up and accepting.
  PGconn* fresh = PQconnectdb(f.proxy.conninfo("analyst").c_str());
  CHECK(PQstatus(fresh) == CONNECTION_OK);
  CHECK(query_one(fresh, "SELECT 1") == "1");
  PQfinish(fresh);
}

TEST_CASE("200 concurrent clients each run queries through the proxy") {
  auto& f = fixture();
  constexpr int kClients = 200;
  std::atomic<int> connected{0}, correct{0};
  std::barrier all_connected(kClients + 1);
  std::barrier counted(kClients + 1);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      PGconn* conn =
          PQconnectdb((f.proxy.conninfo("analyst") + " application_name=kanon-conc").c_str());
      if (PQstatus(conn) == CONNECTION_OK) ++connected;
      all_connected.arrive_and_wait();
      counted.arrive_and_wait();
      int good = 0;
      for (int q = 0; q < 10; ++q) {
        const std::string sql = "SELECT " + std::to_string(i) + " * 1000 + " + std::to_string(q);
        if (query_one(conn, sql) == std::to_string(i * 1000 + q)) ++good;
      }
      if (good == 10) ++correct;
      PQfinish(conn);
    });
  }
  all_connected.arrive_and_wait();
  // Every client holds its own backend connection at the same time.
  CHECK(f.pg.psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'kanon-conc'") ==
        std::to_string(kClients) + "\n");
  counted.arrive_and_wait();
  for (auto& t : threads) t.join();
  CHECK(connected.load() == kClients);
  CHECK(correct.load() == kClients);
}

// Health and drain: /healthz and /readyz on the metrics listener, the
// graceful drain of SIGTERM and the console's SHUTDOWN (a transaction in
// flight may finish, idle sessions end at once, new connections are
// refused, exit 0), the lame duck before it (shutdown_lame_duck: /readyz
// 503 while new connections are still served) and the console's PAUSE /
// RESUME.
#include <doctest/doctest.h>
#include <libpq-fe.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/raw_client.h"
#include "tests/support/scratch_dir.h"

using namespace kanon::testing;
using Clock = std::chrono::steady_clock;

namespace {

struct Query {
  bool ok;
  std::string value;
  std::string message;
};

Query exec(PGconn* conn, const std::string& sql) {
  PGresult* res = PQexec(conn, sql.c_str());
  const auto status = PQresultStatus(res);
  Query q{status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK, "", PQerrorMessage(conn)};
  if (status == PGRES_TUPLES_OK) q.value = PQgetvalue(res, 0, 0);
  PQclear(res);
  return q;
}

std::string http_get(uint16_t port, const std::string& path) {
  RawClient c(port);
  c.send("GET " + path + " HTTP/1.0\r\n\r\n");
  const auto bytes = c.read_until_close(5);
  return std::string(bytes.begin(), bytes.end());
}

std::string metrics_yaml(uint16_t port) {
  return "metrics: {listen: \"127.0.0.1:" + std::to_string(port) + "\"}\n";
}

const char* kAdmin = "admin: {database: kanon, users: [postgres]}\n";

CommandResult console(const KanonProxy& proxy, const std::string& command) {
  return run_command(
      {"psql", "-X", "-At", "-d", proxy.conninfo("postgres", "kanon"), "-c", command});
}

// Polls GET `path` every 20 ms until its answer contains `text`; gives up
// after `seconds` (a test timeout, not a measurement).
bool eventually_answers(uint16_t port, const std::string& path, const std::string& text,
                        int seconds) {
  const auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (http_get(port, path).find(text) == std::string::npos) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The value of `stat` in the console's SHOW STATS.
std::string stat_of(const KanonProxy& proxy, const std::string& stat) {
  const auto r = console(proxy, "SHOW STATS");
  const std::string key = "\n" + stat + "|";
  const std::string out = "\n" + r.out;
  const auto at = out.find(key);
  if (at == std::string::npos) return "(no " + stat + " in: " + r.out + r.err + ")";
  const auto end = out.find('\n', at + key.size());
  return out.substr(at + key.size(), end - at - key.size());
}

bool is_shutdown_message(const std::string& m) {
  return m.find("terminating connection because kanon is shutting down") != std::string::npos;
}

// `sql` on a session the drain ended fails with 57P01 (in the answer, or in
// the notices libpq took it as).
void check_ended(PGconn* conn, const char* sql, const std::string& notices) {
  const Query q = exec(conn, sql);
  CHECK_FALSE(q.ok);
  CHECK_MESSAGE((is_shutdown_message(q.message) || is_shutdown_message(notices)),
                q.message << notices);
}

// The open transaction goes on and commits; then its session is ended too
// (a query sent meanwhile is discarded).
void check_commits_then_ends(PGconn* busy, const std::string& notices) {
  CHECK(exec(busy, "SELECT 4").value == "4");
  CHECK(exec(busy, "COMMIT").ok);
  check_ended(busy, "SELECT 5", notices);
}

// libpq hands an ErrorResponse that arrives while the connection is idle
// (e.g. in the same read as the ReadyForQuery before it) to the notice
// processor, and the next query then only sees the closed connection.
void capture_notice(void* out, const char* message) {
  static_cast<std::string*>(out)->append(message);
}

}  // namespace

TEST_CASE(
    "/healthz is 200; a policy that cannot be built is reported, not a reason to be unready") {
  auto& pg = PgSandbox::shared();
  pg.psql("DROP TABLE IF EXISTS public.drain_people");
  const std::string policy = scratch_path("kanon-drain-policy.yaml");
  std::ofstream(policy) << "tables:\n"
                           "  - table: public.drain_people\n"
                           "    k: 2\n"
                           "    quasi_identifiers: [occupation, city, state]\n"
                           "    direct_identifiers: {name: null, ssn: null}\n"
                           "    exempt: [postgres]\n";
  const uint16_t metrics = free_port();
  KanonProxy proxy(pg.port(),
                   std::string(kAdmin) + metrics_yaml(metrics) + "policies: [" + policy + "]\n");
  CHECK(http_get(metrics, "/healthz").rfind("HTTP/1.1 200 OK", 0) == 0);
  CHECK(http_get(metrics, "/healthz").find("\r\n\r\nok\n") != std::string::npos);
  // The table does not exist yet: its policy is not built, so the table is
  // denied; the replica serves every other table, as any other replica
  // would (docs/operations.md), and says which one it does not.
  const std::string before = http_get(metrics, "/readyz");
  CHECK_MESSAGE(before.rfind("HTTP/1.1 200 OK", 0) == 0, before);
  CHECK_MESSAGE(before.find("policy public.drain_people is not built, its table is denied") !=
                    std::string::npos,
                before);
  // Not the build's error: this port answers anyone, and an error may quote
  // the table's values. The admin console gives it.
  CHECK_MESSAGE(before.find("does not exist") == std::string::npos, before);
  CHECK(console(proxy, "SHOW POLICIES").out.find("does not exist") != std::string::npos);
  CHECK(http_get(metrics, "/metrics")
            .find("kanon_policy_built{database=\"postgres\",table=\"public.drain_people\"} 0") !=
        std::string::npos);
  {
    PGconn* analyst = PQconnectdb(proxy.conninfo("analyst").c_str());
    REQUIRE(PQstatus(analyst) == CONNECTION_OK);
    const Query denied = exec(analyst, "SELECT city FROM public.drain_people");
    CHECK_FALSE(denied.ok);
    CHECK_MESSAGE(denied.message.find("drain_people") != std::string::npos, denied.message);
    CHECK(exec(analyst, "SELECT count(*) > 0 FROM public.people").value == "t");
    PQfinish(analyst);
  }
  pg.psql("CREATE TABLE public.drain_people AS SELECT * FROM public.people");
  const auto refreshed = console(proxy, "REFRESH public.drain_people");
  CHECK_MESSAGE(refreshed.exit_code == 0, refreshed.err);
  const std::string after = http_get(metrics, "/readyz");
  CHECK_MESSAGE(after.rfind("HTTP/1.1 200 OK", 0) == 0, after);
  CHECK(after.find("\r\n\r\nready\n") != std::string::npos);
  CHECK(after.find("not built") == std::string::npos);
  CHECK(http_get(metrics, "/metrics")
            .find("kanon_policy_built{database=\"postgres\",table=\"public.drain_people\"} 1") !=
        std::string::npos);
  pg.psql("DROP TABLE public.drain_people");
  std::filesystem::remove(policy);
}

TEST_CASE("/readyz is 503 while the backend does not answer") {
  const uint16_t metrics = free_port();
  KanonProxy proxy(free_port(), metrics_yaml(metrics));
  CHECK(http_get(metrics, "/healthz").rfind("HTTP/1.1 200 OK", 0) == 0);
  const std::string ready = http_get(metrics, "/readyz");
  CHECK_MESSAGE(ready.rfind("HTTP/1.1 503", 0) == 0, ready);
  CHECK_MESSAGE(ready.find("cannot reach the backend") != std::string::npos, ready);
}

TEST_CASE("SIGTERM drains: an open transaction may COMMIT, idle clients end at once, exit 0") {
  auto& pg = PgSandbox::shared();
  const uint16_t metrics = free_port();
  KanonProxy proxy(pg.port(), metrics_yaml(metrics) + "shutdown_grace: 20s\n");
  PGconn* busy = PQconnectdb(proxy.conninfo("analyst").c_str());
  PGconn* idle = PQconnectdb(proxy.conninfo("analyst").c_str());
  REQUIRE(PQstatus(busy) == CONNECTION_OK);
  REQUIRE(PQstatus(idle) == CONNECTION_OK);
  std::string busy_notices, idle_notices;
  PQsetNoticeProcessor(busy, capture_notice, &busy_notices);
  PQsetNoticeProcessor(idle, capture_notice, &idle_notices);
  REQUIRE(exec(busy, "BEGIN").ok);
  CHECK(exec(busy, "SELECT 1").value == "1");
  CHECK(exec(idle, "SELECT 2").value == "2");
  CHECK(http_get(metrics, "/readyz").rfind("HTTP/1.1 200 OK", 0) == 0);

  std::atomic<int> exit_code{-2000};
  std::thread stopper([&] { exit_code = proxy.process().signal_and_wait(SIGTERM, 30); });
  // Draining: /readyz says so and new connections are refused.
  bool draining = false;
  for (int i = 0; i < 3000 && !draining; ++i) {
    draining = http_get(metrics, "/readyz").find("shutting down") != std::string::npos;
    if (!draining) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(draining);
  PGconn* late = PQconnectdb(proxy.conninfo("analyst").c_str());
  CHECK(PQstatus(late) == CONNECTION_BAD);
  PQfinish(late);
  // The idle client was ended with 57P01.
  check_ended(idle, "SELECT 3", idle_notices);
  check_commits_then_ends(busy, busy_notices);
  stopper.join();
  CHECK(exit_code == 0);
  PQfinish(busy);
  PQfinish(idle);
  // Ended by the drain (the transaction committed), not by the grace period.
  CHECK(proxy.log().find("draining") != std::string::npos);
  CHECK(proxy.log().find("shutdown_grace over") == std::string::npos);
}

TEST_CASE("shutdown_lame_duck: /readyz 503 at once, new clients served, then the drain") {
  auto& pg = PgSandbox::shared();
  const uint16_t metrics = free_port();
  KanonProxy proxy(pg.port(), std::string(kAdmin) + metrics_yaml(metrics) +
                                  "shutdown_lame_duck: 2s\nshutdown_grace: 20s\n");
  CHECK(stat_of(proxy, "state") == "serving");
  PGconn* busy = PQconnectdb(proxy.conninfo("analyst").c_str());
  PGconn* idle = PQconnectdb(proxy.conninfo("analyst").c_str());
  REQUIRE(PQstatus(busy) == CONNECTION_OK);
  REQUIRE(PQstatus(idle) == CONNECTION_OK);
  std::string busy_notices;
  PQsetNoticeProcessor(busy, capture_notice, &busy_notices);
  REQUIRE(exec(busy, "BEGIN").ok);
  CHECK(exec(busy, "SELECT 1").value == "1");
  CHECK(http_get(metrics, "/readyz").rfind("HTTP/1.1 200 OK", 0) == 0);

  std::atomic<int> exit_code{-2000};
  std::thread stopper([&] { exit_code = proxy.process().signal_and_wait(SIGTERM, 60); });
  // The lame duck: not ready, alive, and still serving everyone.
  REQUIRE(eventually_answers(metrics, "/readyz", "lame duck", 10));
  const std::string lame = http_get(metrics, "/readyz");
  CHECK_MESSAGE(lame.rfind("HTTP/1.1 503", 0) == 0, lame);
  CHECK_MESSAGE(lame.find("not ready: kanon is shutting down (lame duck: new connections are "
                          "still served for ") != std::string::npos,
                lame);
  CHECK(http_get(metrics, "/healthz").rfind("HTTP/1.1 200 OK", 0) == 0);
  PGconn* fresh = PQconnectdb(proxy.conninfo("analyst").c_str());
  std::string fresh_notices;
  PQsetNoticeProcessor(fresh, capture_notice, &fresh_notices);
  CHECK_MESSAGE(PQstatus(fresh) == CONNECTION_OK, PQerrorMessage(fresh));
  CHECK(exec(fresh, "SELECT 42").value == "42");
  CHECK(exec(idle, "SELECT 2").value == "2");  // sessions from before are not ended either
  CHECK(stat_of(proxy, "state").rfind("lame duck: ", 0) == 0);

  // Then the drain: the listener closes, idle sessions (the one that came
  // during the lame duck too) end, the open transaction may finish.
  REQUIRE(eventually_answers(metrics, "/readyz", "draining: no new connections", 30));
  CHECK(http_get(metrics, "/readyz").rfind("HTTP/1.1 503", 0) == 0);
  PGconn* late = PQconnectdb(proxy.conninfo("analyst").c_str());
  CHECK(PQstatus(late) == CONNECTION_BAD);
  PQfinish(late);
  check_ended(fresh, "SELECT 43", fresh_notices);
  CHECK_FALSE(exec(idle, "SELECT 3").ok);
  check_commits_then_ends(busy, busy_notices);
  stopper.join();
  CHECK(exit_code == 0);
  PQfinish(fresh);
  PQfinish(busy);
  PQfinish(idle);
  const std::string log = proxy.log();
  INFO(log);
  CHECK(log.find("lame duck: /readyz answers 503, new connections are still accepted and served "
                 "for 2000 ms") != std::string::npos);
  CHECK(log.find("lame duck over: the drain begins") != std::string::npos);
  CHECK(log.find("draining: no new connections") != std::string::npos);
}

TEST_CASE("console SHUTDOWN starts the lame duck; a SIGTERM then ends every session at once") {
  auto& pg = PgSandbox::shared();
  const uint16_t metrics = free_port();
  // Both phases far longer than the test's timeouts: only the second
  // signal can make kanon exit in time.
  KanonProxy proxy(pg.port(), std::string(kAdmin) + metrics_yaml(metrics) +
                                  "shutdown_lame_duck: 10m\nshutdown_grace: 10m\n");
  PGconn* conn = PQconnectdb(proxy.conninfo("analyst").c_str());
  REQUIRE(PQstatus(conn) == CONNECTION_OK);
  REQUIRE(exec(conn, "BEGIN").ok);
  const auto r = console(proxy, "SHUTDOWN");
  CHECK_MESSAGE(r.out.find("lame duck for 600000 ms (shutdown_lame_duck): /readyz answers 503, "
                           "new connections are still served; then draining") != std::string::npos,
                (r.out + r.err));
  REQUIRE(eventually_answers(metrics, "/readyz", "lame duck", 10));
  const auto again = console(proxy, "SHUTDOWN");
  CHECK_MESSAGE(again.out.find("already shutting down: lame duck") != std::string::npos,
                (again.out + again.err));
  const auto paused = console(proxy, "PAUSE");
  CHECK_MESSAGE(paused.err.find("kanon is shutting down") != std::string::npos,
                (paused.out + paused.err));
  CHECK(exec(conn, "SELECT 1").value == "1");
  CHECK(proxy.process().signal_and_wait(SIGTERM, 30) == 0);
  const Query q = exec(conn, "SELECT 2");
  CHECK_FALSE(q.ok);
  CHECK_MESSAGE(is_shutdown_message(q.message), q.message);
  PQfinish(conn);
  const std::string log = proxy.log();
  INFO(log);
  CHECK(log.find("cutting the lame duck short") != std::string::npos);
  CHECK(log.find("lame duck over") == std::string::npos);
}

TEST_CASE("after shutdown_grace a transaction still open is ended with 57P01") {
  auto& pg = PgSandbox::shared();
  KanonProxy proxy(pg.port(), "shutdown_grace: 1s\n");
  PGconn* conn = PQconnectdb(proxy.conninfo("analyst").c_str());
  REQUIRE(PQstatus(conn) == CONNECTION_OK);
  REQUIRE(exec(conn, "BEGIN").ok);
  const auto t0 = Clock::now();
  CHECK(proxy.process().signal_and_wait(SIGTERM, 15) == 0);
  // Not before the grace period is over (no upper bound: the machine may be busy).
  CHECK(Clock::now() - t0 >= std::chrono::milliseconds(900));
  const Query q = exec(conn, "SELECT 1");
  CHECK_FALSE(q.ok);
  CHECK_MESSAGE(is_shutdown_message(q.message), q.message);
  PQfinish(conn);
  CHECK(proxy.log().find("shutdown_grace over") != std::string::npos);
}

TEST_CASE("console SHUTDOWN drains like SIGTERM and kanon exits 0") {
  auto& pg = PgSandbox::shared();
  KanonProxy proxy(pg.port(), kAdmin);
  PGconn* conn = PQconnectdb(proxy.conninfo("analyst").c_str());
  REQUIRE(PQstatus(conn) == CONNECTION_OK);
  const auto r = console(proxy, "SHUTDOWN");
  CHECK_MESSAGE(r.out.find("draining") != std::string::npos, (r.out + r.err));
  CHECK(proxy.process().signal_and_wait(0, 10) == 0);  // signal 0: only waits
  const Query q = exec(conn, "SELECT 1");
  CHECK_FALSE(q.ok);
  CHECK_MESSAGE(is_shutdown_message(q.message), q.message);
  PQfinish(conn);
}

TEST_CASE("PAUSE waits for open transactions, then holds queries and connections until RESUME") {
  auto& pg = PgSandbox::shared();
  KanonProxy proxy(pg.port(), kAdmin);
  PGconn* in_tx = PQconnectdb(proxy.conninfo("analyst").c_str());
  PGconn* idle = PQconnectdb(proxy.conninfo("analyst").c_str());
  REQUIRE(PQstatus(in_tx) == CONNECTION_OK);
  REQUIRE(PQstatus(idle) == CONNECTION_OK);
  REQUIRE(exec(in_tx, "BEGIN").ok);

  std::atomic<bool> paused{false};
  CommandResult pause_result;
  std::thread pauser([&] {
    pause_result = console(proxy, "PAUSE");
    paused = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK_FALSE(paused.load());  // a transaction is open
  CHECK(exec(in_tx, "SELECT 6").value == "6");
  CHECK(exec(in_tx, "COMMIT").ok);
  pauser.join();
  CHECK_MESSAGE(pause_result.out.find("paused") != std::string::npos,
                (pause_result.out + pause_result.err));

  // A query of an idle session waits...
  REQUIRE(PQsendQuery(idle, "SELECT 7") == 1);
  // ...and so does a new connection.
  std::atomic<bool> connected{false};
  PGconn* fresh = nullptr;
  std::thread connector([&] {
    fresh = PQconnectdb(proxy.conninfo("analyst").c_str());
    connected = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  REQUIRE(PQconsumeInput(idle) == 1);
  CHECK(PQisBusy(idle) == 1);
  CHECK_FALSE(connected.load());
  // The console itself is not held.
  CHECK(console(proxy, "SHOW CLIENTS").exit_code == 0);

  const auto resumed = console(proxy, "RESUME");
  CHECK_MESSAGE(resumed.out.find("resumed") != std::string::npos, (resumed.out + resumed.err));
  PGresult* res = PQgetResult(idle);
  REQUIRE(PQresultStatus(res) == PGRES_TUPLES_OK);
  CHECK(std::string(PQgetvalue(res, 0, 0)) == "7");
  PQclear(res);
  while ((res = PQgetResult(idle)) != nullptr) PQclear(res);
  connector.join();
  REQUIRE(PQstatus(fresh) == CONNECTION_OK);
  CHECK(exec(fresh, "SELECT 8").value == "8");
  PQfinish(fresh);
  PQfinish(idle);
  PQfinish(in_tx);
}

// The proxy's life around its sessions: client limits, an unreachable or
// lost backend, and a clean shutdown on SIGTERM and SIGINT (both drain; the
// drain itself is tested in proxy_drain_test.cc).
#include <doctest/doctest.h>
#include <libpq-fe.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <thread>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/process.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/wait.h"

using namespace kanon::testing;

namespace {

std::string error_of(PGconn* conn) {
  return PQerrorMessage(conn);
}

struct Query {
  bool ok;
  std::string value;
  std::string sqlstate;
  std::string message;
};

Query exec(PGconn* conn, const std::string& sql) {
  PGresult* res = PQexec(conn, sql.c_str());
  Query q{PQresultStatus(res) == PGRES_TUPLES_OK, "", "", error_of(conn)};
  if (q.ok) q.value = PQgetvalue(res, 0, 0);
  if (const char* s = PQresultErrorField(res, PG_DIAG_SQLSTATE)) q.sqlstate = s;
  PQclear(res);
  return q;
}

}  // namespace

TEST_CASE("SIGTERM and SIGINT stop accepting, end sessions with 57P01 and exit 0") {
  auto& pg = PgSandbox::shared();
  for (int signo : {SIGTERM, SIGINT}) {
    CAPTURE(signo);
    KanonProxy proxy(pg.port());
    PGconn* conn = PQconnectdb(proxy.conninfo("analyst").c_str());
    REQUIRE(PQstatus(conn) == CONNECTION_OK);
    CHECK(exec(conn, "SELECT 5").value == "5");
    CHECK(proxy.process().signal_and_wait(signo, 10) == 0);
    const Query after = exec(conn, "SELECT 6");
    CHECK_FALSE(after.ok);
    PQfinish(conn);
    CHECK(proxy.log().find("terminating connection because kanon is shutting down") ==
          std::string::npos);  // the log records the signal, not the client's message
    CHECK(proxy.log().find("shutting down") != std::string::npos);
    CHECK_FALSE(wait_for_port(proxy.port(), 1));
    // The backend session was ended too.
    CHECK(pg.psql("SELECT count(*) FROM pg_stat_activity WHERE usename = 'analyst' AND "
                  "pid <> pg_backend_pid()") == "0\n");
  }
}

TEST_CASE(
    "a client busy at shutdown finishes its statement, then is told why the connection ends") {
  auto& pg = PgSandbox::shared();
  KanonProxy proxy(pg.port());
  PGconn* conn = PQconnectdb(proxy.conninfo("analyst").c_str());
  REQUIRE(PQstatus(conn) == CONNECTION_OK);
  // The 57P01 may arrive in the same read as the statement's ReadyForQuery:
  // libpq then hands it to the notice processor while idle, and the next
  // query only sees the closed connection.
  std::string notices;
  PQsetNoticeProcessor(
      conn, [](void* out, const char* m) { static_cast<std::string*>(out)->append(m); }, &notices);
  // The statement waits for a lock the test holds, so it is still running
  // when the drain begins however busy the machine is.
  pqxx::connection locker(pg.conninfo("postgres"));
  pqxx::nontransaction(locker).exec("SELECT pg_advisory_lock(4343)");
  REQUIRE(PQsendQuery(conn, "SELECT pg_advisory_xact_lock(4343)") == 1);
  // SIGTERM once the statement runs: before kanon has read it, the session
  // is idle and a drain ends it at once.
  REQUIRE(until([&] {
    return pg.psql(
               "SELECT count(*) FROM pg_stat_activity WHERE usename = 'analyst' AND "
               "wait_event_type = 'Lock' AND query LIKE 'SELECT pg_advisory_xact_lock%'") == "1\n";
  }));
  std::thread stopper([&] { proxy.process().signal_and_wait(SIGTERM, 120); });
  const bool draining =
      until([&] { return proxy.log().find("draining: no new connections") != std::string::npos; });
  pqxx::nontransaction(locker).exec("SELECT pg_advisory_unlock(4343)");
  PGresult* res;
  std::string messages;
  bool finished = false;
  while ((res = PQgetResult(conn)) != nullptr) {
    finished = finished || PQresultStatus(res) == PGRES_TUPLES_OK;
    messages += PQresultErrorMessage(res);
    PQclear(res);
  }
  CHECK(draining);
  CHECK(finished);  // the drain let the statement finish
  messages += exec(conn, "SELECT 1").message;
  stopper.join();
  messages += notices;
  CHECK_MESSAGE(messages.find("kanon is shutting down") != std::string::npos, messages);
  PQfinish(conn);
}

TEST_CASE("clients beyond limits.max_clients are refused with 53300") {
  auto& pg = PgSandbox::shared();
  KanonProxy proxy(pg.port(), "limits: {max_clients: 2}\n");
  PGconn* a = PQconnectdb(proxy.conninfo("analyst").c_str());
  PGconn* b = PQconnectdb(proxy.conninfo("analyst").c_str());
  REQUIRE(PQstatus(a) == CONNECTION_OK);
  REQUIRE(PQstatus(b) == CONNECTION_OK);
  PGconn* c = PQconnectdb(proxy.conninfo("analyst").c_str());
  CHECK(PQstatus(c) == CONNECTION_BAD);
  CHECK_MESSAGE(error_of(c).find("sorry, too many clients already") != std::string::npos,
                error_of(c));
  PQfinish(c);
  PQfinish(b);
  // A slot frees up when a client leaves.
  PGconn* d = nullptr;
  until([&] {
    d = PQconnectdb(proxy.conninfo("analyst").c_str());
    if (PQstatus(d) == CONNECTION_OK) return true;
    PQfinish(d);
    d = nullptr;
    return false;
  });
  REQUIRE(d != nullptr);
  CHECK(exec(d, "SELECT 3").value == "3");
  CHECK(exec(a, "SELECT 4").value == "4");
  PQfinish(d);
  PQfinish(a);
}

TEST_CASE("an unreachable backend gets the client a clear 08006 error") {
  KanonProxy proxy(free_port());
  PGconn* conn = PQconnectdb(proxy.conninfo("analyst").c_str());
  CHECK(PQstatus(conn) == CONNECTION_BAD);
  CHECK(error_of(conn).find("kanon cannot connect to the PostgreSQL server") != std::string::npos);
  PQfinish(conn);
}

// --listen, --backend and --log-level hold over the file after a RELOAD and
// a SIGHUP, which read the file anew (found by an adversarial probe: after
// RELOAD every new session went to the file's backend address).
TEST_CASE("command-line options hold across RELOAD and SIGHUP") {
  auto& pg = PgSandbox::shared();
  const std::string dir = scratch_path("kanon-cli-reload");
  std::filesystem::create_directories(dir);
  const std::string config = dir + "/kanon.yaml";
  // The file names a backend where nothing listens and another port.
  std::ofstream(config) << "listen: {host: 127.0.0.1, port: " << free_port() << "}\n"
                        << "backend: {host: 127.0.0.1, port: " << free_port()
                        << ", user: postgres, dbname: postgres}\n"
                        << "admin: {users: [postgres]}\n"
                        << "log_level: error\n";
  const uint16_t port = free_port();
  const std::string log_path = dir + "/kanon.log";
  ChildProcess kanon({kanon_executable(), "proxy", "--config", config, "--listen",
                      "127.0.0.1:" + std::to_string(port), "--backend",
                      "127.0.0.1:" + std::to_string(pg.port()), "--log-level", "info"},
                     log_path);
  REQUIRE(wait_for_port(port, 20));
  const auto conninfo = [&](const std::string& db) {
    return "host=127.0.0.1 port=" + std::to_string(port) + " user=postgres dbname=" + db;
  };
  const auto serves = [&] {
    PGconn* conn = PQconnectdb(conninfo("postgres").c_str());
    const bool ok = PQstatus(conn) == CONNECTION_OK && exec(conn, "SELECT 41 + 1").value == "42";
    PQfinish(conn);
    return ok;
  };
  REQUIRE(serves());
  {
    PGconn* console = PQconnectdb(conninfo("kanon").c_str());
    REQUIRE_MESSAGE(PQstatus(console) == CONNECTION_OK, error_of(console));
    PGresult* res = PQexec(console, "RELOAD");
    CHECK_MESSAGE(PQresultStatus(res) != PGRES_FATAL_ERROR, error_of(console));
    PQclear(res);
    PQfinish(console);
  }
  CHECK(serves());
  const auto reloads = [&] {
    const std::string log = read_file(log_path);
    size_t n = 0;
    for (size_t at = log.find(" reloaded: "); at != std::string::npos;
         at = log.find(" reloaded: ", at + 1))
      ++n;
    return n;
  };
  CHECK(reloads() == 1);
  ::kill(kanon.pid(), SIGHUP);
  REQUIRE(until([&] { return reloads() == 2; }));
  CHECK(serves());
  // --log-level info, not the file's error: the reloads were logged, and
  // listen was not taken for a change.
  CHECK(read_file(log_path).find("listen, threads and io_placement change only at restart") ==
        std::string::npos);
}

// Runs last: killing a server process makes PostgreSQL restart all sessions.
TEST_CASE("a backend that dies closes its client with an error; other clients are unaffected") {
  auto& pg = PgSandbox::shared();
  KanonProxy proxy(pg.port());
  PGconn* victim = PQconnectdb(proxy.conninfo("analyst").c_str());
  REQUIRE(PQstatus(victim) == CONNECTION_OK);

  SUBCASE("terminated by an administrator: the server's own FATAL reaches the client") {
    const std::string pid = exec(victim, "SELECT pg_backend_pid()").value;
    pg.psql("SELECT pg_terminate_backend(" + pid + ")");
    const Query q = exec(victim, "SELECT 1");
    CHECK_FALSE(q.ok);
    CHECK(q.message.find("terminating connection due to administrator command") !=
          std::string::npos);
    CHECK(q.message.find("kanon lost the connection") == std::string::npos);
  }
  SUBCASE("killed: kanon reports the lost connection") {
    const std::string pid = exec(victim, "SELECT pg_backend_pid()").value;
    REQUIRE(kill(std::stoi(pid), SIGKILL) == 0);
    const Query q = exec(victim, "SELECT 1");
    CHECK_FALSE(q.ok);
    // PostgreSQL's crash restart may also close the socket first; either way
    // the client hears about it and kanon keeps running.
    const bool reported =
        q.message.find("kanon lost the connection to the PostgreSQL server") != std::string::npos ||
        q.message.find("terminating connection") != std::string::npos;
    CHECK_MESSAGE(reported, q.message);
    CHECK(proxy.process().running());
  }
  PQfinish(victim);
  // kanon keeps serving new clients (after PostgreSQL's crash recovery).
  bool served = false;
  for (int i = 0; i < 600 && !served; ++i) {
    PGconn* fresh = PQconnectdb(proxy.conninfo("analyst").c_str());
    served = PQstatus(fresh) == CONNECTION_OK && exec(fresh, "SELECT 9").value == "9";
    PQfinish(fresh);
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(served);
}

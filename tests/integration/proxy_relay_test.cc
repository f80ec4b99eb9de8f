// The transparent proxy carries real traffic: psql, pgbench in all three
// query modes, libpqxx prepared statements, COPY both ways, and cancel.
#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <chrono>
#include <pqxx/pqxx>
#include <thread>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon::testing;

namespace {

SandboxedProxy& fixture() {
  return shared_proxy();
}

CommandResult psql_through(const std::string& conninfo, const std::string& sql,
                           const std::string& input = {}) {
  return run_command({"psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", conninfo, "-c", sql}, {},
                     input);
}

}  // namespace

TEST_CASE("psql answers through the proxy exactly as directly") {
  auto& f = fixture();
  const std::string sql =
      "SELECT education, count(*) FROM adult GROUP BY education ORDER BY education";
  const auto direct = psql_through(f.pg.conninfo(), sql);
  const auto proxied = psql_through(f.proxy.conninfo(), sql);
  REQUIRE(direct.exit_code == 0);
  REQUIRE(proxied.exit_code == 0);
  CHECK(proxied.out == direct.out);
  CHECK(proxied.out.find("Bachelors|5044") != std::string::npos);

  const auto multi = psql_through(f.proxy.conninfo(), "SELECT 1; SELECT count(*) FROM people");
  CHECK(multi.out == "1\n11\n");
  const auto error = psql_through(f.proxy.conninfo(), "SELECT * FROM no_such_table");
  CHECK(error.exit_code != 0);
  CHECK(error.err.find("relation \"no_such_table\" does not exist") != std::string::npos);
}

TEST_CASE("pgbench -S runs through the proxy in simple, extended and prepared mode") {
  auto& f = fixture();
  f.pg.psql("DROP DATABASE IF EXISTS bench");
  f.pg.psql("CREATE DATABASE bench");
  const auto init =
      run_command({"pgbench", "-i", "-q", "-s", "1", f.pg.conninfo("postgres", "bench")});
  REQUIRE_MESSAGE(init.exit_code == 0, init.err);
  for (const std::string mode : {"simple", "extended", "prepared"}) {
    CAPTURE(mode);
    const auto r = run_command({"pgbench", "-n", "-S", "-M", mode, "-c", "4", "-j", "2", "-t",
                                "250", f.proxy.conninfo("postgres", "bench")});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.find("number of transactions actually processed: 1000/1000") != std::string::npos);
    CHECK(r.out.find("number of failed transactions: 0") != std::string::npos);
  }
}

TEST_CASE("libpqxx prepared statements with parameters") {
  auto& f = fixture();
  pqxx::connection direct(f.pg.conninfo());
  pqxx::work direct_tx(direct);
  const auto expected = direct_tx.exec1(
      "SELECT count(*) FILTER (WHERE sex = 'Male'), count(*) FILTER (WHERE sex = 'Female') "
      "FROM adult WHERE age = 39");

  pqxx::connection conn(f.proxy.conninfo("analyst"));
  conn.prepare("by_age", "SELECT count(*) FROM adult WHERE age = $1 AND sex = $2");
  pqxx::work tx(conn);
  const auto male = tx.exec_prepared1("by_age", 39, "Male");
  const auto female = tx.exec_prepared1("by_age", 39, "Female");
  CHECK(male[0].as<int>() == expected[0].as<int>());
  CHECK(female[0].as<int>() == expected[1].as<int>());
  CHECK(male[0].as<int>() > 0);
  CHECK(tx.exec_prepared1("by_age", 200, "Male")[0].as<int>() == 0);
  // A NULL parameter and a binary-safe text value survive the round trip.
  const auto echo = tx.exec_params1("SELECT $1::text IS NULL, $2::text", nullptr, "it's \\ ok");
  CHECK(echo[0].as<bool>());
  CHECK(echo[1].as<std::string>() == "it's \\ ok");
  tx.commit();
}

TEST_CASE("COPY FROM STDIN and COPY TO STDOUT through the proxy") {
  auto& f = fixture();
  f.pg.psql("DROP TABLE IF EXISTS copy_target; CREATE TABLE copy_target (id int, label text)");
  std::string input;
  for (int i = 1; i <= 5000; ++i) input += std::to_string(i) + ",label " + std::to_string(i) + "\n";
  const auto in =
      psql_through(f.proxy.conninfo(), "COPY copy_target FROM STDIN WITH (FORMAT csv)", input);
  REQUIRE_MESSAGE(in.exit_code == 0, in.err);
  CHECK(f.pg.psql("SELECT count(*), sum(id), max(label) FROM copy_target") ==
        "5000|12502500|label 999\n");

  const std::string copy_out = "COPY (SELECT * FROM adult ORDER BY id) TO STDOUT WITH (FORMAT csv)";
  const auto direct = psql_through(f.pg.conninfo(), copy_out);
  const auto proxied = psql_through(f.proxy.conninfo(), copy_out);
  REQUIRE(proxied.exit_code == 0);
  CHECK(proxied.out.size() > 1000000);
  CHECK(proxied.out == direct.out);

  // A failed COPY (bad data) leaves the session usable.
  const auto bad = run_command({"psql", "-X", "-At", "-d", f.proxy.conninfo(), "-c",
                                "COPY copy_target FROM STDIN WITH (FORMAT csv)", "-c", "SELECT 42"},
                               {}, "not-a-number,x\n");
  CHECK(bad.err.find("invalid input syntax for type integer") != std::string::npos);
  CHECK(bad.out.find("42") != std::string::npos);
}

// Cancels pg_sleep through `proxy`: 57014, and the session goes on.
static void check_cancel(SandboxedProxy& f, KanonProxy& proxy) {
  PGconn* conn = PQconnectdb(proxy.conninfo().c_str());
  REQUIRE(PQstatus(conn) == CONNECTION_OK);
  const int client_pid = PQbackendPID(conn);
  // The proxy hands out its own key, never the server's.
  CHECK(f.pg.psql("SELECT count(*) FROM pg_stat_activity WHERE pid = " +
                  std::to_string(client_pid)) == "0\n");
  REQUIRE(PQsendQuery(conn, "SELECT pg_sleep(30)") == 1);
  // A cancel that arrives before the server runs the query cancels nothing:
  // wait until it does.
  bool sleeping = false;
  for (int i = 0; i < 3000 && !sleeping; ++i) {
    sleeping = f.pg.psql(
                   "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                   "AND query = 'SELECT pg_sleep(30)'") == "1\n";
    if (!sleeping) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(sleeping);
  PGcancel* cancel = PQgetCancel(conn);
  char errbuf[256];
  REQUIRE(PQcancel(cancel, errbuf, sizeof errbuf) == 1);
  PQfreeCancel(cancel);
  PGresult* res = PQgetResult(conn);
  REQUIRE(res != nullptr);
  CHECK(PQresultStatus(res) == PGRES_FATAL_ERROR);
  CHECK(std::string(PQresultErrorField(res, PG_DIAG_SQLSTATE)) == "57014");
  PQclear(res);
  while ((res = PQgetResult(conn)) != nullptr) PQclear(res);
  // The session is still usable.
  res = PQexec(conn, "SELECT 7");
  CHECK(std::string(PQgetvalue(res, 0, 0)) == "7");
  PQclear(res);
  PQfinish(conn);
}

TEST_CASE("a cancel request through the proxy stops pg_sleep with 57014") {
  auto& f = fixture();
  check_cancel(f, f.proxy);
}

TEST_CASE("a backend named by host name: sessions and cancel requests reach it") {
  // kanon takes a numeric backend address as it is and resolves a name; the
  // name goes through the resolver for the session and for the cancel.
  auto& f = fixture();
  KanonProxy named(f.pg.port(), "", ", host: localhost");
  const auto r = psql_through(named.conninfo(), "SELECT current_user, 6 * 7");
  CHECK_MESSAGE(r.out == "postgres|42\n", r.err);
  check_cancel(f, named);
}

TEST_CASE("a cancel request with a wrong key cancels nothing") {
  auto& f = fixture();
  PGconn* conn = PQconnectdb(f.proxy.conninfo().c_str());
  REQUIRE(PQstatus(conn) == CONNECTION_OK);
  REQUIRE(PQsendQuery(conn, "SELECT pg_sleep(1.5), 'finished'") == 1);
  // A forged cancel with the right pid but a wrong secret.
  PGconn* other = PQconnectdb(f.proxy.conninfo().c_str());
  PGcancel* cancel = PQgetCancel(other);
  char errbuf[256];
  PQfinish(other);
  (void)PQcancel(cancel, errbuf, sizeof errbuf);
  PQfreeCancel(cancel);
  PGresult* res = PQgetResult(conn);
  REQUIRE(res != nullptr);
  CHECK(PQresultStatus(res) == PGRES_TUPLES_OK);
  CHECK(std::string(PQgetvalue(res, 0, 1)) == "finished");
  PQclear(res);
  while ((res = PQgetResult(conn)) != nullptr) PQclear(res);
  PQfinish(conn);
}

// The matrix over TLS: kanon terminates TLS from clients with a throwaway
// CA's certificate for 127.0.0.1/localhost, and talks to PostgreSQL over TLS
// verified with backend.sslmode verify-full. libpq (sslmode=require and
// verify-full), psql, libpqxx, psycopg2, node-postgres and pgJDBC (ssl=true,
// sslmode=verify-full, sslrootcert) log in as md5 and SCRAM users (libpq's
// default channel_binding=prefer) and get masked rows.
#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <memory>

#include "tests/clients/client_fixture.h"
#include "tests/clients/matrix_checks.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/tls_certs.h"

using namespace kanon::testing;

namespace {

ClientFixture& fixture() {
  return ClientFixture::shared({.client_tls = true, .backend_tls = true});
}

Endpoint verify_full(Endpoint e, const std::string& host = "127.0.0.1") {
  e.host = host;
  e.sslmode = "verify-full";
  e.sslrootcert = TlsCerts::shared().ca_cert();
  return e;
}

struct PgConnDeleter {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using Conn = std::unique_ptr<PGconn, PgConnDeleter>;

Conn connect(const Endpoint& e) {
  return Conn(PQconnectdb(libpq_conninfo(e).c_str()));
}

std::string query_value(PGconn* c, const std::string& sql) {
  PGresult* r = PQexec(c, sql.c_str());
  std::string v = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1
                      ? PQgetvalue(r, 0, 0)
                      : std::string("error: ") + PQresultErrorMessage(r);
  PQclear(r);
  return v;
}

}  // namespace

// Connects with sslmode=require and verify-full, by IP and by name, and
// checks that TLS is in use and who logged in. libpq's defaults otherwise:
// channel_binding=prefer, gssencmode=prefer.
void check_libpq_logins(const Endpoint& base) {
  const std::string user = base.user;
  for (const std::string mode : {"require", "verify-full"}) {
    for (const std::string host : {"127.0.0.1", "localhost"}) {
      CAPTURE(user);
      CAPTURE(mode);
      CAPTURE(host);
      Endpoint e = verify_full(base, host);
      e.sslmode = mode;
      if (mode == "require") e.sslrootcert.clear();
      const Conn c = connect(e);
      CHECK_MESSAGE(PQstatus(c.get()) == CONNECTION_OK, std::string(PQerrorMessage(c.get())));
      if (PQstatus(c.get()) != CONNECTION_OK) continue;
      CHECK(PQsslInUse(c.get()) == 1);
      const char* protocol = PQsslAttribute(c.get(), "protocol");
      REQUIRE(protocol != nullptr);
      CHECK(std::string(protocol).rfind("TLSv1.", 0) == 0);
      CHECK(query_value(c.get(), "SELECT current_user") == user);
    }
  }
}

TEST_CASE("libpq sslmode=require and verify-full: TLS in use for trust and md5 users") {
  auto& f = fixture();
  check_libpq_logins(f.kanon("analyst"));
  check_libpq_logins(f.kanon("kanon_md5", "md5-secret"));
}

TEST_CASE("libpq sslmode=require and verify-full: SCRAM with channel_binding=prefer") {
  // kanon with a plaintext backend connection: the supported configuration
  // for SCRAM logins of clients that can bind channels (docs/proxy.md).
  check_libpq_logins(fixture().kanon_plain_backend("kanon_scram", "scram-secret"));
}

TEST_CASE("libpq verify-full refuses a certificate from another CA; a wrong password still fails") {
  auto& f = fixture();
  Endpoint e = verify_full(f.kanon("kanon_scram", "scram-secret"));
  e.sslrootcert = TlsCerts::shared().other_ca_cert();
  const Conn other = connect(e);
  CHECK(PQstatus(other.get()) == CONNECTION_BAD);
  CHECK_MESSAGE(std::string(PQerrorMessage(other.get())).find("certificate verify failed") !=
                    std::string::npos,
                std::string(PQerrorMessage(other.get())));
  const Conn wrong = connect(verify_full(f.kanon("kanon_md5", "md5-secretx")));
  CHECK(PQstatus(wrong.get()) == CONNECTION_BAD);
  CHECK_MESSAGE(
      std::string(PQerrorMessage(wrong.get()))
              .find("password authentication failed for user \"kanon_md5\"") != std::string::npos,
      std::string(PQerrorMessage(wrong.get())));
}

TEST_CASE("kanon reaches PostgreSQL over TLS (backend.sslmode verify-full)") {
  auto& f = fixture();
  const Conn c = connect(verify_full(f.kanon("postgres")));
  REQUIRE_MESSAGE(PQstatus(c.get()) == CONNECTION_OK, std::string(PQerrorMessage(c.get())));
  CHECK(query_value(c.get(), "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()") == "t");
}

TEST_CASE("a plaintext client is still served when TLS is configured") {
  auto& f = fixture();
  Endpoint e = f.kanon("analyst");
  e.sslmode = "disable";
  const Conn c = connect(e);
  REQUIRE_MESSAGE(PQstatus(c.get()) == CONNECTION_OK, std::string(PQerrorMessage(c.get())));
  CHECK(PQsslInUse(c.get()) == 0);
}

TEST_CASE("psql over verify-full: \\conninfo reports TLS, rows are masked") {
  auto& f = fixture();
  const Endpoint e = verify_full(f.kanon("kanon_md5", "md5-secret"));
  const auto info = run_command({"psql", "-X", "-d", libpq_conninfo(e), "-c", "\\conninfo"});
  REQUIRE_MESSAGE(info.exit_code == 0, info.err);
  CHECK(info.out.find("SSL connection (protocol: TLSv1.") != std::string::npos);
  const auto rows = run_command({"psql", "-X", "-A", "-t", "-F", "\t", "-P", "null=\\N", "-d",
                                 libpq_conninfo(e), "-c", "SELECT * FROM people ORDER BY id"});
  REQUIRE_MESSAGE(rows.exit_code == 0, rows.err);
  const auto want =
      f.expected({{"query", "p", "SELECT * FROM {people} ORDER BY id", {}}}, f.masked());
  std::string text;
  for (const auto& row : want.at("p").rows) text += row + "\n";
  CHECK(rows.out == text);
}

TEST_CASE("libpqxx over TLS (verify-full): masked rows for an md5 user, raw for postgres") {
  auto& f = fixture();
  check_restricted(f, Driver::libpqxx, verify_full(f.kanon("kanon_md5", "md5-secret")),
                   protected_steps());
  check_exempt(f, Driver::libpqxx, verify_full(f.kanon("postgres")));
}

TEST_CASE("pgJDBC ssl=true sslmode=verify-full: masked rows, prepared statements, metadata") {
  auto& f = fixture();
  const Endpoint md5 = verify_full(f.kanon("kanon_md5", "md5-secret"));
  check_restricted(f, Driver::jdbc, md5, protected_steps());
  const std::vector<Step> meta = {{"tables", "tables", "public", {}},
                                  {"columns", "people_columns", "public\tpeople", {}}};
  const Sections via = run_driver(Driver::jdbc, md5, meta);
  const Sections direct = run_driver(Driver::jdbc, f.direct("kanon_md5", "md5-secret"), meta);
  const std::string diff = difference(direct, via);
  CHECK_MESSAGE(diff.empty(), diff);
  CHECK(via.at("people_columns").rows.size() == 7);
}

TEST_CASE("psycopg2 and node-postgres over TLS (verify-full): masked rows for an md5 user") {
  auto& f = fixture();
  for (const Driver d : {Driver::psycopg2, Driver::node})
    check_restricted(f, d, verify_full(f.kanon("kanon_md5", "md5-secret")), people_steps());
}

void check_scram(const Endpoint& through, const std::vector<Driver>& drivers) {
  auto& f = fixture();
  for (const Driver d : drivers) {
    try {
      check_restricted(f, d, verify_full(through), people_steps());
    } catch (const std::exception& e) {
      FAIL_CHECK(driver_name(d) << ": " << std::string(e.what()));
    }
  }
}

TEST_CASE("SCRAM over client TLS, plaintext backend: masked rows with every driver's defaults") {
  check_scram(fixture().kanon_plain_backend("kanon_scram", "scram-secret"),
              {Driver::libpqxx, Driver::psycopg2, Driver::node, Driver::jdbc});
}

TEST_CASE(
    "SCRAM over client and backend TLS: node-postgres and pgJDBC (no channel binding offered)") {
  check_scram(fixture().kanon("kanon_scram", "scram-secret"), {Driver::node, Driver::jdbc});
}

// docs/proxy.md: with TLS on both sides, a libpq client that could bind
// channels says so in its SCRAM header ('y') and PostgreSQL, which supports
// binding on its TLS connection from kanon, refuses the apparent downgrade.
// The refusal is checked as it is; when kanon lifts the limitation, this
// case fails and becomes a check_scram of these drivers.
TEST_CASE(
    "SCRAM over client and backend TLS: libpq clients refused for channel binding (known "
    "limitation)") {
  auto& f = fixture();
  const Endpoint through = f.kanon("kanon_scram", "scram-secret");
  for (const Driver d : {Driver::libpqxx, Driver::psycopg2}) {
    CAPTURE(driver_name(d));
    std::string error;
    try {
      check_restricted(f, d, verify_full(through), people_steps());
    } catch (const std::exception& e) {
      error = e.what();
    }
    CHECK_MESSAGE(error.find("channel binding") != std::string::npos, error);
  }
}

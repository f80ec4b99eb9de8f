// Authentication is relayed unchanged: trust, cleartext password, md5 and
// SCRAM-SHA-256 users log in through the proxy; wrong passwords are refused
// by PostgreSQL itself. Encryption requests are declined with 'N'.
#include <doctest/doctest.h>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon::testing;

namespace {

SandboxedProxy& fixture() {
  return shared_proxy();
}

CommandResult login(const std::string& conninfo) {
  return run_command({"psql", "-X", "-At", "-d", conninfo, "-c", "SELECT current_user"});
}

}  // namespace

TEST_CASE("password users log in through the proxy with the right password only") {
  auto& f = fixture();
  struct Case {
    std::string user, password;
  };
  for (const Case& c : {Case{"kanon_md5", "md5-secret"}, Case{"kanon_scram", "scram-secret"},
                        Case{"kanon_password", "password-secret"}}) {
    CAPTURE(c.user);
    const auto ok = login(f.proxy.conninfo(c.user, "postgres", c.password));
    CHECK_MESSAGE(ok.exit_code == 0, ok.err);
    CHECK(ok.out == c.user + "\n");
    const auto wrong = login(f.proxy.conninfo(c.user, "postgres", c.password + "x"));
    CHECK(wrong.exit_code != 0);
    CHECK(wrong.err.find("password authentication failed for user \"" + c.user + "\"") !=
          std::string::npos);
  }
}

TEST_CASE("the proxy relays the server's authentication method unchanged") {
  auto& f = fixture();
  // A SCRAM login whose password the client does not have fails the same way
  // as directly: libpq is asked for a password it lacks.
  const auto direct = login(f.pg.conninfo("kanon_scram"));
  const auto proxied = login(f.proxy.conninfo("kanon_scram"));
  CHECK(direct.exit_code != 0);
  CHECK(proxied.exit_code != 0);
  CHECK(proxied.err.find("no password supplied") != std::string::npos);
  CHECK(direct.err.find("no password supplied") != std::string::npos);
}

TEST_CASE("trust users and startup parameters pass through") {
  auto& f = fixture();
  const auto r = run_command(
      {"psql", "-X", "-At", "-d",
       f.proxy.conninfo("analyst") +
           " application_name=kanon-test options='-c search_path=pg_catalog'",
       "-c", "SELECT current_setting('application_name'), current_setting('search_path')"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "kanon-test|pg_catalog\n");
}

TEST_CASE("encryption requests are declined, so sslmode=require fails and prefer falls back") {
  auto& f = fixture();
  const auto require = login(f.proxy.conninfo() + " sslmode=require");
  CHECK(require.exit_code != 0);
  CHECK(require.err.find("server does not support SSL") != std::string::npos);
  const auto prefer = login(f.proxy.conninfo() + " sslmode=prefer gssencmode=prefer");
  CHECK_MESSAGE(prefer.exit_code == 0, prefer.err);
  CHECK(prefer.out == "postgres\n");
}

TEST_CASE("an unknown database or user gets the server's FATAL error") {
  auto& f = fixture();
  const auto r = login(f.proxy.conninfo("postgres", "no_such_db"));
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("database \"no_such_db\" does not exist") != std::string::npos);
  const auto u = login(f.proxy.conninfo("nobody_here"));
  CHECK(u.exit_code != 0);
  CHECK(u.err.find("role \"nobody_here\" does not exist") != std::string::npos);
}

// TLS on both legs. Toward clients: an SSLRequest is answered 'S' when a
// certificate is configured, libpq's sslmode=require and verify-full work,
// a wrong CA fails, SCRAM with libpq's default channel_binding=prefer works
// and channel_binding=require fails clearly (kanon never offers -PLUS).
// Toward the backend: sslmode disable, prefer, require, verify-ca and
// verify-full, as pg_stat_ssl on the server sees them.
#include <doctest/doctest.h>

#include <filesystem>
#include <thread>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/tls_certs.h"
#include "tests/support/wait.h"

using namespace kanon::testing;

namespace {

std::string tls_yaml() {
  const auto& certs = TlsCerts::shared();
  return "tls: {cert: " + certs.server_cert() + ", key: " + certs.server_key() + "}\npolicies: [" +
         source_dir() + "/config/policies/people.yaml]\n";
}

KanonProxy& tls_proxy() {
  static KanonProxy proxy(PgSandbox::shared().port(), tls_yaml());
  return proxy;
}

CommandResult psql(const std::string& conninfo, const std::string& sql) {
  return run_command({"psql", "-X", "-At", "-d", conninfo, "-c", sql});
}

// Turns TLS on in the sandbox server, with the test CA's server certificate.
void enable_server_tls() {
  static bool done = false;
  if (done) return;
  auto& pg = PgSandbox::shared();
  const auto& certs = TlsCerts::shared();
  const std::string data = pg.dir() + "/data";
  for (const auto& [from, to] : {std::pair{certs.server_cert(), "server.crt"},
                                 std::pair{certs.server_key(), "server.key"}}) {
    std::filesystem::copy_file(from, data + "/" + to,
                               std::filesystem::copy_options::overwrite_existing);
    const auto r = run_command({"sh", "-c",
                                "chmod 600 '" + data + "/" + to +
                                    "' && (id -u postgres >/dev/null "
                                    "2>&1 && [ \"$(id -u)\" = 0 ] && chown postgres '" +
                                    data + "/" + to + "' || true)"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }
  pg.psql("ALTER SYSTEM SET ssl = on");
  pg.psql("SELECT pg_reload_conf()");
  // The reload is asynchronous: wait until a TLS connection works.
  if (until([&] {
        return psql(pg.conninfo("postgres") + " sslmode=require", "SELECT 1").exit_code == 0;
      })) {
    done = true;
    return;
  }
  FAIL("the sandbox server did not start serving TLS");
}

}  // namespace

TEST_CASE("clients: sslmode=require and verify-full through kanon, masked results") {
  auto& proxy = tls_proxy();
  const auto& certs = TlsCerts::shared();
  const auto req =
      psql(proxy.conninfo("analyst") + " sslmode=require", "SELECT city FROM people WHERE id = 1");
  CHECK_MESSAGE(req.exit_code == 0, req.err);
  CHECK(req.out == "\n");  // Washington is not released: NULL
  const auto full =
      psql(proxy.conninfo("analyst") + " sslmode=verify-full sslrootcert=" + certs.ca_cert(),
           "SELECT city FROM people WHERE id = 3");
  CHECK_MESSAGE(full.exit_code == 0, full.err);
  CHECK(full.out == "Hamlet\n");
  const auto host_name = run_command(
      {"psql", "-X", "-At", "-d",
       "host=localhost port=" + std::to_string(proxy.port()) +
           " user=analyst dbname=postgres sslmode=verify-full sslrootcert=" + certs.ca_cert(),
       "-c", "SELECT 1"});
  CHECK_MESSAGE(host_name.exit_code == 0, host_name.err);
  const auto wrong_ca =
      psql(proxy.conninfo("analyst") + " sslmode=verify-full sslrootcert=" + certs.other_ca_cert(),
           "SELECT 1");
  CHECK(wrong_ca.exit_code != 0);
  CHECK(wrong_ca.err.find("certificate verify failed") != std::string::npos);
}

TEST_CASE("clients: SCRAM and md5 over TLS; channel binding cannot pass a proxy") {
  auto& proxy = tls_proxy();
  const auto scram =
      psql(proxy.conninfo("kanon_scram", "postgres", "scram-secret") + " sslmode=require",
           "SELECT current_user");
  CHECK_MESSAGE(scram.exit_code == 0, scram.err);
  CHECK(scram.out == "kanon_scram\n");
  const auto md5 = psql(proxy.conninfo("kanon_md5", "postgres", "md5-secret") + " sslmode=require",
                        "SELECT current_user");
  CHECK_MESSAGE(md5.exit_code == 0, md5.err);
  const auto bound = psql(proxy.conninfo("kanon_scram", "postgres", "scram-secret") +
                              " sslmode=require channel_binding=require",
                          "SELECT 1");
  CHECK(bound.exit_code != 0);
  CHECK(bound.err.find("channel binding") != std::string::npos);
}

TEST_CASE("clients: without tls: configured, TLS is refused and plain works") {
  KanonProxy plain(PgSandbox::shared().port());
  const auto req = psql(plain.conninfo("analyst") + " sslmode=require", "SELECT 1");
  CHECK(req.exit_code != 0);
  CHECK(req.err.find("server does not support SSL") != std::string::npos);
  CHECK(psql(plain.conninfo("analyst") + " sslmode=prefer", "SELECT 1").out == "1\n");
}

TEST_CASE("backend: every sslmode, as the server sees it") {
  enable_server_tls();
  const auto& certs = TlsCerts::shared();
  struct Case {
    std::string backend;
    std::string expect;  // pg_stat_ssl.ssl of kanon's backend connection, or "error"
  };
  const std::vector<Case> cases = {
      {", sslmode: disable", "f"},
      {", sslmode: prefer", "t"},
      {", sslmode: require", "t"},
      {", sslmode: verify-ca, sslrootcert: " + certs.ca_cert(), "t"},
      {", sslmode: verify-full, sslrootcert: " + certs.ca_cert(), "t"},
      {", sslmode: verify-ca, sslrootcert: " + certs.other_ca_cert(), "error"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.backend);
    KanonProxy proxy(PgSandbox::shared().port(), "", c.backend);
    const auto r =
        psql(proxy.conninfo("analyst"), "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
    if (c.expect == "error") {
      CHECK(r.exit_code != 0);
      CHECK(r.err.find("kanon cannot connect to the PostgreSQL server") != std::string::npos);
      CHECK(r.err.find("TLS") != std::string::npos);
    } else {
      CHECK_MESSAGE(r.exit_code == 0, r.err);
      CHECK(r.out == c.expect + "\n");
    }
  }
}

TEST_CASE("backend: sslmode require fails clearly when the server has no TLS") {
  // A second sandbox is not needed: a proxy in front of a proxy without
  // tls: is a server that answers 'N'.
  KanonProxy inner(PgSandbox::shared().port());
  KanonProxy outer(inner.port(), "", ", sslmode: require");
  const auto r = psql(outer.conninfo("analyst"), "SELECT 1");
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("the server does not support TLS, but backend.sslmode is require") !=
        std::string::npos);
}

// The proxy's keys of config/kanon.yaml: tls, backend.sslmode/sslrootcert,
// admin, metrics and restricted_settings — read, resolved against the file's
// directory, and every mistake reported with file, line and key. Also the
// shipped config/kanon.yaml and the compose example's kanon.yaml load.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "proxy/tls_contexts.h"
#include "settings/server_config.h"
#include "tests/settings/config_file.h"

using namespace kanon::settings;

namespace {

const std::string& kDir = kanon::testing::config_dir();

}  // namespace

TEST_CASE("proxy keys are read and paths resolved against the config file") {
  const auto cfg = load_server_config(kanon::testing::write_config(
      "tls: {cert: cert.pem, key: key.pem}\n"
      "backend: {host: db, port: 5433, sslmode: verify-full, sslrootcert: ca.crt}\n"
      "admin: {database: console, users: [alice, bob], auth_database: template1}\n"
      "metrics: {listen: \"0.0.0.0:9187\"}\n"
      "restricted_settings: {jit: \"off\", max_parallel_workers_per_gather: 0}\n"));
  CHECK(cfg.tls.enabled());
  CHECK(cfg.tls.cert == kDir + "/cert.pem");
  CHECK(cfg.tls.key == kDir + "/key.pem");
  CHECK(cfg.backend_tls.mode == SslMode::kVerifyFull);
  CHECK(cfg.backend_tls.rootcert == kDir + "/ca.crt");
  CHECK(cfg.admin.database == "console");
  CHECK(cfg.admin.users == std::vector<std::string>{"alice", "bob"});
  CHECK(cfg.admin.auth_database == "template1");
  CHECK(cfg.metrics.host == "0.0.0.0");
  CHECK(cfg.metrics.port == 9187);
  REQUIRE(cfg.restricted_settings.size() == 2);
  CHECK(cfg.restricted_settings[0] == std::pair<std::string, std::string>{"jit", "off"});
  CHECK(cfg.restricted_settings[1].second == "0");
}

TEST_CASE("defaults: no TLS toward clients, sslmode prefer, console 'kanon', jit off") {
  const auto cfg = load_server_config(kanon::testing::write_config("log_level: info\n"));
  CHECK_FALSE(cfg.tls.enabled());
  CHECK(cfg.backend_tls.mode == SslMode::kPrefer);
  CHECK(cfg.admin.database == "kanon");
  CHECK(cfg.admin.users.empty());
  CHECK(cfg.metrics.port == 0);
  CHECK(cfg.restricted_settings ==
        std::vector<std::pair<std::string, std::string>>{{"jit", "off"}});
}

TEST_CASE("mistakes name file, line and key") {
  CHECK(kanon::testing::config_error("log_level: info\nbackend: {sslmode: sometimes}\n") ==
        kDir +
            "/kanon.yaml:2: backend.sslmode: 'sometimes' is not one of disable, prefer, "
            "require, verify-ca, verify-full");
  CHECK(kanon::testing::config_error("backend:\n  sslmode: verify-ca\n")
            .find("backend.sslrootcert: sslmode verify-ca needs sslrootcert") != std::string::npos);
  CHECK(kanon::testing::config_error("tls: {cert: cert.pem}\n")
            .find(":1: tls: needs both cert and key") != std::string::npos);
  CHECK(kanon::testing::config_error("tls: {cert: missing.pem, key: key.pem}\n")
            .find("tls.cert: no such file: " + kDir + "/missing.pem") != std::string::npos);
  CHECK(kanon::testing::config_error("admin: {users: alice}\n")
            .find("admin.users: expected a list") != std::string::npos);
  CHECK(kanon::testing::config_error("admin: {owner: alice}\n").find("admin") != std::string::npos);
  CHECK(kanon::testing::config_error("metrics: {listen: \"nowhere\"}\n").find("metrics.listen") !=
        std::string::npos);
  CHECK(kanon::testing::config_error("restricted_settings: {\"jit; drop\": \"off\"}\n")
            .find("is not a setting name") != std::string::npos);
  CHECK(kanon::testing::config_error("restricted_settings: [jit]\n")
            .find("restricted_settings: expected a mapping") != std::string::npos);
}

TEST_CASE("unusable TLS files are refused with the file's name") {
  const auto cfg =
      load_server_config(kanon::testing::write_config("tls: {cert: cert.pem, key: key.pem}\n"));
  try {
    kanon::proxy::make_client_tls_context(cfg.tls);
    FAIL("expected an error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find(kDir + "/cert.pem") != std::string::npos);
  }
}

TEST_CASE("the shipped config/kanon.yaml loads") {
  const char* src = std::getenv("KANON_SOURCE_DIR");
  REQUIRE(src != nullptr);
  const auto cfg = load_server_config(std::string(src) + "/config/kanon.yaml");
  CHECK(cfg.admin.users == std::vector<std::string>{"postgres", "kanon_scram"});
  CHECK(cfg.policies.size() == 2);
  CHECK(cfg.metrics.port == 9187);
  CHECK(cfg.web.enabled());
  CHECK(cfg.web.listen.port == 8080);
  CHECK(cfg.shutdown_lame_duck == std::chrono::milliseconds(0));
  CHECK(cfg.shutdown_grace == std::chrono::seconds(30));
}

TEST_CASE("web: listen, tls (its own or inherited), session_timeout; mistakes are named") {
  const auto off = load_server_config(kanon::testing::write_config("log_level: info\n"));
  CHECK_FALSE(off.web.enabled());
  const auto on = load_server_config(
      kanon::testing::write_config("web: {listen: \"127.0.0.1:8081\", session_timeout: 10m}\n"));
  CHECK(on.web.listen.host == "127.0.0.1");
  CHECK(on.web.listen.port == 8081);
  CHECK(on.web.session_timeout == std::chrono::minutes(10));
  CHECK(on.web.tls.cert.empty());  // plain HTTP
  const auto inherited = load_server_config(kanon::testing::write_config(
      "tls: {cert: cert.pem, key: key.pem}\nweb: {listen: \"0.0.0.0:8443\"}\n"));
  CHECK(inherited.web.tls.cert == kDir + "/cert.pem");
  CHECK(inherited.web.tls.key == kDir + "/key.pem");
  CHECK(inherited.web.session_timeout == std::chrono::minutes(30));
  std::filesystem::create_directories(kDir + "/web");
  std::ofstream(kDir + "/web/c.pem") << "x\n";
  std::ofstream(kDir + "/web/k.pem") << "x\n";
  const auto own = load_server_config(kanon::testing::write_config(
      "tls: {cert: cert.pem, key: key.pem}\n"
      "web: {listen: \"127.0.0.1:8443\", tls: {cert: web/c.pem, key: web/k.pem}}\n"));
  CHECK(own.web.tls.cert == kDir + "/web/c.pem");
  CHECK(kanon::testing::config_error("web: {}\n").find("web: needs listen") != std::string::npos);
  CHECK(kanon::testing::config_error("web: {listen: \"127.0.0.1:0\"}\n")
            .find("'0' is not a port number") != std::string::npos);
  CHECK(kanon::testing::config_error("web: {listen: \"nonsense\"}\n").find("web.listen") !=
        std::string::npos);
  CHECK(kanon::testing::config_error("web: {listen: \"127.0.0.1:1\", session_timeout: 30s}\n")
            .find("web.session_timeout: must be at least 1m") != std::string::npos);
  CHECK(kanon::testing::config_error(
            "web: {listen: \"127.0.0.1:1\", tls: {cert: nope.pem, key: key.pem}}\n")
            .find("web.tls.cert: no such file") != std::string::npos);
  CHECK(kanon::testing::config_error("web: {listen: \"127.0.0.1:1\", port: 3}\n").find("port") !=
        std::string::npos);
}

TEST_CASE("the compose example's kanon.yaml loads, with a lame duck before the drain") {
  const char* src = std::getenv("KANON_SOURCE_DIR");
  REQUIRE(src != nullptr);
  const auto cfg = load_server_config(std::string(src) + "/deploy/compose/kanon.yaml");
  CHECK(cfg.shutdown_lame_duck == std::chrono::seconds(4));
  CHECK(cfg.shutdown_grace == std::chrono::seconds(30));
  CHECK(cfg.metrics.port == 9187);
}

TEST_CASE("audit: sinks, text and on_failure are read; mistakes are named") {
  const auto off = load_server_config(kanon::testing::write_config("log_level: info\n"));
  CHECK_FALSE(off.audit.enabled());
  const auto cfg = load_server_config(kanon::testing::write_config(
      "audit:\n  file: audit.jsonl\n  table: kanon_audit.log\n  text: none\n"
      "  on_failure: continue\n  queue_size: 50\n  exempt: true\n"));
  CHECK(cfg.audit.enabled());
  CHECK(cfg.audit.file == kDir + "/audit.jsonl");
  CHECK(cfg.audit.table == "kanon_audit.log");
  CHECK(cfg.audit.text == AuditText::kNone);
  CHECK(cfg.audit.on_failure == AuditOnFailure::kContinue);
  CHECK(cfg.audit.queue_size == 50);
  CHECK(cfg.audit.exempt);
  const auto defaults =
      load_server_config(kanon::testing::write_config("audit: {file: /var/log/a.jsonl}\n"));
  CHECK(defaults.audit.text == AuditText::kFull);
  CHECK(defaults.audit.on_failure == AuditOnFailure::kDeny);
  CHECK(defaults.audit.table.empty());
  CHECK_FALSE(defaults.audit.exempt);

  CHECK(kanon::testing::config_error("audit: {}\n").find(":1: audit: needs file, table or both") !=
        std::string::npos);
  CHECK(kanon::testing::config_error("audit:\n  file: a.jsonl\n  on_failure: maybe\n") ==
        kDir + "/kanon.yaml:3: audit.on_failure: 'maybe' is not one of deny, continue");
  CHECK(kanon::testing::config_error("audit: {file: a.jsonl, text: some}\n")
            .find("audit.text: 'some' is not one of full, none") != std::string::npos);
  CHECK(kanon::testing::config_error("audit: {table: \"Audit Log\"}\n")
            .find("audit.table: 'Audit Log' is not schema.table") != std::string::npos);
  CHECK(kanon::testing::config_error("audit: {table: nodot}\n").find("audit.table") !=
        std::string::npos);
  CHECK(kanon::testing::config_error("audit: {file: a.jsonl, rotate: daily}\n").find("audit") !=
        std::string::npos);
}

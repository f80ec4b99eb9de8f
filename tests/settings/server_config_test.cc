#include "settings/server_config.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>

#include "settings/config_keys.h"
#include "tests/settings/config_file.h"

using namespace kanon::settings;

TEST_CASE("load_server_config reads every key") {
  const auto cfg = load_server_config(kanon::testing::write_config(
      "listen: {host: 0.0.0.0, port: 7000}\nbackend: {host: db.local, port: 5433}\n"
      "limits: {max_clients: 50, max_message_size: 4096}\nlog_level: debug\nthreads: 3\n"));
  CHECK(cfg.listen.host == "0.0.0.0");
  CHECK(cfg.listen.port == 7000);
  CHECK(cfg.backend.host == "db.local");
  CHECK(cfg.backend.port == 5433);
  CHECK(cfg.limits.max_clients == 50);
  CHECK(cfg.limits.max_message_size == 4096);
  CHECK(cfg.log_level == LogLevel::kDebug);
  CHECK(cfg.threads == 3);
}

TEST_CASE("defaults apply to missing keys and to an empty file") {
  const auto cfg = load_server_config(kanon::testing::write_config(""));
  CHECK(cfg.listen.port == 6432);
  CHECK(cfg.backend.port == 5432);
  CHECK(cfg.limits.max_clients == 1000);
  CHECK(cfg.serial_masks_at == 0);  // one per core
  CHECK_FALSE(cfg.pack_sessions);   // io_placement: spread
  CHECK(or_one_per_core(3) == 3);
  CHECK(or_one_per_core(0) == std::max(1u, std::thread::hardware_concurrency()));
}

TEST_CASE("errors name file, line and key") {
  const std::string path = kanon::testing::config_dir() + "/kanon.yaml";
  CHECK(kanon::testing::config_error("threads: -1\n") ==
        path + ":1: threads: expected an integer, got '-1'");
  CHECK(kanon::testing::config_error("limits:\n  max_message_size: 10\n") ==
        path + ":2: limits.max_message_size: must be between 1024 and 1073741824");
  CHECK(kanon::testing::config_error("serial_masks_at: two\n") ==
        path + ":1: serial_masks_at: expected an integer, got 'two'");
  CHECK(kanon::testing::config_error("io_placement: balanced\n") ==
        path + ":1: io_placement: 'balanced' is not one of pack, spread");
  CHECK(kanon::testing::config_error("listen: 5\n") == path + ":1: listen: expected a mapping");
  CHECK(kanon::testing::config_error("listen:\n  host: [a]\n") ==
        path + ":2: listen.host: expected a string");
  CHECK(kanon::testing::config_error("limits: {max_clients: 5, extra: 1}\n")
            .find(":1: limits.extra: unknown key") != std::string::npos);
}

TEST_CASE("parse_endpoint") {
  CHECK(parse_endpoint("127.0.0.1:6432", "--listen").port == 6432);
  CHECK(parse_endpoint("[::1]:5432", "--backend").host == "::1");
  CHECK_THROWS_WITH_AS(parse_endpoint("host:0", "--listen"), "--listen: '0' is not a port number",
                       ConfigError);
  CHECK_THROWS_AS(parse_endpoint("nohost", "--listen"), ConfigError);
}

TEST_CASE("databases: the other databases restricted sessions may use") {
  const std::string path = kanon::testing::config_dir() + "/kanon.yaml";
  CHECK(load_server_config(kanon::testing::write_config("databases: [sales, hr]\n")).databases ==
        std::vector<std::string>{"sales", "hr"});
  CHECK(load_server_config(kanon::testing::write_config("")).databases.empty());
  CHECK(kanon::testing::config_error("databases: sales\n") ==
        path + ":1: databases: expected a list of database names");
  CHECK(kanon::testing::config_error("databases: ['']\n") ==
        path + ":1: databases[0]: empty database name");
}

TEST_CASE("shutdown_grace: a duration, 30 s by default") {
  CHECK(load_server_config(kanon::testing::write_config("")).shutdown_grace ==
        std::chrono::seconds(30));
  CHECK(load_server_config(kanon::testing::write_config("shutdown_grace: 5s\n")).shutdown_grace ==
        std::chrono::seconds(5));
  CHECK(
      load_server_config(kanon::testing::write_config("shutdown_grace: 250ms\n")).shutdown_grace ==
      std::chrono::milliseconds(250));
  CHECK(load_server_config(kanon::testing::write_config("shutdown_grace: 0\n")).shutdown_grace ==
        std::chrono::milliseconds(0));
  const std::string path = kanon::testing::config_dir() + "/kanon.yaml";
  CHECK(kanon::testing::config_error("threads: 2\nshutdown_grace: soon\n") ==
        path + ":2: shutdown_grace: 'soon' is not a duration such as 30s, 500ms or 2m");
  CHECK(kanon::testing::config_error("shutdown_grace: [1]\n") ==
        path + ":1: shutdown_grace: '' is not a duration such as 30s, 500ms or 2m");
  CHECK(kanon::testing::config_error("shutdown_grace: 2d\n") ==
        path + ":1: shutdown_grace: must be at most 24h");
}

TEST_CASE("shutdown_lame_duck: a duration, 0 (drain at once) by default") {
  CHECK(load_server_config(kanon::testing::write_config("")).shutdown_lame_duck ==
        std::chrono::milliseconds(0));
  const auto both = load_server_config(
      kanon::testing::write_config("shutdown_lame_duck: 3s\nshutdown_grace: 20s\n"));
  CHECK(both.shutdown_lame_duck == std::chrono::seconds(3));
  CHECK(both.shutdown_grace == std::chrono::seconds(20));
  CHECK(load_server_config(kanon::testing::write_config("shutdown_lame_duck: 500ms\n"))
            .shutdown_lame_duck == std::chrono::milliseconds(500));
  CHECK(load_server_config(kanon::testing::write_config("shutdown_lame_duck: 2m\n"))
            .shutdown_lame_duck == std::chrono::minutes(2));
  CHECK(load_server_config(kanon::testing::write_config("shutdown_lame_duck: 0\n"))
            .shutdown_lame_duck == std::chrono::milliseconds(0));
  const std::string path = kanon::testing::config_dir() + "/kanon.yaml";
  CHECK(kanon::testing::config_error("log_level: info\nshutdown_lame_duck: later\n") ==
        path + ":2: shutdown_lame_duck: 'later' is not a duration such as 30s, 500ms or 2m");
  CHECK(kanon::testing::config_error("shutdown_lame_duck: -1s\n") ==
        path + ":1: shutdown_lame_duck: '-1s' is not a duration such as 30s, 500ms or 2m");
  CHECK(kanon::testing::config_error("shutdown_lame_duck: {s: 1}\n") ==
        path + ":1: shutdown_lame_duck: '' is not a duration such as 30s, 500ms or 2m");
  CHECK(kanon::testing::config_error("shutdown_lame_duck: 25h\n") ==
        path + ":1: shutdown_lame_duck: must be at most 24h");
  const std::string misspelt = kanon::testing::config_error("shutdown_lameduck: 3s\n");
  CHECK(misspelt.rfind(path + ":1: shutdown_lameduck: unknown key", 0) == 0);
  CHECK(misspelt.find("shutdown_lame_duck") != std::string::npos);
}

TEST_CASE("snapshots: shared by default, named after host and port; bad values named") {
  const auto plain =
      load_server_config(kanon::testing::write_config("listen: {host: 127.0.0.1, port: 7000}\n"));
  CHECK(plain.snapshots.enabled);
  CHECK(plain.snapshots.keep == 10);
  CHECK(plain.snapshots.replica.ends_with(":7000"));
  CHECK(plain.snapshots.replica.size() > 5);
  const auto set = load_server_config(
      kanon::testing::write_config("snapshots: {shared: false, replica: kanon-a, keep: 3}\n"));
  CHECK_FALSE(set.snapshots.enabled);
  CHECK(set.snapshots.replica == "kanon-a");
  CHECK(set.snapshots.keep == 3);
  const std::string path = kanon::testing::config_dir() + "/kanon.yaml";
  CHECK(kanon::testing::config_error("snapshots: {keep: 0}\n")
            .rfind(path + ":1: snapshots.keep: ", 0) == 0);
  CHECK(kanon::testing::config_error("snapshots: {replica: ''}\n") ==
        path + ":1: snapshots.replica: must be 1 to 40 characters");
  CHECK(kanon::testing::config_error("snapshots: {shared: maybe}\n")
            .rfind(path + ":1: snapshots.shared: ", 0) == 0);
  CHECK(kanon::testing::config_error("snapshots: {builder: x}\n")
            .rfind(path + ":1: snapshots.builder: unknown key", 0) == 0);
}

TEST_CASE("the keys are one table: sections allow only its keys, the docs show it") {
  CHECK(keys_of_section("") ==
        std::vector<std::string>{"listen", "backend", "tls", "admin", "metrics", "web",
                                 "restricted_settings", "limits", "log_level", "threads",
                                 "io_placement", "serial_masks_at", "shutdown_lame_duck",
                                 "shutdown_grace", "policies", "databases", "audit", "snapshots"});
  CHECK(keys_of_section("web") == std::vector<std::string>{"listen", "tls", "session_timeout"});
  CHECK(keys_of_section("web.tls") == std::vector<std::string>{"cert", "key"});
  // An unknown key is refused at every depth, naming where it stands.
  CHECK(kanon::testing::config_error("nonsense: 1\n").find(":1: nonsense: unknown key") !=
        std::string::npos);
  CHECK(kanon::testing::config_error(
            "web: {listen: \"127.0.0.1:8080\", tls: {cert: a, key: b, pin: c}}\n")
            .find("web.tls.pin: unknown key") != std::string::npos);
  CHECK(kanon::testing::config_error("snapshots: {shared: true, keep_all: 1}\n")
            .find("snapshots.keep_all") != std::string::npos);
  // Every key has a meaning and a default, and docs/proxy.md shows this very table.
  for (const auto& k : config_keys()) {
    CAPTURE(k.path);
    CHECK(!k.meaning.empty());
    CHECK(!k.default_value.empty());
    CHECK(static_cast<bool>(k.read));
  }
  const char* src = std::getenv("KANON_SOURCE_DIR");
  REQUIRE(src != nullptr);
  std::ifstream docs(std::string(src) + "/docs/proxy.md");
  const std::string text((std::istreambuf_iterator<char>(docs)), std::istreambuf_iterator<char>());
  CHECK_MESSAGE(text.find(config_keys_markdown()) != std::string::npos,
                "docs/proxy.md's table of keys differs from settings/config_keys.cc; paste "
                "config_keys_markdown():\n"
                    << config_keys_markdown());
}

TEST_CASE("every key of the table is read into the configuration") {
  const auto cfg = load_server_config(kanon::testing::write_config(
      "listen: {host: 0.0.0.0, port: 7000}\n"
      "backend: {host: db, port: 5499, user: svc, password: pw, dbname: main, sslmode: require}\n"
      "admin: {database: console, users: [a], auth_database: template1}\n"
      "metrics: {listen: \"127.0.0.1:9100\"}\n"
      "web: {listen: \"127.0.0.1:8081\", session_timeout: 5m}\n"
      "restricted_settings: {work_mem: 8MB}\n"
      "limits: {max_clients: 7, max_message_size: 2048}\n"
      "log_level: warning\nthreads: 3\nshutdown_lame_duck: 2s\nshutdown_grace: 9s\n"
      "serial_masks_at: 6\nio_placement: pack\ndatabases: [hr]\n"
      "audit: {file: trail.jsonl, table: s.t, text: none, on_failure: continue, queue_size: 5, "
      "exempt: true}\n"
      "snapshots: {shared: false, replica: r1, keep: 4}\n"));
  CHECK(cfg.listen.host == "0.0.0.0");
  CHECK(cfg.listen.port == 7000);
  CHECK(cfg.backend.host == "db");
  CHECK(cfg.backend.port == 5499);
  CHECK(cfg.service.user == "svc");
  CHECK(cfg.service.password == "pw");
  CHECK(cfg.service.dbname == "main");
  CHECK(cfg.backend_tls.mode == SslMode::kRequire);
  CHECK(cfg.admin.database == "console");
  CHECK(cfg.admin.users == std::vector<std::string>{"a"});
  CHECK(cfg.admin.auth_database == "template1");
  CHECK(cfg.metrics.port == 9100);
  CHECK(cfg.web.listen.port == 8081);
  CHECK(cfg.web.session_timeout == std::chrono::minutes(5));
  CHECK(cfg.restricted_settings ==
        std::vector<std::pair<std::string, std::string>>{{"work_mem", "8MB"}});
  CHECK(cfg.limits.max_clients == 7);
  CHECK(cfg.limits.max_message_size == 2048);
  CHECK(cfg.log_level == LogLevel::kWarning);
  CHECK(cfg.threads == 3);
  CHECK(cfg.serial_masks_at == 6);
  CHECK(cfg.pack_sessions);
  CHECK(cfg.shutdown_lame_duck == std::chrono::seconds(2));
  CHECK(cfg.shutdown_grace == std::chrono::seconds(9));
  CHECK(cfg.databases == std::vector<std::string>{"hr"});
  CHECK(cfg.audit.file == kanon::testing::config_dir() + "/trail.jsonl");
  CHECK(cfg.audit.table == "s.t");
  CHECK(cfg.audit.text == AuditText::kNone);
  CHECK(cfg.audit.on_failure == AuditOnFailure::kContinue);
  CHECK(cfg.audit.queue_size == 5);
  CHECK(cfg.audit.exempt);
  CHECK(!cfg.snapshots.enabled);
  CHECK(cfg.snapshots.replica == "r1");
  CHECK(cfg.snapshots.keep == 4);
  CHECK(kanon::testing::config_error("log_level: loud\n")
            .find("'loud' is not one of debug, info, warning, error") != std::string::npos);
}

#include "settings/server_config.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

using namespace kanon::settings;

namespace {

std::string write_config(const std::string& text) {
  const std::string path = "/tmp/kanon-server-config-test.yaml";
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& yaml) {
  try {
    load_server_config(write_config(yaml));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("load_server_config reads every key") {
  const auto cfg = load_server_config(write_config(
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
  const auto cfg = load_server_config(write_config(""));
  CHECK(cfg.listen.port == 6432);
  CHECK(cfg.backend.port == 5432);
  CHECK(cfg.limits.max_clients == 1000);
}

TEST_CASE("errors name file, line and key") {
  const std::string path = "/tmp/kanon-server-config-test.yaml";
  CHECK(error_of("threads: -1\n") == path + ":1: threads: expected an integer, got '-1'");
  CHECK(error_of("limits:\n  max_message_size: 10\n") ==
        path + ":2: limits.max_message_size: must be between 1024 and 1073741824");
  CHECK(error_of("listen: 5\n") == path + ":1: listen: expected a mapping");
  CHECK(error_of("listen:\n  host: [a]\n") == path + ":2: listen.host: expected a string");
  CHECK(error_of("limits: {max_clients: 5, extra: 1}\n").find(":1: limits.extra: unknown key") !=
        std::string::npos);
}

TEST_CASE("parse_endpoint") {
  CHECK(parse_endpoint("127.0.0.1:6432", "--listen").port == 6432);
  CHECK(parse_endpoint("[::1]:5432", "--backend").host == "::1");
  CHECK_THROWS_WITH_AS(parse_endpoint("host:0", "--listen"), "--listen: '0' is not a port number",
                       ConfigError);
  CHECK_THROWS_AS(parse_endpoint("nohost", "--listen"), ConfigError);
}

TEST_CASE("databases: the other databases restricted sessions may use") {
  const std::string path = "/tmp/kanon-server-config-test.yaml";
  CHECK(load_server_config(write_config("databases: [sales, hr]\n")).databases ==
        std::vector<std::string>{"sales", "hr"});
  CHECK(load_server_config(write_config("")).databases.empty());
  CHECK(error_of("databases: sales\n") ==
        path + ":1: databases: expected a list of database names");
  CHECK(error_of("databases: ['']\n") == path + ":1: databases[0]: empty database name");
}

TEST_CASE("shutdown_grace: a duration, 30 s by default") {
  CHECK(load_server_config(write_config("")).shutdown_grace == std::chrono::seconds(30));
  CHECK(load_server_config(write_config("shutdown_grace: 5s\n")).shutdown_grace ==
        std::chrono::seconds(5));
  CHECK(load_server_config(write_config("shutdown_grace: 250ms\n")).shutdown_grace ==
        std::chrono::milliseconds(250));
  CHECK(load_server_config(write_config("shutdown_grace: 0\n")).shutdown_grace ==
        std::chrono::milliseconds(0));
  const std::string path = "/tmp/kanon-server-config-test.yaml";
  CHECK(error_of("threads: 2\nshutdown_grace: soon\n") ==
        path + ":2: shutdown_grace: 'soon' is not a duration such as 30s, 500ms or 2m");
  CHECK(error_of("shutdown_grace: [1]\n") ==
        path + ":1: shutdown_grace: '' is not a duration such as 30s, 500ms or 2m");
  CHECK(error_of("shutdown_grace: 2d\n") == path + ":1: shutdown_grace: must be at most 24h");
}

TEST_CASE("shutdown_lame_duck: a duration, 0 (drain at once) by default") {
  CHECK(load_server_config(write_config("")).shutdown_lame_duck == std::chrono::milliseconds(0));
  const auto both =
      load_server_config(write_config("shutdown_lame_duck: 3s\nshutdown_grace: 20s\n"));
  CHECK(both.shutdown_lame_duck == std::chrono::seconds(3));
  CHECK(both.shutdown_grace == std::chrono::seconds(20));
  CHECK(load_server_config(write_config("shutdown_lame_duck: 500ms\n")).shutdown_lame_duck ==
        std::chrono::milliseconds(500));
  CHECK(load_server_config(write_config("shutdown_lame_duck: 2m\n")).shutdown_lame_duck ==
        std::chrono::minutes(2));
  CHECK(load_server_config(write_config("shutdown_lame_duck: 0\n")).shutdown_lame_duck ==
        std::chrono::milliseconds(0));
  const std::string path = "/tmp/kanon-server-config-test.yaml";
  CHECK(error_of("log_level: info\nshutdown_lame_duck: later\n") ==
        path + ":2: shutdown_lame_duck: 'later' is not a duration such as 30s, 500ms or 2m");
  CHECK(error_of("shutdown_lame_duck: -1s\n") ==
        path + ":1: shutdown_lame_duck: '-1s' is not a duration such as 30s, 500ms or 2m");
  CHECK(error_of("shutdown_lame_duck: {s: 1}\n") ==
        path + ":1: shutdown_lame_duck: '' is not a duration such as 30s, 500ms or 2m");
  CHECK(error_of("shutdown_lame_duck: 25h\n") ==
        path + ":1: shutdown_lame_duck: must be at most 24h");
  const std::string misspelt = error_of("shutdown_lameduck: 3s\n");
  CHECK(misspelt.rfind(path + ":1: shutdown_lameduck: unknown key", 0) == 0);
  CHECK(misspelt.find("shutdown_lame_duck") != std::string::npos);
}

TEST_CASE("snapshots: shared by default, named after host and port; bad values named") {
  const auto plain = load_server_config(write_config("listen: {host: 127.0.0.1, port: 7000}\n"));
  CHECK(plain.snapshots.enabled);
  CHECK(plain.snapshots.keep == 10);
  CHECK(plain.snapshots.replica.ends_with(":7000"));
  CHECK(plain.snapshots.replica.size() > 5);
  const auto set =
      load_server_config(write_config("snapshots: {shared: false, replica: kanon-a, keep: 3}\n"));
  CHECK_FALSE(set.snapshots.enabled);
  CHECK(set.snapshots.replica == "kanon-a");
  CHECK(set.snapshots.keep == 3);
  const std::string path = "/tmp/kanon-server-config-test.yaml";
  CHECK(error_of("snapshots: {keep: 0}\n").rfind(path + ":1: snapshots.keep: ", 0) == 0);
  CHECK(error_of("snapshots: {replica: ''}\n") ==
        path + ":1: snapshots.replica: must be 1 to 40 characters");
  CHECK(error_of("snapshots: {shared: maybe}\n").rfind(path + ":1: snapshots.shared: ", 0) == 0);
  CHECK(
      error_of("snapshots: {builder: x}\n").rfind(path + ":1: snapshots.builder: unknown key", 0) ==
      0);
}

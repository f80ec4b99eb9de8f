// The `kanon` command line: version, help on every subcommand, and config
// errors that name the file, the line and the key.
#include <doctest/doctest.h>

#include <fstream>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/scratch_dir.h"

using namespace kanon::testing;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = scratch_path(name);
  std::ofstream(path) << text;
  return path;
}

CommandResult proxy_with_config(const std::string& path) {
  return run_command({kanon_executable(), "proxy", "--config", path});
}

}  // namespace

TEST_CASE("kanon --version and --help") {
  const auto v = run_command({kanon_executable(), "--version"});
  CHECK(v.exit_code == 0);
  CHECK(v.out.rfind("kanon 0.", 0) == 0);
  const auto h = run_command({kanon_executable(), "--help"});
  CHECK(h.exit_code == 0);
  for (const char* sub : {"proxy", "anonymize", "tree", "verify"}) {
    CAPTURE(sub);
    CHECK(h.out.find(std::string("\n  ") + sub + " ") != std::string::npos);
    const auto sh = run_command({kanon_executable(), sub, "--help"});
    CHECK(sh.exit_code == 0);
    CHECK(sh.out.find("Usage:") != std::string::npos);
  }
  const auto p = run_command({kanon_executable(), "proxy", "--help"});
  for (const char* flag : {"--config", "--listen", "--backend", "--log-level"})
    CHECK(p.out.find(flag) != std::string::npos);
  const auto none = run_command({kanon_executable()});
  CHECK(none.exit_code != 0);
}

TEST_CASE("a bad config file is refused with file, line and key") {
  struct Case {
    std::string yaml, expected;
  };
  const Case cases[] = {
      {"listen:\n  host: 127.0.0.1\n  port: 99999\n",
       ":3: listen.port: must be between 1 and 65535"},
      {"listen: {host: 127.0.0.1}\nlimits:\n  max_clients: many\n",
       ":3: limits.max_clients: expected an integer, got 'many'"},
      {"backend:\n  host: db\n  prot: 5432\n", ":3: backend.prot: unknown key"},
      {"log_level: loud\n", ":1: log_level: 'loud' is not one of"},
      {"listen: [1, 2\n", "kanon.yaml:2:"},
      {"listnen: {port: 1}\n", ":1: listnen: unknown key"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.yaml);
    const auto path = write_temp("kanon.yaml", c.yaml);
    const auto r = proxy_with_config(path);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find(path) != std::string::npos);
    CHECK_MESSAGE(r.err.find(c.expected) != std::string::npos, r.err);
  }
  const auto missing = proxy_with_config("/nonexistent/kanon.yaml");
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("/nonexistent/kanon.yaml: cannot open the file") != std::string::npos);
}

TEST_CASE("--listen and --backend override the file and are validated") {
  const auto path = write_temp("ok.yaml", "listen: {host: 127.0.0.1, port: 1}\n");
  const auto bad = run_command({kanon_executable(), "proxy", "--config", path, "--listen", "nope"});
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("--listen: expected HOST:PORT, got 'nope'") != std::string::npos);
  // The flag wins over the file: the proxy listens on the flag's port.
  auto& pg = PgSandbox::shared();
  const uint16_t port = free_port();
  ChildProcess proxy(
      {kanon_executable(), "proxy", "--config", path, "--listen",
       "127.0.0.1:" + std::to_string(port), "--backend", "127.0.0.1:" + std::to_string(pg.port())},
      scratch_path("override.log"));
  REQUIRE(wait_for_port(port, 20));
  const auto r = run_command({"psql", "-X", "-At", "-d",
                              make_conninfo("127.0.0.1", port, "postgres", "postgres"), "-c",
                              "SELECT count(*) FROM people"});
  CHECK(r.out == "11\n");
}

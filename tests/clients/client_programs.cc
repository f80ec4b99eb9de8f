#include "tests/clients/client_programs.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "tests/support/pg_sandbox.h"
#include "tests/support/process.h"
#include "tests/support/scratch_dir.h"

namespace kanon::testing {

namespace {

const char* const kPython = "/usr/bin/python3";  // Debian's, where python3-psycopg2 lives
const char* const kJdbcJar = "/usr/share/java/postgresql.jar";

std::string clients_source() {
  return source_dir() + "/tests/clients";
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what + " (scripts/install-deps.sh installs it)");
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

CommandResult checked(const std::vector<std::string>& argv, const Env& env = {},
                      const std::string& input = {}) {
  auto r = run_command(argv, env, input);
  if (r.exit_code != 0)
    throw std::runtime_error("`" + command_text(argv) + "` exited with " +
                             std::to_string(r.exit_code) + ":\n" + r.err + r.out);
  return r;
}

// node_modules for node/client.js, installed with `npm ci` from the committed
// package-lock.json into the build directory; reinstalled when the lock file
// changes. A file lock keeps two test processes from installing at once.
std::string node_modules() {
  static std::once_flag once;
  static std::string path;
  std::call_once(once, [] {
    require(!find_program("node").empty(), "node-postgres client: `node` is not installed");
    require(!find_program("npm").empty(), "node-postgres client: `npm` is not installed");
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(binary_dir()) / "tests/clients/node";
    fs::create_directories(dir);
    const int lock = open((dir / ".install-lock").c_str(), O_CREAT | O_RDWR, 0644);
    if (lock < 0 || flock(lock, LOCK_EX) != 0)
      throw std::runtime_error("cannot lock " + dir.string());
    const std::string wanted = read_file(clients_source() + "/node/package-lock.json");
    const fs::path stamp = dir / "node_modules/.kanon-installed-lock";
    if (read_file(stamp) != wanted || !fs::exists(dir / "node_modules/pg/package.json")) {
      for (const char* f : {"package.json", "package-lock.json"})
        fs::copy_file(clients_source() + "/node/" + f, dir / f,
                      fs::copy_options::overwrite_existing);
      checked(
          {"npm", "ci", "--prefix", dir.string(), "--no-audit", "--no-fund", "--loglevel=error"});
      fs::copy_file(clients_source() + "/node/package-lock.json", stamp,
                    fs::copy_options::overwrite_existing);
    }
    close(lock);
    path = (dir / "node_modules").string();
  });
  return path;
}

// java/KanonClient.java compiled for Java 17 into a directory of this process.
std::string java_classes() {
  static std::once_flag once;
  static std::string path;
  std::call_once(once, [] {
    require(!find_program("javac").empty(),
            "pgJDBC client: `javac` (openjdk-17-jdk-headless) is not installed");
    require(!find_program("java").empty(),
            "pgJDBC client: `java` (openjdk-17-jdk-headless) is not installed");
    require(std::filesystem::exists(kJdbcJar),
            std::string("pgJDBC client: ") + kJdbcJar + " (libpostgresql-jdbc-java) is missing");
    const std::string dir = scratch_path("jdbc");
    std::filesystem::create_directories(dir);
    checked({"javac", "--release", "17", "-d", dir, "-cp", kJdbcJar,
             clients_source() + "/java/KanonClient.java"});
    path = dir;
  });
  return path;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::vector<std::string> node_argv(const Endpoint& e) {
  std::string config =
      "{\"host\": " + json_string(e.host) + ", \"port\": " + std::to_string(e.port) +
      ", \"user\": " + json_string(e.user) + ", \"database\": " + json_string(e.dbname);
  if (!e.password.empty()) config += ", \"password\": " + json_string(e.password);
  if (e.sslmode == "require") config += ", \"ssl\": {\"rejectUnauthorized\": false}";
  if (e.sslmode == "verify-full")
    config += ", \"ssl\": {\"ca_file\": " + json_string(e.sslrootcert) + "}";
  if (!e.sslmode.empty() && e.sslmode != "require" && e.sslmode != "verify-full" &&
      e.sslmode != "disable")
    throw std::runtime_error("node client: sslmode " + e.sslmode + " is not mapped");
  return {"node", clients_source() + "/node/client.js", config + "}"};
}

std::vector<std::string> jdbc_argv(const Endpoint& e) {
  std::vector<std::string> argv{
      "java", "-cp", std::string(kJdbcJar) + ":" + java_classes(), "KanonClient",
      "jdbc:postgresql://" + e.host + ":" + std::to_string(e.port) + "/" + e.dbname,
      "user=" + e.user,
      // Server-side named statements from the first execution.
      "prepareThreshold=1"};
  if (!e.password.empty()) argv.push_back("password=" + e.password);
  if (!e.sslmode.empty()) {
    argv.push_back("sslmode=" + e.sslmode);
    if (e.sslmode != "disable") argv.push_back("ssl=true");
  }
  if (!e.sslrootcert.empty()) argv.push_back("sslrootcert=" + e.sslrootcert);
  return argv;
}

}  // namespace

std::string driver_name(Driver d) {
  switch (d) {
    case Driver::libpqxx:
      return "libpqxx";
    case Driver::psycopg2:
      return "psycopg2";
    case Driver::node:
      return "node-postgres";
    case Driver::jdbc:
      return "pgJDBC";
  }
  return "?";
}

std::string find_program(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path == nullptr ? "/usr/bin:/bin" : path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string libpq_conninfo(const Endpoint& e) {
  std::string s = make_conninfo(e.host, e.port, e.user, e.dbname, e.password);
  if (!e.sslmode.empty()) s += " sslmode=" + e.sslmode;
  if (!e.sslrootcert.empty()) s += " sslrootcert=" + e.sslrootcert;
  return s;
}

Sections run_driver(Driver d, const Endpoint& e, const std::vector<Step>& steps) {
  switch (d) {
    case Driver::libpqxx:
      return run_libpqxx(libpq_conninfo(e), steps);
    case Driver::psycopg2: {
      require(access(kPython, X_OK) == 0, "psycopg2 client: /usr/bin/python3 is not installed");
      const auto probe = run_command({kPython, "-c", "import psycopg2"});
      require(probe.exit_code == 0,
              "psycopg2 client: /usr/bin/python3 cannot import psycopg2 (Debian package "
              "python3-psycopg2): " +
                  probe.err);
      return parse_sections(
          checked({kPython, clients_source() + "/python/client.py", libpq_conninfo(e)}, {},
                  encode_steps(steps))
              .out);
    }
    case Driver::node: {
      const Env env{{"NODE_PATH", node_modules()}};
      return parse_sections(checked(node_argv(e), env, encode_steps(steps)).out);
    }
    case Driver::jdbc:
      return parse_sections(checked(jdbc_argv(e), {}, encode_steps(steps)).out);
  }
  throw std::runtime_error("unknown driver");
}

}  // namespace kanon::testing

#include "tests/support/pg_sandbox.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "tests/support/process.h"

namespace kanon::testing {

std::string source_dir() {
  const char* s = std::getenv("KANON_SOURCE_DIR");
  if (s == nullptr)
    throw std::runtime_error("KANON_SOURCE_DIR is not set (run the tests via ctest)");
  return s;
}

std::string binary_dir() {
  const char* s = std::getenv("KANON_BINARY_DIR");
  if (s == nullptr)
    throw std::runtime_error("KANON_BINARY_DIR is not set (run the tests via ctest)");
  return s;
}

PgSandbox& PgSandbox::shared() {
  static PgSandbox sandbox;
  return sandbox;
}

PgSandbox::PgSandbox() {
  const auto r = run_command({source_dir() + "/scripts/pg-sandbox.sh", "start", "--demo",
                              "--owner-pid", std::to_string(getpid())});
  if (r.exit_code != 0) throw std::runtime_error("pg-sandbox.sh start failed:\n" + r.err);
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "KANON_PG_DIR") dir_ = value;
    if (key == "KANON_PG_HOST") host_ = value;
    if (key == "KANON_PG_PORT") port_ = static_cast<uint16_t>(std::stoi(value));
  }
  if (dir_.empty() || port_ == 0) throw std::runtime_error("pg-sandbox.sh printed no cluster");
}

PgSandbox::~PgSandbox() {
  run_command({source_dir() + "/scripts/pg-sandbox.sh", "stop", dir_});
}

std::string PgSandbox::conninfo(const std::string& user, const std::string& dbname,
                                const std::string& password) const {
  return make_conninfo(host_, port_, user, dbname, password);
}

std::string PgSandbox::psql(const std::string& sql, const std::string& dbname) const {
  // A script of the test's own DDL can deadlock with a backend still reading
  // a view of the table it drops (one of a proxy that already ended, on
  // busy cores): PostgreSQL aborts one of the two, and when that is the
  // script, it runs again. Only a script that is one implicit transaction
  // (no transaction control of its own), which the abort rolled back whole.
  std::string lower = sql;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool one_transaction =
      lower.find("commit") == std::string::npos && lower.find("begin") == std::string::npos;
  for (int attempt = 1;; ++attempt) {
    const auto r = run_command({"psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d",
                                conninfo("postgres", dbname), "-c", sql});
    if (r.exit_code == 0) return r.out;
    if (!one_transaction || attempt == 3 || r.err.find("deadlock detected") == std::string::npos)
      throw std::runtime_error("psql failed: " + r.err);
  }
}

void PgSandbox::install_mask_function(const std::string& dbname) const {
  const std::string built = binary_dir() + "/maskfn/kanon_mask.so";
  if (!std::filesystem::exists(built))
    throw std::runtime_error(built + " was not built (postgresql-server-dev-15 is missing)");
  const std::string library = dir_ + "/kanon_mask.so";
  // A new file renamed over the old one: a backend that still maps the old
  // one (one that is ending, say) keeps its inode; writing into it would
  // change the code under that backend and crash the server.
  const std::string fresh = library + ".new";
  std::filesystem::copy_file(built, fresh, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::rename(fresh, library);
  const auto r =
      run_command({"psql", "-X", "-q", "-v", "library=" + library, "-d",
                   conninfo("postgres", dbname), "-f", source_dir() + "/maskfn/install.sql"});
  if (r.exit_code != 0) throw std::runtime_error("installing kanon_mask failed: " + r.err);
}

uint16_t free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    throw std::runtime_error("cannot find a free port");
  }
  close(fd);
  return ntohs(addr.sin_port);
}

std::string make_conninfo(const std::string& host, uint16_t port, const std::string& user,
                          const std::string& dbname, const std::string& password) {
  // A connection that never comes fails the test after a minute; on two
  // busy cores (CI: ctest -j2 beside the regression suite's three phases) a
  // console connection took longer than the 10 s this was (history_linking_test).
  std::string s = "host=" + host + " port=" + std::to_string(port) + " user=" + user +
                  " dbname=" + dbname + " connect_timeout=60";
  if (!password.empty()) s += " password=" + password;
  return s;
}

}  // namespace kanon::testing

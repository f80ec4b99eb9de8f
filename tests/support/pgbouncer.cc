#include "tests/support/pgbouncer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"

namespace kanon::testing {

std::string pgbouncer_executable() {
  return find_executable("pgbouncer");
}

PgBouncer::PgBouncer(uint16_t kanon_port, const std::vector<std::string>& users) {
  const std::string exe = pgbouncer_executable();
  if (exe.empty()) throw std::runtime_error("pgbouncer is not installed");
  char tmpl[] = "/tmp/kanon-pgbouncer.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  port_ = free_port();
  {
    std::ofstream users_file(dir_ + "/userlist.txt");
    for (const auto& u : users) users_file << '"' << u << "\" \"\"\n";
    std::ofstream(dir_ + "/pgbouncer.ini")
        << "[databases]\n"
        << "postgres = host=127.0.0.1 port=" << kanon_port << " dbname=postgres\n"
        << "[pgbouncer]\n"
        << "listen_addr = 127.0.0.1\n"
        << "listen_port = " << port_ << "\n"
        << "unix_socket_dir =\n"
        << "auth_type = trust\n"
        << "auth_file = " << dir_ << "/userlist.txt\n"
        << "pool_mode = session\n"
        // One server connection per login: a client waits for it while
        // PgBouncer resets it after the previous client, and then gets it
        // (with more, a quick next client may get a new one instead).
        << "default_pool_size = 1\n"
        << "logfile = " << dir_ << "/pgbouncer.log\n";
  }
  // pgbouncer will not run as root: it switches to postgres (-u), which
  // must read the files and write the log.
  std::vector<std::string> argv{exe};
  if (geteuid() == 0) {
    argv.insert(argv.end(), {"-u", "postgres"});
    const std::string chown = "chown -R postgres '" + dir_ + "'";
    if (std::system(chown.c_str()) != 0) throw std::runtime_error("cannot chown " + dir_);
  }
  chmod(dir_.c_str(), 0755);
  argv.push_back(dir_ + "/pgbouncer.ini");
  process_ = std::make_unique<ChildProcess>(argv, dir_ + "/stderr.log");
  if (!wait_for_port(port_, 20))
    throw std::runtime_error("pgbouncer did not start listening; its log:\n" + log());
}

PgBouncer::~PgBouncer() {
  process_.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string PgBouncer::conninfo(const std::string& user) const {
  return "host=127.0.0.1 port=" + std::to_string(port_) + " user=" + user + " dbname=postgres";
}

std::string PgBouncer::log() const {
  return read_file(dir_ + "/pgbouncer.log") + read_file(dir_ + "/stderr.log");
}

}  // namespace kanon::testing

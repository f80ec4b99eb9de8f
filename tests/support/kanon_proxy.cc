#include "tests/support/kanon_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "tests/support/pg_sandbox.h"

namespace kanon::testing {

SandboxedProxy& shared_proxy(const std::string& extra_yaml) {
  static SandboxedProxy instance{PgSandbox::shared(),
                                 KanonProxy(PgSandbox::shared().port(), extra_yaml)};
  return instance;
}

std::string kanon_executable() {
  return binary_dir() + "/app/kanon";
}

bool wait_for_port(uint16_t port, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

KanonProxy::KanonProxy(uint16_t backend_port, const std::string& extra_yaml,
                       const std::string& backend_extra) {
  char tmpl[] = "/tmp/kanon-proxy.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  log_path_ = dir_ + "/kanon.log";
  port_ = free_port();
  const std::string config = dir_ + "/kanon.yaml";
  std::ofstream(config) << "listen: {host: 127.0.0.1, port: " << port_ << "}\n"
                        << "backend: {"
                        << (backend_extra.find(" host:") == std::string::npos ? "host: 127.0.0.1, "
                                                                              : "")
                        << "port: " << backend_port
                        << (backend_extra.find("user:") == std::string::npos ? ", user: postgres"
                                                                             : "")
                        << ", dbname: postgres" << backend_extra << "}\n"
                        << "log_level: debug\n"
                        << extra_yaml;
  // TMPDIR: what kanon keeps in the temporary directory by default (export
  // reports, $TMPDIR/kanon-exports) goes to this directory, removed with it.
  process_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{kanon_executable(), "proxy", "--config", config}, log_path_,
      Env{{"TMPDIR", dir_}});
  config_path_ = config;
  if (!wait_for_port(port_, 20))
    throw std::runtime_error("kanon proxy did not start listening; its log:\n" + log());
}

KanonProxy::~KanonProxy() {
  process_.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string KanonProxy::conninfo(const std::string& user, const std::string& dbname,
                                 const std::string& password) const {
  return make_conninfo("127.0.0.1", port_, user, dbname, password);
}

}  // namespace kanon::testing

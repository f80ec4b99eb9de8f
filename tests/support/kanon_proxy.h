// KanonProxy: the real `kanon proxy` executable started for a test, listening
// on a free port and forwarding to a given backend. Stopped on destruction.
#pragma once

#include <memory>
#include <string>

#include "tests/support/process.h"

namespace kanon::testing {

class KanonProxy {
 public:
  // `extra_yaml` is appended to the generated config file; `backend_extra`
  // to the backend mapping (e.g. ", sslmode: require"). kanon's service
  // account is the sandbox's superuser, postgres, unless `backend_extra`
  // names a user; the backend is 127.0.0.1 unless it names a host.
  KanonProxy(uint16_t backend_port, const std::string& extra_yaml = "",
             const std::string& backend_extra = "");
  ~KanonProxy();

  uint16_t port() const { return port_; }
  std::string conninfo(const std::string& user = "postgres", const std::string& dbname = "postgres",
                       const std::string& password = "") const;
  ChildProcess& process() { return *process_; }
  std::string log() const { return read_file(log_path_); }
  const std::string& config_path() const { return config_path_; }

 private:
  uint16_t port_ = 0;
  std::string dir_;
  std::string log_path_;
  std::string config_path_;
  std::unique_ptr<ChildProcess> process_;
};

class PgSandbox;

// The process-wide sandbox with one proxy in front of it, started on first
// use; `extra_yaml` is honoured by the first call only.
struct SandboxedProxy {
  PgSandbox& pg;
  KanonProxy proxy;
};
SandboxedProxy& shared_proxy(const std::string& extra_yaml = "");

// The built `kanon` executable.
std::string kanon_executable();

// True once something accepts TCP connections on 127.0.0.1:port.
bool wait_for_port(uint16_t port, int seconds);

}  // namespace kanon::testing

// HaProxy: Debian's haproxy started for a test in front of kanon replicas.
// The generated configuration (in a temporary directory) has a TCP frontend
// on a free port that balances round-robin over the servers, checks each
// with `option httpchk GET /readyz` on its metrics port every 100 ms (each
// check may take up to 3 s: /readyz may wait 1 s for the backend), and
// does not end a server's sessions when it is marked down (no
// `on-marked-down shutdown-sessions`): a draining kanon lets them finish. A
// refused connection is retried on the other server (`option redispatch`).
// An HTTP stats listener on another free port is read as CSV; the runtime
// API (stats socket, level admin) takes commands.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace kanon::testing {

// The haproxy executable (PATH, then /usr/sbin), or "" when it is not
// installed.
std::string haproxy_executable();

struct HaproxyServer {
  std::string name;
  uint16_t port = 0;        // where clients are sent
  uint16_t check_port = 0;  // kanon's metrics listener (/readyz)
};

// One server's row of HAProxy's statistics.
struct HaproxyServerStats {
  std::string status;         // UP, DOWN, "UP 1/2", "DOWN 1/2", MAINT, ...
  long sessions_total = 0;    // stot: sessions HAProxy sent it
  long sessions_current = 0;  // scur
  long redispatches = 0;      // wredis
  long connect_errors = 0;    // econ
};

class HaProxy {
 public:
  // Writes the configuration, checks it with `haproxy -c` (throws with its
  // output on failure), starts haproxy in the foreground and waits for the
  // frontend to accept connections.
  explicit HaProxy(const std::vector<HaproxyServer>& servers);
  ~HaProxy();

  uint16_t port() const { return port_; }
  const std::string& config_text() const { return config_text_; }
  std::string log() const { return read_file(dir_ + "/haproxy.log"); }
  // The backend's servers by name, from GET /stats;csv; throws when the
  // stats listener does not answer.
  std::map<std::string, HaproxyServerStats> stats() const;
  // One runtime API command (e.g. "set server kanon/k1 state drain"); its
  // answer ("" for most set commands). Throws when the socket does not
  // answer.
  std::string command(const std::string& line) const;

 private:
  std::string dir_;
  uint16_t port_ = 0;
  uint16_t stats_port_ = 0;
  std::string config_text_;
  std::unique_ptr<ChildProcess> process_;
};

// GET `path` on 127.0.0.1:port (HTTP/1.0); the whole answer, headers
// included, or "" when nothing accepts connections there.
std::string http_get(uint16_t port, const std::string& path);

}  // namespace kanon::testing

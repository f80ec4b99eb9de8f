// PgBouncer: Debian's pgbouncer started for a test in front of kanon, as
// docs/operations.md describes it: session pooling (PgBouncer's default
// `server_reset_query = DISCARD ALL` between clients) with one server
// connection per login (a login's clients take turns on it), trust for the
// listed logins, and one database entry `postgres` that points at kanon
// without a forced user, so each client's own login reaches kanon. Logs to
// a file in its temporary directory; stopped on destruction.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace kanon::testing {

// The pgbouncer executable (PATH, then /usr/sbin), or "" when it is not
// installed.
std::string pgbouncer_executable();

class PgBouncer {
 public:
  // Starts pgbouncer (as postgres when the test runs as root) forwarding to
  // kanon on 127.0.0.1:kanon_port, and waits until it accepts connections.
  PgBouncer(uint16_t kanon_port, const std::vector<std::string>& users);
  ~PgBouncer();

  uint16_t port() const { return port_; }
  std::string conninfo(const std::string& user) const;
  std::string log() const;

 private:
  std::string dir_;
  uint16_t port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace kanon::testing

// RoleDirectory: which roles a login belongs to, read from the backend's
// catalog over kanon's service connection, so a policy's `exempt:` may name
// roles. Masking depends on the login identity only: SET ROLE inside a
// session changes nothing.
//
// Blocking (one catalog query per login, cached for `ttl`); call it from
// the blocking pool, never from an I/O thread. Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace kanon::proxy {

class RoleDirectory {
 public:
  RoleDirectory(std::string conninfo, std::chrono::seconds ttl = std::chrono::seconds(30));
  ~RoleDirectory();

  // The login itself and every role it is a member of, directly or not;
  // nullopt when the catalog cannot be read (the caller then fails closed).
  std::optional<std::set<std::string>> memberships(const std::string& login);

 private:
  struct Entry {
    std::set<std::string> roles;
    std::chrono::steady_clock::time_point fetched;
  };
  std::string conninfo_;
  std::chrono::seconds ttl_;
  std::mutex mu_;
  struct Connection;  // the service connection, opened on first use
  std::unique_ptr<Connection> conn_;
  std::map<std::string, Entry> cache_;
};

}  // namespace kanon::proxy

// RoleDirectory: which roles a login belongs to, read from the backend's
// catalog over kanon's service connection, so a policy's `exempt:` may name
// roles. Masking depends on the login identity only: SET ROLE inside a
// session changes nothing.
//
// Blocking (one catalog query per login, cached for `ttl`); call it from
// the blocking pool, never from an I/O thread, except the `cached_` forms,
// which never wait: they answer from the cache, or nullopt when the answer
// is not there or another thread holds the directory (then ask the
// blocking form). Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rewriter/privilege_paths.h"

namespace kanon::proxy {

class RoleDirectory {
 public:
  RoleDirectory(std::string conninfo, std::chrono::seconds ttl = std::chrono::seconds(30));
  ~RoleDirectory();

  // The login itself and every role it is a member of, directly or not;
  // nullopt when the catalog cannot be read (the caller then fails closed).
  std::optional<std::set<std::string>> memberships(const std::string& login);

  // True when PostgreSQL keeps `login` from reading protected data (see
  // rewriter::PlanContext::reads_nothing_protected): neither it nor any role
  // it belongs to holds an entry of access/direct_access.h (superuser,
  // CREATEROLE, BYPASSRLS, REPLICATION, a server-file role, EXECUTE on a
  // function that reads server files or connects without a password:
  // `access::holds_sql`, the table kanon check reports from too) or holds
  // a privilege on an object of `paths` (rewriter/privilege_paths.h, the
  // list the exposure report reports from): SELECT on `read`, a write
  // privilege on `written`, EXECUTE on `definer`. nullopt when the catalog cannot be read (the
  // caller then treats it as false). Cached per login for `ttl` and for one
  // policy snapshot `version` (a GRANT is DDL: the catalog watcher publishes
  // a new version).
  std::optional<bool> reads_nothing_protected(const std::string& login,
                                              const rewriter::PrivilegePaths& paths,
                                              uint64_t version);

  // The two answers above while they are cached and fresh, without waiting.
  std::optional<std::set<std::string>> cached_memberships(const std::string& login);
  std::optional<bool> cached_reads_nothing_protected(const std::string& login,
                                                     const rewriter::PrivilegePaths& paths,
                                                     uint64_t version);

 private:
  // Under mu_: the cached answers, nullopt when absent or older than ttl_.
  std::optional<std::set<std::string>> fresh_memberships(const std::string& login,
                                                         std::chrono::steady_clock::time_point now);
  std::optional<bool> fresh_verdict(const std::string& login, const std::string& key,
                                    std::chrono::steady_clock::time_point now);

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
  struct Verdict {
    std::string candidates;  // the candidates it was decided for
    bool reads_nothing = false;
    std::chrono::steady_clock::time_point fetched;
  };
  std::map<std::string, Verdict> code_cache_;
};

}  // namespace kanon::proxy

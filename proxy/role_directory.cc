#include "proxy/role_directory.h"

#include <pqxx/pqxx>

#include "proxy/log.h"

namespace kanon::proxy {

struct RoleDirectory::Connection {
  explicit Connection(const std::string& conninfo) : conn(conninfo) {}
  pqxx::connection conn;
};

RoleDirectory::RoleDirectory(std::string conninfo, std::chrono::seconds ttl)
    : conninfo_(std::move(conninfo)), ttl_(ttl) {}

RoleDirectory::~RoleDirectory() = default;

std::optional<std::set<std::string>> RoleDirectory::memberships(const std::string& login) {
  const std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (auto it = cache_.find(login); it != cache_.end() && now - it->second.fetched < ttl_)
    return it->second.roles;
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (!conn_ || !conn_->conn.is_open()) conn_ = std::make_unique<Connection>(conninfo_);
      pqxx::nontransaction tx(conn_->conn);
      Entry entry{{login}, now};
      // pg_has_role(..., 'MEMBER'): direct or indirect membership, whatever
      // the INHERIT flags say.
      for (const auto& row :
           tx.exec_params("SELECT b.rolname FROM pg_roles a JOIN pg_roles b "
                          "ON pg_has_role(a.oid, b.oid, 'MEMBER') WHERE a.rolname = $1",
                          login))
        entry.roles.insert(row[0].as<std::string>());
      cache_[login] = entry;
      return entry.roles;
    } catch (const std::exception& e) {
      conn_.reset();
      if (attempt == 1)
        log(LogLevel::kWarning, "cannot read the role memberships of '{}': {}", login, e.what());
    }
  }
  return std::nullopt;
}

}  // namespace kanon::proxy

#include "proxy/role_directory.h"

#include <fmt/format.h>

#include <pqxx/pqxx>

#include "access/direct_access.h"
#include "proxy/log.h"

namespace kanon::proxy {

struct RoleDirectory::Connection {
  explicit Connection(const std::string& conninfo) : conn(conninfo) {}
  pqxx::connection conn;
};

RoleDirectory::RoleDirectory(std::string conninfo, std::chrono::seconds ttl)
    : conninfo_(std::move(conninfo)), ttl_(ttl) {}

RoleDirectory::~RoleDirectory() = default;

std::optional<std::set<std::string>> RoleDirectory::fresh_memberships(
    const std::string& login, std::chrono::steady_clock::time_point now) {
  if (auto it = cache_.find(login); it != cache_.end() && now - it->second.fetched < ttl_)
    return it->second.roles;
  return std::nullopt;
}

std::optional<bool> RoleDirectory::fresh_verdict(const std::string& login, const std::string& key,
                                                 std::chrono::steady_clock::time_point now) {
  if (auto it = code_cache_.find(login);
      it != code_cache_.end() && it->second.candidates == key && now - it->second.fetched < ttl_)
    return it->second.reads_nothing;
  return std::nullopt;
}

std::optional<std::set<std::string>> RoleDirectory::cached_memberships(const std::string& login) {
  const std::unique_lock lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return std::nullopt;
  return fresh_memberships(login, std::chrono::steady_clock::now());
}

std::optional<std::set<std::string>> RoleDirectory::memberships(const std::string& login) {
  const std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (auto cached = fresh_memberships(login, now)) return cached;
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

namespace {

std::string oid_array(const std::vector<uint32_t>& oids) {
  std::string s = "{";
  for (uint32_t o : oids) {
    if (s.size() > 1) s += ',';
    s += std::to_string(o);
  }
  return s + "}";
}

// What a verdict was decided for: the policy version and the three lists
// (as oid_array() spells them).
std::string verdict_key(uint64_t version, const std::string& read, const std::string& written,
                        const std::string& definer) {
  return fmt::format("{}|{}|{}|{}", version, read, written, definer);
}

std::string verdict_key(const rewriter::PrivilegePaths& paths, uint64_t version) {
  return verdict_key(version, oid_array(paths.read), oid_array(paths.written),
                     oid_array(paths.definer));
}

}  // namespace

std::optional<bool> RoleDirectory::cached_reads_nothing_protected(
    const std::string& login, const rewriter::PrivilegePaths& paths, uint64_t version) {
  const std::string key = verdict_key(paths, version);
  const std::unique_lock lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return std::nullopt;
  return fresh_verdict(login, key, std::chrono::steady_clock::now());
}

std::optional<bool> RoleDirectory::reads_nothing_protected(const std::string& login,
                                                           const rewriter::PrivilegePaths& paths,
                                                           uint64_t version) {
  const std::string read = oid_array(paths.read), write = oid_array(paths.written),
                    definer = oid_array(paths.definer);
  const std::string key = verdict_key(version, read, write, definer);
  const std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (auto cached = fresh_verdict(login, key, now)) return cached;
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (!conn_ || !conn_->conn.is_open()) conn_ = std::make_unique<Connection>(conninfo_);
      pqxx::nontransaction tx(conn_->conn);
      // Every role the login may act as (SET ROLE works without INHERIT);
      // objects dropped since the catalog was read are left out.
      const auto row = tx.exec_params1(
          "WITH m AS (SELECT b.* FROM pg_roles a JOIN pg_roles b "
          "  ON pg_has_role(a.oid, b.oid, 'MEMBER') WHERE a.rolname = $1) "
          "SELECT EXISTS (SELECT 1 FROM m) AND NOT EXISTS (SELECT 1 FROM m WHERE " +
              access::holds_sql("m") +
              "  OR EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = ANY ($2::oid[]) "
              "             AND has_any_column_privilege(m.oid, c.oid, '" +
              rewriter::kReadPrivilege +
              "')) "
              "  OR EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = ANY ($3::oid[]) "
              "             AND has_table_privilege(m.oid, c.oid, '" +
              rewriter::kWritePrivileges +
              "')) "
              "  OR EXISTS (SELECT 1 FROM pg_proc p WHERE p.oid = ANY ($4::oid[]) "
              "             AND has_function_privilege(m.oid, p.oid, '" +
              rewriter::kExecutePrivilege + "')))",
          login, read, write, definer);
      const bool reads_nothing = row[0].as<bool>();
      code_cache_[login] = Verdict{key, reads_nothing, now};
      return reads_nothing;
    } catch (const std::exception& e) {
      conn_.reset();
      if (attempt == 1)
        log(LogLevel::kWarning, "cannot read the privileges of '{}': {}", login, e.what());
    }
  }
  return std::nullopt;
}

}  // namespace kanon::proxy

#include "policy/materializer.h"

#include <fmt/format.h>

#include <map>
#include <pqxx/pqxx>
#include <set>
#include <stdexcept>

#include "base/text.h"
#include "policy/server_config.h"
#include "policy/sql_text.h"

namespace kanon::policy {
namespace {

constexpr size_t kMaxName = 63;  // NAMEDATALEN - 1

uint64_t fnv1a(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// <readable prefix>___<16 hex digits of hash(key)>, at most 63 bytes.
std::string hashed_name(std::string_view readable, std::string_view key) {
  const std::string suffix = fmt::format("___{:016x}", fnv1a(key));
  return std::string(base::utf8_prefix(readable, kMaxName - suffix.size())) + suffix;
}

std::string table_key(const TablePolicy& policy) {
  return policy.schema + std::string(1, '\0') + policy.table;
}

std::string index_key(const TablePolicy& policy, std::string_view column) {
  return table_key(policy) + std::string(1, '\0') + std::string(column);
}

// Names of objects built in the current transaction only (so no leftover can
// exist); plain and hashed names never look like this.
std::string fresh_name(std::string_view key) {
  return fmt::format("kanon___new___{:016x}", fnv1a(key));
}

// The COMMENT every copy carries: which base table it masks.
std::string marker(const TablePolicy& policy) {
  return "kanon masked copy of " + qualified_name(policy.schema, policy.table);
}

}  // namespace

std::string materialized_table(const TablePolicy& policy) {
  const std::string& s = policy.schema;
  const std::string& t = policy.table;
  const bool plain_table = t.find("__") == std::string::npos;
  if (s == "public" && plain_table && t.size() <= kMaxName) return t;
  const std::string joined = s + "__" + t;
  if (s != "public" && plain_table && s.find("__") == std::string::npos && !s.ends_with('_') &&
      !t.starts_with('_') && joined.size() <= kMaxName)
    return joined;
  return hashed_name(s == "public" ? t : joined, table_key(policy));
}

std::string materialized_name(const TablePolicy& policy) {
  return qualified_name(kMaterializedSchema, materialized_table(policy));
}

std::string materialized_index(const TablePolicy& policy, std::string_view column) {
  return hashed_name(materialized_table(policy) + "_" + std::string(column),
                     index_key(policy, column));
}

void check_indexes(const TablePolicy& policy, const TableInfo& info) {
  for (size_t i = 0; i < policy.indexes.size(); ++i) {
    if (info.find(policy.indexes[i])) continue;
    const auto& at = policy.index_refs[i];
    throw ConfigError(fmt::format("{}:{}: {}: column '{}' does not exist in {}", at.file, at.line,
                                  at.key, policy.indexes[i], policy.name()));
  }
}

std::string materialize(pqxx::connection_base& conn, const TableSnapshot& snapshot) {
  const auto& policy = snapshot.policy;
  const std::string schema = quote_identifier(kMaterializedSchema);
  const std::string name = materialized_table(policy);
  const std::string target = materialized_name(policy);
  const std::string fresh = qualified_name(kMaterializedSchema, fresh_name(table_key(policy)));
  const std::string base = qualified_name(policy.schema, policy.table);

  pqxx::work tx(conn);
  tx.exec("SET LOCAL jit = off");
  tx.exec("CREATE SCHEMA IF NOT EXISTS " + schema);
  const auto owner = tx.exec_params1(
      "SELECT coalesce(obj_description(to_regclass($1), 'pg_class'), ''), "
      "to_regclass($1) IS NOT NULL",
      target);
  if (owner[1].as<bool>() && owner[0].as<std::string>() != marker(policy))
    throw std::runtime_error(fmt::format(
        "{} exists but is not kanon's masked copy of {} (its comment says '{}'); drop or rename "
        "it",
        target, policy.name(), owner[0].as<std::string>()));

  tx.exec("CREATE TABLE " + fresh + " AS SELECT " + snapshot.masks.select_list() + " FROM " + base);
  tx.exec("COMMENT ON TABLE " + fresh + " IS " + tx.quote(marker(policy)));
  for (const auto& column : policy.indexes)
    tx.exec(fmt::format("CREATE INDEX {} ON {} ({})",
                        quote_identifier(fresh_name(index_key(policy, column))), fresh,
                        quote_identifier(column)));

  // Who may read the base table: table-level SELECT (the owner's default
  // rights when the ACL was never set) and column-level SELECT.
  const auto grants = tx.exec_params(
      "SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) "
      "END, NULL::text "
      "FROM pg_catalog.pg_class c, "
      "LATERAL aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a "
      "WHERE c.oid = $1::regclass AND a.privilege_type = 'SELECT' "
      "UNION "
      "SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) "
      "END, quote_ident(att.attname) "
      "FROM pg_catalog.pg_attribute att, LATERAL aclexplode(att.attacl) a "
      "WHERE att.attrelid = $1::regclass AND att.attnum > 0 AND NOT att.attisdropped "
      "AND a.privilege_type = 'SELECT' "
      "ORDER BY 1, 2",
      base);
  std::set<std::string> table_readers;
  std::map<std::string, std::string> column_readers;  // role -> "col1", "col2"
  for (const auto& g : grants) {
    const std::string role = g[0].as<std::string>();
    if (g[1].is_null()) {
      table_readers.insert(role);
    } else {
      auto& cols = column_readers[role];
      cols += (cols.empty() ? "" : ", ") + g[1].as<std::string>();
    }
  }
  std::set<std::string> schema_users;
  for (const auto& role : table_readers) {
    tx.exec("GRANT SELECT ON " + fresh + " TO " + role);
    schema_users.insert(role);
  }
  for (const auto& [role, cols] : column_readers) {
    if (table_readers.contains(role)) continue;
    tx.exec("GRANT SELECT (" + cols + ") ON " + fresh + " TO " + role);
    schema_users.insert(role);
  }
  for (const auto& role : schema_users) tx.exec("GRANT USAGE ON SCHEMA " + schema + " TO " + role);

  tx.exec("DROP TABLE IF EXISTS " + target);
  tx.exec("ALTER TABLE " + fresh + " RENAME TO " + quote_identifier(name));
  for (const auto& column : policy.indexes) {
    tx.exec("ALTER INDEX " +
            qualified_name(kMaterializedSchema, fresh_name(index_key(policy, column))) +
            " RENAME TO " + quote_identifier(materialized_index(policy, column)));
  }
  tx.exec("ANALYZE " + target);
  tx.commit();
  return target;
}

}  // namespace kanon::policy

#include "policy/table_catalog.h"

#include <fmt/format.h>

#include <pqxx/pqxx>

namespace kanon::policy {
namespace {

[[noreturn]] void fail(const SourceRef& ref, const std::string& what) {
  throw ConfigError(fmt::format("{}:{}: {}: {}", ref.file, ref.line, ref.key, what));
}

void need(const TablePolicy& policy, const TableInfo& info, const std::string& column,
          const SourceRef& ref) {
  if (!info.find(column))
    fail(ref, fmt::format("column '{}' does not exist in {}", column, policy.name()));
}

}  // namespace

const ColumnInfo* TableInfo::find(const std::string& name) const {
  for (const auto& c : columns)
    if (c.name == name) return &c;
  return nullptr;
}

TableInfo read_table_info(pqxx::connection_base& conn, const TablePolicy& policy) {
  pqxx::read_transaction tx(conn);
  const auto rows = tx.exec_params(
      "SELECT a.attname, format_type(a.atttypid, NULL), format_type(a.atttypid, a.atttypmod) "
      "FROM pg_catalog.pg_attribute a "
      "JOIN pg_catalog.pg_class c ON c.oid = a.attrelid "
      "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
      "WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') "
      "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
      policy.schema, policy.table);
  if (rows.empty())
    fail(policy.where, fmt::format("table {} does not exist (or has no columns)", policy.name()));
  TableInfo info{policy.schema, policy.table, {}, {}};
  for (const auto& r : rows)
    info.columns.push_back(
        {r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>()});
  const auto children = tx.exec_params(
      "WITH RECURSIVE tree(oid) AS ("
      "  SELECT i.inhrelid FROM pg_catalog.pg_inherits i"
      "  WHERE i.inhparent = (SELECT c.oid FROM pg_catalog.pg_class c"
      "    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
      "    WHERE n.nspname = $1 AND c.relname = $2)"
      "  UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN tree t ON i.inhparent = t.oid)"
      "SELECT n.nspname, c.relname FROM tree JOIN pg_catalog.pg_class c ON c.oid = tree.oid "
      "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace ORDER BY 1, 2",
      policy.schema, policy.table);
  for (const auto& r : children)
    info.children.push_back(r[0].as<std::string>() + "." + r[1].as<std::string>());
  return info;
}

void check_against_catalog(const TablePolicy& policy, const TableInfo& info) {
  for (size_t i = 0; i < policy.quasi_identifiers.size(); ++i)
    need(policy, info, policy.quasi_identifiers[i], policy.quasi_identifier_refs[i]);
  for (const auto& d : policy.direct_identifiers) need(policy, info, d.column, d.where);
  if (policy.sensitive) need(policy, info, policy.sensitive->column, policy.sensitive->where);
}

}  // namespace kanon::policy

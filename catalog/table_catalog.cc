#include "catalog/table_catalog.h"

#include <fmt/format.h>

#include <pqxx/pqxx>
#include <string>

#include "catalog/column_sql.h"

namespace kanon::catalog {

using base::ConfigError;

namespace {

// For the column `a` (kColumnsFrom's aliases): the nearest type inside its
// type (domain base, array element, range subtype, composite field, at most
// 16 levels) whose text form depends on a session's settings, qualified, or
// NULL: money (lc_monetary) and the reg* types (search_path).
constexpr const char* kSettingDependentType =
    "(WITH RECURSIVE inner_types(oid, depth) AS ("
    "  SELECT a.atttypid, 0"
    "  UNION ALL"
    "  SELECT x.oid, i.depth + 1 FROM inner_types i"
    "  JOIN pg_catalog.pg_type ty ON ty.oid = i.oid"
    "  CROSS JOIN LATERAL ("
    "    SELECT ty.typbasetype WHERE ty.typbasetype <> 0"
    "    UNION ALL SELECT ty.typelem WHERE ty.typelem <> 0 AND ty.typlen = -1"
    "    UNION ALL SELECT g.rngsubtype FROM pg_catalog.pg_range g WHERE g.rngtypid = ty.oid"
    "    UNION ALL SELECT f.atttypid FROM pg_catalog.pg_attribute f"
    "      WHERE ty.typrelid <> 0 AND f.attrelid = ty.typrelid AND f.attnum > 0"
    "      AND NOT f.attisdropped) x(oid)"
    "  WHERE i.depth < 16)"
    " SELECT 'pg_catalog.' || st.typname FROM inner_types i"
    " JOIN pg_catalog.pg_type st ON st.oid = i.oid"
    " WHERE st.typnamespace = 'pg_catalog'::pg_catalog.regnamespace AND st.typname IN ("
    "   'money', 'regproc', 'regprocedure', 'regoper', 'regoperator', 'regclass', 'regtype',"
    "   'regrole', 'regnamespace', 'regconfig', 'regdictionary', 'regcollation')"
    " ORDER BY i.depth LIMIT 1)";

}  // namespace

policy::TableInfo read_table_info(pqxx::connection_base& conn, const policy::TablePolicy& policy) {
  pqxx::read_transaction tx(conn);
  // Types by their schema-qualified names (arrays as element[]), the
  // modifiers format_type prints, and the schema of the equality operator:
  // pg_catalog's when it has one for the (base) type, otherwise one the
  // type's owner defined in the type's own schema (an extension type's).
  const auto rows = tx.exec_params(
      "SELECT a.attname, pg_catalog.format_type(a.atttypid, NULL), "
      "pg_catalog.format_type(a.atttypid, a.atttypmod), "
      "CASE WHEN t.typelem <> 0 AND t.typlen = -1 "
      "  THEN pg_catalog.quote_ident(en.nspname) || '.' || pg_catalog.quote_ident(et.typname) "
      "  ELSE pg_catalog.quote_ident(tn.nspname) || '.' || pg_catalog.quote_ident(t.typname) END, "
      "CASE WHEN a.atttypmod >= 0 THEN pg_catalog.substring("
      "  pg_catalog.format_type(a.atttypid, a.atttypmod), '\\([^)]*\\)') END, "
      "t.typelem <> 0 AND t.typlen = -1, "
      "(SELECT pg_catalog.quote_ident(n2.nspname) FROM pg_catalog.pg_operator o "
      "  JOIN pg_catalog.pg_namespace n2 ON n2.oid = o.oprnamespace "
      "  JOIN pg_catalog.pg_type b ON b.oid = COALESCE(NULLIF(t.typbasetype, 0), t.oid) "
      "  WHERE o.oprname = '=' AND o.oprleft = b.oid AND o.oprright = b.oid "
      "  AND (n2.nspname = 'pg_catalog' OR (o.oprnamespace = b.typnamespace "
      "       AND o.oprowner = b.typowner)) "
      "  ORDER BY n2.nspname = 'pg_catalog' DESC LIMIT 1), "
      "c.oid, " +
          std::string(kSettingDependentType) + " " + std::string(kColumnsFrom) +
          "WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') "
          "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
      policy.schema, policy.table);
  if (rows.empty())
    throw ConfigError(fmt::format("{}:{}: {}: table {} does not exist (or has no columns)",
                                  policy.where.file, policy.where.line, policy.where.key,
                                  policy.name()));
  policy::TableInfo info{policy.schema, policy.table, {}, {}};
  info.oid = rows[0][7].as<uint32_t>();
  for (const auto& r : rows) {
    policy::ColumnInfo col{r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>()};
    const bool array = r[5].as<bool>();
    const std::string base = r[3].as<std::string>();
    col.sql_type = base + (array ? "[]" : "");
    col.sql_full_type = base + (r[4].is_null() ? "" : r[4].as<std::string>()) + (array ? "[]" : "");
    // Arrays compare with pg_catalog's anyarray `=`, which compares the
    // elements with their type's default equality (by OID, not by name).
    const std::string schema = array || r[6].is_null() ? "pg_catalog" : r[6].as<std::string>();
    col.equality = "OPERATOR(" + schema + ".=)";
    if (!r[8].is_null()) col.setting_dependent = r[8].as<std::string>();
    info.columns.push_back(std::move(col));
  }
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

}  // namespace kanon::catalog

#include "catalog/schema_trust.h"

#include <fmt/format.h>

#include <pqxx/pqxx>

#include "base/text.h"

namespace kanon::catalog {

std::vector<std::string> schema_distrust(pqxx::transaction_base& tx, std::string_view schema) {
  // Every role but the current user and the superusers is untrusted; an
  // ACL grantee of 0 is PUBLIC.
  const auto rows = tx.exec_params(
      "WITH n AS (SELECT oid, nspowner, nspacl FROM pg_catalog.pg_namespace "
      "           WHERE nspname OPERATOR(pg_catalog.=) $1), "
      "trusted AS (SELECT r.oid FROM pg_catalog.pg_roles r "
      "            WHERE r.rolsuper OR r.rolname OPERATOR(pg_catalog.=) CURRENT_USER), "
      "found (rank, what) AS ("
      "  SELECT 1, pg_catalog.format('schema %I belongs to %I', $1, "
      "         pg_catalog.pg_get_userbyid(n.nspowner)) "
      "  FROM n WHERE n.nspowner NOT IN (SELECT oid FROM trusted) "
      "  UNION ALL "
      "  SELECT 2, pg_catalog.format('%s may create in schema %I', "
      "         CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC' "
      "              ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END, $1) "
      "  FROM n, pg_catalog.aclexplode(n.nspacl) a "
      "  WHERE a.privilege_type OPERATOR(pg_catalog.=) 'CREATE' "
      "    AND a.grantee NOT IN (SELECT oid FROM trusted) "
      "  UNION ALL "
      "  SELECT 3, pg_catalog.format('%I.%I belongs to %I', $1, c.relname, "
      "         pg_catalog.pg_get_userbyid(c.relowner)) "
      "  FROM n JOIN pg_catalog.pg_class c ON c.relnamespace OPERATOR(pg_catalog.=) n.oid "
      "  WHERE c.relowner NOT IN (SELECT oid FROM trusted) "
      "  UNION ALL "
      "  SELECT 4, pg_catalog.format('%I.%I(%s) belongs to %I', $1, p.proname, "
      "         pg_catalog.pg_get_function_identity_arguments(p.oid), "
      "         pg_catalog.pg_get_userbyid(p.proowner)) "
      "  FROM n JOIN pg_catalog.pg_proc p ON p.pronamespace OPERATOR(pg_catalog.=) n.oid "
      "  WHERE p.proowner NOT IN (SELECT oid FROM trusted) "
      "  UNION ALL "
      "  SELECT 5, pg_catalog.format('type %I.%I belongs to %I', $1, t.typname, "
      "         pg_catalog.pg_get_userbyid(t.typowner)) "
      "  FROM n JOIN pg_catalog.pg_type t ON t.typnamespace OPERATOR(pg_catalog.=) n.oid "
      "  WHERE t.typowner NOT IN (SELECT oid FROM trusted) AND t.typrelid OPERATOR(pg_catalog.=) 0 "
      "    AND t.typelem OPERATOR(pg_catalog.=) 0) "
      "SELECT what FROM found ORDER BY rank, what",
      std::string(schema));
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r[0].c_str());
  return out;
}

std::string schema_distrust_error(std::string_view schema,
                                  const std::vector<std::string>& findings) {
  return fmt::format(
      "kanon: schema {0} is not kanon's to trust ({1}): its owner may drop and replace any "
      "object in it, and a role that may create in it may plant objects under kanon's names. "
      "kanon uses schema {0} only when it, and everything in it, belongs to the service "
      "account or a superuser, and no other role may create in it: drop the schema (kanon "
      "creates it again) or ALTER SCHEMA {0} OWNER TO the service account, drop the objects "
      "others own and REVOKE CREATE ON SCHEMA {0} FROM them",
      schema, base::join(findings, "; "));
}

}  // namespace kanon::catalog

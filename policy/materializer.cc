#include "policy/materializer.h"

#include <pqxx/pqxx>

#include "policy/sql_text.h"

namespace kanon::policy {

std::string materialized_table(const TablePolicy& policy) {
  return policy.schema == "public" ? policy.table : policy.schema + "__" + policy.table;
}

std::string materialized_name(const TablePolicy& policy) {
  return qualified_name(kMaterializedSchema, materialized_table(policy));
}

std::string materialize(pqxx::connection_base& conn, const TableSnapshot& snapshot) {
  const auto& policy = snapshot.policy;
  const std::string schema = quote_identifier(kMaterializedSchema);
  const std::string name = materialized_table(policy);
  const std::string target = materialized_name(policy);
  const std::string fresh = qualified_name(kMaterializedSchema, name + "$new");
  const std::string base = qualified_name(policy.schema, policy.table);

  pqxx::work tx(conn);
  tx.exec("SET LOCAL jit = off");
  tx.exec("CREATE SCHEMA IF NOT EXISTS " + schema);
  tx.exec("DROP TABLE IF EXISTS " + fresh);
  tx.exec("CREATE TABLE " + fresh + " AS SELECT " + snapshot.masks.select_list() + " FROM " + base);
  const auto readers = tx.exec_params(
      "SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' "
      "ELSE quote_ident(pg_get_userbyid(a.grantee)) END "
      "FROM pg_catalog.pg_class c, LATERAL aclexplode(c.relacl) a "
      "WHERE c.oid = $1::regclass AND a.privilege_type = 'SELECT'",
      base);
  for (const auto& r : readers) {
    const std::string role = r[0].as<std::string>();
    tx.exec("GRANT USAGE ON SCHEMA " + schema + " TO " + role);
    tx.exec("GRANT SELECT ON " + fresh + " TO " + role);
  }
  tx.exec("DROP TABLE IF EXISTS " + target);
  tx.exec("ALTER TABLE " + fresh + " RENAME TO " + quote_identifier(name));
  tx.exec("ANALYZE " + target);
  tx.commit();
  return target;
}

}  // namespace kanon::policy

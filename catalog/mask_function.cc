#include "catalog/mask_function.h"

#include <fmt/format.h>

#include "base/config_error.h"

namespace kanon::catalog {

uint32_t verified_mask_function(pqxx::connection_base& conn, const policy::TablePolicy& policy) {
  pqxx::read_transaction tx(conn);
  const auto fail = [&](const std::string& what) {
    throw base::ConfigError(fmt::format(
        "{}:{}: {}: evaluator: function needs kanon_mask.released as a superuser installs it "
        "in database {} (psql -v library=.../kanon_mask.so -f maskfn/install.sql): {}",
        policy.evaluator_where.file, policy.evaluator_where.line, policy.evaluator_where.key,
        policy.database.empty() ? "(the service account's)" : policy.database, what));
  };
  const auto schema = tx.exec_params(
      "SELECT n.oid, o.rolsuper FROM pg_catalog.pg_namespace n "
      "JOIN pg_catalog.pg_roles o ON o.oid = n.nspowner WHERE n.nspname = $1",
      kMaskSchema);
  if (schema.empty()) fail("schema kanon_mask does not exist");
  if (!schema[0][1].as<bool>()) fail("schema kanon_mask does not belong to a superuser");
  const auto creators = tx.exec_params(
      "SELECT pg_catalog.string_agg(pg_catalog.quote_ident(r.rolname), ', ' ORDER BY r.rolname) "
      "FROM pg_catalog.pg_roles r WHERE NOT r.rolsuper "
      "AND pg_catalog.has_schema_privilege(r.oid, $1::pg_catalog.oid, 'CREATE')",
      schema[0][0].as<uint32_t>());
  if (!creators[0][0].is_null())
    fail(fmt::format("roles that are not superusers may create objects in schema kanon_mask: {}",
                     creators[0][0].as<std::string>()));
  const auto functions = tx.exec_params(
      "SELECT p.oid, p.proname, o.rolsuper, l.lanname, p.prosrc, "
      "  pg_catalog.pg_get_function_identity_arguments(p.oid), "
      "  p.prorettype = 'pg_catalog.bool'::pg_catalog.regtype, p.provolatile, "
      "  p.proparallel, p.prosecdef "
      "FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_roles o ON o.oid = p.proowner "
      "JOIN pg_catalog.pg_language l ON l.oid = p.prolang "
      "WHERE p.pronamespace = $1::pg_catalog.oid ORDER BY p.oid",
      schema[0][0].as<uint32_t>());
  uint32_t found = 0;
  int named = 0;
  for (const auto& f : functions) {
    const std::string name = f[1].as<std::string>();
    if (!f[2].as<bool>())
      fail(fmt::format("function kanon_mask.{} does not belong to a superuser", name));
    if (name != kMaskFunctionName) continue;
    ++named;
    const bool right =
        f[3].as<std::string>() == "c" && f[4].as<std::string>() == "kanon_mask_released" &&
        f[5].as<std::string>() == "bytea, VARIADIC \"any\"" && f[6].as<bool>() &&
        f[7].as<std::string>() == "i" && f[8].as<std::string>() == "s" && !f[9].as<bool>();
    if (!right)
      fail(fmt::format("kanon_mask.released({}) is not the function install.sql creates",
                       f[5].as<std::string>()));
    found = f[0].as<uint32_t>();
  }
  if (named == 0) fail("function kanon_mask.released does not exist");
  if (named > 1) fail("there is more than one function kanon_mask.released");
  return found;
}

}  // namespace kanon::catalog

#include "exposure/privileges.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <pqxx/pqxx>
#include <set>

#include "catalog/catalog_facts.h"
#include "policy/policy_file.h"
#include "store/history_build.h"

namespace kanon::exposure {
namespace {

std::string text_of(const pqxx::field& f) {
  return f.is_null() ? std::string() : std::string(f.c_str(), f.size());
}

bool bool_of(const pqxx::field& f) {
  return !f.is_null() && f.c_str()[0] == 't';
}

uint32_t oid_of(const pqxx::field& f) {
  return f.is_null() ? 0 : static_cast<uint32_t>(std::strtoul(f.c_str(), nullptr, 10));
}

std::vector<std::string> array_of(const pqxx::field& f) {
  std::vector<std::string> out;
  if (f.is_null()) return out;
  auto parser = f.as_array();
  for (auto next = parser.get_next(); next.first != pqxx::array_parser::done;
       next = parser.get_next())
    if (next.first == pqxx::array_parser::string_value) out.push_back(next.second);
  return out;
}

std::string oid_array(const std::vector<uint32_t>& oids) {
  std::string out = "{";
  for (size_t i = 0; i < oids.size(); ++i) out += (i ? "," : "") + std::to_string(oids[i]);
  return out + "}";
}

constexpr const char* kHeaderSql =
    "SELECT pg_catalog.current_database(), CURRENT_USER, "
    "pg_catalog.host(pg_catalog.inet_client_addr()), "
    "pg_catalog.has_function_privilege('pg_catalog.pg_hba_file_rules()', 'EXECUTE') "
    "AND pg_catalog.has_table_privilege('pg_catalog.pg_hba_file_rules', 'SELECT')";

constexpr const char* kRolesSql =
    "SELECT r.rolname, pg_catalog.quote_ident(r.rolname), r.rolcanlogin, r.rolsuper, "
    "r.rolcreaterole, r.rolbypassrls, r.rolreplication, r.rolinherit, "
    "pg_catalog.has_database_privilege(r.oid, pg_catalog.current_database(), 'CONNECT'), "
    "ARRAY(SELECT g.rolname::pg_catalog.text FROM pg_catalog.pg_auth_members a "
    "  JOIN pg_catalog.pg_roles g ON g.oid = a.roleid WHERE a.member = r.oid ORDER BY 1) "
    "FROM pg_catalog.pg_roles r ORDER BY r.rolname";

// Tagged rows: 's' / 'w' / 'e' (role, object, may use its schema): the
// role holds SELECT / a write privilege / EXECUTE; 'R' / 'W' / 'F' (object,
// quoted name, owner): each object of the paths; 'r' / 'c' / 'x' / 'f'
// (object, grantee or "" for PUBLIC, quoted column or privilege): the grants
// of SELECT on relations and columns, of INSERT, UPDATE, DELETE and TRUNCATE
// on the written relations, of EXECUTE on functions.
constexpr const char* kPrivilegesSql =
    "WITH rel AS (SELECT c.* FROM pg_catalog.pg_class c "
    "  WHERE c.oid = ANY ($1::pg_catalog.oid[])), "
    "fn AS (SELECT p.* FROM pg_catalog.pg_proc p WHERE p.oid = ANY ($2::pg_catalog.oid[])), "
    "wrel AS (SELECT c.* FROM pg_catalog.pg_class c WHERE c.oid = ANY ($3::pg_catalog.oid[])), "
    "who AS (SELECT oid, rolname FROM pg_catalog.pg_roles WHERE NOT rolsuper) "
    "SELECT 's', rel.oid, w.rolname::pg_catalog.text, "
    "  pg_catalog.has_schema_privilege(w.oid, rel.relnamespace, 'USAGE')::pg_catalog.text, NULL "
    "FROM rel CROSS JOIN who w "
    "WHERE pg_catalog.has_any_column_privilege(w.oid, rel.oid, $4) "
    "UNION ALL SELECT 'w', wrel.oid, w.rolname::pg_catalog.text, "
    "  pg_catalog.has_schema_privilege(w.oid, wrel.relnamespace, 'USAGE')::pg_catalog.text, "
    "  NULL "
    "FROM wrel CROSS JOIN who w "
    "WHERE pg_catalog.has_table_privilege(w.oid, wrel.oid, $5) "
    "UNION ALL SELECT 'W', wrel.oid, pg_catalog.format('%I.%I', n.nspname, wrel.relname), "
    "  pg_catalog.pg_get_userbyid(wrel.relowner)::pg_catalog.text, NULL "
    "FROM wrel JOIN pg_catalog.pg_namespace n ON n.oid = wrel.relnamespace "
    "UNION ALL SELECT 'x', wrel.oid, CASE WHEN a.grantee = 0 THEN '' "
    "  ELSE pg_catalog.pg_get_userbyid(a.grantee)::pg_catalog.text END, a.privilege_type, "
    "  NULL "
    "FROM wrel, pg_catalog.aclexplode(COALESCE(wrel.relacl, "
    "  pg_catalog.acldefault('r', wrel.relowner))) a "
    "WHERE a.privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE') "
    "UNION ALL SELECT 'e', fn.oid, w.rolname::pg_catalog.text, "
    "  pg_catalog.has_schema_privilege(w.oid, fn.pronamespace, 'USAGE')::pg_catalog.text, NULL "
    "FROM fn CROSS JOIN who w "
    "WHERE pg_catalog.has_function_privilege(w.oid, fn.oid, $6) "
    "UNION ALL SELECT 'R', rel.oid, pg_catalog.format('%I.%I', n.nspname, rel.relname), "
    "  pg_catalog.pg_get_userbyid(rel.relowner)::pg_catalog.text, NULL "
    "FROM rel JOIN pg_catalog.pg_namespace n ON n.oid = rel.relnamespace "
    "UNION ALL SELECT 'F', fn.oid, pg_catalog.format('%I.%I(%s)', n.nspname, fn.proname, "
    "  pg_catalog.pg_get_function_identity_arguments(fn.oid)), "
    "  pg_catalog.pg_get_userbyid(fn.proowner)::pg_catalog.text, NULL "
    "FROM fn JOIN pg_catalog.pg_namespace n ON n.oid = fn.pronamespace "
    "UNION ALL SELECT 'r', rel.oid, CASE WHEN a.grantee = 0 THEN '' "
    "  ELSE pg_catalog.pg_get_userbyid(a.grantee)::pg_catalog.text END, NULL, NULL "
    "FROM rel, pg_catalog.aclexplode(COALESCE(rel.relacl, "
    "  pg_catalog.acldefault('r', rel.relowner))) a WHERE a.privilege_type = 'SELECT' "
    "UNION ALL SELECT 'c', at.attrelid, CASE WHEN a.grantee = 0 THEN '' "
    "  ELSE pg_catalog.pg_get_userbyid(a.grantee)::pg_catalog.text END, "
    "  pg_catalog.quote_ident(at.attname), at.attnum::pg_catalog.text "
    "FROM pg_catalog.pg_attribute at, pg_catalog.aclexplode(at.attacl) a "
    "WHERE at.attrelid = ANY ($1::pg_catalog.oid[]) AND at.attnum > 0 AND NOT at.attisdropped "
    "  AND at.attacl IS NOT NULL AND a.privilege_type = 'SELECT' "
    "UNION ALL SELECT 'f', fn.oid, CASE WHEN a.grantee = 0 THEN '' "
    "  ELSE pg_catalog.pg_get_userbyid(a.grantee)::pg_catalog.text END, NULL, NULL "
    "FROM fn, pg_catalog.aclexplode(COALESCE(fn.proacl, "
    "  pg_catalog.acldefault('f', fn.proowner))) a WHERE a.privilege_type = 'EXECUTE'";

constexpr const char* kHbaSql =
    "SELECT line_number, type, database::pg_catalog.text[], user_name::pg_catalog.text[], "
    "COALESCE(address, ''), COALESCE(netmask, ''), COALESCE(auth_method, '') "
    "FROM pg_catalog.pg_hba_file_rules WHERE error IS NULL ORDER BY line_number";

}  // namespace

PrivilegeFacts read_privilege_facts(pqxx::connection_base& conn,
                                    const rewriter::PrivilegePaths& paths) {
  PrivilegeFacts facts;
  pqxx::read_transaction tx(conn);
  bool hba_readable = false;
  {
    const auto r = tx.exec(kHeaderSql);
    facts.database = text_of(r[0][0]);
    facts.service_role = text_of(r[0][1]);
    facts.kanon_address = text_of(r[0][2]);
    hba_readable = bool_of(r[0][3]);
  }
  for (const auto& row : tx.exec(kRolesSql)) {
    RoleFacts role;
    role.name = text_of(row[0]);
    role.quoted = text_of(row[1]);
    role.login = bool_of(row[2]);
    role.superuser = bool_of(row[3]);
    role.createrole = bool_of(row[4]);
    role.bypassrls = bool_of(row[5]);
    role.replication = bool_of(row[6]);
    role.inherit = bool_of(row[7]);
    role.connect = bool_of(row[8]);
    role.member_of = array_of(row[9]);
    facts.roles.push_back(std::move(role));
  }
  // Column grants: one Grant per (relation, grantee), columns in attnum order.
  std::map<std::pair<uint32_t, std::string>, std::vector<std::pair<int, std::string>>> columns;
  // Write grants: one Grant per (relation, grantee) with its privileges.
  std::map<std::pair<uint32_t, std::string>, std::set<std::string>> writes;
  std::vector<uint32_t> functions = paths.definer;
  functions.insert(functions.end(), paths.server_files.begin(), paths.server_files.end());
  for (const auto& row : tx.exec_params(kPrivilegesSql, oid_array(paths.read), oid_array(functions),
                                        oid_array(paths.written), rewriter::kReadPrivilege,
                                        rewriter::kWritePrivileges, rewriter::kExecutePrivilege)) {
    const char tag = row[0].c_str()[0];
    const uint32_t oid = oid_of(row[1]);
    if ((tag == 's' || tag == 'w' || tag == 'e') && bool_of(row[3]))
      facts.usable.emplace(text_of(row[2]), oid);
    switch (tag) {
      case 's':
        facts.select.emplace(text_of(row[2]), oid);
        break;
      case 'e':
        facts.execute.emplace(text_of(row[2]), oid);
        break;
      case 'w':
        facts.write.emplace(text_of(row[2]), oid);
        break;
      case 'R':
      case 'W':
      case 'F': {
        ObjectAcl& acl = (tag == 'R'   ? facts.relation_acls
                          : tag == 'W' ? facts.write_acls
                                       : facts.function_acls)[oid];
        acl.quoted = text_of(row[2]);
        acl.owner = text_of(row[3]);
        break;
      }
      case 'r':
        facts.relation_acls[oid].grants.push_back({text_of(row[2]), {}});
        break;
      case 'f':
        facts.function_acls[oid].grants.push_back({text_of(row[2]), {}});
        break;
      case 'c':
        columns[{oid, text_of(row[2])}].emplace_back(std::atoi(row[4].c_str()), text_of(row[3]));
        break;
      case 'x':
        writes[{oid, text_of(row[2])}].insert(text_of(row[3]));
        break;
      default:
        break;
    }
  }
  for (auto& [key, cols] : columns) {
    std::sort(cols.begin(), cols.end());
    Grant g{key.second, {}};
    for (const auto& c : cols) g.columns.push_back(c.second);
    facts.relation_acls[key.first].grants.push_back(std::move(g));
  }
  for (const auto& [key, privileges] : writes) {
    Grant g{key.second, {}, {}};
    // In GRANT's order, not the alphabet's.
    for (const char* p : {"INSERT", "UPDATE", "DELETE", "TRUNCATE"})
      if (privileges.count(p)) g.privileges.push_back(p);
    facts.write_acls[key.first].grants.push_back(std::move(g));
  }
  if (hba_readable) {
    std::vector<HbaRule> rules;
    for (const auto& row : tx.exec(kHbaSql)) {
      HbaRule rule;
      rule.line = row[0].as<int>();
      rule.type = text_of(row[1]);
      rule.databases = array_of(row[2]);
      rule.users = array_of(row[3]);
      rule.address = text_of(row[4]);
      rule.netmask = text_of(row[5]);
      rule.method = text_of(row[6]);
      rules.push_back(std::move(rule));
    }
    facts.hba = std::move(rules);
  } else {
    facts.hba_error =
        "pg_hba_file_rules is readable by superusers only, and " + facts.service_role + " is none";
  }
  tx.commit();
  return facts;
}

ExposureReport check_exposure(pqxx::connection_base& conn,
                              const std::vector<policy::TablePolicy>& policies,
                              const CheckOptions& options) {
  auto facts = std::make_shared<const catalog::CatalogFacts>(catalog::read_catalog_facts(conn));
  std::vector<std::string> tables;
  for (const auto& p : policies) tables.push_back(p.name());
  const rewriter::ObjectCatalog catalog(facts, tables, options.internal_tables);
  PrivilegeFacts privileges =
      read_privilege_facts(conn, rewriter::privilege_paths(catalog, policies));
  if (!options.kanon_address.empty()) privileges.kanon_address = options.kanon_address;
  auto report = find_exposures(catalog, policies, privileges, options.exposure);
  // Last: verify_history pins the session's settings.
  for (const auto& p : policies) {
    HistoryStatus h;
    h.table = p.name();
    h.k = p.k;
    try {
      const auto v = store::verify_history(conn, p, std::nullopt);
      h.row_key = v.key.describe();
      h.linkable = v.key.linkable();
      h.releases = v.releases;
      h.take(v.check);
    } catch (const std::exception& e) {
      std::string cause = e.what();
      if (const auto nl = cause.find('\n'); nl != std::string::npos) cause.resize(nl);
      h.row_key = "?";
      h.error = cause;
    }
    report.history.push_back(std::move(h));
  }
  return report;
}

ExposureReport check_every_database(
    const std::vector<policy::TablePolicy>& policies, const std::string& default_database,
    const std::function<std::string(const std::string& database)>& conninfo_of,
    const CheckOptions& options) {
  const auto databases = policy::databases_of(policies, default_database);
  ExposureReport merged;
  for (const auto& database : databases) {
    pqxx::connection conn(conninfo_of(database));
    auto report = check_exposure(conn, policy::policies_of(policies, database), options);
    if (databases.size() > 1)
      for (auto& h : report.history) h.table = report.database + "." + h.table;
    merged.database += (merged.database.empty() ? "" : ", ") + report.database;
    merged.tables += report.tables;
    merged.logins_checked = std::max(merged.logins_checked, report.logins_checked);
    for (auto& r : report.rows) merged.rows.push_back(std::move(r));
    for (auto& n : report.notes) merged.notes.push_back(std::move(n));
    for (auto& h : report.history) merged.history.push_back(std::move(h));
  }
  return merged;
}

}  // namespace kanon::exposure

#include "store/materializer.h"

#include <fmt/format.h>

#include <map>
#include <pqxx/pqxx>
#include <set>
#include <stdexcept>

#include "base/text.h"
#include "catalog/catalog_facts.h"
#include "catalog/schema_trust.h"
#include "policy/sql_text.h"
#include "settings/server_config.h"
#include "store/brief_lock.h"
#include "store/release_store.h"

namespace kanon::store {

using base::ConfigError;
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

std::string table_key(const policy::TablePolicy& policy) {
  return policy.schema + std::string(1, '\0') + policy.table;
}

std::string index_key(const policy::TablePolicy& policy, std::string_view column) {
  return table_key(policy) + std::string(1, '\0') + std::string(column);
}

// Names of the copy and its indexes until they are swapped in (a refresh that
// stopped in between leaves them, and the next one drops them first); plain
// and hashed names never look like this.
std::string fresh_name(std::string_view key) {
  return fmt::format("kanon___new___{:016x}", fnv1a(key));
}

// The COMMENT every copy carries: which base table it masks.
std::string marker(const policy::TablePolicy& policy) {
  return "kanon masked copy of " + policy::qualified_name(policy.schema, policy.table);
}

// The COMMENT every masked view carries.
std::string view_marker(const policy::TablePolicy& policy) {
  return "kanon masked view of " + policy::qualified_name(policy.schema, policy.table);
}

// kanon_masked is where the rewriter points restricted sessions: a schema
// another role owns (or may create in) could have kanon's copy or view
// dropped and replaced (catalog/schema_trust.h).
void require_trusted_schema(pqxx::work& tx) {
  if (const auto findings = catalog::schema_distrust(tx, kMaterializedSchema); !findings.empty())
    throw std::runtime_error(catalog::schema_distrust_error(kMaterializedSchema, findings));
}

// kanon_masked, created when missing (only then: a DDL on an object outside
// kanon's schemas, and CREATE SCHEMA IF NOT EXISTS counts as one, makes
// restricted statements that call SQL functions wait until the transaction
// ends; catalog_watch.h), and trusted.
void ensure_trusted_schema(pqxx::work& tx) {
  if (tx.exec_params1("SELECT pg_catalog.to_regnamespace($1) IS NULL", kMaterializedSchema)[0]
          .as<bool>())
    tx.exec("CREATE SCHEMA IF NOT EXISTS " + policy::quote_identifier(kMaterializedSchema));
  require_trusted_schema(tx);
}

// What stands at `target` now: its relkind ('\0' when nothing) after checking
// that it is kanon's copy or view of this table (a table may switch between
// mode: materialized and mode: view).
char existing_object(pqxx::work& tx, const policy::TablePolicy& policy, const std::string& target) {
  const auto row = tx.exec_params1(
      "SELECT coalesce(obj_description(to_regclass($1), 'pg_class'), ''), "
      "coalesce((SELECT relkind::text FROM pg_catalog.pg_class WHERE oid = to_regclass($1)), '')",
      policy::qualified_name_value(kMaterializedSchema, materialized_table(policy)));
  const std::string kind = row[1].as<std::string>();
  if (kind.empty()) return '\0';
  const std::string comment = row[0].as<std::string>();
  if (comment != marker(policy) && comment != view_marker(policy))
    throw std::runtime_error(fmt::format(
        "{} exists but is not kanon's masked copy or view of {} (its comment says '{}'); drop or "
        "rename it",
        target, policy.name(), comment));
  return kind[0];
}

// Mirrors the base table's SELECT rights onto `target` (see materializer.h):
// table-level SELECT (the owner's default rights when the ACL was never set)
// and column-level SELECT, plus USAGE on the schema for those roles.
void mirror_select_rights(pqxx::work& tx, const policy::TablePolicy& policy,
                          const std::string& target) {
  const std::string base = policy::qualified_name_value(policy.schema, policy.table);
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
    tx.exec("GRANT SELECT ON " + target + " TO " + role);
    schema_users.insert(role);
  }
  for (const auto& [role, cols] : column_readers) {
    if (table_readers.contains(role)) continue;
    tx.exec("GRANT SELECT (" + cols + ") ON " + target + " TO " + role);
    schema_users.insert(role);
  }
  const std::string schema = policy::quote_identifier(kMaterializedSchema);
  for (const auto& role : schema_users) tx.exec("GRANT USAGE ON SCHEMA " + schema + " TO " + role);
}

// grants: manage — SELECT on the view and USAGE on its schema to every
// grant_to role, SELECT on the base table revoked from it; then who still
// reads the base table directly, and why.
std::vector<std::string> manage_grants(pqxx::work& tx, const policy::TablePolicy& policy,
                                       const std::string& base, const std::string& view) {
  std::vector<std::string> warnings;
  const std::string schema = policy::quote_identifier(kMaterializedSchema);
  for (const auto& name : policy.grant_to) {
    if (tx.exec_params1("SELECT to_regrole($1) IS NULL", policy::name_value(name))[0].as<bool>()) {
      warnings.push_back(fmt::format("role {} does not exist: nothing granted", name));
      continue;
    }
    const std::string role = policy::quote_identifier(name);
    tx.exec("GRANT SELECT ON " + view + " TO " + role);
    tx.exec("GRANT USAGE ON SCHEMA " + schema + " TO " + role);
    // Also revokes its column-level SELECT grants on the table.
    tx.exec("REVOKE SELECT ON " + base + " FROM " + role);
    const auto r = tx.exec_params1(
        "SELECT r.rolsuper, "
        "  CASE WHEN to_regrole('pg_read_all_data') IS NULL THEN false "
        "    ELSE pg_has_role(r.oid, to_regrole('pg_read_all_data'), 'MEMBER') END, "
        "  pg_has_role(r.oid, c.relowner, 'MEMBER'), "
        "  has_table_privilege(r.oid, c.oid, 'SELECT') "
        "    OR has_any_column_privilege(r.oid, c.oid, 'SELECT') "
        "FROM pg_catalog.pg_roles r, pg_catalog.pg_class c "
        "WHERE r.rolname = $1 AND c.oid = $2::regclass",
        name, policy::qualified_name_value(policy.schema, policy.table));
    std::vector<std::string> why;
    if (r[0].as<bool>()) why.push_back("it is a superuser");
    if (r[1].as<bool>()) why.push_back("it is a member of pg_read_all_data");
    if (r[2].as<bool>()) why.push_back("it owns the table or is a member of its owner");
    if (why.empty() && r[3].as<bool>())
      why.push_back(
          "it still holds SELECT through PUBLIC, another role or a grant kanon could not revoke");
    if (why.empty()) continue;
    std::string reasons;
    for (const auto& w : why) reasons += (reasons.empty() ? "" : "; ") + w;
    warnings.push_back(fmt::format(
        "role {} still reads {} directly, unmasked ({}): grants: manage does not protect it", name,
        policy.name(), reasons));
  }
  return warnings;
}

// The copy's select list: the masks, with every quasi-identifier of a key
// the last release holds (kanon.held_keys, release_store.h) masked too.
std::string copy_select_list(const policy::TableSnapshot& snapshot) {
  const std::string held = held_condition(snapshot);
  if (held.empty()) return snapshot.masks.select_list();
  std::string s;
  for (const auto& c : snapshot.masks.columns) {
    if (!s.empty()) s += ", ";
    if (c.role == policy::ColumnMask::Role::kQuasiIdentifier)
      s += fmt::format("CASE WHEN {} THEN NULL ELSE {} END", held, c.expression);
    else
      s += c.expression;
    s += " AS " + policy::quote_identifier(c.column);
  }
  return s;
}

// PostgreSQL reads a view's definition from the newest catalog, whatever
// the snapshot of the transaction that reads it. A repeatable-read
// transaction begun before a refresh (or one that imported such a snapshot)
// would read the rows as they were then through masks built for the rows as
// they are now: a row deleted since, alone in a leaf of the new tree among
// the rows it could see, would show what that leaf releases. So the view
// answers only a snapshot that saw `xid`, the transaction that replaced it,
// end (and so every row the tree was built from); an older one gets an
// error naming the view. No column in it: PostgreSQL evaluates it once per
// scan, before the first row. The ELSE arm casts text that depends on the
// snapshot, so the planner cannot evaluate it ahead. `c_function`: the same
// test in C, kanon_mask.snapshot_sees (maskfn/catalog_guard.c), which a new
// backend resolves as one function instead of four and a cast.
std::string snapshot_guard(const policy::TablePolicy& policy, const std::string& xid,
                           bool c_function) {
  const std::string message = fmt::format(
      "kanon: this transaction's snapshot is older than the masked view of {} (replaced by "
      "transaction {}): start a new transaction to read it; snapshot ",
      policy.name(), xid);
  if (c_function)
    return fmt::format("\"kanon_mask\".\"snapshot_sees\"({}::pg_catalog.xid8, {})",
                       policy::quote_literal(xid), policy::quote_literal(message));
  const std::string sees = fmt::format(
      "pg_catalog.pg_visible_in_snapshot({}::pg_catalog.xid8, pg_catalog.pg_current_snapshot())",
      policy::quote_literal(xid));
  return fmt::format(
      "CASE WHEN {} THEN true ELSE pg_catalog.concat({}, "
      "pg_catalog.pg_current_snapshot())::pg_catalog.bool END",
      sees, policy::quote_literal(message));
}

}  // namespace

std::string held_condition(const policy::TableSnapshot& snapshot) {
  if (snapshot.release.version == 0 || !snapshot.release.key.linkable()) return {};
  return fmt::format("({}) IN (SELECT h.key FROM {} h WHERE h.table_name = {})",
                     policy::key_expression(snapshot.release.key),
                     policy::qualified_name("kanon", kHeldKeysTable),
                     policy::quote_literal(snapshot.policy.name()));
}

std::string materialized_table(const policy::TablePolicy& policy) {
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

std::string materialized_name(const policy::TablePolicy& policy) {
  return policy::qualified_name(kMaterializedSchema, materialized_table(policy));
}

std::string materialized_index(const policy::TablePolicy& policy, std::string_view column) {
  return hashed_name(materialized_table(policy) + "_" + std::string(column),
                     index_key(policy, column));
}

void check_indexes(const policy::TablePolicy& policy, const policy::TableInfo& info) {
  for (size_t i = 0; i < policy.indexes.size(); ++i) {
    if (info.find(policy.indexes[i])) continue;
    const auto& at = policy.index_refs[i];
    throw ConfigError(fmt::format("{}:{}: {}: column '{}' does not exist in {}", at.file, at.line,
                                  at.key, policy.indexes[i], policy.name()));
  }
}

std::string materialize(pqxx::connection_base& conn, const policy::TableSnapshot& snapshot,
                        const BriefLockWait& wait) {
  const auto& policy = snapshot.policy;
  const std::string name = materialized_table(policy);
  const std::string target = materialized_name(policy);
  const std::string fresh =
      policy::qualified_name(kMaterializedSchema, fresh_name(table_key(policy)));
  const std::string base = policy::qualified_name(policy.schema, policy.table);

  const std::string purpose = "the refresh of " + policy.name();
  // Two transactions. The first builds the new copy beside the old one
  // (the long part); DDL in it moves the catalog generation and holds the
  // catalog reader's lock to its end (catalog_watch.h), so it waits for
  // nothing. The second waits for the old copy's readers, briefly
  // (brief_lock.h), before its first DDL, then swaps.
  {
    pqxx::work tx(conn);
    tx.exec("SET LOCAL jit = off");
    ensure_trusted_schema(tx);
    existing_object(tx, policy, target);  // another table's object fails before the copy is built
    // What a refresh stopped between the two transactions left.
    tx.exec("DROP TABLE IF EXISTS " + fresh);
    // In random order: the base table's physical order may follow raw
    // values (CLUSTER, a sorted load), and a copy in that order would hand
    // the masked rows out in it (found by an adversarial probe).
    tx.exec("CREATE TABLE " + fresh + " AS SELECT " + copy_select_list(snapshot) + " FROM " + base +
            " ORDER BY pg_catalog.random()");
    tx.exec("COMMENT ON TABLE " + fresh + " IS " + tx.quote(marker(policy)));
    for (const auto& column : policy.indexes)
      tx.exec(fmt::format("CREATE INDEX {} ON {} ({})",
                          policy::quote_identifier(fresh_name(index_key(policy, column))), fresh,
                          policy::quote_identifier(column)));
    tx.exec("ANALYZE " + fresh);
    tx.commit();
  }
  try {
    pqxx::work tx(conn);
    require_trusted_schema(tx);
    const char existing = existing_object(tx, policy, target);
    // The view of mode: view, when the table switched modes.
    if (existing == 'v') exec_locking_briefly(tx, "DROP VIEW " + target, target, purpose, wait);
    if (existing == 'r') exec_locking_briefly(tx, "DROP TABLE " + target, target, purpose, wait);
    mirror_select_rights(tx, policy, fresh);
    tx.exec("ALTER TABLE " + fresh + " RENAME TO " + policy::quote_identifier(name));
    for (const auto& column : policy.indexes) {
      tx.exec("ALTER INDEX " +
              policy::qualified_name(kMaterializedSchema, fresh_name(index_key(policy, column))) +
              " RENAME TO " + policy::quote_identifier(materialized_index(policy, column)));
    }
    tx.commit();
  } catch (...) {
    try {
      pqxx::work tx(conn);
      tx.exec("DROP TABLE IF EXISTS " + fresh);
      tx.commit();
    } catch (const std::exception&) {
      // The next refresh drops it.
    }
    throw;
  }
  return target;
}

MaskedView build_masked_view(pqxx::connection_base& conn, const policy::TableSnapshot& snapshot,
                             const BriefLockWait& wait) {
  const auto& policy = snapshot.policy;
  const std::string target = materialized_name(policy);
  const std::string base = policy::qualified_name(policy.schema, policy.table);

  pqxx::work tx(conn);
  const std::string xid =
      tx.exec1("SELECT pg_catalog.pg_current_xact_id()::pg_catalog.text")[0].as<std::string>();
  const std::string query = "SELECT " + snapshot.masks.select_list() + " FROM " + base + " WHERE " +
                            snapshot_guard(policy, xid, catalog::c_guards_installed(tx));
  ensure_trusted_schema(tx);
  const char existing = existing_object(tx, policy, target);
  // The first DDL on the old object waits for its readers, briefly
  // (brief_lock.h), and comes before any other, so that the transaction
  // holds none of the catalog watch's locks while it waits.
  const std::string purpose = "the refresh of " + policy.name();
  if (existing == 'r')  // the copy of mode: materialized
    exec_locking_briefly(tx, "DROP TABLE " + target, target, purpose, wait);
  bool replaced = false;
  if (existing == 'v') {
    // Keeps the view's identity (and whatever depends on it) when its columns
    // keep their names and types; otherwise it is dropped and made again.
    try {
      exec_locking_briefly(tx, "CREATE OR REPLACE VIEW " + target + " AS " + query, target, purpose,
                           wait);
      replaced = true;
    } catch (const pqxx::sql_error&) {
    }
    if (!replaced) exec_locking_briefly(tx, "DROP VIEW " + target, target, purpose, wait);
  }
  if (!replaced) tx.exec("CREATE VIEW " + target + " AS " + query);
  tx.exec("COMMENT ON VIEW " + target + " IS " + tx.quote(view_marker(policy)));
  if (replaced) {
    // A replaced view keeps its ACL: start from none, as a new copy does, so
    // a right removed from the base table (or a role removed from grant_to)
    // is removed from the view too. Readers see the change at the commit.
    const auto holders = tx.exec_params(
        "SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' "
        "ELSE quote_ident(pg_get_userbyid(a.grantee)) END "
        "FROM pg_catalog.pg_class c, LATERAL aclexplode(c.relacl) a "
        "WHERE c.oid = $1::regclass AND a.grantee <> c.relowner",
        policy::qualified_name_value(kMaterializedSchema, materialized_table(policy)));
    for (const auto& h : holders)
      tx.exec("REVOKE ALL ON " + target + " FROM " + h[0].as<std::string>());
  }
  mirror_select_rights(tx, policy, target);
  MaskedView out{target, {}};
  if (policy.grants == policy::GrantPolicy::kManage)
    out.warnings = manage_grants(tx, policy, base, target);
  tx.commit();
  return out;
}

}  // namespace kanon::store

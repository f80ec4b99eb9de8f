#include "access/direct_access.h"

namespace kanon::access {
namespace {

using enum Kind;

// Exact function names before prefixes: function_named takes the first
// entry that matches.
constexpr DirectAccess kTable[] = {
    // Role attributes: the login's own, or a role's it belongs to (SET ROLE
    // works without INHERIT).
    {kAttribute, "SUPERUSER", "it reads every table without kanon",
     "after SET ROLE it reads every table without kanon", Attribute::kSuperuser, "rolsuper"},
    {kAttribute, "CREATEROLE",
     "it can grant itself an exempt role or pg_read_all_data, even through kanon",
     "after SET ROLE it can grant itself an exempt role or pg_read_all_data, even through kanon",
     Attribute::kCreateRole, "rolcreaterole"},
    {kAttribute, "BYPASSRLS", "row-level security does not limit what it reads without kanon",
     "after SET ROLE row-level security does not limit what it reads without kanon",
     Attribute::kBypassRls, "rolbypassrls"},
    {kAttribute, "REPLICATION",
     "a replication connection copies every table (kanon refuses them, PostgreSQL does not)",
     "after SET ROLE it may create logical replication slots and decode every table's changes "
     "from the write-ahead log",
     Attribute::kReplication, "rolreplication"},
    // Predefined roles.
    {kRole, "pg_execute_server_program",
     "it runs programs on the database server as its operating system user"},
    {kRole, "pg_read_server_files",
     "it reads any file on the database server, the table's data files included"},
    {kRole, "pg_write_server_files",
     "it writes any file on the database server, its configuration included"},
    // Functions, not executable by PUBLIC by default: a grant of EXECUTE
    // opens the path.
    {kFunction, "pg_read_file",
     "it reads files on the database server, the table's data files included"},
    {kFunction, "pg_read_binary_file",
     "it reads files on the database server, the table's data files included"},
    {kFunction, "pg_stat_file", "it reads the metadata of files on the database server"},
    {kFunction, "pg_ls_dir", "it lists directories on the database server"},
    {kFunction, "lo_import",
     "it reads a file on the database server into a large object it can read"},
    {kFunction, "lo_export", "it writes files on the database server"},
    {kFunction, "dblink_connect_u",
     "it connects to databases as the server's own user, without a password"},
    // Denied by name in restricted statements, but EXECUTE on them is no
    // path of its own: pg_ls_logdir, pg_ls_waldir and the like list fixed
    // directories (pg_monitor may run them by default), pg_logical_slot_*
    // need REPLICATION (an attribute above), pg_walinspect's pg_get_wal_*
    // are granted to pg_read_server_files (a role above). adminpack's
    // pg_file_* write server files and would be paths; kanon has not counted
    // them yet (docs/security.md).
    {kFunction, "pg_ls_", "it lists directories on the database server", nullptr, Attribute::kNone,
     nullptr, true, false},
    {kFunction, "pg_file_", "it writes files on the database server (adminpack)", nullptr,
     Attribute::kNone, nullptr, true, false},
    {kFunction, "pg_logical_slot_", "it decodes the write-ahead log, every table's changes",
     nullptr, Attribute::kNone, nullptr, true, false},
    {kFunction, "pg_get_wal_", "it reads the write-ahead log (pg_walinspect)", nullptr,
     Attribute::kNone, nullptr, true, false},
};

// holds_sql matches the path functions by exact name.
constexpr bool no_prefix_paths() {
  for (const auto& a : kTable)
    if (a.kind == kFunction && a.prefix && a.execute_is_path) return false;
  return true;
}
static_assert(no_prefix_paths(), "a path function is named exactly");

bool matches(const DirectAccess& a, std::string_view name) {
  return a.prefix ? name.starts_with(a.name) : name == a.name;
}

// 'a', 'b', ...
std::string constants(Kind kind, bool paths_only) {
  std::string out;
  for (const auto& a : kTable) {
    if (a.kind != kind || (paths_only && !a.execute_is_path)) continue;
    out += out.empty() ? "'" : ", '";
    out += a.name;
    out += '\'';
  }
  return out;
}

}  // namespace

std::span<const DirectAccess> direct_access() {
  return kTable;
}

const DirectAccess* function_named(std::string_view name) {
  for (bool prefix : {false, true})
    for (const auto& a : kTable)
      if (a.kind == kFunction && a.prefix == prefix && matches(a, name)) return &a;
  return nullptr;
}

const DirectAccess* path_function(std::string_view name, bool builtin, std::string_view language,
                                  std::string_view extension) {
  if (!builtin && (language != "c" || extension.empty())) return nullptr;
  const DirectAccess* a = function_named(name);
  return a && a->execute_is_path ? a : nullptr;
}

const DirectAccess* role_named(std::string_view name) {
  for (const auto& a : kTable)
    if (a.kind == kRole && name == a.name) return &a;
  return nullptr;
}

std::string fix(const DirectAccess& entry, std::string_view holder, std::string_view signature) {
  const std::string who(holder);
  switch (entry.kind) {
    case kAttribute:
      return "ALTER ROLE " + who + " NO" + entry.name;
    case kRole:
      return std::string("REVOKE ") + entry.name + " FROM " + who;
    case kFunction:
      return "REVOKE EXECUTE ON FUNCTION " + std::string(signature) + " FROM " + who;
  }
  return {};
}

std::string holds_sql(std::string_view alias) {
  const std::string m(alias);
  std::string out;
  for (const auto& a : kTable)
    if (a.kind == kAttribute) out += (out.empty() ? "" : " OR ") + m + "." + a.column;
  out += " OR " + m + ".rolname IN (" + constants(kRole, false) + ")";
  // path_function's condition: built in, or C code of an extension.
  out +=
      " OR EXISTS (SELECT 1 FROM pg_catalog.pg_proc p "
      "JOIN pg_catalog.pg_language l ON l.oid = p.prolang WHERE p.proname IN (" +
      constants(kFunction, true) +
      ") AND (p.oid < 16384 OR (l.lanname = 'c' AND EXISTS (SELECT 1 FROM pg_catalog.pg_depend d "
      "WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid "
      "AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e'))) "
      "AND pg_catalog.has_function_privilege(" +
      m + ".oid, p.oid, 'EXECUTE'))";
  return out;
}

}  // namespace kanon::access

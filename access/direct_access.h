// What lets a login read protected data without kanon whatever the table
// privileges say: role attributes, predefined roles and functions that read
// the database server's files. One table for the three places that decide
// whether a login can read protected data through PostgreSQL's own
// privileges:
//   - the proxy (proxy/role_directory.cc, `holds_sql`): a login that holds
//     no entry (and no privilege on an object that reaches a protected
//     table) reads nothing protected, so its DO and CALL may run
//     (rewriter::PlanContext::reads_nothing_protected);
//   - the rewriter (rewriter/statement_rules.cc, `function_named`): every
//     function of the table is denied by name in restricted statements
//     (rule server-file-function) and is opaque wherever it hides
//     (rewriter/object_catalog.h);
//   - the exposure report (exposure/exposure.cc): each entry a login holds is a
//     row (superuser, createrole, bypassrls, replication, server-files) with
//     its fix.
// Privileges on objects that reach a protected table (SELECT, writes,
// EXECUTE on SECURITY DEFINER functions that read one) are not here: they
// come from the catalog's reach analysis, one list for the proxy and the
// report (rewriter/privilege_paths.h).
//
// Plain data and string building; no database, no other module.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace kanon::access {

enum class Kind {
  kAttribute,  // a pg_roles attribute of the login or of a role it belongs to
  kRole,       // membership in a predefined role
  kFunction,   // EXECUTE on a function (by name, or every name with a prefix)
};

// The role attributes, so consumers map each to a field of their own with a
// switch the compiler checks for completeness.
enum class Attribute { kNone, kSuperuser, kCreateRole, kBypassRls, kReplication };

struct DirectAccess {
  Kind kind;
  // kAttribute: the keyword (SUPERUSER, as ALTER ROLE spells it); kRole: the
  // role; kFunction: the function's name, or a prefix of names.
  const char* name;
  // What holding it gives, a clause: "<login> has BYPASSRLS: <gives>",
  // "<login> is a member of pg_read_server_files: <gives>", "<login> can
  // EXECUTE pg_catalog.pg_read_file(text): <gives>".
  const char* gives;
  // kAttribute: what it gives to a member of a role that has it, a clause
  // after "<login> is a member of <role>, which has SUPERUSER: ".
  const char* through = nullptr;
  Attribute attribute = Attribute::kNone;
  const char* column = nullptr;  // kAttribute: the pg_roles column
  bool prefix = false;           // kFunction: `name` is a prefix
  // kFunction: EXECUTE on it is a path the proxy and the report count.
  // False for functions denied by name only, whose danger another entry
  // already counts (see the table).
  bool execute_is_path = true;
};

// Every entry, in the order the report lists them (superuser first).
std::span<const DirectAccess> direct_access();

// The function entry whose name (or prefix) matches `name`, the unqualified
// name as the parser folded it; nullptr when none does. Exact names are
// matched before prefixes.
const DirectAccess* function_named(std::string_view name);

// The function entry EXECUTE on which is a path: `name` matches one with
// execute_is_path, and the function is built in (oid < 16384) or C code of
// an extension (dblink). A user's function of that name is none: its body is
// judged by what it reaches, like any other function's.
const DirectAccess* path_function(std::string_view name, bool builtin, std::string_view language,
                                  std::string_view extension);

// The role entry named `name`; nullptr when none is.
const DirectAccess* role_named(std::string_view name);

// The SQL that takes the entry away from `holder` (a quoted role name):
// ALTER ROLE r NOSUPERUSER; REVOKE pg_read_server_files FROM r; REVOKE
// EXECUTE ON FUNCTION <signature> FROM r (`signature` as
// pg_catalog.format('%I.%I(%s)') prints it).
std::string fix(const DirectAccess& entry, std::string_view holder,
                std::string_view signature = {});

// A boolean SQL expression, true when the pg_roles row `alias` holds an
// entry: one of the attributes, one of the roles, or EXECUTE on a function
// of path_function (has_function_privilege). Every name is a constant of
// this table; nothing comes from input.
std::string holds_sql(std::string_view alias);

}  // namespace kanon::access

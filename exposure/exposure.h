// Exposure report: every path a restricted login has to a protected table
// outside kanon, each with its fix (`SHOW EXPOSURE` on the admin console,
// `kanon check`). kanon is the enforcement point only for sessions that go
// through it; a login that can open a session of its own (a direct
// connection, dblink or postgres_fdw from another database) reads whatever
// PostgreSQL's grants allow. This file is the judgement, pure and without a
// database: what the catalog says (rewriter::ObjectCatalog over
// catalog::CatalogFacts: which relations and functions reach which protected
// tables) and who holds which privilege (PrivilegeFacts, read by
// exposure/privileges.h) in, the list of exposures out.
//
// Who is checked: every login role (rolcanlogin) except kanon's service
// account, per protected table. A login the policy's `exempt:` names is
// trusted for that table; one that is exempt only through membership in a
// role `exempt:` names gets an informational row (who effectively sees raw
// data); every other login is restricted for the table.
//
// Paths (Exposure::path), for a restricted login. The first five are the
// entries of access/direct_access.h's table, the one the proxy reads too (a
// login that holds none of them and none of the privilege paths reads
// nothing protected):
//   superuser        rolsuper, or membership in a superuser role: reads
//                    everything (and through kanon PostgreSQL counts a
//                    superuser as a member of every role, so it is exempt)
//   createrole       CREATEROLE: can grant itself exempt roles or
//                    pg_read_all_data, even through kanon
//   bypassrls        BYPASSRLS
//   replication      REPLICATION: a copy of the whole cluster
//                    (these three: the login's own, or a role's it belongs
//                    to, one row per such role)
//   server-files     membership in pg_read_server_files,
//                    pg_write_server_files or pg_execute_server_program, or
//                    EXECUTE on a function that reads the server's files
//                    (pg_read_file, lo_import, dblink_connect_u, ...)
//   connect          a pg_hba.conf rule that admits the login to this
//                    database from elsewhere than kanon's address
//   select-table     SELECT on the protected table or an inheritance child
//                    or partition of it (table or column level)
//   select-relation  SELECT on a view, materialized view, foreign table or
//                    other relation whose reading reaches the table (or is
//                    opaque: kanon cannot see what it reads)
//   write-relation   INSERT, UPDATE, DELETE or TRUNCATE on a relation whose
//                    writing reaches the table (the table itself, or rules,
//                    triggers, defaults, constraints that read it) or is
//                    opaque
//   execute-function EXECUTE on a SECURITY DEFINER function (not a trigger
//                    function) that reaches the table or is opaque, unless
//                    the policy lists it under allowed_functions (one that
//                    runs with its caller's rights reads only what the
//                    caller may: no path of its own)
//   partial-index    (role PUBLIC) a partial index whose keys or predicate
//                    read a quasi-identifier: pg_class.reltuples counts the
//                    raw rows it holds
//   index-size       (role PUBLIC) any other index whose keys read one: its
//                    size (pg_relation_size) follows how often raw values
//                    repeat (B-tree deduplication)
//   exempt-through-role  informational, see above
// The objects of the privilege paths are rewriter::privilege_paths' lists,
// the ones the proxy asks about too; a privilege counts whether or not the
// login may use the object's schema (the row then says USAGE is all that
// keeps it out).
// The first four, and memberships in server-file roles, are reported
// whatever pg_hba.conf says. The privilege paths (select-*, write-relation,
// execute-function, and server-files through EXECUTE) need a session
// outside kanon (and CONNECT on the database): when pg_hba.conf could be read they are reported
// only for logins with a `connect` row (and those rows only for logins with a privilege path); when
// it could not, every one is reported (and a note says why). Privileges count through every role
// the login is a member of (SET ROLE works without INHERIT). A superuser's other paths are not
// listed: the superuser row's fix comes first.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "access/direct_access.h"
#include "policy/history_check.h"
#include "policy/table_policy.h"
#include "rewriter/object_catalog.h"
#include "rewriter/privilege_paths.h"

namespace kanon::exposure {

struct RoleFacts {
  std::string name;
  std::string quoted;  // quote_ident(name)
  bool login = false;
  bool superuser = false;
  bool createrole = false;
  bool bypassrls = false;
  bool replication = false;
  bool inherit = true;
  // CONNECT on this database (has_database_privilege): without it no session
  // at all, so its grants are no path.
  bool connect = true;
  std::vector<std::string> member_of;  // pg_auth_members: roles granted to it directly
  bool has(access::Attribute a) const;
};

// A grant of SELECT (relations) or EXECUTE (functions), from the object's
// ACL, or from its default ACL when none was ever set.
struct Grant {
  std::string grantee;               // role name; "" for PUBLIC
  std::vector<std::string> columns;  // a column-level grant; empty for the whole relation
  // The privileges granted, when they are not the one the report asks about
  // (writes: some of INSERT, UPDATE, DELETE, TRUNCATE).
  std::vector<std::string> privileges;
};

struct ObjectAcl {
  // Relations "schema.name", functions "schema.name(arguments)", quoted as
  // PostgreSQL quotes identifiers: ready for REVOKE.
  std::string quoted;
  std::string owner;
  std::vector<Grant> grants;
};

// One valid line of pg_hba.conf, as pg_hba_file_rules shows it.
struct HbaRule {
  int line = 0;
  std::string type;                    // local, host, hostssl, hostnossl, hostgssenc, hostnogssenc
  std::vector<std::string> databases;  // all, sameuser, samerole, replication or names
  std::vector<std::string> users;      // all, names or +group
  std::string address;  // "" for local; all, samehost, samenet, an address or a host name
  std::string netmask;  // for addresses
  std::string method;   // trust, reject, md5, scram-sha-256, ...
};

struct PrivilegeFacts {
  std::string database;      // current_database()
  std::string service_role;  // kanon's service account: trusted, not checked
  // The address kanon connects to PostgreSQL from (the service connection's
  // inet_client_addr()); "" over a Unix socket.
  std::string kanon_address;
  std::vector<RoleFacts> roles;  // every role, logins or not
  // (role, oid): the role (never a superuser) holds SELECT on the relation
  // or on one of its columns / EXECUTE on the function, as has_*_privilege
  // say (inheritance and pg_read_all_data included), whether or not it may
  // use the object's schema (rewriter/privilege_paths.h).
  std::set<std::pair<std::string, uint32_t>> select;
  std::set<std::pair<std::string, uint32_t>> execute;
  // (role, oid): the role holds INSERT, UPDATE, DELETE or TRUNCATE on the
  // relation (has_table_privilege, table level).
  std::set<std::pair<std::string, uint32_t>> write;
  // (role, oid) of the three sets above whose role may use the object's
  // schema (USAGE); without it, USAGE is all that keeps the role out.
  std::set<std::pair<std::string, uint32_t>> usable;
  std::map<uint32_t, ObjectAcl> relation_acls;
  std::map<uint32_t, ObjectAcl> function_acls;
  // The write candidates': grants of INSERT, UPDATE, DELETE or TRUNCATE,
  // one Grant per grantee with its privileges.
  std::map<uint32_t, ObjectAcl> write_acls;
  std::optional<std::vector<HbaRule>> hba;  // nullopt: pg_hba_file_rules could not be read
  std::string hba_error;                    // why not
};

enum class ExposurePath {
  kSuperuser,
  kCreateRole,
  kBypassRls,
  kReplication,
  kServerFiles,
  kConnect,
  kSelectTable,
  kSelectRelation,
  kWriteRelation,
  kExecuteFunction,
  kPartialIndex,  // every login: the catalog counts rows by a quasi-identifier
  kIndexSize,     // every login: an index's size follows how raw values repeat
  kExemptThroughRole,
};
const char* to_string(ExposurePath path);

struct Exposure {
  std::string database;
  std::string role;
  ExposurePath path = ExposurePath::kSelectTable;
  std::string
      object;  // what the path goes through: a relation, a function, a role, "pg_hba.conf:N"
  std::vector<std::string> reaches;  // protected tables ("schema.table"), sorted
  std::string detail;                // one sentence: what the login can do
  std::string fix;                   // what closes it: SQL or pg_hba.conf
  bool informational() const { return path == ExposurePath::kExemptThroughRole; }
};

// Privacy over time (docs/security.md): VERIFY HISTORY of one protected
// table, as kanon check reports it.
struct HistoryStatus {
  std::string table;    // "schema.table"
  std::string row_key;  // policy::RowKey::describe()
  bool linkable = false;
  uint64_t k = 0;  // the policy's
  uint64_t releases = 0;
  uint64_t linked_rows = 0;
  uint64_t new_rows = 0;
  uint64_t min_candidates = 0;  // the real k over the releases taken together
  // Rows below k by why (policy/history_check.h).
  uint64_t rows_below_k = 0;
  uint64_t updated_rows_below_k = 0;  // through updates a live mode showed
  uint64_t late_rows_below_k = 0;     // arrived after the first release
  uint64_t deleted_rows_below_k = 0;  // through deletions
  std::string error;                  // why it could not be checked
  // Takes the figures of a check.
  void take(const policy::HistoryCheck& check);
  bool finding() const {
    return rows_below_k > 0 || updated_rows_below_k > 0 || late_rows_below_k > 0 ||
           deleted_rows_below_k > 0;
  }
  // "ok", "not linkable", "no release stored", "N rows below k: ...", ...
  std::string verdict() const;
};

struct ExposureReport {
  std::string database;
  size_t tables = 0;  // protected tables (policies)
  size_t logins_checked = 0;
  std::vector<Exposure> rows;          // by role, then path, then object
  std::vector<std::string> notes;      // what was not checked, and why
  std::vector<HistoryStatus> history;  // per protected table, policy order

  size_t exposures() const;  // rows that are not informational
  size_t history_findings() const;
  bool clean() const { return exposures() == 0 && history_findings() == 0; }
};

struct ExposureOptions {
  std::set<std::string> roles;  // check only these logins; empty: every login
};

ExposureReport find_exposures(const rewriter::ObjectCatalog& catalog,
                              const std::vector<policy::TablePolicy>& policies,
                              const PrivilegeFacts& facts, const ExposureOptions& options = {});

// For a terminal: an aligned table of role, path, object and reaches, each
// row followed by its detail and fix, then a summary line and the notes.
std::string exposure_report_text(const ExposureReport& report);
// {"database", "tables", "logins_checked", "exposures", "rows": [{"role",
// "path", "object", "reaches", "detail", "fix", "informational"}], "notes"}
std::string exposure_report_json(const ExposureReport& report);

}  // namespace kanon::exposure

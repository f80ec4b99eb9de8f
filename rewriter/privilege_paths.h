// The objects whose privileges let a login read protected data without
// kanon, from the catalog's reach analysis (object_catalog.h). One list for
// the two places that ask "can this login read protected data through
// PostgreSQL's own privileges":
//   - the proxy (proxy/role_directory.cc): a login that holds none of them
//     (and no entry of access/direct_access.h) reads nothing protected, so
//     its DO and CALL may run;
//   - the exposure report (exposure/exposure.cc): each one a login holds is
//     a row of `kanon check` / SHOW EXPOSURE.
// The privilege counts whether or not the login may use the object's schema
// today: USAGE is granted apart from the object (often to PUBLIC), so the
// report says when it is all that keeps a login out, and the proxy does not
// rely on it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "access/direct_access.h"
#include "policy/table_policy.h"
#include "rewriter/object_catalog.h"

namespace kanon::rewriter {

// The privileges each list is about, as has_*_privilege and GRANT spell them.
inline constexpr const char* kReadPrivilege = "SELECT";  // any column
inline constexpr const char* kWritePrivileges = "INSERT, UPDATE, DELETE, TRUNCATE";
inline constexpr const char* kExecutePrivilege = "EXECUTE";

struct PrivilegePaths {
  // SELECT on any column: relations whose reading reaches a protected table
  // or is opaque (the protected tables, their children, views, materialized
  // views, foreign tables).
  std::vector<uint32_t> read;
  // A write privilege: relations whose writing does (triggers, rules,
  // defaults, constraints; object_catalog.h).
  std::vector<uint32_t> written;
  // EXECUTE: SECURITY DEFINER functions and procedures whose reach is not
  // empty, except trigger functions (PostgreSQL runs them only as triggers,
  // which `written` covers) and functions every policy they reach lists
  // under allowed_functions. A function that runs with its caller's rights
  // is no path of its own: it reads only what the caller may read, and the
  // caller's privileges on that are in `read`.
  std::vector<uint32_t> definer;
  // EXECUTE: functions that are a path by name (access::path_function: read
  // server files, connect without a password). The proxy asks about them by
  // name (access::holds_sql); the report lists them.
  std::vector<uint32_t> server_files;
};

// Every path of the catalog for these policies. kanon's own releases are
// left out: the copy or view of mode: materialized and mode: view
// (store::materialized_name), which holds only masked values and which
// grants: manage grants to restricted roles on purpose.
PrivilegePaths privilege_paths(const ObjectCatalog& catalog,
                               const std::vector<policy::TablePolicy>& policies);

// privilege_paths, computed once for a catalog and the policies it is asked
// with: every restricted session's start asks for them (proxy/session.cc),
// and walking a catalog's few thousand functions takes about half a
// millisecond. Keeps the newest answer only. Thread-safe.
class PrivilegePathsCache {
 public:
  std::shared_ptr<const PrivilegePaths> paths(const std::shared_ptr<const ObjectCatalog>& catalog,
                                              const std::vector<policy::TablePolicy>& policies);

 private:
  std::mutex mu_;
  std::shared_ptr<const ObjectCatalog> catalog_;  // held: its address stays its own
  std::string policies_key_;
  std::shared_ptr<const PrivilegePaths> paths_;
};

// The tables of `within` (policy names; all of them when the reach is
// opaque) that `reach` reaches, less those whose policy lists `function`
// ("schema.name") under allowed_functions. privilege_paths keeps an object
// when this is not empty for every policy; the report asks it per login with
// the tables the login is restricted on.
std::vector<std::string> tables_reached(const Reach& reach,
                                        const std::vector<policy::TablePolicy>& policies,
                                        const std::vector<std::string>& within,
                                        std::string_view function = {});

// A function EXECUTE on which is a path by name (access/direct_access.h).
const access::DirectAccess* server_file_function(const catalog::FunctionFacts& f);

}  // namespace kanon::rewriter

// What reads the database server's files whatever the table privileges say:
// the predefined roles and the functions. One list for the two places that
// decide whether a login can read protected data without kanon: the proxy
// (proxy/role_directory.cc: a login that can do none of this reads nothing
// protected) and the exposure report (audit/exposure.cc: `server-files`
// rows).
#pragma once

#include <span>
#include <string>

namespace kanon::audit {

struct ServerAccess {
  const char* name;
  const char* what;  // completes "it ..."
};

inline constexpr ServerAccess kServerFileRoles[] = {
    {"pg_execute_server_program",
     "runs programs on the database server as its operating system user"},
    {"pg_read_server_files",
     "reads any file on the database server, the table's data files included"},
    {"pg_write_server_files", "writes any file on the database server, its configuration included"},
};

// Not executable by PUBLIC by default; a grant of EXECUTE opens the path.
inline constexpr ServerAccess kServerFileFunctions[] = {
    {"pg_read_file", "reads files on the database server, the table's data files included"},
    {"pg_read_binary_file", "reads files on the database server, the table's data files included"},
    {"pg_stat_file", "reads the metadata of files on the database server"},
    {"pg_ls_dir", "lists directories on the database server"},
    {"lo_import", "reads a file on the database server into a large object it can read"},
    {"lo_export", "writes files on the database server"},
    {"dblink_connect_u", "connects to databases as the server's own user, without a password"},
};

// The names as SQL string constants: 'a', 'b', ...
inline std::string sql_names(std::span<const ServerAccess> list) {
  std::string out;
  for (const auto& a : list) out += std::string(out.empty() ? "'" : ", '") + a.name + "'";
  return out;
}

// The entry of `name` in `list`, or nullptr.
inline const ServerAccess* find_access(std::span<const ServerAccess> list,
                                       const std::string& name) {
  for (const auto& a : list)
    if (name == a.name) return &a;
  return nullptr;
}

}  // namespace kanon::audit

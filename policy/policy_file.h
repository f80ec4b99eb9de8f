// Reading policy files. A policy file holds a `tables:` list; config/kanon.yaml
// lists the files under `policies:`. The format and every key are described
// in docs/policy.md.
//
// Validation is strict: unknown keys, wrong types, k < 2, l < 2, duplicate
// columns or tables, a column used in two roles, all throw ConfigError whose
// message is "file:line: key: what", e.g.
//   "config/policies/people.yaml:4: tables[0].k: must be at least 2".
// Columns are checked against the catalog later (check_against_catalog in
// table_catalog.h), once a connection is available.
#pragma once

#include <string>
#include <vector>

#include "base/config_error.h"
#include "policy/table_policy.h"

namespace kanon::policy {

using base::ConfigError;

// Throws ConfigError.
std::vector<TablePolicy> load_policy_file(const std::string& path);

// Every table of every file in `files` (the configuration's `policies:`),
// each with its database (`database:` of the entry, else of the file, else
// `default_db`, the configuration's backend.dbname); a table named twice in
// one database throws. (policy_stores.h reads them from a ServerConfig.)
std::vector<TablePolicy> load_policies(const std::vector<std::string>& files,
                                       const std::string& default_db);

// The policy of `name`: "database.schema.table", "schema.table" or a bare
// table name, whichever names exactly one policy. Throws ConfigError listing
// the protected tables otherwise (also when the name is ambiguous).
const TablePolicy& find_policy(const std::vector<TablePolicy>& policies, const std::string& name);

// `default_database`, then every other database the policies name, in the
// order they first appear.
std::vector<std::string> databases_of(const std::vector<TablePolicy>& policies,
                                      const std::string& default_database);

// The policies of `database`, in their order.
std::vector<TablePolicy> policies_of(const std::vector<TablePolicy>& policies,
                                     const std::string& database);

// "database.schema.table", or "schema.table" when the database is the
// service account's default (unset).
std::string database_qualified_name(const TablePolicy& policy);

// Splits a dotted name into its parts (each optionally double-quoted, ""
// inside quotes for a quote). nullopt when a part is empty or a quote is not
// closed.
std::optional<std::vector<std::string>> split_qualified_name(const std::string& text);

// The inverse of split_qualified_name: the parts joined with dots, a part
// in double quotes ("" for a quote) when it holds a dot, a quote, white
// space or a ';' (which split_qualified_name or a console command's words
// would cut), or is empty. {"public", "My Table"} -> public."My Table".
std::string join_qualified_name(const std::vector<std::string>& parts);
// policy.name() as SHOW POLICIES, metrics and the web console show it, so
// that it can be typed back into a console command: join_qualified_name of
// schema and table.
std::string display_name(const TablePolicy& policy);

// Splits "schema.table". nullopt when it is not exactly two non-empty parts.
std::optional<std::pair<std::string, std::string>> split_table_name(const std::string& text);

}  // namespace kanon::policy

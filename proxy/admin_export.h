// The admin console's export commands (see docs/export.md):
//
//   EXPORT <table> [TO <schema.table> | TO '<path.csv>'] [WITH (...)]
//       runs publish::run_export with progress notices and cancel, and
//       answers one row: published, rows, levels, k_achieved, classes,
//       suppressed, loss, json_report, html_report.
//   SHOW EXPORTS
//       lists kanon.exports.
//
// Errors are thrown as publish::ExportError (SQLSTATE + message).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "policy/table_policy.h"
#include "proxy/admin_console.h"
#include "proxy/result_set.h"

namespace kanon::proxy {

// EXPORT <command>; `reserved`: tables it may not write ("schema.table":
// every protected table, the audit trail's).
ResultSet run_export_command(const std::string& conninfo, const policy::TablePolicy& policy,
                             const std::string& command, std::vector<std::string> reserved,
                             ConsoleChannel& channel);

// The exports recorded in each database (database name, service conninfo).
ResultSet run_show_exports(const std::vector<std::pair<std::string, std::string>>& databases);

}  // namespace kanon::proxy

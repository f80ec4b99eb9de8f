// The exports table (kanon.exports): one row per published export with its
// numbers, its JSON report and the paths of the report files. Its DDL is
// catalog/kanon_schema.h's; record_export ensures the schema in the export's
// own transaction.
#pragma once

#include <cstdint>
#include <pqxx/pqxx>
#include <string>

#include "publish/report.h"

namespace kanon::publish {

inline constexpr const char* kExportsSchema = "kanon";
inline constexpr const char* kExportsTable = "exports";

// Inserts the report; returns the new id.
int64_t record_export(pqxx::transaction_base& tx, const ExportReport& report,
                      const std::string& report_json, const std::string& json_path,
                      const std::string& html_path);

// id, exported_at, source, target, k, min_class, classes, rows, suppressed,
// levels, loss, json_report, html_report, command — newest last. Empty
// result when the table does not exist yet.
pqxx::result list_exports(pqxx::transaction_base& tx);

}  // namespace kanon::publish

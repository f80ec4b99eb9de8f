#include "publish/exports_table.h"

#include <fmt/format.h>

#include "catalog/kanon_schema.h"

namespace kanon::publish {

namespace {

std::string table_name(pqxx::transaction_base& tx) {
  return tx.quote_name(kExportsSchema) + "." + tx.quote_name(kExportsTable);
}

}  // namespace

int64_t record_export(pqxx::transaction_base& tx, const ExportReport& r,
                      const std::string& report_json, const std::string& json_path,
                      const std::string& html_path) {
  catalog::ensure_kanon_schema(tx);
  const auto loss = r.losses.find(r.metric);
  const auto res = tx.exec_params(
      fmt::format("INSERT INTO {} (source, target, k, min_class, classes, rows_in, rows_out, "
                  "suppressed, levels, metric, loss, algorithm, command, report, json_report, "
                  "html_report) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, "
                  "$14::jsonb, $15, $16) RETURNING id",
                  table_name(tx)),
      r.source, r.target, static_cast<int64_t>(r.k), static_cast<int64_t>(r.min_class),
      static_cast<int64_t>(r.classes), static_cast<int64_t>(r.rows_in),
      static_cast<int64_t>(r.rows_out), static_cast<int64_t>(r.suppressed), r.levels_text(),
      r.metric, loss == r.losses.end() ? 0.0 : loss->second, r.algorithm, r.command, report_json,
      json_path, html_path);
  return res[0][0].as<int64_t>();
}

pqxx::result list_exports(pqxx::transaction_base& tx) {
  const std::string name = table_name(tx);
  if (tx.exec_params("SELECT to_regclass($1) IS NULL", name)[0][0].as<bool>()) return {};
  catalog::check_kanon_schema_version(tx);
  return tx.exec(fmt::format(
      "SELECT id, to_char(exported_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || 'Z', "
      "source, target, k, min_class, classes, rows_out, suppressed, levels, "
      "round(loss::numeric, 6), json_report, html_report, command FROM {} ORDER BY id",
      name));
}

}  // namespace kanon::publish

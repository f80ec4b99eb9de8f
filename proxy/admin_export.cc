#include "proxy/admin_export.h"

#include <fmt/format.h>

#include <pqxx/pqxx>

#include "base/sqlstate.h"
#include "proxy/result_set.h"
#include "publish/exporter.h"
#include "publish/exports_table.h"

namespace kanon::proxy {

ResultSet run_export_command(const std::string& conninfo, const policy::TablePolicy& policy,
                             const std::string& command, std::vector<std::string> reserved,
                             ConsoleChannel& channel) {
  auto request = publish::parse_export_command(command);
  request.reserved_targets = std::move(reserved);
  publish::ExportHooks hooks;
  hooks.notice = [&](const std::string& m) { channel.notice(m); };
  hooks.cancelled = [&] { return channel.cancelled(); };
  hooks.progress = [&](double done) { channel.set_progress(done); };
  const auto r = publish::run_export(conninfo, policy, request, hooks);
  const auto loss = r.report.losses.find(r.report.metric);
  ResultSet rs{{"published", "rows", "levels", "k_achieved", "classes", "suppressed", "loss",
                "json_report", "html_report"}};
  const bool dry_run = r.dry_run;
  const auto file = [&](const std::string& path) {
    return dry_run ? std::nullopt : std::optional<std::string>(path);
  };
  rs.add({dry_run ? "dry run, nothing written: " + r.report.target : r.report.target,
          std::to_string(r.report.rows_out), r.report.levels_text(),
          std::to_string(r.report.min_class), std::to_string(r.report.classes),
          std::to_string(r.report.suppressed),
          loss == r.report.losses.end() ? std::string("") : fmt::format("{:.6f}", loss->second),
          file(r.json_path), file(r.html_path)});
  rs.tag = "EXPORT";
  return rs;
}

ResultSet run_show_exports(const std::vector<std::pair<std::string, std::string>>& databases) {
  ResultSet rs{{"database", "id", "exported_at", "source", "target", "k", "k_achieved", "classes",
                "rows", "suppressed", "levels", "loss", "json_report", "html_report", "command"}};
  for (const auto& [database, conninfo] : databases) {
    try {
      pqxx::connection conn(conninfo);
      pqxx::read_transaction tx(conn);
      for (const auto& row : publish::list_exports(tx)) {
        std::vector<std::optional<std::string>> values{conn.dbname()};
        for (const auto& f : row)
          values.push_back(f.is_null() ? std::nullopt : std::optional<std::string>(f.c_str()));
        rs.add(std::move(values));
      }
    } catch (const pqxx::broken_connection& e) {
      throw publish::ExportError(
          sqlstate::kConnectionFailure,
          fmt::format("kanon admin: SHOW EXPORTS ({}): {}",
                      database.empty() ? "default database" : database, e.what()));
    }
  }
  return rs;
}

}  // namespace kanon::proxy

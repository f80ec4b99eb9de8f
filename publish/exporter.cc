#include "publish/exporter.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <set>

#include "engine/anonymizer.h"
#include "engine/job_config.h"
#include "publish/exports_table.h"
#include "publish/live_table.h"
#include "publish/publication.h"

namespace kanon::publish {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::string utc_now(const char* format) {
  return fmt::format(fmt::runtime(format), std::chrono::floor<std::chrono::milliseconds>(
                                               std::chrono::system_clock::now()));
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw ExportError("58030", fmt::format("kanon export: cannot write {}", path));
}

// Removes the listed files unless released (the export committed).
struct FileGuard {
  std::vector<std::string> paths;
  ~FileGuard() {
    std::error_code ec;
    for (const auto& p : paths) std::filesystem::remove(p, ec);
  }
};

}  // namespace

namespace detail {

ExportError cancelled_error() {
  return ExportError("57014", "kanon export: canceled by the user; nothing was written");
}

engine::PrivacyModel privacy_model(const policy::TablePolicy& policy,
                                   const ExportSettings& settings) {
  engine::PrivacyModel privacy;
  privacy.k = settings.k;
  privacy.suppression = settings.suppression;
  if (settings.l && policy.sensitive) {
    privacy.diversity = engine::Diversity::kDistinct;
    privacy.l = *settings.l;
  }
  return privacy;
}

std::vector<engine::AttributeSpec> attribute_specs(const policy::TablePolicy& policy,
                                                   const ExportSettings& settings,
                                                   const engine::HierarchyProvider& fallback,
                                                   std::map<std::string, std::string>* files) {
  std::vector<engine::AttributeSpec> specs;
  for (const auto& q : policy.quasi_identifiers) {
    const std::string file = hierarchy_file(settings, q);
    specs.push_back({q, engine::AttributeRole::kQuasiIdentifier,
                     file.empty() ? fallback : engine::hierarchy_from_file(file)});
    (*files)[q] = file;
  }
  for (const auto& d : policy.direct_identifiers)
    specs.push_back({d.column, engine::AttributeRole::kIdentifying, nullptr});
  if (settings.l && policy.sensitive)
    specs.push_back({policy.sensitive->column, engine::AttributeRole::kSensitive, nullptr});
  return specs;
}

}  // namespace detail

ExportResult run_export(const std::string& conninfo, const policy::TablePolicy& policy,
                        const ExportRequest& request, const ExportHooks& hooks) {
  const auto start = Clock::now();
  const ExportSettings s = resolve_settings(request, policy);
  const auto notice = [&](const std::string& m) {
    if (hooks.notice) hooks.notice(m);
  };
  const auto is_cancelled = [&] { return hooks.cancelled && hooks.cancelled(); };
  const std::string target_label =
      s.csv_path.empty() ? s.target_schema + "." + s.target_table : s.csv_path;

  std::unique_ptr<pqxx::connection> conn;
  LiveTable live;
  try {
    conn = std::make_unique<pqxx::connection>(conninfo);
    pqxx::read_transaction tx(*conn);
    live = load_live_table(tx, policy.schema, policy.table);
  } catch (const pqxx::broken_connection& e) {
    throw ExportError("08006", fmt::format("kanon export: cannot reach the backend: {}", e.what()));
  } catch (const pqxx::sql_error& e) {
    throw ExportError(e.sqlstate().empty() ? "XX000" : e.sqlstate(),
                      fmt::format("kanon export: reading {}: {}", policy.name(), e.what()));
  }
  const auto& header = live.table.header;
  detail::Throttle throttle;
  for (const auto& q : policy.quasi_identifiers)
    if (live.table.column(q) < 0)
      throw ExportError("42703", fmt::format("kanon export: quasi-identifier '{}' is not a column "
                                             "of {}",
                                             q, policy.name()));
  notice(fmt::format("EXPORT {}: loaded {} rows in {:.0f} ms", policy.name(),
                     live.table.rows.size(), ms_since(start)));
  if (is_cancelled()) throw detail::cancelled_error();

  Publication pub = s.algorithm == engine::Algorithm::kMondrian
                        ? publish_mondrian(live.table, policy, s, hooks)
                        : publish_lattice(live.table, policy, s, hooks);
  notice(fmt::format("EXPORT {}: writing {}", policy.name(), target_label));

  // The published rows: quasi-identifiers as their class's values, direct
  // identifiers dropped, other columns as they are.
  std::set<std::string> dropped;
  for (const auto& d : policy.direct_identifiers) dropped.insert(d.column);
  std::vector<int> qi_of_column(header.size(), -1);
  for (size_t q = 0; q < pub.qi_columns.size(); ++q)
    qi_of_column[pub.qi_columns[q]] = static_cast<int>(q);
  std::vector<size_t> out_columns;
  for (size_t c = 0; c < header.size(); ++c)
    if (!dropped.count(header[c])) out_columns.push_back(c);
  std::vector<uint64_t> class_size(pub.class_values.size(), 0);
  uint64_t suppressed = 0;
  std::vector<std::vector<std::optional<std::string>>> rows;
  for (size_t r = 0; r < live.table.rows.size(); ++r) {
    const int64_t cls = pub.row_class[r];
    if (cls < 0) ++suppressed;
    if (cls < 0 && s.drop_suppressed) continue;
    if (cls >= 0) ++class_size[cls];
    std::vector<std::optional<std::string>> row;
    for (size_t c : out_columns) {
      const int q = qi_of_column[c];
      if (q >= 0) {
        row.push_back(cls < 0 ? std::string("*") : pub.class_values[cls][q]);
      } else if (live.nulls[r][c]) {
        row.push_back(std::nullopt);
      } else {
        row.push_back(live.table.rows[r][c]);
      }
    }
    rows.push_back(std::move(row));
  }

  // The report: the algorithm's part plus what the published rows show.
  ExportReport rep = std::move(pub.report);
  rep.created_at = utc_now("{:%Y-%m-%dT%H:%M:%S}Z");
  rep.source = policy.name();
  rep.target = target_label;
  rep.command = request.command;
  rep.suppressed_rows = s.drop_suppressed ? "drop" : "mask";
  rep.k = s.k;
  rep.rows_in = live.table.rows.size();
  rep.rows_out = rows.size();
  rep.suppressed = suppressed;
  // Classes as a reader of the table sees them: rows with equal published
  // values (Mondrian classes whose ranges or nodes read alike are one).
  std::map<std::vector<std::string>, uint64_t> published_classes;
  for (size_t c = 0; c < class_size.size(); ++c)
    if (class_size[c]) published_classes[pub.class_values[c]] += class_size[c];
  std::map<uint64_t, uint64_t> size_counts;
  for (const auto& [values, n] : published_classes) {
    ++rep.classes;
    ++size_counts[n];
    rep.min_class = rep.min_class == 0 ? n : std::min(rep.min_class, n);
    rep.max_class = std::max(rep.max_class, n);
  }
  rep.histogram = class_size_histogram(size_counts);
  for (size_t q = 0; q < rep.attributes.size() && q < pub.qi_columns.size(); ++q) {
    std::set<std::string_view> published;
    for (const auto& [values, n] : published_classes) published.insert(values[q]);
    rep.attributes[q].distinct_after = static_cast<uint32_t>(published.size());
  }

  // Report files, removed again unless the transaction commits.
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(s.report_dir, ec);
  std::string stem = target_label;
  for (auto& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  stem = fmt::format("{}-{}", stem, utc_now("{:%Y%m%dT%H%M%S}"));
  ExportResult result;
  result.json_path = (fs::path(s.report_dir) / (stem + ".json")).string();
  result.html_path = (fs::path(s.report_dir) / (stem + ".html")).string();
  FileGuard guard;
  guard.paths = {result.json_path, result.html_path};
  const std::string tmp_csv = s.csv_path.empty() ? "" : s.csv_path + ".kanon-tmp";
  if (!tmp_csv.empty()) guard.paths.push_back(tmp_csv);

  try {
    pqxx::work tx(*conn);
    if (s.csv_path.empty()) {
      const std::string name = qualified_name(tx, s.target_schema, s.target_table);
      if (s.replace) tx.exec("DROP TABLE IF EXISTS " + name);
      std::string ddl;
      for (size_t c : out_columns)
        ddl += fmt::format("{}{} {}", ddl.empty() ? "" : ", ", tx.quote_name(header[c]),
                           qi_of_column[c] >= 0 ? "text" : live.types[c]);
      tx.exec(fmt::format("CREATE TABLE {} ({})", name, ddl));
      for (const auto& role : s.grant)
        tx.exec(fmt::format("GRANT SELECT ON {} TO {}", name, tx.quote_name(role)));
      std::string cols;
      for (size_t c : out_columns) cols += (cols.empty() ? "" : ", ") + tx.quote_name(header[c]);
      const size_t batch = 500;
      for (size_t b = 0; b < rows.size(); b += batch) {
        if (is_cancelled()) throw detail::Cancelled{};
        std::string sql = fmt::format("INSERT INTO {} ({}) VALUES ", name, cols);
        for (size_t r = b; r < std::min(rows.size(), b + batch); ++r) {
          sql += r == b ? "(" : ", (";
          for (size_t i = 0; i < rows[r].size(); ++i)
            sql += (i ? ", " : "") + (rows[r][i] ? tx.quote(*rows[r][i]) : std::string("NULL"));
          sql += ")";
        }
        tx.exec(sql);
        if (throttle.due())
          notice(fmt::format("EXPORT {}: {} of {} rows written", policy.name(),
                             std::min(rows.size(), b + batch), rows.size()));
      }
    } else {
      std::ofstream out(tmp_csv, std::ios::binary);
      std::vector<std::string_view> fields;
      for (size_t c : out_columns) fields.push_back(header[c]);
      engine::write_csv_row(out, fields, ';');
      for (const auto& row : rows) {
        fields.clear();
        for (const auto& v : row) fields.push_back(v ? std::string_view(*v) : std::string_view());
        engine::write_csv_row(out, fields, ';');
      }
      out.close();
      if (!out) throw ExportError("58030", fmt::format("kanon export: cannot write {}", tmp_csv));
    }
    if (is_cancelled()) throw detail::Cancelled{};
    rep.total_ms = ms_since(start);
    const std::string json = report_to_json(rep);
    write_file(result.json_path, json);
    write_file(result.html_path, report_to_html(rep));
    result.export_id = record_export(tx, rep, json, result.json_path, result.html_path);
    if (!tmp_csv.empty()) {
      fs::rename(tmp_csv, s.csv_path, ec);
      if (ec)
        throw ExportError(
            "58030", fmt::format("kanon export: cannot write {}: {}", s.csv_path, ec.message()));
    }
    tx.commit();
  } catch (const detail::Cancelled&) {
    throw detail::cancelled_error();
  } catch (const pqxx::sql_error& e) {
    throw ExportError(e.sqlstate().empty() ? "XX000" : e.sqlstate(),
                      fmt::format("kanon export: writing {}: {}", target_label, e.what()));
  } catch (const pqxx::broken_connection& e) {
    throw ExportError("08006", fmt::format("kanon export: lost the backend while writing {}: {}",
                                           target_label, e.what()));
  }
  guard.paths.clear();
  result.report = std::move(rep);
  return result;
}

}  // namespace kanon::publish

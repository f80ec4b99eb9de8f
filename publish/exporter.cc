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

namespace kanon::publish {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Thrown through the engine's progress callback to stop the search.
struct Cancelled {};

ExportError cancelled_error() {
  return ExportError("57014", "kanon export: canceled by the user; nothing was written");
}

engine::HierarchyProvider top_only() {
  return [](const std::vector<std::string>& values) {
    engine::HierarchyTable t;
    t.source = "value -> *";
    for (const auto& v : values) {
      t.rows.push_back({v, "*"});
      t.line_numbers.push_back(0);
    }
    if (t.rows.empty()) {
      t.rows.push_back({"*", "*"});
      t.line_numbers.push_back(0);
    }
    return t;
  };
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

class Throttle {
 public:
  bool due() {
    const auto now = Clock::now();
    if (now - last_ < std::chrono::milliseconds(500)) return false;
    last_ = now;
    return true;
  }

 private:
  Clock::time_point last_ = Clock::now();
};

}  // namespace

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
  for (const auto& q : policy.quasi_identifiers)
    if (live.table.column(q) < 0)
      throw ExportError("42703", fmt::format("kanon export: quasi-identifier '{}' is not a column "
                                             "of {}",
                                             q, policy.name()));
  notice(fmt::format("EXPORT {}: loaded {} rows in {:.0f} ms", policy.name(),
                     live.table.rows.size(), ms_since(start)));
  if (is_cancelled()) throw cancelled_error();

  // Roles and hierarchies.
  std::vector<engine::AttributeSpec> specs;
  std::map<std::string, std::string> hierarchy_names;
  for (const auto& q : policy.quasi_identifiers) {
    const std::string file = hierarchy_file(s, q);
    engine::AttributeSpec spec{q, engine::AttributeRole::kQuasiIdentifier, top_only()};
    if (!file.empty()) spec.hierarchy = engine::hierarchy_from_file(file);
    hierarchy_names[q] = file.empty() ? "value -> *" : file;
    specs.push_back(std::move(spec));
  }
  std::set<std::string> dropped;
  for (const auto& d : policy.direct_identifiers) {
    dropped.insert(d.column);
    specs.push_back({d.column, engine::AttributeRole::kIdentifying, nullptr});
  }
  engine::PrivacyModel privacy;
  privacy.k = s.k;
  privacy.suppression = s.suppression;
  if (s.l && policy.sensitive) {
    privacy.diversity = engine::Diversity::kDistinct;
    privacy.l = *s.l;
    specs.push_back({policy.sensitive->column, engine::AttributeRole::kSensitive, nullptr});
  }
  engine::Dataset data;
  try {
    data = engine::encode_dataset(live.table, specs);
  } catch (const std::exception& e) {
    throw ExportError("22023", fmt::format("kanon export: {}", e.what()));
  }

  // Search, with progress and cancel through the callback.
  Throttle throttle;
  engine::SearchOptions search;
  search.time_limit_s = s.time_limit_s;
  search.progress = [&](const engine::SearchProgress& p) {
    if (is_cancelled()) throw Cancelled{};
    if (!throttle.due()) return;
    notice(fmt::format("EXPORT {}: {} of {} transformations checked, best {} {}, {:.1f} s",
                       policy.name(), p.checked, p.lattice_size, engine::metric_name(s.metric),
                       p.best ? fmt::format("{:.6g}", *p.best) : std::string("none yet"),
                       p.elapsed_ms / 1000.0));
  };
  engine::Outcome outcome;
  try {
    outcome =
        engine::anonymize(data, privacy, s.metric, s.algorithm, engine::CheckerOptions{}, search);
  } catch (const Cancelled&) {
    throw cancelled_error();
  } catch (const engine::DataError& e) {
    throw ExportError("22023", fmt::format("kanon export: {}", e.what()));
  }
  if (!outcome.search.found)
    throw ExportError("22023", fmt::format("kanon export: no generalization of {} satisfies {} "
                                           "within suppression {}; allow more suppression or use "
                                           "coarser hierarchies",
                                           policy.name(), privacy.describe(), s.suppression));
  const engine::Levels& levels = outcome.search.levels;
  notice(fmt::format("EXPORT {}: best transformation found ({} of {} checked), writing {}",
                     policy.name(), outcome.search.checked, outcome.search.lattice_size,
                     target_label));

  // The published rows.
  const auto supp = engine::suppressed_rows(data, privacy, levels);
  std::vector<int> qi_of_column(header.size(), -1);
  for (size_t q = 0; q < data.qis.size(); ++q)
    qi_of_column[data.qis[q].column] = static_cast<int>(q);
  std::vector<size_t> out_columns;
  for (size_t c = 0; c < header.size(); ++c)
    if (!dropped.count(header[c])) out_columns.push_back(c);
  const size_t w = data.width();
  std::map<std::vector<int32_t>, uint64_t> classes;
  std::vector<std::set<int32_t>> published_values(w);
  std::vector<std::vector<std::optional<std::string>>> rows;
  for (size_t r = 0; r < live.table.rows.size(); ++r) {
    if (supp[r] && s.drop_suppressed) continue;
    std::vector<int32_t> key(w);
    for (size_t q = 0; q < w; ++q) key[q] = data.qis[q].maps[levels[q]][data.data[r * w + q]];
    if (!supp[r]) {
      ++classes[key];
      for (size_t q = 0; q < w; ++q) published_values[q].insert(key[q]);
    }
    std::vector<std::optional<std::string>> row;
    for (size_t c : out_columns) {
      const int q = qi_of_column[c];
      if (q >= 0) {
        row.push_back(supp[r] ? std::string("*") : data.qis[q].dictionary.decode(key[q]));
      } else if (live.nulls[r][c]) {
        row.push_back(std::nullopt);
      } else {
        row.push_back(live.table.rows[r][c]);
      }
    }
    rows.push_back(std::move(row));
  }

  // The report.
  ExportReport rep;
  rep.created_at = utc_now("{:%Y-%m-%dT%H:%M:%S}Z");
  rep.source = policy.name();
  rep.target = target_label;
  rep.command = request.command;
  rep.privacy = privacy.describe();
  rep.metric = engine::metric_name(s.metric);
  rep.algorithm = outcome.search.algorithm;
  rep.suppressed_rows = s.drop_suppressed ? "drop" : "mask";
  rep.k = s.k;
  rep.rows_in = data.rows;
  rep.rows_out = rows.size();
  rep.suppressed = std::count(supp.begin(), supp.end(), uint8_t{1});
  rep.suppression_limit = privacy.suppression_limit(data.rows);
  rep.classes = classes.size();
  std::map<uint64_t, uint64_t> size_counts;
  for (const auto& [key, n] : classes) {
    ++size_counts[n];
    rep.min_class = rep.min_class == 0 ? n : std::min(rep.min_class, n);
    rep.max_class = std::max(rep.max_class, n);
  }
  rep.histogram = class_size_histogram(size_counts);
  rep.timed_out = outcome.search.timed_out;
  rep.losses = outcome.losses;
  rep.lattice_size = outcome.search.lattice_size;
  rep.checked = outcome.search.checked;
  rep.search_ms = outcome.search.search_ms;
  for (size_t q = 0; q < w; ++q) {
    const auto& qi = data.qis[q];
    AttributeReport a;
    a.name = qi.name;
    a.level = levels[q];
    a.height = qi.height;
    a.hierarchy = hierarchy_names[qi.name];
    a.distinct_before = qi.data_values;
    a.distinct_after = static_cast<uint32_t>(published_values[q].size());
    for (uint32_t code = 0; code < qi.data_values && a.examples.size() < 3; ++code)
      a.examples.emplace_back(qi.dictionary.decode(static_cast<int32_t>(code)),
                              qi.dictionary.decode(qi.maps[levels[q]][code]));
    rep.attributes.push_back(std::move(a));
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
        if (is_cancelled()) throw Cancelled{};
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
    if (is_cancelled()) throw Cancelled{};
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
  } catch (const Cancelled&) {
    throw cancelled_error();
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

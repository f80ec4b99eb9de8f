#include "publish/exporter.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <set>

#include "base/config_error.h"
#include "base/sqlstate.h"
#include "base/stopwatch.h"
#include "engine/anonymizer.h"
#include "engine/job_config.h"
#include "publish/export_risk.h"
#include "publish/exports_table.h"
#include "publish/live_table.h"
#include "publish/private_files.h"
#include "publish/publication.h"
#include "publish/published_rows.h"
#include "publish/table_writer.h"

namespace kanon::publish {

namespace {

std::string utc_now(const char* format) {
  return fmt::format(fmt::runtime(format), std::chrono::floor<std::chrono::milliseconds>(
                                               std::chrono::system_clock::now()));
}

// The files an export writes: the reports and, for TO '<file.csv>', the
// CSV under a temporary name. Removed again unless keep() is called (the
// export committed).
class ExportFiles {
 public:
  ExportFiles(const ExportSettings& s, const std::string& target_label) : dir_(s.report_dir) {
    ensure_private_directory(dir_);
    stem_ = target_label;
    for (auto& c : stem_)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
    stem_ = fmt::format("{}-{}", stem_, utc_now("{:%Y%m%dT%H%M%S}"));
    if (!s.csv_path.empty()) tmp_csv = s.csv_path + ".kanon-tmp";
  }
  ExportFiles(const ExportFiles&) = delete;
  ExportFiles& operator=(const ExportFiles&) = delete;
  ~ExportFiles() {
    if (kept_) return;
    std::error_code ec;
    for (const auto* p : {&json_path, &html_path, &tmp_csv})
      if (!p->empty()) std::filesystem::remove(*p, ec);
  }
  void keep() { kept_ = true; }

  // <target>-<UTC time>.json and .html, new files (-2, -3, ... after the
  // time when an export of the same second has the name).
  void write_reports(const std::string& json, const std::string& html) {
    namespace fs = std::filesystem;
    for (int n = 1; n <= 100; ++n) {
      const std::string stem = n == 1 ? stem_ : fmt::format("{}-{}", stem_, n);
      const std::string j = (fs::path(dir_) / (stem + ".json")).string();
      if (!write_new_file(j, json)) continue;
      json_path = j;
      const std::string h = (fs::path(dir_) / (stem + ".html")).string();
      if (write_new_file(h, html)) {
        html_path = h;
        return;
      }
      std::error_code ec;
      fs::remove(json_path, ec);
      json_path.clear();
    }
    throw ExportError(sqlstate::kIoError,
                      fmt::format("kanon export: no free report name {} in {}", stem_, dir_));
  }

  std::string json_path, html_path;  // set by write_reports()
  std::string tmp_csv;               // empty unless the target is a CSV file

 private:
  std::string dir_, stem_;
  bool kept_ = false;
};

// The export's view of its hooks.
struct Run {
  const policy::TablePolicy& policy;
  const ExportHooks& hooks;
  void notice(const std::string& m) const {
    if (hooks.notice) hooks.notice(m);
  }
  bool cancelled() const { return hooks.cancelled && hooks.cancelled(); }
  void progress(double done) const {
    if (hooks.progress) hooks.progress(done);
  }
};

// Connects and reads the source table; backend errors become ExportError.
LiveTable load_source(const std::string& conninfo, const policy::TablePolicy& policy,
                      std::unique_ptr<pqxx::connection>& conn) {
  LiveTable live;
  try {
    conn = std::make_unique<pqxx::connection>(conninfo);
    live = load_live_table(*conn, policy);
  } catch (const pqxx::broken_connection& e) {
    throw ExportError(sqlstate::kConnectionFailure,
                      fmt::format("kanon export: cannot reach the backend: {}", e.what()));
  } catch (const pqxx::sql_error& e) {
    throw ExportError(e.sqlstate().empty() ? "XX000" : e.sqlstate(),
                      fmt::format("kanon export: reading {}: {}", policy.name(), e.what()));
  } catch (const base::ConfigError& e) {
    throw ExportError(sqlstate::kUndefinedTable,
                      fmt::format("kanon export: reading {}: {}", policy.name(), e.what()));
  }
  for (const auto& q : policy.quasi_identifiers)
    if (live.table.column(q) < 0)
      throw ExportError(sqlstate::kUndefinedColumn,
                        fmt::format("kanon export: quasi-identifier '{}' is not a column "
                                    "of {}",
                                    q, policy.name()));
  return live;
}

// The report: the algorithm's part plus what the published rows show.
ExportReport build_report(pqxx::connection& conn, Publication& pub, const PublishedRows& rows,
                          const LiveTable& live, const Run& run, const ExportSettings& s,
                          const ExportRequest& request, const std::string& target_label) {
  ExportReport rep = std::move(pub.report);
  rep.created_at = utc_now("{:%Y-%m-%dT%H:%M:%S}Z");
  rep.source = run.policy.name();
  rep.target = target_label;
  rep.command = request.command;
  rep.suppressed_rows = s.drop_suppressed ? "drop" : "mask";
  rep.k = s.k;
  rep.rows_in = live.table.rows.size();
  rep.rows_out = rows.size();
  rep.suppressed = rows.suppressed();
  // Classes as a reader of the table sees them: rows with equal published
  // values (Mondrian classes whose ranges or nodes read alike are one).
  PublishedClasses published_classes;
  if (live.person_column < 0) {
    for (size_t c = 0; c < rows.class_sizes().size(); ++c)
      if (rows.class_sizes()[c]) published_classes[pub.class_values[c]] += rows.class_sizes()[c];
  } else {
    // Person mode: a class's size is its distinct persons, counted here on
    // the published rows rather than taken from the engine.
    for (const auto& p : run.policy.person) rep.person += (rep.person.empty() ? "" : ", ") + p;
    std::map<std::vector<std::string>, std::set<std::string_view>> persons;
    for (size_t r = 0; r < pub.row_class.size(); ++r) {
      const int64_t c = pub.row_class[r];
      if (c >= 0) persons[pub.class_values[c]].insert(live.table.rows[r][live.person_column]);
    }
    for (const auto& [values, p] : persons) published_classes[values] = p.size();
  }
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
  rep.risk = export_risk(conn, pub, run.policy, s, published_classes);
  if (!rep.risk.population_note.empty())
    run.notice(fmt::format("EXPORT {}: no journalist risk: {}", run.policy.name(),
                           rep.risk.population_note));
  return rep;
}

// Writes the table or the CSV file, the report files and the kanon.exports
// row in one transaction and commits it; returns the exports row's id.
int64_t commit_export(pqxx::connection& conn, const Run& run, const ExportSettings& s,
                      const LiveTable& live, const PublishedRows& rows, ExportReport& rep,
                      ExportFiles& files, const base::Stopwatch& clock) {
  const std::string target_label =
      s.csv_path.empty() ? s.target_schema + "." + s.target_table : s.csv_path;
  try {
    pqxx::work tx(conn);
    if (s.csv_path.empty()) {
      if (run.cancelled()) throw detail::Cancelled{};
      detail::Throttle throttle;
      write_table(tx, s, live, rows, [&](uint64_t written) {
        if (run.cancelled()) throw detail::Cancelled{};
        run.progress(0.8 + 0.2 * static_cast<double>(written) / std::max<size_t>(1, rows.size()));
        if (throttle.due())
          run.notice(fmt::format("EXPORT {}: {} of {} rows written", run.policy.name(), written,
                                 rows.size()));
      });
    } else {
      write_csv(files.tmp_csv, live, rows);
    }
    if (run.cancelled()) throw detail::Cancelled{};
    rep.total_ms = clock.ms();
    const std::string json = report_to_json(rep);
    files.write_reports(json, report_to_html(rep));
    const int64_t id = record_export(tx, rep, json, files.json_path, files.html_path);
    if (!files.tmp_csv.empty()) {
      std::error_code ec;
      std::filesystem::rename(files.tmp_csv, s.csv_path, ec);
      if (ec)
        throw ExportError(sqlstate::kIoError, fmt::format("kanon export: cannot write {}: {}",
                                                          s.csv_path, ec.message()));
    }
    tx.commit();
    return id;
  } catch (const detail::Cancelled&) {
    throw detail::cancelled_error();
  } catch (const pqxx::sql_error& e) {
    throw ExportError(e.sqlstate().empty() ? "XX000" : e.sqlstate(),
                      fmt::format("kanon export: writing {}: {}", target_label, e.what()));
  } catch (const pqxx::broken_connection& e) {
    throw ExportError(
        sqlstate::kConnectionFailure,
        fmt::format("kanon export: lost the backend while writing {}: {}", target_label, e.what()));
  }
}

}  // namespace

namespace detail {

ExportError cancelled_error() {
  return ExportError(sqlstate::kQueryCanceled,
                     "kanon export: canceled by the user; nothing was written");
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
  const base::Stopwatch clock;
  const Run run{policy, hooks};
  const ExportSettings s = resolve_settings(request, policy);
  const std::string target_label =
      s.csv_path.empty() ? s.target_schema + "." + s.target_table : s.csv_path;

  std::unique_ptr<pqxx::connection> conn;
  const LiveTable live = load_source(conninfo, policy, conn);
  run.notice(fmt::format("EXPORT {}: loaded {} rows in {:.0f} ms", policy.name(),
                         live.table.rows.size(), clock.ms()));
  if (run.cancelled()) throw detail::cancelled_error();
  run.progress(0.1);

  Publication pub = s.algorithm == engine::Algorithm::kMondrian
                        ? publish_mondrian(live, policy, s, hooks)
                        : publish_lattice(live, policy, s, hooks);
  if (!s.dry_run) run.notice(fmt::format("EXPORT {}: writing {}", policy.name(), target_label));
  run.progress(0.8);
  const PublishedRows rows(live, pub, policy, s.drop_suppressed);
  ExportResult result;
  result.report = build_report(*conn, pub, rows, live, run, s, request, target_label);
  if (s.dry_run) {
    // Nothing is written: the connection's transaction never began.
    result.report.total_ms = clock.ms();
    result.dry_run = true;
    run.notice(fmt::format("EXPORT {}: dry run, nothing written", policy.name()));
    run.progress(1);
    return result;
  }

  ExportFiles files(s, target_label);
  result.export_id = commit_export(*conn, run, s, live, rows, result.report, files, clock);
  files.keep();
  run.progress(1);
  result.json_path = files.json_path;
  result.html_path = files.html_path;
  return result;
}

}  // namespace kanon::publish

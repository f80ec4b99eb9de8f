// EXPORT with a lattice search (flash, bfs): one generalization level per
// quasi-identifier for the whole table, rows of classes that fail the privacy
// model suppressed within the limit.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/sqlstate.h"
#include "engine/anonymizer.h"
#include "publish/publication.h"

namespace kanon::publish {

namespace {

// The two-level hierarchy value -> '*' for quasi-identifiers without a file.
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

// This attribute's released fraction and its parts of the precision and
// loss metrics (engine/quality_metric.h), suppressed rows counting 1.
void attribute_utility(const engine::Dataset& data, size_t q, int level,
                       const std::vector<uint8_t>& supp, uint64_t suppressed, AttributeReport& a) {
  const auto& qi = data.qis[q];
  const int top = qi.max_level();
  const auto& map = qi.maps[level];
  // Hierarchy rows under each generalized value (Iyengar's loss).
  std::vector<uint64_t> under(qi.dictionary.size(), 0);
  for (uint32_t c = 0; c < qi.domain_size; ++c) ++under[map[c]];
  const size_t w = data.width();
  const double n = static_cast<double>(data.rows);
  double share = 0;
  uint64_t released = 0;
  for (size_t r = 0; r < data.rows; ++r) {
    if (supp[r]) continue;
    const int32_t code = data.data[r * w + q];
    share += static_cast<double>(under[map[code]]);
    if (map[code] != qi.maps[top][code]) ++released;
  }
  if (data.rows == 0) return;
  a.released_fraction = static_cast<double>(released) / n;
  const double kept = n - static_cast<double>(suppressed);
  a.precision = (kept * (top > 0 ? static_cast<double>(level) / top : 0.0) +
                 static_cast<double>(suppressed)) /
                n;
  const double dom = static_cast<double>(qi.domain_size);
  a.loss = qi.domain_size <= 1
               ? 0.0
               : (share + static_cast<double>(suppressed) * dom - n) / (n * dom - n);
}

Publication::ValueMap value_map(const engine::QuasiIdentifier& qi, int level) {
  Publication::ValueMap m;
  if (level == 0) {
    m.identity = true;
  } else if (level == qi.max_level()) {
    m.top = qi.dictionary.decode(qi.maps[level][0]);
  } else {
    for (uint32_t c = 0; c < qi.domain_size; ++c)
      m.values.emplace(qi.dictionary.decode(c), qi.dictionary.decode(qi.maps[level][c]));
  }
  return m;
}

}  // namespace

Publication publish_lattice(const LiveTable& live, const policy::TablePolicy& policy,
                            const ExportSettings& s, const ExportHooks& hooks) {
  const engine::CsvTable& table = live.table;
  std::map<std::string, std::string> files;
  const auto specs = detail::attribute_specs(policy, s, top_only(), &files);
  const engine::PrivacyModel privacy = detail::privacy_model(policy, s);
  engine::Dataset data;
  try {
    data = engine::encode_dataset(table, specs, live.person_name);
  } catch (const std::exception& e) {
    throw ExportError(sqlstate::kInvalidParameterValue, fmt::format("kanon export: {}", e.what()));
  }

  // Search, with progress and cancel through the callback.
  detail::Throttle throttle;
  engine::SearchOptions search;
  search.time_limit_s = s.time_limit_s;
  search.progress = [&](const engine::SearchProgress& p) {
    if (hooks.cancelled && hooks.cancelled()) throw detail::Cancelled{};
    if (hooks.progress && p.lattice_size)
      hooks.progress(0.1 + 0.7 * static_cast<double>(p.checked) / p.lattice_size);
    if (!hooks.notice || !throttle.due()) return;
    hooks.notice(fmt::format(
        "EXPORT {}: {} of {} transformations checked, best {} {}, {:.1f} s", policy.name(),
        p.checked, p.lattice_size, engine::metric_name(s.metric),
        p.best ? fmt::format("{:.6g}", *p.best) : std::string("none yet"), p.elapsed_ms / 1000.0));
  };
  engine::Outcome outcome;
  try {
    outcome =
        engine::anonymize(data, privacy, s.metric, s.algorithm, engine::CheckerOptions{}, search);
  } catch (const detail::Cancelled&) {
    throw detail::cancelled_error();
  } catch (const engine::DataError& e) {
    throw ExportError(sqlstate::kInvalidParameterValue, fmt::format("kanon export: {}", e.what()));
  }
  if (!outcome.search.found)
    throw ExportError(sqlstate::kInvalidParameterValue,
                      fmt::format("kanon export: no generalization of {} satisfies {} "
                                  "within suppression {}; allow more suppression or use "
                                  "coarser hierarchies",
                                  policy.name(), privacy.describe(), s.suppression));
  if (hooks.notice)
    hooks.notice(fmt::format("EXPORT {}: best transformation found ({} of {} checked)",
                             policy.name(), outcome.search.checked, outcome.search.lattice_size));

  // Classes of the published rows: the generalized codes of each kept row.
  const engine::Levels& levels = outcome.search.levels;
  const auto supp = engine::suppressed_rows(data, privacy, levels);
  const size_t w = data.width();
  Publication pub;
  for (const auto& qi : data.qis) pub.qi_columns.push_back(qi.column);
  std::map<std::vector<int32_t>, int64_t> class_of_key;
  pub.row_class.assign(table.rows.size(), -1);
  std::vector<int32_t> key(w);
  for (size_t r = 0; r < table.rows.size(); ++r) {
    if (supp[r]) continue;
    for (size_t q = 0; q < w; ++q) key[q] = data.qis[q].maps[levels[q]][data.data[r * w + q]];
    const auto [it, added] =
        class_of_key.emplace(key, static_cast<int64_t>(pub.class_values.size()));
    if (added) {
      std::vector<std::string> values;
      for (size_t q = 0; q < w; ++q) values.push_back(data.qis[q].dictionary.decode(key[q]));
      pub.class_values.push_back(std::move(values));
    }
    pub.row_class[r] = it->second;
  }

  ExportReport& rep = pub.report;
  rep.privacy = privacy.describe();
  rep.metric = engine::metric_name(s.metric);
  rep.algorithm = outcome.search.algorithm;
  rep.suppression_limit = privacy.suppression_limit(data.rows);
  rep.timed_out = outcome.search.timed_out;
  rep.losses = outcome.losses;
  rep.lattice_size = outcome.search.lattice_size;
  rep.checked = outcome.search.checked;
  rep.search_ms = outcome.search.search_ms;
  const uint64_t suppressed = static_cast<uint64_t>(
      std::count_if(supp.begin(), supp.end(), [](uint8_t x) { return x != 0; }));
  for (size_t q = 0; q < w; ++q) {
    const auto& qi = data.qis[q];
    AttributeReport a;
    attribute_utility(data, q, levels[q], supp, suppressed, a);
    pub.value_maps.push_back(value_map(qi, levels[q]));
    a.name = qi.name;
    a.level = levels[q];
    a.height = qi.height;
    a.hierarchy = files[qi.name].empty() ? "value -> *" : files[qi.name];
    a.distinct_before = qi.data_values;
    for (uint32_t code = 0; code < qi.data_values && a.examples.size() < 3; ++code)
      a.examples.emplace_back(qi.dictionary.decode(static_cast<int32_t>(code)),
                              qi.dictionary.decode(qi.maps[levels[q]][code]));
    rep.attributes.push_back(std::move(a));
  }
  return pub;
}

}  // namespace kanon::publish

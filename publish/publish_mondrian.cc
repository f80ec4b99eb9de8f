// EXPORT with Mondrian: strict multidimensional partitioning of the live
// table. A quasi-identifier with a hierarchy file is published as the lowest
// common hierarchy node of its class; without one, numbers become ranges
// "[min-max]" and other values sets "{a,b}". No row is suppressed, so any
// suppression limit holds.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/sqlstate.h"
#include "engine/anonymizer.h"
#include "engine/mondrian_input.h"
#include "publish/publication.h"

namespace kanon::publish {

namespace {

const char* kind_label(engine::MondrianKind kind) {
  switch (kind) {
    case engine::MondrianKind::kNumeric:
      return "numeric ranges";
    case engine::MondrianKind::kSet:
      return "sets of values";
    case engine::MondrianKind::kHierarchy:
      break;
  }
  return "hierarchy";
}

}  // namespace

Publication publish_mondrian(const LiveTable& live, const policy::TablePolicy& policy,
                             const ExportSettings& s, const ExportHooks& hooks) {
  const engine::CsvTable& table = live.table;
  std::map<std::string, std::string> files;
  const auto specs = detail::attribute_specs(policy, s, nullptr, &files);
  engine::PrivacyModel privacy = detail::privacy_model(policy, s);
  privacy.suppression = 0;  // Mondrian suppresses nothing, whatever the limit
  engine::MondrianOptions options;
  options.k = s.k;
  options.l = privacy.diversity == engine::Diversity::kDistinct ? *s.l : 0;
  options.choice = s.choice;

  engine::MondrianInput in;
  try {
    in = engine::encode_mondrian(table, specs, engine::table_domains(table, specs),
                                 live.person_name);
  } catch (const std::exception& e) {
    throw ExportError(sqlstate::kInvalidParameterValue, fmt::format("kanon export: {}", e.what()));
  }

  detail::Throttle throttle;
  options.progress = [&](const engine::MondrianProgress& p) {
    if (hooks.cancelled && hooks.cancelled()) throw detail::Cancelled{};
    if (hooks.progress && p.rows)
      hooks.progress(0.1 + 0.7 * static_cast<double>(p.rows_done) / p.rows);
    if (!hooks.notice || !throttle.due()) return;
    hooks.notice(fmt::format("EXPORT {}: {} of {} rows partitioned into {} classes, {:.1f} s",
                             policy.name(), p.rows_done, p.rows, p.classes, p.elapsed_ms / 1000.0));
  };
  engine::MondrianResult r;
  try {
    r = engine::mondrian(in, options);
  } catch (const detail::Cancelled&) {
    throw detail::cancelled_error();
  } catch (const engine::MondrianError& e) {
    throw ExportError(sqlstate::kInvalidParameterValue,
                      fmt::format("kanon export: {} cannot be published with Mondrian "
                                  "under {}: {}",
                                  policy.name(), privacy.describe(), e.what()));
  }
  if (hooks.cancelled && hooks.cancelled()) throw detail::cancelled_error();
  if (hooks.notice)
    hooks.notice(fmt::format("EXPORT {}: {} rows partitioned into {} classes", policy.name(),
                             in.rows, r.classes()));

  Publication pub;
  const size_t d = in.qis.size();
  for (const auto& a : in.qis) pub.qi_columns.push_back(a.column);
  pub.row_class.assign(table.rows.size(), -1);
  pub.class_values.resize(r.classes());
  for (size_t c = 0; c < r.classes(); ++c) {
    for (size_t a = 0; a < d; ++a)
      pub.class_values[c].push_back(engine::generalized_value(in, r, c, a));
    for (uint32_t i = r.class_begin(c); i < r.class_end[c]; ++i)
      pub.row_class[r.order[i]] = static_cast<int64_t>(c);
  }

  const engine::MondrianLoss loss = engine::mondrian_loss(in, r);
  ExportReport& rep = pub.report;
  rep.privacy = privacy.describe();
  rep.metric = "gcp";
  rep.algorithm = fmt::format("mondrian ({})", engine::mondrian_choice_name(s.choice));
  rep.suppression_limit = privacy.suppression_limit(in.rows);
  rep.losses = {{"dp", loss.dp}, {"ncp", loss.ncp_sum}, {"gcp", loss.gcp}};
  rep.search_ms = r.ms;
  pub.no_value_maps =
      "Mondrian cuts its classes from the table's own values (a class publishes the range, set "
      "or node of the values it holds), so a population record has no defined class: a value "
      "between two classes' ranges falls in none, a node or set may cover it in several. Use "
      "algorithm = flash or bfs for journalist and marketer risk.";
  for (size_t a = 0; a < d; ++a) {
    const auto& attr = in.qis[a];
    AttributeReport ar;
    uint64_t released = 0;
    for (size_t row = 0; row < table.rows.size(); ++row)
      if (pub.row_class[row] >= 0 && pub.class_values[pub.row_class[row]][a] != "*") ++released;
    if (!table.rows.empty())
      ar.released_fraction = static_cast<double>(released) / static_cast<double>(table.rows.size());
    ar.name = attr.name;
    ar.level = -1;  // per class, not one level for the table
    ar.hierarchy = files[attr.name].empty() ? kind_label(attr.kind) : files[attr.name];
    std::vector<uint8_t> present(attr.domain, 0);
    for (int32_t code : attr.codes) present[code] = 1;
    ar.distinct_before = static_cast<uint32_t>(std::count(present.begin(), present.end(), 1));
    std::set<std::string> seen;
    for (size_t row = 0; row < table.rows.size() && ar.examples.size() < 3; ++row) {
      const std::string& original = table.rows[row][attr.column];
      if (!seen.insert(original).second) continue;
      ar.examples.emplace_back(original, pub.class_values[pub.row_class[row]][a]);
    }
    rep.attributes.push_back(std::move(ar));
  }
  return pub;
}

}  // namespace kanon::publish

#include "publish/export_risk.h"

#include <fmt/format.h>

#include <pqxx/pqxx>

#include "catalog/table_catalog.h"
#include "policy/sql_text.h"
#include "store/table_loader.h"

namespace kanon::publish {

PopulationCounts load_population(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                                 const std::string& schema, const std::string& table) {
  policy::TablePolicy population = policy;
  population.schema = schema;
  population.table = table;
  const policy::TableInfo info = catalog::read_table_info(conn, population);
  std::string select, groups;
  for (size_t i = 0; i < policy.quasi_identifiers.size(); ++i) {
    const policy::ColumnInfo* c = info.find(policy.quasi_identifiers[i]);
    if (!c)
      throw std::runtime_error(fmt::format("population table {} has no column {}",
                                           population.name(), policy.quasi_identifiers[i]));
    select += (i ? ", " : "") + store::loaded_expression(*c);
    groups += fmt::format("{}{}", i ? ", " : "", i + 1);
  }
  const size_t width = policy.quasi_identifiers.size();
  PopulationCounts out;
  pqxx::read_transaction tx(conn);
  store::copy_rows(
      tx,
      fmt::format("SELECT {}, pg_catalog.count(*) FROM {} GROUP BY {}", select,
                  policy::qualified_name(schema, table), groups),
      width + 1, population.name(), [&](std::vector<std::optional<std::string_view>>& fields) {
        std::vector<std::string> values(width);
        for (size_t c = 0; c < width; ++c)
          if (fields[c]) values[c] = *fields[c];
        out[std::move(values)] += std::stoull(std::string(fields[width].value_or("0")));
      });
  tx.commit();
  return out;
}

RiskReport risk_report(const Publication& pub, const ExportSettings& s,
                       const PublishedClasses& classes, const PopulationCounts* population) {
  RiskReport rep;
  if (!s.population_table.empty()) rep.population = s.population_schema + "." + s.population_table;
  // F_j: population rows published with class j's values.
  std::map<std::vector<std::string>, uint64_t> in_class;
  bool use_population = !rep.population.empty();
  if (use_population && pub.value_maps.empty()) {
    rep.population_note = pub.no_value_maps;
    use_population = false;
  }
  if (!population) use_population = false;  // export_risk says why
  if (use_population) {
    for (const auto& [values, n] : *population) {
      rep.population_rows += n;
      std::vector<std::string> published;
      for (size_t q = 0; q < values.size() && q < pub.value_maps.size(); ++q) {
        auto v = pub.publish_value(q, values[q]);
        if (!v) break;
        published.push_back(std::move(*v));
      }
      if (published.size() != pub.value_maps.size()) {
        rep.population_unplaced += n;
        continue;
      }
      if (classes.count(published)) in_class[published] += n;
    }
  }
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> sizes;  // (f, F) -> classes
  for (const auto& [values, n] : classes) {
    const auto it = in_class.find(values);
    ++sizes[{n, it == in_class.end() ? 0 : it->second}];
  }
  std::vector<policy::ClassSizes> counts;
  for (const auto& [fF, j] : sizes) counts.push_back({fF.first, fF.second, j});
  if (use_population) {
    const std::string why = policy::population_mismatch(counts);
    if (!why.empty()) {
      rep.population_note = fmt::format("population table {}: {}", rep.population, why);
      use_population = false;
    }
  }
  rep.figures = policy::assess_risk(counts, s.risk_threshold, use_population);
  return rep;
}

RiskReport export_risk(pqxx::connection_base& conn, const Publication& pub,
                       const policy::TablePolicy& policy, const ExportSettings& s,
                       const PublishedClasses& classes) {
  if (s.population_table.empty() || pub.value_maps.empty())
    return risk_report(pub, s, classes, nullptr);
  PopulationCounts population;
  std::string error;
  try {
    population = load_population(conn, policy, s.population_schema, s.population_table);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (error.empty()) return risk_report(pub, s, classes, &population);
  RiskReport rep = risk_report(pub, s, classes, nullptr);
  rep.population_note = fmt::format("population table {}.{} cannot be read: {}",
                                    s.population_schema, s.population_table, error);
  return rep;
}

}  // namespace kanon::publish

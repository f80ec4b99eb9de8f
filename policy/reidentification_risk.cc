#include "policy/reidentification_risk.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace kanon::policy {

std::string population_mismatch(std::span<const ClassSizes> classes) {
  for (const auto& c : classes) {
    if (c.classes == 0) continue;
    if (c.population == 0)
      return fmt::format(
          "{} released class(es) of {} record(s) have no record in the population table (is it "
          "the population of the released table, with the same values?)",
          c.classes, c.size);
    if (c.population < c.size)
      return fmt::format(
          "{} released class(es) of {} record(s) have only {} record(s) in the population table; "
          "the population must contain the released records",
          c.classes, c.size, c.population);
  }
  return "";
}

RiskFigures assess_risk(std::span<const ClassSizes> classes, double threshold,
                        bool with_population) {
  if (!(threshold > 0 && threshold <= 1))
    throw RiskError(fmt::format("risk threshold {} is not in (0, 1]", threshold));
  for (const auto& c : classes)
    if (c.classes > 0 && c.size == 0) throw RiskError("a released class of size 0");
  if (with_population)
    if (const auto why = population_mismatch(classes); !why.empty()) throw RiskError(why);

  RiskFigures r;
  r.threshold = threshold;
  r.with_population = with_population;
  uint64_t min_size = std::numeric_limits<uint64_t>::max();
  uint64_t min_population = std::numeric_limits<uint64_t>::max();
  double population_records = 0;  // sum of F_j over the released classes
  double marketer_sum = 0;        // sum of f_j / F_j
  JournalistRisk journalist;
  for (const auto& c : classes) {
    if (c.classes == 0) continue;
    const uint64_t records = c.size * c.classes;
    r.records += records;
    r.classes += c.classes;
    min_size = std::min(min_size, c.size);
    if (1.0 / static_cast<double>(c.size) > threshold) r.prosecutor.records_above += records;
    if (with_population) {
      min_population = std::min(min_population, c.population);
      population_records += static_cast<double>(c.population) * static_cast<double>(c.classes);
      marketer_sum += static_cast<double>(records) / static_cast<double>(c.population);
      if (1.0 / static_cast<double>(c.population) > threshold) journalist.records_above += records;
    }
  }
  if (r.records == 0) {
    if (with_population) r.journalist = journalist;
    return r;
  }
  const double n = static_cast<double>(r.records);
  const double j = static_cast<double>(r.classes);
  for (const auto& c : classes)
    if (c.classes > 0 && c.size == min_size) r.prosecutor.records_at_highest += c.size * c.classes;
  r.prosecutor.highest = 1.0 / static_cast<double>(min_size);
  r.prosecutor.average = j / n;
  r.prosecutor.share_above = static_cast<double>(r.prosecutor.records_above) / n;
  if (with_population) {
    journalist.highest = 1.0 / static_cast<double>(min_population);
    journalist.average = std::max(j / population_records, marketer_sum / n);
    journalist.share_above = static_cast<double>(journalist.records_above) / n;
    r.journalist = journalist;
    r.marketer = marketer_sum / n;
  } else {
    r.marketer = j / n;
  }
  return r;
}

}  // namespace kanon::policy

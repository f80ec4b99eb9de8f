#include "proxy/admin_risk.h"

#include <fmt/format.h>

#include <map>

namespace kanon::proxy {

namespace {

std::string figure(double x) {
  return fmt::format("{:.6g}", x);
}

}  // namespace

std::vector<std::string> risk_columns() {
  return {"prosecutor_max_risk",
          "records_at_max_risk",
          "prosecutor_avg_risk",
          "records_above_threshold",
          "share_above_threshold",
          "risk_threshold",
          "population",
          "journalist_max_risk",
          "journalist_avg_risk",
          "journalist_share_above_threshold",
          "marketer_risk"};
}

std::vector<std::optional<std::string>> risk_values(const store::VerificationReport& v,
                                                    const policy::RiskOptions& risk) {
  const auto& r = v.risk;
  const auto& j = r.journalist;
  return {figure(r.prosecutor.highest),
          std::to_string(r.prosecutor.records_at_highest),
          figure(r.prosecutor.average),
          std::to_string(r.prosecutor.records_above),
          figure(r.prosecutor.share_above),
          figure(r.threshold),
          j ? std::optional(risk.population()) : std::nullopt,
          j ? std::optional(figure(j->highest)) : std::nullopt,
          j ? std::optional(figure(j->average)) : std::nullopt,
          j ? std::optional(figure(j->share_above)) : std::nullopt,
          figure(r.marketer)};
}

ResultSet classes_result(const store::VerificationReport& v) {
  // verify_table splits a size by population size; one row per size here.
  struct Size {
    uint64_t classes = 0, rows = 0;
  };
  std::map<uint64_t, Size> sizes;
  for (const auto& c : v.class_sizes) {
    sizes[c.size].classes += c.classes;
    sizes[c.size].rows += c.rows;
  }
  ResultSet r{{"class_size", "classes", "rows", "records", "prosecutor_risk", "above_threshold"}};
  for (const auto& [size, s] : sizes) {
    const double risk = 1.0 / static_cast<double>(size);
    r.add({std::to_string(size), std::to_string(s.classes), std::to_string(s.rows),
           std::to_string(size * s.classes), figure(risk), risk > v.risk.threshold ? "t" : "f"});
  }
  return r;
}

ResultSet utility_result(const policy::TablePolicy& p, const store::VerificationReport& v,
                         const std::vector<store::ColumnDistinct>& distinct) {
  ResultSet r{{"column", "rows", "released_rows", "released_fraction", "distinct_values",
               "distinct_released"}};
  for (const auto& q : p.quasi_identifiers) {
    std::optional<std::string> released, fraction, values, shown;
    for (const auto& c : v.columns)
      if (c.column == q) {
        released = std::to_string(c.released_rows);
        fraction = fmt::format("{:.4f}", v.released_fraction_of(c));
      }
    for (const auto& d : distinct)
      if (d.column == q) {
        values = std::to_string(d.distinct_values);
        shown = std::to_string(d.distinct_released);
      }
    r.add({q, std::to_string(v.rows), released, fraction, values, shown});
  }
  return r;
}

}  // namespace kanon::proxy

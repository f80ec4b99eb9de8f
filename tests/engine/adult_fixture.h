// Loads ADULT with all 9 attributes as quasi-identifiers and the shipped
// hierarchies from the repository's data/adult/ (KANON_ADULT_DIR overrides).
#pragma once

#include <cstdlib>
#include <string>

#include "engine/csv.h"
#include "engine/dataset.h"
#include "engine/job_config.h"
#include "tests/support/demo_data.h"

namespace kanon::engine::testing {

using kanon::testing::adult_dir;

inline const char* const kAdultAttributes[] = {
    "sex",       "age",        "race",        "marital-status", "education", "native-country",
    "workclass", "occupation", "salary-class"};

inline Dataset load_adult() {
  const std::string dir = adult_dir();
  const CsvTable table = read_csv(dir + "/adult.csv", ';');
  std::vector<AttributeSpec> specs;
  for (const char* a : kAdultAttributes) {
    specs.push_back({a, AttributeRole::kQuasiIdentifier,
                     hierarchy_from_file(dir + "/adult_hierarchy_" + a + ".csv")});
  }
  return encode_dataset(table, specs);
}

// Levels reordered to the alphabetical attribute order the issue quotes.
inline std::vector<int> alphabetical_levels(const Dataset& d, const Levels& l) {
  std::vector<std::pair<std::string, int>> v;
  for (size_t i = 0; i < d.qis.size(); ++i) v.push_back({d.qis[i].name, l[i]});
  std::sort(v.begin(), v.end());
  std::vector<int> out;
  for (auto& p : v) out.push_back(p.second);
  return out;
}

}  // namespace kanon::engine::testing

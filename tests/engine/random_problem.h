// Random small anonymization problems for the oracle and equivalence tests:
// random data over random monotone hierarchies (each level merges the groups
// of the level below at random), a random sensitive column.
#pragma once

#include <fmt/format.h>

#include <random>
#include <string>
#include <vector>

#include "engine/csv.h"
#include "engine/dataset.h"
#include "engine/privacy_model.h"

namespace kanon::engine::testing {

struct RandomProblem {
  CsvTable table;
  std::vector<AttributeSpec> specs;
  Dataset data;
};

inline HierarchyTable random_hierarchy(std::mt19937& rng, const std::string& attr, int domain,
                                       int height) {
  HierarchyTable h;
  h.source = attr;
  std::vector<int> group(domain);
  for (int v = 0; v < domain; ++v) group[v] = v;
  int groups = domain;
  std::vector<std::vector<std::string>> rows(domain);
  for (int v = 0; v < domain; ++v) rows[v].push_back(fmt::format("{}{}", attr, v));
  for (int l = 1; l < height; ++l) {
    const bool top = l == height - 1;
    const int next_groups = top ? 1 : std::max(1, groups - 1 - static_cast<int>(rng() % groups));
    std::vector<int> parent(groups);
    for (int g = 0; g < groups; ++g) parent[g] = static_cast<int>(rng() % next_groups);
    for (int v = 0; v < domain; ++v) {
      group[v] = parent[group[v]];
      rows[v].push_back(top ? "*" : fmt::format("{}L{}G{}", attr, l, group[v]));
    }
    groups = next_groups;
  }
  h.rows = rows;
  h.line_numbers.assign(domain, 0);
  return h;
}

inline RandomProblem random_problem(std::mt19937& rng, int dims, int rows) {
  RandomProblem p;
  p.table.source = "random";
  std::vector<int> domains;
  std::vector<HierarchyTable> hierarchies;
  for (int a = 0; a < dims; ++a) {
    const std::string name = fmt::format("a{}", a);
    p.table.header.push_back(name);
    const int domain = 1 + static_cast<int>(rng() % 6);
    const int height = 2 + static_cast<int>(rng() % 3);
    domains.push_back(domain);
    hierarchies.push_back(random_hierarchy(rng, name, domain, height));
  }
  p.table.header.push_back("s");
  for (int r = 0; r < rows; ++r) {
    std::vector<std::string> row;
    for (int a = 0; a < dims; ++a) {
      // Skewed values so that some classes are small.
      const int v = static_cast<int>(rng() % domains[a]) * static_cast<int>(rng() % 2);
      row.push_back(fmt::format("a{}{}", a, v));
    }
    row.push_back(fmt::format("s{}", rng() % 4));
    p.table.rows.push_back(row);
    p.table.line_numbers.push_back(r + 2);
  }
  for (int a = 0; a < dims; ++a) {
    HierarchyTable h = hierarchies[a];
    p.specs.push_back({p.table.header[a], AttributeRole::kQuasiIdentifier,
                       [h](const std::vector<std::string>&) { return h; }});
  }
  p.specs.push_back({"s", AttributeRole::kSensitive, nullptr});
  p.data = encode_dataset(p.table, p.specs);
  return p;
}

// One of distinct-2, entropy-1.5, recursive-(3,2) diversity, or none
// (three chances in six), drawn with one rng() call.
inline void random_diversity(std::mt19937& rng, PrivacyModel& m) {
  switch (rng() % 6) {
    case 0:
      m.diversity = Diversity::kDistinct;
      m.l = 2;
      break;
    case 1:
      m.diversity = Diversity::kEntropy;
      m.l = 1.5;
      break;
    case 2:
      m.diversity = Diversity::kRecursive;
      m.l = 2;
      m.c = 3;
      break;
    default:
      break;
  }
}

}  // namespace kanon::engine::testing

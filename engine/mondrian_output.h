// Publishing a Mondrian partitioning: the generalized value of each class
// (numbers as "[min-max]" or the single value, hierarchy attributes as the
// lowest common hierarchy node, set attributes as "{a,b,c}" or the single
// value), the anonymized CSV and the JSON report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/csv.h"
#include "engine/dataset.h"
#include "engine/mondrian.h"

namespace kanon::engine {

// Generalized text of attribute `a` over class `c`.
std::string generalized_value(const MondrianInput& in, const MondrianResult& r, size_t c, size_t a);

// Writes `table` with the quasi-identifiers generalized per class, identifying
// columns dropped, other columns unchanged, rows in input order.
void write_mondrian_csv(const std::string& path, const CsvTable& table,
                        const std::vector<AttributeSpec>& specs, const MondrianInput& in,
                        const MondrianResult& r, char delimiter);

// `out.csv` -> `out.3.csv` (the rank before the extension; appended when
// the file name has none).
std::string part_path(const std::string& path, int rank);

struct MondrianReport {
  std::string privacy;  // PrivacyModel::describe()
  std::string choice;   // attribute choice
  std::string person;   // person mode: the person column (min_class_size in persons)
  std::vector<std::string> quasi_identifiers;
  MondrianLoss loss;
  double ms = 0;        // partitioning, wall (slowest rank)
  double cpu_ms = 0;    // partitioning, CPU (sum over ranks)
  double total_ms = 0;  // load + partition + write, wall
  // Wall ms per phase (distributed: the slowest rank's): read, encode or
  // domains, sample, exchange, partition, write.
  std::vector<std::pair<std::string, double>> phases_ms;
  // Distributed runs.
  int ranks = 1;
  std::vector<uint64_t> rows_per_rank;
  std::vector<std::string> parts;  // output file per rank
  std::string split;               // tree | quantiles (mondrian_split.h)
  std::vector<std::string> cuts;   // the split tree's cuts, depth first: "age <= 36"
  double sample_fraction = 0;
  uint64_t sample_rows = 0;
};

std::string mondrian_report_json(const MondrianReport& r);

}  // namespace kanon::engine

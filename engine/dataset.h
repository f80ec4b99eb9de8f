// The encoded input of a search, laid out as the Flash/ARX papers describe:
// one dictionary per quasi-identifier with the values that occur in the data
// encoded first (0..m-1), then the remaining hierarchy values; each hierarchy
// as a dense array per level (maps[level][code] -> generalized code, so
// transforming a cell is one lookup); the data as a row-major int32 array.
//
// Immutable after construction; safe to share between threads for reading.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/csv.h"
#include "engine/dictionary.h"
#include "engine/hierarchy.h"

namespace kanon::engine {

enum class AttributeRole { kQuasiIdentifier, kSensitive, kInsensitive, kIdentifying };

// Builds the hierarchy of a quasi-identifier from the column's distinct values
// (tabular files ignore them; functional specs expand over them).
using HierarchyProvider = std::function<HierarchyTable(const std::vector<std::string>& values)>;

struct AttributeSpec {
  std::string name;
  AttributeRole role = AttributeRole::kInsensitive;
  HierarchyProvider hierarchy;  // required for quasi-identifiers
};

struct QuasiIdentifier {
  std::string name;
  int column = -1;           // column in the input table
  Dictionary dictionary;     // all values of all levels
  uint32_t data_values = 0;  // codes 0..data_values-1 occur in the data
  uint32_t domain_size = 0;  // rows of the hierarchy table (codes 0..domain_size-1 at level 0)
  int height = 0;            // number of levels, 0..height-1
  std::vector<std::vector<int32_t>> maps;    // maps[level][level-0 code]
  std::vector<uint32_t> data_frequency;      // occurrences of each level-0 code in the data
  std::vector<uint32_t> distinct_per_level;  // distinct values per level in the table

  int max_level() const { return height - 1; }
};

struct Dataset {
  size_t rows = 0;
  std::vector<QuasiIdentifier> qis;
  std::vector<int32_t> data;  // rows x qis.size(), row-major

  std::string sensitive_name;  // empty when there is no sensitive attribute
  int sensitive_column = -1;
  Dictionary sensitive_dictionary;
  std::vector<int32_t> sensitive;  // one code per row

  // Person mode: k counts the distinct persons of a class, not its rows.
  std::string person_name;  // empty when rows are counted
  int person_column = -1;
  std::vector<int32_t> person;  // one code per row (codes 0..persons-1)
  uint32_t persons = 0;

  size_t width() const { return qis.size(); }
  bool counts_persons() const { return person_column >= 0; }
  // Appends `times - 1` copies of the rows (benchmarks: ADULT x 10).
  void replicate(int times);
};

class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Encodes `table`. Columns without a spec are insensitive. A non-empty
// `person` names the column whose values identify persons (person mode); it
// keeps its own role for the output but must not be a quasi-identifier.
// Throws DataError / HierarchyError naming the file, line, column and value
// on any mismatch (unknown attribute, missing hierarchy, data value not in the
// hierarchy, unknown person column or one that is a quasi-identifier).
Dataset encode_dataset(const CsvTable& table, const std::vector<AttributeSpec>& specs,
                       const std::string& person = {});

// Checks that `person` names a column of `table` that is not a quasi-
// identifier of `specs`; returns its index. Throws DataError.
int person_column(const CsvTable& table, const std::vector<AttributeSpec>& specs,
                  const std::string& person);

}  // namespace kanon::engine

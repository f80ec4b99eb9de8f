// Encoding a CSV table for Mondrian (mondrian.h). Each quasi-identifier is
//  - hierarchy: it has a hierarchy; codes are the hierarchy's leaves in
//    depth-first order (children in order of first appearance in the table),
//    so every hierarchy node covers a contiguous code range;
//  - numeric: no hierarchy and every value parses as a finite number; codes
//    are the distinct values in ascending order;
//  - set: otherwise; codes are the distinct values in byte order.
// The domain (kind, numeric range, distinct values) is computed first so a
// distributed run can agree on it across ranks before encoding its slice.
#pragma once

#include <string>
#include <vector>

#include "engine/csv.h"
#include "engine/dataset.h"
#include "engine/mondrian.h"

namespace kanon::engine {

struct MondrianDomain {
  std::string name;
  int column = -1;
  MondrianKind kind = MondrianKind::kSet;
  double low = 0, high = 0;         // numeric
  std::vector<std::string> values;  // hierarchy/set: distinct data values, sorted
};

// Parses a whole cell as a finite number.
bool parse_number(const std::string& text, double* value);

// The quasi-identifiers of `specs` in order, with their columns and kinds
// from this table alone. Hierarchy and set attributes get their distinct
// values; numeric ones their range. Throws DataError for unknown columns.
std::vector<MondrianDomain> table_domains(const CsvTable& table,
                                          const std::vector<AttributeSpec>& specs);

// Sorted distinct values of one column.
std::vector<std::string> distinct_values(const CsvTable& table, int column);

// Encodes `table` under agreed domains. The sensitive attribute (if any spec
// has that role) and the person column (`person`, person mode; see
// person_column() in dataset.h) get table-local codes. Throws DataError /
// HierarchyError naming file, line, column and value (e.g. a value missing
// from the hierarchy).
MondrianInput encode_mondrian(const CsvTable& table, const std::vector<AttributeSpec>& specs,
                              const std::vector<MondrianDomain>& domains,
                              const std::string& person = {});

}  // namespace kanon::engine

// A generalization hierarchy in its tabular form: one row per original value,
// `value;level1;...;top`, as ARX and data/adult/ store them. The
// functional specs of hierarchy_spec.h expand to this same form.
//
// validate() enforces what the search relies on and throws HierarchyError
// naming the source, the line and the offending value:
//   - every row has the same number of levels (equal heights),
//   - level-0 values are unique,
//   - monotonicity: each value at level l maps to one value at level l+1
//     (so groups at l+1 are unions of groups at l),
//   - a single top value.
// Coverage of the data values is checked when the data is encoded (dataset.h).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace kanon::engine {

class HierarchyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct HierarchyTable {
  std::string source;                          // file or spec name, for messages
  std::vector<std::vector<std::string>> rows;  // rows[i][level]
  std::vector<size_t> line_numbers;            // 1-based source line per row (0 = generated)

  size_t height() const { return rows.empty() ? 0 : rows.front().size(); }
  void validate() const;
};

// Reads the tabular format; validates it.
HierarchyTable read_hierarchy_csv(const std::string& path, char delimiter = ';');

}  // namespace kanon::engine

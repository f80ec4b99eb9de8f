// Strict multidimensional Mondrian (LeFevre, DeWitt, Ramakrishnan, ICDE 2006)
// with distinct l-diversity, on dictionary-encoded quasi-identifier columns.
//
// Every attribute is an ordered domain of integer codes (numbers by value,
// hierarchy leaves in depth-first order of the hierarchy, set values by
// text; see mondrian_input.h). A partition is split at the median code of one
// attribute: left = codes <= median (or < median, whichever side keeps the
// cut closer to the middle when the median value repeats), right = the rest.
// A cut is allowable when both sides keep at least k rows (in person mode:
// k distinct persons) and, with l > 1, at least l distinct sensitive values. The attribute is
// chosen by normalized span (largest first), maximum entropy or minimum entropy of its values in
// the partition; when the best attribute has no allowable cut the next is
// tried; a partition without any allowable cut is a final class.
//
// Hot path: one row-index array partitioned in place (std::partition on the
// chosen boundary), column-major codes, epoch-stamped scratch arrays sized by
// the domains; no allocation per partition. Deterministic for a given input.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "base/name_table.h"

namespace kanon::engine {

enum class MondrianChoice { kSpan, kMaxEntropy, kMinEntropy };

// span, max-entropy, min-entropy (also read as max_entropy, min_entropy).
const base::NameTable<MondrianChoice>& mondrian_choices();
inline const char* mondrian_choice_name(MondrianChoice c) {
  return mondrian_choices().name(c);
}
inline std::optional<MondrianChoice> parse_mondrian_choice(std::string_view name) {
  return mondrian_choices().parse(name);
}

enum class MondrianKind { kNumeric, kHierarchy, kSet };

// One encoded quasi-identifier. Codes 0..domain-1 are ordered.
struct MondrianAttribute {
  std::string name;
  int column = -1;  // column in the input table
  MondrianKind kind = MondrianKind::kSet;
  uint32_t domain = 0;              // number of codes
  std::vector<int32_t> codes;       // one per row
  std::vector<double> numbers;      // numeric: code -> value (ascending)
  double low = 0, high = 0;         // numeric: domain range (global in a distributed run)
  std::vector<std::string> labels;  // hierarchy/set: code -> value text
  // Hierarchy: node[level][code] is the node id of the leaf's ancestor at
  // `level` (level 0: the leaf itself); node_label / node_leaves per node.
  std::vector<std::vector<int32_t>> node;
  std::vector<std::vector<std::string>> node_label;
  std::vector<std::vector<uint32_t>> node_leaves;
  std::string hierarchy_source;
};

struct MondrianInput {
  size_t rows = 0;
  std::vector<MondrianAttribute> qis;
  std::vector<int32_t> sensitive;  // one code per row; empty without a sensitive attribute
  uint32_t sensitive_domain = 0;
  // Person mode: k counts the distinct persons of a class (a person with rows
  // on both sides of a cut counts on each side).
  std::vector<int32_t> person;  // one code per row; empty when rows are counted
  uint32_t person_domain = 0;
  std::string person_name;

  bool counts_persons() const { return !person_name.empty(); }
};

struct MondrianProgress {
  uint64_t rows_done = 0;  // rows in final classes
  uint64_t rows = 0;
  uint64_t classes = 0;
  double elapsed_ms = 0;
};

struct MondrianOptions {
  uint32_t k = 2;
  uint32_t l = 0;  // distinct l-diversity when > 1
  MondrianChoice choice = MondrianChoice::kSpan;
  std::function<void(const MondrianProgress&)> progress;  // about every 1% of the rows
};

// Per-class summary of one attribute: the extreme codes and distinct count.
struct AttributeRange {
  int32_t min = 0, max = 0;
  uint32_t distinct = 0;
};

struct MondrianResult {
  std::vector<uint32_t> order;         // row indices grouped by class
  std::vector<uint32_t> class_end;     // class c = order[class_end[c-1] .. class_end[c])
  std::vector<AttributeRange> ranges;  // classes x qis, row-major
  uint32_t min_class_size = 0;         // rows, or persons in person mode
  double ms = 0;                       // wall time of the partitioning
  double cpu_ms = 0;                   // CPU time of the calling thread

  size_t classes() const { return class_end.size(); }
  uint32_t class_begin(size_t c) const { return c ? class_end[c - 1] : 0; }
};

class MondrianError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Partitions `in`. Throws MondrianError when the whole table already fails k
// or l (it cannot be published at all).
MondrianResult mondrian(const MondrianInput& in, const MondrianOptions& options);

// Normalized certainty penalty of one attribute over a class (Xu et al.
// 2006): numeric (max - min) / (high - low); hierarchy: leaves under the
// lowest common node / domain, 0 for a single value; set: distinct / domain,
// 0 for a single value.
double attribute_ncp(const MondrianAttribute& a, const AttributeRange& r);
// The level of the lowest common hierarchy node of codes min..max.
int common_level(const MondrianAttribute& a, int32_t min, int32_t max);

// Information loss of a partitioning.
struct MondrianLoss {
  double dp = 0;       // discernibility penalty: sum of class size^2
  double ncp_sum = 0;  // sum over classes of size x NCP(class), NCP = sum over attributes
  double gcp = 0;      // ncp_sum / (attributes x rows), in [0, 1]
  uint64_t rows = 0;
  uint64_t classes = 0;
  uint32_t min_class_size = 0;  // rows, or persons in person mode
};
MondrianLoss mondrian_loss(const MondrianInput& in, const MondrianResult& r);

}  // namespace kanon::engine

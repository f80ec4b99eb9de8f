// Quality (information loss) models; lower is better for all of them.
//   loss       Iyengar's loss as ARX defines it: per attribute each row adds
//              (hierarchy-table rows mapping to its generalized value) / |dom|,
//              a suppressed row adds 1; L = (S - N/|dom|) / (N - N/|dom|);
//              aggregate: geometric mean (prod(1 + L_i))^(1/n) - 1.
//   dm         DM*: sum over all classes of size^2; suppressed classes count
//              with their full size (no extra penalty), as in ARX.
//   entropy    non-uniform entropy: sum over cells of -log2(f(orig)/f(gen)),
//              frequencies over the column; suppressed cells use f(gen) = N.
//   precision  mean over cells of level/max level; suppressed cells count 1.
//   height     sum of the levels.
//   aecs       average class size: N / classes, all suppressed rows forming
//              one class.
// Every model has a monotone lower bound: its value for generalization alone
// (no suppression), since suppression can only add loss (antichain paper,
// "insufficient data quality"). For loss, entropy, precision and height that
// bound needs no pass over the data (bound(levels)).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/name_table.h"
#include "engine/dataset.h"
#include "engine/group_table.h"
#include "engine/lattice.h"

namespace kanon::engine {

enum class MetricKind { kLoss, kDiscernibility, kEntropy, kPrecision, kHeight, kAecs };

// loss, dm, entropy, precision, height, aecs; dm is also read as dm*, dmstar
// or discernibility.
const base::NameTable<MetricKind>& metric_names();
inline std::optional<MetricKind> parse_metric(std::string_view name) {
  return metric_names().parse(name);
}
inline const char* metric_name(MetricKind kind) {
  return metric_names().name(kind);
}
const std::vector<MetricKind>& all_metrics();

struct QualityValue {
  double value = 0;  // with suppression
  double bound = 0;  // generalization only: a lower bound for this node and its generalizations
};

class QualityMetric {
 public:
  QualityMetric(MetricKind kind, const Dataset& data);

  MetricKind kind() const { return kind_; }
  const char* name() const { return metric_name(kind_); }
  // Value independent of suppression, hence monotone under generalization
  // even with suppression on.
  bool monotone_with_suppression() const {
    return kind_ == MetricKind::kDiscernibility || kind_ == MetricKind::kHeight;
  }
  bool has_data_free_bound() const {
    return kind_ != MetricKind::kDiscernibility && kind_ != MetricKind::kAecs;
  }
  // REQUIRES: has_data_free_bound().
  double bound(const Levels& levels) const;

  // `suppressed` lists the indices of the suppressed classes; `keys` gives
  // the classes' generalized codes.
  QualityValue evaluate(const Levels& levels, std::span<const GroupClass> classes,
                        std::span<const uint32_t> suppressed, const ClassKeys& keys) const;

 private:
  MetricKind kind_;
  size_t width_;
  uint64_t rows_;
  std::vector<int> max_level_;
  std::vector<uint32_t> domain_;
  // loss: rows_share_[a][l][code], gen_share_[a][l] = sum over rows of rows_share.
  std::vector<std::vector<std::vector<uint32_t>>> rows_share_;
  std::vector<std::vector<uint64_t>> gen_share_;
  // entropy: log2 of the column frequency of each generalized code.
  std::vector<std::vector<std::vector<double>>> log_freq_;
  std::vector<std::vector<double>> gen_entropy_;
};

}  // namespace kanon::engine

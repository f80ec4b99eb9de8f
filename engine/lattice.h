// The generalization lattice, never materialized: a transformation (node) is a
// vector of levels, one per quasi-identifier; ids are mixed-radix integers.
// Also Flash's three-criteria total order (Kohlmayer et al., section V-B).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace kanon::engine {

using Levels = std::vector<uint8_t>;

class Lattice {
 public:
  // heights[i]: number of levels of attribute i (>= 1).
  explicit Lattice(std::vector<int> heights);

  size_t dims() const { return heights_.size(); }
  int height(size_t i) const { return heights_[i]; }
  int max_rank() const { return max_rank_; }
  // Number of nodes; saturates at UINT64_MAX when it does not fit.
  uint64_t size() const { return size_; }
  bool ids_fit() const { return ids_fit_; }

  uint64_t id(const Levels& l) const;  // REQUIRES: ids_fit()
  static int rank(const Levels& l);
  Levels bottom() const { return Levels(dims(), 0); }
  Levels top() const;
  bool is_generalization_of(const Levels& general, const Levels& special) const;
  // Calls fn for every node of rank `rank`, in lexicographic order.
  void for_each_with_rank(int rank, const std::function<void(const Levels&)>& fn) const;
  // Direct generalizations (one level up in one attribute).
  void successors(const Levels& l, std::vector<Levels>& out) const;

 private:
  std::vector<int> heights_;
  std::vector<uint64_t> radix_;
  uint64_t size_ = 1;
  bool ids_fit_ = true;
  int max_rank_ = 0;
};

// c(n) = (level sum, mean relative level, 1 - mean relative distinct values),
// compared lexicographically; ties broken by the levels themselves so the
// order is total and independent of hash-table iteration.
class TraversalOrder {
 public:
  TraversalOrder(std::vector<int> max_levels,
                 std::vector<std::vector<uint32_t>> distinct_per_level);
  std::array<double, 3> key(const Levels& l) const;
  bool less(const Levels& a, const Levels& b) const;
  void sort(std::vector<Levels>& nodes) const;

 private:
  std::vector<int> max_levels_;
  std::vector<std::vector<uint32_t>> distinct_;
};

}  // namespace kanon::engine
